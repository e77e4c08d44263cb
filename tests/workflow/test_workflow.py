"""The Snakemake workflow: the paper grid's size, config errors, and a tiny end-to-end run."""

import os
import re
import shutil
import time

import pytest
import yaml
from conftest import REPO, TINY
from conftest import run_snakemake as snakemake

from whcore.pipeline.figures.registry import FIGURES, PAPER_FIGURES

pytestmark = pytest.mark.workflow


def job_counts(dry_run_output: str) -> dict[str, int]:
    table = dry_run_output.split("job ", 1)[1].split("total", 1)[0]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


@pytest.fixture(scope="module")
def paper_dry_run(tmp_path_factory) -> str:
    """What `snakemake -n` prints for the paper's grid (every job, its output and log)."""
    return snakemake("-n", workdir=tmp_path_factory.mktemp("paper")).stdout


def test_paper_grid_has_the_papers_job_counts(paper_dry_run):
    """Job counts derived from the paper's grid (EXPERIMENTS.md), not from the workflow. A
    training job trains every lambda (and rho) of one method and b together."""
    counts = job_counts(paper_dry_run)
    # Experiment 1: 5 g* x 5 datasets x 4 train sizes x groups (standard, fullwh's 3 lambdas,
    # EN-S's 3 x 3 (rho, lambda), and one per b of HashWH's 3 b x 4 lambdas).
    assert counts["train_spectrum"] == 5 * 5 * 4 * (1 + 1 + 1 + 3)
    # Experiments 2 and 3 share the `train` rule. Experiment 2: 3 n x 3 g* x 8 c x 5 datasets
    # x (standard, EN-S, 3 b of HashWH). Experiment 3: 4 datasets x 10 sizes x 5 subsamples x
    # the same 5 groups, plus b = 16 on avGFP.
    synthetic = 3 * 3 * 8 * 5 * (1 + 1 + 3)
    real = 4 * 10 * 5 * (1 + 1 + 3) + 10 * 5 * 1
    assert counts["train"] == synthetic + real
    assert counts["baselines"] == 4 * 3 * 10 * 5  # one job per (dataset, family, size, seed)
    assert counts["target"] == 5 + 3 * 3
    assert counts["download"] == counts["binarize"] == 4
    assert counts["ablation"] == 2 and counts["entacmaea_energy"] == 1
    for figure_id in PAPER_FIGURES:
        assert counts[figure_id] == 1
    # The SLURM profile sends each job out as a SLURM job of its own (no job groups: the plugin
    # runs a group's members one after another), all but the downloads and `all`.
    jobs = sum(count for rule, count in counts.items() if rule not in ("download", "all"))
    assert slurm_submissions(counts) == jobs


def test_every_rule_has_a_one_line_description(tmp_path):
    """`snakemake --list-rules` shows each rule's docstring (figure rules: their caption)."""
    listing = snakemake("--list-rules", "--configfile", str(TINY), workdir=tmp_path).stdout
    lines = [line for line in listing.splitlines() if not line.startswith("warning: ")]
    rules = dict(re.fullmatch(r"(\w+)(?: \((.+)\))?", line).groups() for line in lines)
    assert {"all", "download", "train", "train_spectrum", "claims", *PAPER_FIGURES} <= set(rules)
    assert [name for name, description in rules.items() if not description] == []
    assert rules["fig5a_real_r2"].startswith("Figure 5a (PDF, PNG): Test R^2 vs train size")
    assert max(len(description) for description in rules.values()) <= 110


def test_the_slurm_profile_names_the_logs_the_jobs_write(paper_dry_run):
    """The log paths the profile's comment gives as examples are those of the paper's jobs."""
    profile = (REPO / "profiles" / "slurm" / "profile.yaml").read_text()
    comment = "\n".join(line for line in profile.splitlines() if line.startswith("#"))
    examples = set(re.findall(r"logs/[\w./-]+\.log", comment))
    logs = set(re.findall(r"^    log: (\S+)$", paper_dry_run, re.MULTILINE))
    assert len(examples) >= 6 and examples <= logs, examples - logs


