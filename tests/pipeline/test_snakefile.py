"""The Snakefile's side of the contract (whcore.pipeline.snakefile), without Snakemake:
its objects (workflow, rules, ancient, jobs) are stood in for by plain ones."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_config import changed, load

from whcore.data.datasets import REGISTRY
from whcore.pipeline import snakefile
from whcore.pipeline.execution import slurm
from whcore.pipeline.experiments import ROLES
from whcore.pipeline.figures.registry import FIGURES
from whcore.pipeline.snakefile import (
    AGGREGATE_SHELL,
    StartError,
    Wildcards,
    aggregate_inputs,
    aggregate_log,
    aggregate_outputs,
    alternatives,
    config_source,
    describe_rule,
    figure_summary,
    memory_requests,
    minutes_per_attempt,
    raw_file,
    refuse_jobs_no_node_holds,
    report_missing_raw_files,
    settle_slurm_orphans,
    start,
)

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "workflow"


@pytest.fixture(autouse=True)
def own_environment():
    """``start`` sets the jobs' environment in ``os.environ`` (as it does in Snakemake's
    process): each test's changes end with it, never reaching a later test's Snakemake."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def started(tmp_path, monkeypatch):
    """The tiny configuration started in an empty working directory (warnings kept)."""
    monkeypatch.chdir(tmp_path)
    for name in ("WHCORE_DEVICE", "WHCORE_DATA_MIRROR"):  # the caller's, never this test's
        monkeypatch.delenv(name, raising=False)
    warnings = []
    return start(load(), WORKFLOW, REPO, "my.yaml", warn=warnings.append), warnings


def test_alternatives_match_exactly_the_names_given():
    pattern = alternatives(["a.b", "c"])
    assert re.fullmatch(pattern, "a.b") and re.fullmatch(pattern, "c")
    assert not re.fullmatch(pattern, "axb") and not re.fullmatch(pattern, "a.bc")
    assert not re.fullmatch(alternatives([]), "") and not re.fullmatch(alternatives([]), "a")


def test_the_config_source_names_the_files_or_the_default():
    assert config_source([], False, "config/config.yaml") == "config/config.yaml"
    assert "a.yaml" in config_source([Path("a.yaml")], False, "default.yaml")
    overridden = config_source([Path("a.yaml")], True, "default.yaml")
    assert "a.yaml" in overridden and overridden != config_source(["a.yaml"], False, "d")


def test_the_config_source_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    """Snakemake passes absolute paths; the run's record (and so its crate) must not carry the
    maker's home folder for a file of the working directory. A file outside it stays absolute:
    a relative path climbing out would break once the run folder is copied elsewhere."""
    monkeypatch.chdir(tmp_path)
    inside, outside = tmp_path / "config" / "quick.yaml", tmp_path.parent / "elsewhere.yaml"
    assert config_source([inside], False, "d") == os.path.join("config", "quick.yaml")
    assert config_source([], False, str(inside)) == os.path.join("config", "quick.yaml")
    assert config_source([outside], False, "d") == str(outside)
    assert config_source([inside, outside], True, "d").startswith("config")


def test_start_plans_the_run_and_sets_the_jobs_environment(started, monkeypatch):
    begun, warnings = started
    assert begun.layout.root == "results/tiny"
    assert begun.contract.targets() and begun.gpu == 0
    assert Path(begun.env).is_file() and warnings == []
    for name in REGISTRY:
        assert re.fullmatch(begun.wildcards.datasets, name)
    assert re.fullmatch(begun.wildcards.methods, "hashwh")
    assert not re.fullmatch(begun.wildcards.methods, "hashwh/x")
    assert re.fullmatch(begun.wildcards.families, "xgboost")


def test_a_bad_config_is_one_line_naming_its_source(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StartError, match=r"^Error in my\.yaml: .*spectrum"):
        start(changed("spectrum.n", "six"), WORKFLOW, REPO, "my.yaml")


