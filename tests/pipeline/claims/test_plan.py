"""`whcore plan`: on generated runs with known effects, the count of claims the planned design
decides, run through the engine itself, lands where the planner says; unit costs come from
Snakemake's job records; bad inputs fail naming the file, the field and the fix; the overlay
makes a valid configuration."""

from __future__ import annotations

import base64
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from whcore.pipeline.claims import cells as cell_tests
from whcore.pipeline.claims import claim as claim_module
from whcore.pipeline.claims import plan as planner
from whcore.pipeline.claims import verdicts
from whcore.pipeline.claims.costs import unit_costs
from whcore.pipeline.claims.levels import FAILS, HOLDS
from whcore.pipeline.claims.report import correct_across, with_experiment
from whcore.pipeline.cli import main
from whcore.pipeline.config.schema import SCHEMA_PATH
from whcore.pipeline.config.validation import load_config
from whcore.pipeline.experiments import cost_rules, unit_keys

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / ".test" / "config.yaml"
# Per experiment, per claim, each cell's true mean difference (unit differences have SD 1; the
# cells of a claim share half their variance, as cells that share a rival's runs do).
TRUE = {"spectrum": [[0.9, 1.1], [0.0, 0.2], [-0.9]], "real": [[0.6, 0.8], [0.0]]}
SHARED = 0.5
PILOT = {"spectrum": 5, "real": 5}
COSTS = ({"spectrum": 10.0, "real": 20.0}, 100.0)  # seconds per unit, fixed seconds
BUDGET = 1_000.0


@pytest.fixture(autouse=True)
def _no_units_needed_line(monkeypatch):
    """The "units needed" text of an undecided claim changes no verdict and is slow to
    simulate: left out here."""
    monkeypatch.setattr(claim_module, "needed_line", lambda *args, **kwargs: "")


def unit_pairs(rng, effects, units: int) -> pd.DataFrame:
    """One row per (unit, cell): a - b with the cells' shared variance."""
    cells = len(effects)
    noise = np.sqrt(SHARED) * rng.standard_normal((units, 1))
    noise = noise + np.sqrt(1 - SHARED) * rng.standard_normal((units, cells))
    return pd.DataFrame(
        {
            "cell": np.tile(np.arange(cells), units),
            "draw": np.repeat(np.arange(units), cells),
            "a": (np.asarray(effects) + noise).ravel(),
            "b": 0.0,
            "a_diverged": False,
            "b_diverged": False,
        }
    )


def claim_of(cid: str, pairs: pd.DataFrame) -> claim_module.Claim:
    return claim_module.paired_claim(
        cid, "", "", "", pairs, ["cell"], "x", ("a", "b"), units=("draw", "draws")
    )


def engine_run(rng, units: dict[str, int]) -> list[claim_module.Claim]:
    """A run with ``units`` per experiment judged by the engine: each claim by
    ``claim_module.paired_claim``, all of them corrected by ``report.correct_across``."""
    claims = []
    for experiment, effects in TRUE.items():
        group = [
            claim_of(f"{experiment}_{i}", unit_pairs(rng, cell, units[experiment]))
            for i, cell in enumerate(effects)
        ]
        claims += with_experiment(group, experiment)
    correct_across(claims)
    return claims


def engine_count(rng, units: dict[str, int]) -> int:
    """The claims a run with ``units`` per experiment decides, by the engine's verdict of each
    claim (``cell_tests.compare_cells``, ``verdicts.cells_verdict``) and its correction over claims
    (``report.correct_across``): ``engine_run`` without the report's text."""
    claims = []
    for experiment, effects in TRUE.items():
        for i, cell in enumerate(effects):
            pairs = unit_pairs(rng, cell, units[experiment])
            result = verdicts.cells_verdict(cell_tests.compare_cells(pairs, ["cell"]))
            p_values = {"p_value": result.p_value, "p_refute": result.p_refute}
            claims.append(
                claim_module.Claim(f"{experiment}_{i}", "", "", "", result.verdict, **p_values)
            )
    correct_across(claims)
    return decided(claims)


def decided(claims) -> int:
    return sum(c.across in (HOLDS, FAILS) for c in claims)


def write_claims(path: Path, claims) -> Path:
    path.write_text(json.dumps([asdict(c) for c in claims]))
    return path


def true_models(models):
    """``models`` with each cell's true effect and the true covariance."""
    out = []
    for model, effects in zip(models, [e for group in TRUE.values() for e in group]):
        cells = len(effects)
        cov = SHARED + (1 - SHARED) * np.eye(cells)
        part = model.parts[0]
        part = planner.Part(part.test, part.share, 0.0, 0.0, part.units, np.array(effects), cov)
        out.append(planner.ClaimModel(model.id, True, model.experiment, [part]))
    return out