def slurm_submissions(counts: dict[str, int]) -> int:
    """SLURM jobs of a run through profiles/slurm: a group of k components would be one SLURM
    job (the profile has none), local rules (downloads) and `all` run where Snakemake runs."""
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "profile.yaml").read_text())
    group_of = dict(entry.split("=") for entry in profile.get("groups", []))
    size = {
        g: int(k) for g, k in (entry.split("=") for entry in profile.get("group-components", []))
    }
    grouped: dict[str, int] = {}
    single = 0
    for rule, count in counts.items():
        if rule in ("download", "all", "total"):
            continue
        if rule in group_of:
            grouped[group_of[rule]] = grouped.get(group_of[rule], 0) + count
        else:
            single += count
    return single + sum(-(-count // size.get(group, 1)) for group, count in grouped.items())


def write_config(tmp_path, **changes):
    config = yaml.safe_load(TINY.read_text())
    for dotted, value in changes.items():
        node = config
        *parents, last = dotted.split(".")
        for key in parents:
            node = node[key]
        if value is None:
            del node[last]
        else:
            node[last] = value
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"spectrum.methods.hashwh2": {"b": [3], "lam": [0.1]}}, "hashwh2"),
        ({"real.datasets.gb1.train_sizes": [-5]}, "train_sizes"),
        ({"synthetic.methods.hashwh.b": [3, 12]}, "synthetic.methods.hashwh.b"),
        ({"spectrum.trainig": {"epochs": 3}}, "trainig"),
        ({"real.runtime_dataset": "gfp"}, "real.runtime_dataset"),
    ],
)
def test_bad_config_fails_at_start_naming_the_key(tmp_path, changes, message):
    config = write_config(tmp_path, **changes)
    result = snakemake("-n", "--configfile", str(config), workdir=tmp_path, check=False)
    assert result.returncode != 0
    # one line, no traceback: the config file, the key and what is allowed
    (line,) = result.stdout.splitlines()
    # named as in the working directory (relative), where the user wrote it
    assert line.startswith(f"Error in {config.relative_to(tmp_path)}: config key ")
    assert message in line


def test_a_bad_environment_variable_is_one_line(tmp_path):
    result = snakemake(
        "-n", "--configfile", str(TINY), workdir=tmp_path, env={"WHCORE_FWHT": "fast"}, check=False
    )
    assert result.returncode != 0
    assert result.stdout.splitlines() == [
        "Error: environment variable WHCORE_FWHT='fast': use auto or torch (the fast "
        "Walsh-Hadamard transform to use), or unset it"
    ]


def test_a_yaml_error_in_the_default_config_names_the_file_and_the_line(tmp_path):
    """Snakemake's own message for a config it cannot parse names neither the file nor the
    line; the workflow reads its default config first and says both."""
    repo = REPO
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for part in ("Snakefile", "workflow", "config", "envs"):
        copy = shutil.copytree if (repo / part).is_dir() else shutil.copy
        copy(repo / part, checkout / part)
    config = checkout / "config" / "config.yaml"
    lines = config.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("spectrum:"))
    config.write_text("\n".join(lines[:at] + ["spectrum: [", *lines[at + 1 :]]) + "\n")
    result = snakemake("-n", "-s", str(checkout / "Snakefile"), workdir=tmp_path, check=False)
    assert result.returncode != 0
    (line,) = result.stdout.splitlines()
    assert line.startswith(f"Error: {config}, line ") and "not valid YAML" in line


def test_a_config_whose_aliases_expand_to_billions_of_values_is_refused_at_once(tmp_path):
    """Snakemake loads a --configfile keeping its aliases unexpanded; the workflow reads the file
    again and refuses it before any check walks the expansion (minutes and gigabytes)."""
    from test_config import alias_bomb

    config = tmp_path / "bomb.yaml"
    config.write_text(alias_bomb("epistasis.datasets"))
    started = time.monotonic()
    result = snakemake("-n", "--configfile", str(config), workdir=tmp_path, check=False, timeout=60)
    assert time.monotonic() - started < 30 and result.returncode != 0
    (line,) = result.stdout.splitlines()
    assert line.startswith(f"Error: {config}, line ") and "through YAML aliases" in line


