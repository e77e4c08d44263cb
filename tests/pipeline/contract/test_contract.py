"""The job contract: canonical specs, tags that never collide, every job kind of a config."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml

from whcore.core.settings import TrainConfig
from whcore.pipeline.analyses.grids import method_grid, param_tag
from whcore.pipeline.contract import Contract, load_contract, own_data_only
from whcore.pipeline.figures.registry import FIGURES, PAPER_FIGURES
from whcore.pipeline.jobs import KINDS, SpecError
from whcore.pipeline.jobs.ablation import AblationSpec
from whcore.pipeline.jobs.figure import FigureSpec
from whcore.pipeline.jobs.target import TargetSpec
from whcore.pipeline.jobs.train import training_defaults
from whcore.pipeline.runtime.canonical import canonical, canonical_json
from whcore.pipeline.runtime.layout import Layout

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / ".test" / "config.yaml"


SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")


def paper_contract() -> Contract:
    return load_contract(str(REPO / "config" / "config.yaml"), SCHEMA)


def contract(**changes) -> Contract:
    config = yaml.safe_load(TINY.read_text())
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = config
        for key in parents:
            node = node[key]
        node[last] = value
    return load_contract(config, SCHEMA)


def test_canonical_form_ignores_spelling_not_values():
    assert canonical_json({"b": 4.0, "a": [1.0, 0.5]}) == canonical_json({"a": [1, 0.5], "b": 4})
    assert canonical({"lam": 0.01}) != canonical({"lam": 0.010000001})
    assert canonical(float("nan")) != canonical(float("nan"))  # NaN stays NaN (refused earlier)


def test_tags_of_different_values_never_collide():
    # `%g` wrote both as lam0.01 and silently dropped one grid point
    assert param_tag({"lam": 0.01}) != param_tag({"lam": 0.010000001})
    assert param_tag({"b": 7.0, "lam": 0.01}) == param_tag({"lam": 0.01, "b": 7}) == "b7_lam0.01"
    assert param_tag({}) == "default"


def test_method_grid_leaves_defaults_implicit():
    explicit = method_grid({"hashwh": {"b": [3], "lam": [0.1], "repetitions": [1]}})
    implicit = method_grid({"hashwh": {"b": [3], "lam": [0.1]}})
    assert explicit == implicit == [("hashwh", {"b": 3, "lam": 0.1})]
    assert method_grid({"hashwh": {"b": [3], "lam": [0.1], "repetitions": [2]}})[0][1] == {
        "b": 3,
        "lam": 0.1,
        "repetitions": 2,
    }


def test_every_job_kind_of_the_tiny_config():
    jobs = contract().jobs
    kinds = {}
    for path, job in jobs.items():
        kinds[job.kind] = kinds.get(job.kind, 0) + 1
        outputs = dict(job.spec.outputs)
        if job.kind == "figure":
            outputs["pdf"] = f"{outputs.pop('stem')}.pdf"
        assert path in outputs.values() and path.startswith("results/tiny/"), path
    # spectrum 2 draws x 2 sizes x 5 configs; synthetic 2 n x 2 draws x 2 c x 4 configs;
    # real (entacmaea 2 sizes + 3 datasets x 1) x 3 configs
    assert kinds == {
        "target": 2 + 4,
        "train": 20 + 32 + 15,
        "baselines": 15,
        "ablation": 2,
        "entacmaea_energy": 1,
        "aggregate": 3,
        "figure": len(PAPER_FIGURES),
        "claims": 1,
    }


def test_a_spec_holds_what_determines_the_result_only():
    train = next(job for job in contract().jobs.values() if job.kind == "train")
    assert set(train.spec.to_dict()) == {
        "labels",
        "method",
        "grid",
        "data",
        "training",
        "spectrum",
        "outputs",
    }
    assert (
        "device" not in train.spec.training.to_dict()
        and "log_every" not in train.spec.training.to_dict()
    )
    assert train.spec.training.lr == 0.01  # defaults filled: one spec per job
    same = contract(device="cuda", log_every=1, train_threads=2, data_mirror="/elsewhere")
    assert {p: j.spec_json for p, j in same.jobs.items()} == {
        p: j.spec_json for p, j in contract().jobs.items()
    }


def test_the_claims_report_names_its_run_and_no_digest_of_the_configuration():
    """The report names its run (whose record names the configuration); a digest of the whole
    configuration in its spec would rerun it on a setting that changes no result."""
    jobs = list(contract().jobs.values())
    claims = next(job for job in jobs if job.kind == "claims")
    assert claims.spec.settings["run_name"] == "tiny"
    assert all("configuration" not in getattr(job.spec, "settings", {}) for job in jobs)


def test_networks_and_baselines_read_the_same_split():
    jobs = list(contract().jobs.values())
    splits = [j.spec.data for j in jobs if j.kind == "train"]
    for job in (j for j in jobs if j.kind == "baselines"):
        assert job.spec.data in splits, job.spec.data


def test_run_names_separate_outputs_and_unknown_paths_are_named():
    other = contract(run_name="other")
    assert all(path.startswith("results/other/") for path in other.jobs)
    with pytest.raises(ValueError, match="not part of the configured grid"):
        other.job("results/other/runs/real/gb1/standard/default/size7_dseed0")


def test_a_disabled_experiment_has_no_jobs_or_figures():
    jobs = contract(**{"synthetic.enabled": False}).jobs.values()
    assert not any(j.labels.get("experiment") == "synthetic" for j in jobs)
    figures = {j.labels["figure"] for j in jobs if j.kind == "figure"}
    assert not figures & {fid for fid, f in FIGURES.items() if f.module == "synthetic"}


def test_the_ens_decoder_is_a_grid_parameter():
    grid = {"ens": {"lam": [0.1], "rho": [0.1], "m": [3], "decoder": ["robust", "reference"]}}
    (robust, params_r), (_, params_ref) = method_grid(grid)
    assert "decoder" not in params_r  # the default stays implicit: the same job as before
    assert param_tag(params_ref) == "decoderreference_lam0.1_m3_rho0.1"
    jobs = contract(**{"spectrum.methods.ens.decoder": ["reference"]}).jobs.values()
    specs = [
        j.spec
        for j in jobs
        if j.kind == "train" and j.spec.method == "ens" and j.labels["experiment"] == "spectrum"
    ]
    assert specs and all(s.grid[0]["decoder"] == "reference" for s in specs)


def test_one_job_trains_the_weights_of_a_method_and_b_together():
    """The paper grid: every lam (and rho) of one method and b, every seed, in one job; the
    training jobs number in the low thousands (15,020 configurations)."""
    jobs = [j for j in paper_contract().jobs.values() if j.kind == "train"]
    assert sum(len(j.spec.grid) for j in jobs) == 15020
    assert len(jobs) == 5 * 5 * 4 * 6 + 3 * 3 * 8 * 5 * 5 + 3 * 10 * 5 * 5 + 10 * 5 * 6
    hashwh = next(j for j in jobs if j.spec.method == "hashwh")
    assert [(p["b"], p["lam"]) for p in hashwh.spec.grid] == [
        (5, 0.0001),
        (5, 0.001),
        (5, 0.01),
        (5, 0.1),
    ]
    assert hashwh.spec.outputs["records"].endswith("/hashwh/b5/size100_dseed0")
    ens = next(j for j in jobs if j.spec.method == "ens")
    assert len(ens.spec.grid) == 9 and ens.spec.outputs["records"].endswith("/m5/size100_dseed0")


def test_timed_cells_train_one_model_at_a_time():
    """Figures 4b, A6 and the speed-up claim read per-model times of the synthetic draw
    figure_draw, Figure 5b those of real.runtime_dataset: those jobs never stack."""
    jobs = [j for j in paper_contract().jobs.values() if j.kind == "train"]
    for job in jobs:
        timed = (
            job.spec.labels.get("draw") == 0
            if job.labels["experiment"] == "synthetic"
            else job.spec.labels["dataset"] == "gb1"
            if job.labels["experiment"] == "real"
            else False
        )
        if timed:
            assert job.spec.training.vectorize is False, job.spec.outputs
    synthetic = [j for j in jobs if j.labels["experiment"] == "synthetic"]
    assert any(j.spec.training.vectorize for j in synthetic)


def test_reduced_precision_is_a_training_setting_of_the_spec():
    jobs = contract(**{"spectrum.training.precision": "bf16"}).jobs.values()
    specs = [j.spec for j in jobs if j.kind == "train" and j.labels["experiment"] == "spectrum"]
    assert specs and all(s.training.precision == "bf16" for s in specs)
    others = [j.spec for j in jobs if j.kind == "train" and j.labels["experiment"] == "real"]
    assert all(s.training.precision == "fp32" for s in others)  # the default
    with pytest.raises(Exception, match="precision"):
        contract(**{"spectrum.training.precision": "fp16"})


def test_every_spec_reads_back_from_its_canonical_json():
    for job in contract().jobs.values():
        kind = KINDS[job.kind]
        assert isinstance(job.spec, kind)
        assert kind.from_dict(json.loads(job.spec_json)).to_json() == job.spec_json


@pytest.mark.parametrize(
    "kind,spec,message",
    [
        (
            TargetSpec,
            {"family": "x", "n": 4, "max_degree": 2, "seed": 0, "outputs": {"target": "t.json"}},
            "field family: 'x'",
        ),
        (
            TargetSpec,
            {
                "family": "degree_ladder",
                "n": "4",
                "max_degree": 2,
                "seed": 0,
                "outputs": {"target": "t.json"},
            },
            "field n: '4' is not an integer",
        ),
        (
            AblationSpec,
            {"dataset": "gb1", "data": "d", "outputs": {"table": "t"}},
            "field train_size: missing",
        ),
        (
            FigureSpec,
            {"figure": "f", "outputs": {"stem": "s"}, "colour": 1},
            "field colour: unknown",
        ),
        (FigureSpec, {"figure": "f", "outputs": {"pdf": "s"}}, "field outputs must name stem"),
    ],
)
def test_a_bad_spec_of_any_kind_names_its_field(kind, spec, message):
    with pytest.raises(SpecError, match=re.escape(f"--spec: {message}")):
        kind.from_dict(spec)


def test_training_defaults_are_train_configs():
    assert training_defaults() == {
        k: v
        for k, v in dataclasses.asdict(TrainConfig()).items()
        if k not in ("device", "log_every")
    }


def test_every_path_comes_from_the_layout():
    layout = Layout("quick")
    assert layout.records_of("spectrum").startswith("results/quick/runs/spectrum/{dataset}/")
    assert layout.log(layout.table_path("real_selected")) == "logs/quick/tables/real_selected.log"
    assert layout.log(Layout.data("gb1")) == "logs/quick/data/gb1.log"
    assert Layout.is_resource(Layout.data("gb1")) and not Layout.is_resource(layout.claims_md)
    assert layout.is_other_run("results/paper/claims.md") and not layout.is_other_run(
        layout.claims_md
    )
    for job in contract().jobs.values():  # every output under the run's folder or resources/
        for path in job.spec.outputs.values():
            assert path.startswith(("results/tiny/", "resources/")), path


@pytest.mark.parametrize(
    "path", sorted(REPO.glob(".test/**/config.yaml")), ids=lambda p: str(p.relative_to(REPO))
)
def test_every_test_case_configuration_plans(path):
    """The .test/ cases (the tiny run, own data with ProteinGym's protocol, SLURM) validate and
    plan their figures and claims."""
    planned = load_contract(str(path), SCHEMA)
    assert planned.figures() and planned.layout.claims_md in planned.targets()


def test_a_disabled_real_section_needs_no_datasets():
    config = yaml.safe_load((REPO / ".test" / "slurm" / "config.yaml").read_text())
    assert config["real"] == {"enabled": False}
    assert not own_data_only(load_contract(config, SCHEMA).config)