def test_the_simulated_count_matches_the_engine(tmp_path):
    """At the true effects the planner's simulation of a design (each claim's tests, Holm
    over both sides of every claim) predicts the count the engine decides: its mean within 3
    standard errors, and its 10-90% range holding at least 80% of engine runs (less 2 SE)."""
    rng = np.random.default_rng(3)
    models = planner.read_models(write_claims(tmp_path / "claims.json", engine_run(rng, PILOT)))
    design, runs = {"spectrum": 20, "real": 15}, 40
    said = planner.simulate(true_models(models), design, PILOT, 4_000).summary()
    counts = np.array([engine_count(rng, design) for _ in range(runs)])
    se = max(counts.std(), said["sd"]) / np.sqrt(runs)
    assert abs(counts.mean() - said["expected"]) < 3 * se, (counts.mean(), said)
    inside = np.mean((counts >= said["p10"]) & (counts <= said["p90"]))
    assert inside >= 0.8 - 2 * np.sqrt(0.16 / runs), (inside, said, counts)


def test_the_planned_design_decides_at_least_what_the_planner_says(tmp_path):
    """From 5-unit pilots of known effects: the planned design, run through the engine at the
    true effects, decides at least the planner's lower 10% count in at least 90% of the pilots
    (less 2 SE), since it plans on shrunk effects; and the point estimates would promise more."""
    rng, pilots, rows = np.random.default_rng(7), 10, []
    for pilot in range(pilots):
        path = write_claims(tmp_path / f"claims{pilot}.json", engine_run(rng, PILOT))
        models = planner.read_models(path)
        design = planner.plan(models, PILOT, COSTS, BUDGET, draws=200)
        said = planner.forecast(models, design, PILOT, 1_000).summary()
        point = planner.simulate(models, design, PILOT, 1_000).summary()
        rows.append((engine_count(rng, design), said["p10"], said["expected"], point))
        assert planner.design_cost(design, *COSTS) <= BUDGET
        assert all(design[e] >= PILOT[e] for e in PILOT)
    met = np.mean([realised >= low for realised, low, _, _ in rows])
    assert met >= 0.9 - 2 * np.sqrt(0.09 / pilots), rows
    assert np.mean([p["expected"] - e for _, _, e, p in rows]) > 0, rows


def test_shrinking_moves_each_effect_to_its_interval_end_nearest_the_boundary():
    part = planner.Part(
        "greater", 1.0, 0.0, 0.0, np.array([5, 5, 5]), np.array([2.0, 0.1, -2.0]), np.eye(3)
    )
    low, high = planner.effect_interval(part.mean, part.sd, part.units)
    assert np.allclose(planner.shrunk(part).mean, [low[0], 0.0, high[2]])


def test_holm_over_rows_is_the_engine_holm():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 0.2, (50, 7))
    p[rng.uniform(size=p.shape) < 0.2] = np.nan
    expected = np.array([verdicts.holm(row) for row in p])
    assert np.allclose(planner.holm_rows(p), expected, equal_nan=True)


# --- unit costs -------------------------------------------------------------------------------


def record_jobs(workdir: Path, jobs: list[tuple]) -> None:
    """Snakemake's metadata records of ``jobs`` (rule, output, start, end[, threads]) under
    workdir; a job of threads has them in its command, as the rules write it."""
    folder = workdir / ".snakemake" / "metadata"
    folder.mkdir(parents=True, exist_ok=True)
    for rule, output, start, end, *threads in jobs:
        name = base64.urlsafe_b64encode(output.encode()).decode()
        record = {"rule": rule, "starttime": start, "endtime": end, "incomplete": False}
        if threads:
            record["shellcmd"] = f"whcore {rule} --spec '{{}}' --threads {threads[0]} > log 2>&1"
        record["job_hash"] = "/".join(output.split("/")[4:])  # a job's outputs share it
        (folder / name).write_text(json.dumps(record))


JOBS = [
    ("train_spectrum", "results/tiny/runs/spectrum/draw0/standard/default/size20_dseed0", 0, 30),
    ("train_spectrum", "results/tiny/spectra/spectrum/draw0/standard/default/size20_dseed0", 0, 31),
    ("target", "results/tiny/synthetic/spectrum/draw1.json", 40, 50),
    ("train", "results/tiny/runs/real/gb1/hashwh/b4/size100_dseed0", 50, 90),
    ("baselines", "results/tiny/runs/real/gb1/lasso/grid/size100_dseed0.parquet", 90, 100, 2),
    ("figure", "results/tiny/figures/fig.png", 107, 108, 1),
    ("aggregate_spectrum", "results/tiny/tables/spectrum_selected.parquet", 100, 107),
]