def test_a_config_that_is_a_yte_template_is_refused_at_start(tmp_path):
    """Snakemake has run the template's Python by the time the workflow starts (no project can
    stop its loader); the workflow then refuses the file in one line, so no job runs on it."""
    config = tmp_path / "template.yaml"
    config.write_text("__use_yte__: true\n" + TINY.read_text())
    result = snakemake("-n", "--configfile", str(config), workdir=tmp_path, check=False)
    assert result.returncode != 0
    (line,) = result.stdout.splitlines()
    assert line.startswith(f"Error: {config}: carries __use_yte__, which makes the config file")


@pytest.mark.parametrize("where", ["environment", "config"])
def test_a_mirror_that_does_not_exist_is_a_warning_at_start(tmp_path, where):
    missing = tmp_path / "no-such-mirror"
    if where == "config":
        config, env = write_config(tmp_path, data_mirror=str(missing)), {}
        source = "config key data_mirror"
    else:
        config, env = TINY, {"WHCORE_DATA_MIRROR": str(missing)}
        source = "WHCORE_DATA_MIRROR"
    result = snakemake("-n", "--configfile", str(config), workdir=tmp_path, env=env)
    warnings = [line for line in result.stdout.splitlines() if "no-such-mirror" in line]
    assert warnings == [
        f"warning: {source}: {missing} does not exist; raw files will come from the pinned URLs"
    ]
    # an existing mirror (or none) is silent
    env = {"WHCORE_DATA_MIRROR": str(tmp_path)}
    quiet = snakemake("-n", "--configfile", str(TINY), workdir=tmp_path, env=env).stdout
    assert "warning: WHCORE_DATA_MIRROR" not in quiet