def test_a_bad_environment_value_is_refused_at_start(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WHCORE_LOG_EVERY", "often")
    with pytest.raises(StartError, match=r"^Error: .*WHCORE_LOG_EVERY"):
        start(load(), WORKFLOW, REPO, "my.yaml")


def test_start_warns_of_a_mirror_that_is_not_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WHCORE_DATA_MIRROR", raising=False)
    warnings = []
    start(
        changed("data_mirror", str(tmp_path / "none")), WORKFLOW, REPO, "my.yaml", warnings.append
    )
    assert len(warnings) == 1 and "data_mirror" in warnings[0]


def test_no_own_dataset_matches_when_the_real_experiment_is_off(started):
    begun, _ = started
    assert begun.wildcards.own_datasets == "(?!)"
    off = Wildcards.of(changed("real.enabled", "false"), begun.contract)
    assert off.own_datasets == "(?!)" and off.proteingym_datasets == "(?!)"


def test_raw_file_and_retries():
    assert raw_file(SimpleNamespace(dataset="gb1")) == (f"resources/raw/gb1/{REGISTRY['gb1'].file}")
    grow = minutes_per_attempt(240)
    assert [grow(None, attempt) for attempt in (1, 2, 3)] == [240, 480, 720]


def test_aggregate_inputs_mark_folders_ancient_and_add_the_training_logs(started):
    begun, _ = started
    inputs = aggregate_inputs(begun.contract, "synthetic", ancient=lambda p: ("ancient", p))({})
    assert set(inputs) == {*ROLES, "training_logs"}
    marker, runs = inputs["runs"]
    assert marker == "ancient" and runs
    assert inputs["training_logs"] == [begun.layout.log(path) for path in runs]
    assert all(not isinstance(inputs[r], tuple) for r in ROLES if r not in ("runs", "spectra"))


def test_aggregate_outputs_and_logs(started):
    begun, _ = started
    layout = begun.layout
    assert aggregate_outputs(layout, "proteingym") == [layout.table_path("proteingym_{dataset}")]
    assert all(path.startswith(layout.root) for path in aggregate_outputs(layout, "real"))
    assert aggregate_log(layout, "proteingym") == layout.aggregate_log("proteingym_{dataset}")
    assert aggregate_log(layout, "real") == layout.aggregate_log("real")
    assert all(f"--{role} {{input.{role}:q}}" in AGGREGATE_SHELL for role in ROLES)


def test_describe_rule_sets_the_docstring_of_the_rule_defined_by_that_name():
    rule = SimpleNamespace(docstring=None)
    describe_rule(SimpleNamespace(fig9=SimpleNamespace(rule=rule)), "fig9", "Figure 9.")
    assert rule.docstring == "Figure 9."


def test_figure_summaries_are_short_and_never_end_inside_parentheses(monkeypatch):
    for figure_id in FIGURES:
        line = figure_summary(figure_id)
        assert line.startswith("Figure") and len(line) <= len("Figure A10 (PDF, PNG): ") + 84
    caption = "Test R^2 of every method (networks and the baselines of the paper) by size. More."
    monkeypatch.setitem(FIGURES, "fig9_x", SimpleNamespace(caption=caption))
    line = figure_summary("fig9_x", width=40)
    assert line == "Figure 9 (PDF, PNG): Test R^2 of every method ..."
    assert figure_summary("fig9_x", width=200).endswith("by size.")


def fake_job(output, mem_mb, partition=None):
    return SimpleNamespace(
        output=[output], resources={"mem_mb": mem_mb, "slurm_partition": partition}
    )


def records(job) -> str:
    return job.spec.outputs["records"]


def test_memory_requests_name_the_config_key_of_each_training_job(started):
    begun, _ = started
    trains = [j for j in begun.contract.jobs_of("train") if j.mem_mb][:2]
    assert trains
    jobs = [fake_job(records(j), 900, "gpu") for j in trains] + [
        fake_job(begun.layout.claims_md, 5)
    ]
    requests = memory_requests(jobs, begun.contract)
    assert list(requests) == ["gpu"] and len(requests["gpu"]) == len(trains)
    for job in trains:
        mem, key = requests["gpu"][records(job)]
        assert mem == 900 and key == f"{job.labels['experiment']}.methods.{job.spec.method}"


def test_a_job_no_node_holds_is_refused_in_one_line(started, monkeypatch):
    begun, _ = started
    train = next(j for j in begun.contract.jobs_of("train") if j.mem_mb)

    def too_big(requests, partition):
        raise slurm.SlurmStartError(f"{len(requests)} job(s) need more than partition {partition}")

    monkeypatch.setattr(slurm, "check_nodes_fit", too_big)
    workflow = SimpleNamespace(
        dag=SimpleNamespace(needrun_jobs=lambda: [fake_job(records(train), 9)])
    )
    with pytest.raises(StartError, match=r"^Error: 1 job\(s\) need more than partition $"):
        refuse_jobs_no_node_holds(workflow, begun.contract)


def test_orphans_are_settled_and_a_wait_restarts_the_run(monkeypatch):
    calls, said = [], []
    monkeypatch.setattr(slurm, "check_job_marker", lambda prefix: calls.append(("mark", prefix)))
    monkeypatch.setattr(slurm, "settle_orphaned_jobs", lambda log: (["1"], ["2"]))
    monkeypatch.setattr(slurm, "restart", lambda workflow: calls.append("restart"))
    monkeypatch.setattr(slurm, "record_orphan_outputs", lambda w, log: calls.append("record"))
    workflow = SimpleNamespace(executor_settings=SimpleNamespace(jobname_prefix="whc"))
    settle_slurm_orphans(workflow, said.append)
    assert calls == [("mark", "whc"), "restart", "record"]
    assert said == ["Restarting, to plan from what they made."]

    def refuse(log):
        raise slurm.SlurmStartError("squeue is missing")

    monkeypatch.setattr(slurm, "settle_orphaned_jobs", refuse)
    with pytest.raises(StartError, match="^Error: squeue is missing$"):
        settle_slurm_orphans(workflow, said.append)


def test_missing_raw_files_are_reported_for_the_download_jobs_only(monkeypatch):
    seen = {}

    def lines(downloads, planned_at, mirror):
        seen.update(downloads=downloads, planned_at=planned_at, mirror=mirror)
        return ["resources/raw/gb1/x.csv is missing. Fix: ..."]

    monkeypatch.setattr(snakefile, "missing_raw_lines", lines)

    def job(rule, dataset):
        return SimpleNamespace(
            rule=SimpleNamespace(name=rule),
            wildcards=SimpleNamespace(dataset=dataset),
            output=[f"out/{dataset}"],
            log=[f"log/{dataset}"],
        )

    said = []
    jobs = [job("download", "gb1"), job("train", "x"), job("fetch_mine", "mine")]
    report_missing_raw_files(jobs, {"download", "fetch_mine"}, 12.5, "", said.append)
    assert seen == {
        "downloads": [("gb1", "out/gb1", "log/gb1"), ("mine", "out/mine", "log/mine")],
        "planned_at": 12.5,
        "mirror": None,
    }
    assert said == ["resources/raw/gb1/x.csv is missing. Fix: ..."]


def test_a_mistyped_figure_id_names_the_ids_and_the_closest():
    figures = ["fig5a_real_r2", "fig5b_real_runtime", "fig1a_support_evolution"]
    rules = [*figures, "all", "train", "bundle"]
    never = lambda path: False  # noqa: E731
    message = snakefile.unknown_targets(["fig5a"], rules, figures, exists=never)
    assert message.startswith("Error: no rule or figure is named 'fig5a'.")
    assert "Did you mean fig5a_real_r2?" in message
    assert all(f in message for f in figures) and "snakemake --list-rules" in message
    typo = snakefile.unknown_targets(["fig5b_real_runtim"], rules, figures, exists=never)
    assert "Did you mean fig5b_real_runtime?" in typo
    # rules, paths and files are Snakemake's to resolve
    for fine in (["fig5a_real_r2", "all"], ["results/quick/figures/fig5a_real_r2.pdf"], ["x.csv"]):
        assert snakefile.unknown_targets(fine, rules, figures, exists=never) is None
    assert snakefile.unknown_targets(["my_file"], rules, figures, exists=lambda p: True) is None


def test_targets_are_read_from_a_snakemake_command_line_only():
    argv = ["/venv/bin/snakemake", "fig5a", "--cores", "2", "--configfile", "c.yaml", "-n"]
    assert snakefile.command_line_targets(argv) == ["fig5a"]
    module = ["/venv/lib/python3.11/site-packages/snakemake/__main__.py", "-s", "S", "fig5a"]
    assert snakefile.command_line_targets(module) == ["fig5a"]
    # pytest, a cluster job or an API call: its arguments are not snakemake's targets
    assert snakefile.command_line_targets(["/venv/bin/pytest", "-m", "not slow"]) == []
    assert snakefile.command_line_targets([]) == []