def test_unit_costs_sum_each_experiments_jobs_once_per_job(tmp_path):
    record_jobs(tmp_path, JOBS)
    costs, fixed = unit_costs(tmp_path, "tiny", {"spectrum": 2, "real": 1}, cost_rules())
    # A job of two outputs counts once; a job of 2 threads holds 2 cores for its wall time.
    assert costs == {"spectrum": (31 + 10) / 2, "real": 40 + 2 * 10}
    assert fixed == 7 + 1


def test_unit_costs_without_records_name_the_folder_and_the_fix(tmp_path):
    with pytest.raises(ValueError, match=r"\.snakemake/metadata: no finished job.*--costs FILE"):
        unit_costs(tmp_path, "tiny", {"spectrum": 2}, cost_rules())


# --- bad inputs ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pilot(tmp_path_factory):
    """A pilot run's claims (written by this engine) in results/tiny/ of a working folder
    whose Snakemake records hold its jobs, made by .test/config.yaml."""
    work = tmp_path_factory.mktemp("work")
    run = work / "results" / "tiny"
    run.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claim_module, "needed_line", lambda *args, **kwargs: "")
        claims = engine_run(np.random.default_rng(0), PILOT)
    write_claims(run / "claims.json", claims)
    config = yaml.safe_load(TINY.read_text())
    config["spectrum"]["draws"], config["real"]["data_seeds"] = PILOT["spectrum"], PILOT["real"]
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    record = {"digest": "x", "source": str(work / "config.yaml")}
    (run / "configuration.json").write_text(json.dumps(record))
    record_jobs(work, JOBS)
    return run


def test_an_old_claims_json_names_the_missing_field_and_the_fix(tmp_path):
    """A claims.json written before claims carried their design (the faithful run's, less the
    field)."""
    claims = json.loads((REPO / "docs" / "faithful" / "claims.json").read_text())
    old = tmp_path / "claims.json"
    old.write_text(json.dumps([{k: v for k, v in c.items() if k != "design"} for c in claims]))
    with pytest.raises(
        ValueError, match=r"claims\.json: no claim has the field 'design'.*forcerun"
    ):
        planner.read_models(old)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["parts"][0].pop("cov"), r"field design\.parts: unreadable \(KeyError"),
        (lambda d: d["parts"][0].update(units=[1]), r"field design\.parts: 2 means need 2 units"),
        (lambda d: d.pop("experiment"), r"field design: needs 'experiment'"),
    ],
)
def test_a_garbled_design_names_the_claim_and_field(pilot, tmp_path, edit, message):
    claims = json.loads((pilot / "claims.json").read_text())
    edit(claims[0]["design"])
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(claims))
    with pytest.raises(ValueError, match=rf"{path}: claim 'spectrum_0', {message}"):
        planner.read_models(path)


def test_not_json_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "claims.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match=rf"{path}: cannot read it as JSON"):
        planner.read_models(path)


@pytest.mark.parametrize("hours", [0, -1])
def test_a_budget_of_nothing_is_refused(pilot, capsys, hours):
    assert main(["plan", str(pilot), "--cpu-hours", str(hours)]) == 2
    assert "--cpu-hours must be above 0 hours" in capsys.readouterr().err


def test_a_budget_below_the_run_s_own_units_names_the_least(pilot, capsys, tmp_path):
    out = tmp_path / "plan.yaml"
    assert main(["plan", str(pilot), "--cpu-hours", "0.01", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--cpu-hours 0.01 is below what the run's own units cost (0.0303 hours" in err, err
    assert not out.exists()


# --- the overlay --------------------------------------------------------------------------------


def test_the_overlay_makes_a_valid_configuration(pilot, capsys, tmp_path):
    out = tmp_path / "plan.yaml"
    args = ["plan", str(pilot), "--cpu-hours", "0.2", "--cores", "2", "--out", str(out)]
    assert main([*args, "--draws", "300"]) == 0
    said = capsys.readouterr().out
    layer = yaml.safe_load(out.read_text())
    assert layer["run_name"] == "tiny-planned"
    assert set(layer) <= {"run_name", "spectrum", "real"}
    assert layer["spectrum"]["draws"] >= 5 and layer["real"]["data_seeds"] >= 5
    config = yaml.safe_load((pilot.parent.parent / "config.yaml").read_text())
    load_config(planner.merged(config, layer), str(SCHEMA_PATH))
    assert "effects planned on: each cell's at the end of its 80% effect interval" in said
    assert "at the planned design: expected" in said and "spectrum_0: " in said


def test_every_experiment_s_unit_key_is_in_the_schema():
    schema = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]
    for section, key in unit_keys().values():
        assert key in schema[section]["properties"], (section, key)