def test_tiny_run_makes_every_figure_and_the_claims(tiny_run):
    import json

    from matplotlib.image import imread

    figures = tiny_run / "results" / "tiny" / "figures"
    for figure_id in PAPER_FIGURES:
        assert (figures / f"{figure_id}.pdf").read_bytes()[:5] == b"%PDF-", figure_id
        pixels = imread(figures / f"{figure_id}.png")
        assert min(pixels.shape[:2]) > 100 and pixels[..., :3].std() > 0.01, figure_id  # drawn
    claims = json.loads((tiny_run / "results" / "tiny" / "claims.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in claims}
    for claim in (
        "synthetic_hashwh_beats_standard",
        "ablation_amplitude_beats_degree_sgemm",
        "entacmaea_high_degree_energy",
        "real_hashwh_beats_ens",
    ):
        assert verdicts[claim] in {"holds", "does not hold", "inconclusive"}, claim
    report = (tiny_run / "results" / "tiny" / "claims.md").read_text()
    assert all(f"## {cid}: **{verdict}**" in report for cid, verdict in verdicts.items())
    assert list((tiny_run / "results").rglob(".*.tmp")) == []  # no half-written files


def test_stacked_units_train_each_cell_as_one_job_with_the_same_numbers(
    tiny_run, tmp_path, data_mirror
):
    """With stack_units a spectrum cell (the tiny run's two g* draws) trains as one job: one
    cell job per method group and train size, each unit's log where its job writes it, and the
    per-epoch table of the tiny run's jobs trained one by one, up to float rounding."""
    import numpy as np
    import pandas as pd

    config = yaml.safe_load(TINY.read_text())
    config["stack_units"] = True
    path = tmp_path / "stacked.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    table = "results/tiny/tables/spectrum_epochs.parquet"
    env = {"WHCORE_DATA_MIRROR": str(data_mirror)}
    args = (table, "--cores", "2", "--configfile", str(path))  # targets first
    counts = job_counts(snakemake("-n", *args, workdir=tmp_path, env=env).stdout)
    assert counts["train_spectrum_cell"] == 5 * 2 and "train_spectrum" not in counts
    snakemake(*args, workdir=tmp_path, env=env)
    logs = sorted((tmp_path / "logs/tiny/runs/spectrum").rglob("*.log"))
    assert len(logs) == 2 * 5 * 2
    assert all("training 2 jobs of one cell" in log.read_text() for log in logs)
    stacked, alone = pd.read_parquet(tmp_path / table), pd.read_parquet(tiny_run / table)
    assert list(stacked.columns) == list(alone.columns) and len(stacked) == len(alone)
    keys = ["dataset", "variant", "train_size", "data_seed", "seed", "epoch"]
    stacked, alone = (t.sort_values(keys).reset_index(drop=True) for t in (stacked, alone))
    assert stacked[keys].equals(alone[keys])
    measured = [c for c in alone.columns if c.startswith(("sae_", "energy_deg", "val_"))]
    np.testing.assert_allclose(stacked[measured], alone[measured], rtol=1e-4, atol=1e-6)


def test_tiny_run_is_complete_and_figure_code_reruns_only_its_figures(tiny_run):
    nothing = snakemake("-n", "--configfile", str(TINY), workdir=tiny_run).stdout
    assert "Nothing to be done" in nothing
    source = FIGURES["fig5a_real_r2"].source
    stat, code = source.stat(), source.read_text()
    try:
        source.write_text(code + "\n# an edit of the plotting code\n")
        dry = snakemake("-n", "--quiet", "rules", "--configfile", str(TINY), workdir=tiny_run)
        counts = job_counts(dry.stdout)
    finally:
        source.write_text(code)
        os.utime(source, (stat.st_atime, stat.st_mtime))
    same_module = {fid for fid, fig in FIGURES.items() if fig.source == source}
    assert set(counts) - {"all"} == same_module


def test_one_figure_target_builds_only_what_it_needs(tmp_path):
    shutil.copy(TINY, tmp_path / "tiny.yaml")
    dry = snakemake(
        "fig5d_entacmaea_energy",
        "-n",
        "--quiet",
        "rules",
        "--configfile",
        str(tmp_path / "tiny.yaml"),
        workdir=tmp_path,
    )
    assert set(job_counts(dry.stdout)) == {
        "download",
        "binarize",
        "entacmaea_energy",
        "fig5d_entacmaea_energy",
    }


# --- the job contract: what reruns and what does not ---------------------------------------------


def planned(tiny_run, config: dict, env: dict | None = None, *args) -> dict[str, int]:
    """Rule -> job count of a dry run of ``config`` in the complete tiny run's folder."""
    path = tiny_run / "variant.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    dry = snakemake(
        "-n", "--quiet", "rules", *args, "--configfile", str(path), workdir=tiny_run, env=env
    )
    if "Nothing to be done" in dry.stdout:
        return {}
    return job_counts(dry.stdout)


def reordered(value):
    """The same mapping with every level's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    return value


@pytest.mark.parametrize(
    "change",
    [
        "device",
        "threads",
        "mirror",
        "log_every",
        "reordered keys",
        "default written out",
        "float-valued integers",
    ],
)
def test_settings_that_never_change_a_result_plan_no_job(tiny_run, data_mirror, change):
    config = yaml.safe_load(TINY.read_text())
    env = None
    if change == "device":
        config["device"] = "auto"
    elif change == "threads":
        config["train_threads"] = 2
    elif change == "mirror":
        env = {"WHCORE_DATA_MIRROR": ""}
        config["data_mirror"] = ""
    elif change == "log_every":
        config["log_every"] = 1
    elif change == "reordered keys":
        config = reordered(config)
    elif change == "default written out":
        config["spectrum"]["training"]["lr"] = 0.01
        config["spectrum"]["methods"]["hashwh"]["repetitions"] = [1]
    elif change == "float-valued integers":
        config["spectrum"]["methods"]["hashwh"]["b"] = [3.0, 4.0]
        config["synthetic"]["training"]["epochs"] = 4.0
    assert planned(tiny_run, config, env) == {}


def test_a_baseline_grid_change_reruns_exactly_its_jobs(tiny_run):
    config = yaml.safe_load(TINY.read_text())
    config["real"]["baselines"]["rf"]["max_depth"] = [4]
    counts = planned(tiny_run, config)
    rf_jobs = sum(len(d["train_sizes"]) for d in config["real"]["datasets"].values())
    real_figures = {fid for fid, fig in FIGURES.items() if fig.module == "real"}
    assert counts == {
        "baselines": rf_jobs,
        "aggregate_real": 1,
        "claims": 1,
        **{fid: 1 for fid in real_figures},
        "all": 1,
    }


def test_a_split_size_change_reruns_that_datasets_networks_and_baselines(tiny_run):
    config = yaml.safe_load(TINY.read_text())
    config["real"]["datasets"]["sgemm"]["val_size"] = 400
    counts = planned(tiny_run, config)
    networks = 3  # tiny.yaml: standard, ens, hashwh on sgemm's one train size
    assert counts["train"] == networks and counts["baselines"] == 3
    assert "train_spectrum" not in counts and "ablation" not in counts


def test_runs_of_different_configurations_live_side_by_side(tiny_run):
    config = yaml.safe_load(TINY.read_text())
    config["run_name"] = "tiny-b"
    counts = planned(tiny_run, config)
    assert counts["train_spectrum"] == 20 and "download" not in counts and "binarize" not in counts


def copy_without_timestamps(source, target):
    """`cp -r` (timestamps not kept) at its worst: every file and folder of the copy is newer
    than those written after it in ``source``, so every job's inputs are newer than its
    outputs."""
    shutil.copytree(source, target, copy_function=shutil.copyfile)
    paths = list(source.rglob("*"))
    newest, now = max(p.stat().st_mtime for p in paths), time.time()
    for path in paths:
        stamp = now + newest - path.stat().st_mtime
        os.utime(target / path.relative_to(source), (stamp, stamp))


def test_a_run_folder_copied_without_its_timestamps_plans_no_job(tiny_run, tmp_path):
    """Snakemake replans a job whose input is newer than its output unless the input still
    matches the checksum recorded when the job ran: every input file is checksummed
    (profiles/default), and the training folders, which Snakemake cannot checksum, reach the
    aggregations as ancient inputs beside the training jobs' logs."""
    copy = tmp_path / "copy"
    copy_without_timestamps(tiny_run, copy)
    assert planned(copy, yaml.safe_load(TINY.read_text())) == {}


def test_a_training_change_replans_its_aggregation(tiny_run):
    """The aggregations ignore their training folders' timestamps, not the jobs that write
    them: a training job that reruns replans its aggregation (through its log)."""
    config = yaml.safe_load(TINY.read_text())
    config["synthetic"]["training"]["epochs"] = 5
    counts = planned(tiny_run, config)
    figures = {fid for fid, fig in FIGURES.items() if fig.module == "synthetic"}
    assert counts["aggregate_synthetic"] == 1 and figures <= set(counts)
    assert "aggregate_spectrum" not in counts and "aggregate_real" not in counts


def test_a_moved_checkout_plans_no_job(tiny_run, tmp_path):
    """Runs made in the checkout move with it: no job's params or inputs name the checkout's
    path (a figure's plotting code enters by its digest)."""
    checkout, run = tmp_path / "checkout", tmp_path / "run"
    checkout.mkdir()
    for part in ("Snakefile", "workflow", "src", "envs", "config", "profiles"):
        copy = shutil.copytree if (REPO / part).is_dir() else shutil.copy2
        copy(REPO / part, checkout / part)
    shutil.copytree(tiny_run, run)  # timestamps kept, as `mv` keeps them
    env = {"PYTHONPATH": str(checkout / "src")}  # whcore imported from the moved checkout
    dry = snakemake("-n", "--configfile", str(TINY), workdir=run, env=env, checkout=checkout)
    assert "Nothing to be done" in dry.stdout, dry.stdout[-2000:]


def test_every_output_of_a_run_says_what_produced_it(tiny_run):
    from PIL import Image

    from whcore.core.io import read_parquet_metadata

    fields = {"whcore_version", "git_commit", "libraries", "device", "host", "started"}
    results = tiny_run / "results" / "tiny"
    parquets = sorted((results / "runs").rglob("*.parquet")) + sorted(results.glob("tables/*"))
    assert len(parquets) > 80
    for path in parquets:
        assert fields <= set(read_parquet_metadata(path)["provenance"]), path
    for png in sorted((results / "figures").glob("*.png")):
        assert "whcore_version" in Image.open(png).text["whcore-provenance"], png


def test_the_report_shows_figures_claims_provenance_and_the_configuration(tiny_run):
    report = tiny_run / "report.html"
    snakemake("--report", str(report), "--configfile", str(TINY), workdir=tiny_run)
    html = report.read_text(errors="replace")
    assert "Claims and provenance" in html and "provenance.tsv" in html and "claims.md" in html
    assert "results/tiny/" in html and "fig5a_real_r2" in html
    assert "&quot;run_name&quot;" in html and "&quot;tiny&quot;" in html  # the configuration


def test_the_report_as_a_zip_holds_its_page_and_every_figure(tiny_run, tmp_path):
    """`snakemake --report results/<run>/report.zip`: the page, and the files it shows apart
    (in a folder named as the zip)."""
    import zipfile

    report = tmp_path / "report.zip"
    snakemake("--report", str(report), "--configfile", str(TINY), workdir=tiny_run)
    with zipfile.ZipFile(report) as archive:
        names = archive.namelist()
        html = archive.read("report/report.html").decode(errors="replace")
    assert "Claims and provenance" in html and "fig5a_real_r2" in html
    shown = [name.rsplit("/", 1)[1] for name in names if name.startswith("report/data/raw/")]
    figures = [p.name for p in (tiny_run / "results" / "tiny" / "figures").glob("*.png")]
    assert sorted(shown) == sorted([*figures, "claims.md", "provenance.tsv"])


@pytest.mark.parametrize(
    "lost,rule",
    [
        ("tables/real_selected.parquet", "aggregate_real"),
        ("figures/fig5a_real_r2.png", "fig5a_real_r2"),
        ("figures/fig1b_spectrum_evolution.pdf", "fig1b_spectrum_evolution"),
        ("claims.json", "claims"),
        ("provenance.tsv", "claims"),
    ],
)
def test_a_lost_final_output_is_rebuilt(tiny_run, tmp_path, lost, rule):
    """Every final output is a target of `all`: one removed after a run (a table by a failed
    aggregation, say) is planned again, never "Nothing to be done" (before, only tables and the
    claims report were, and `--report` then failed)."""
    path = tiny_run / "results" / "tiny" / lost
    kept = tmp_path / path.name
    path.rename(kept)
    try:
        counts = planned(tiny_run, yaml.safe_load(TINY.read_text()))
    finally:
        kept.rename(path)
    assert counts.get(rule) == 1 and "train" not in counts, counts


def test_a_failed_aggregation_keeps_the_tables_and_says_which_job_to_rerun(tiny_run, tmp_path):
    """A truncated run record fails the aggregation forced over it; the previous tables stay
    (Snakemake's update flag restores them) and the log names the `--forcerun` line."""
    work = tmp_path / "copy"
    shutil.copytree(tiny_run, work, symlinks=True)
    tables = work / "results" / "tiny" / "tables"
    before = {p.name: p.read_bytes() for p in tables.glob("real_*.parquet")}
    folder = next((work / "results" / "tiny" / "runs" / "real").glob("entacmaea/standard/*/*"))
    record = next(folder.glob("*.parquet"))
    record.write_bytes(record.read_bytes()[:100])
    failed = snakemake(
        "--cores",
        "1",
        "--forcerun",
        "aggregate_real",
        "--configfile",
        str(TINY),
        workdir=work,
        check=False,
    )
    assert failed.returncode != 0
    assert {p.name: p.read_bytes() for p in tables.glob("real_*.parquet")} == before
    log = (work / "logs" / "tiny" / "aggregate" / "real.log").read_text()
    relative = folder.relative_to(work)
    assert f"{record.relative_to(work)}: cannot read run records" in log
    assert f"snakemake --forcerun {relative}" in log
