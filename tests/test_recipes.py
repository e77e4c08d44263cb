"""The recipes of docs/workflow.md ("Recipes"), each followed at run time: a toy job kind,
figure, claim, network regularizer and registry dataset goes into its registry (its code in a
module on sys.path), and the workflow picks it up as far as a test can follow it quickly (the
plan, the rules' lookups, the command line, a drawing, a report, a training step)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import TINY
from test_claims import real_selected
from test_job_kinds import toy_kind  # noqa: F401 (the toy kind of the job-kind recipe)

from whcore.core import regularizers
from whcore.core.arrays import Data
from whcore.core.methods import METHOD_INFO, MethodInfo
from whcore.core.settings import TrainConfig
from whcore.core.training import train_grid
from whcore.data.datasets import REGISTRY, DatasetInfo
from whcore.pipeline import contract as contract_module
from whcore.pipeline.analyses.grids import training_groups
from whcore.pipeline.claims import FAILS, HOLDS, Claim, real_claims
from whcore.pipeline.cli import main
from whcore.pipeline.config import ConfigError, dataset_settings
from whcore.pipeline.config.schema import SCHEMA_PATH, render
from whcore.pipeline.contract import load_contract
from whcore.pipeline.experiments import EXPERIMENTS, Experiment
from whcore.pipeline.experiments.datasets import curve_datasets
from whcore.pipeline.figures.registry import FIGURES, Figure
from whcore.pipeline.snakefile import (
    Wildcards,
    aggregate_log,
    aggregate_outputs,
    aggregations,
    figure_summary,
    raw_file,
)


def tiny_config() -> dict:
    return yaml.safe_load(TINY.read_text())


@pytest.fixture
def toys(tmp_path, monkeypatch):
    """A package ``recipe_toys`` on sys.path for a test's modules, forgotten afterwards."""
    package = tmp_path / "recipe_toys"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in [name for name in sys.modules if name.split(".")[0] == "recipe_toys"]:
        del sys.modules[name]


def schema_written_again(folder: Path) -> str:
    """What ``python -m whcore.pipeline.config.schema`` writes after a registry changed (here
    into a copy of the schema in ``folder``)."""
    path = folder / "config.schema.yaml"
    path.write_text(render(SCHEMA_PATH.read_text()))
    return str(path)


# --- a job kind (its subcommand and lookups: tests/pipeline/jobs/test_job_kinds.py) ---------------


def test_a_job_kinds_rule_takes_its_spec_and_inputs_by_its_output_pattern(toy_kind):  # noqa: F811
    contract = load_contract(str(TINY), str(SCHEMA_PATH))
    (job,) = contract.jobs_of("count")
    pattern = job.spec.outputs["count"].replace("real_selected", "{table}")
    wildcards = {"table": "real_selected"}
    assert contract.spec_of(pattern)(wildcards) == job.spec_json
    assert contract.inputs_of(pattern)(wildcards) == [contract.layout.table_path("real_selected")]


# --- a figure -------------------------------------------------------------------------------------

FIGURE_MODULE = '''
from whcore.pipeline.figures.style import PAGE_WIDTH, subplots


def best_r2(tables, settings):
    """The best mean test R^2 of each dataset, as bars."""
    best = tables["real_summary"].groupby("dataset")["mean"].max()
    fig, axes = subplots(figsize=(PAGE_WIDTH / 2, 2.0))
    axes[0, 0].bar(list(best.index), best.to_numpy())
    return fig
'''


def test_a_figure_is_planned_with_its_rule_and_drawn(toys, tmp_path, monkeypatch):
    (toys / "figures.py").write_text(FIGURE_MODULE)
    caption = "The best test R^2 of each dataset. Bars: the largest mean over the train sizes."
    figure = Figure(("real_summary",), "recipe_toys.figures", "best_r2", caption=caption)
    monkeypatch.setitem(FIGURES, "figX_best_r2", figure)

    contract = load_contract(str(TINY), str(SCHEMA_PATH))
    stem = contract.layout.figure_stem("figX_best_r2")
    job = contract.job(f"{stem}.pdf")
    table = contract.layout.table_path("real_summary")
    assert "figX_best_r2" in contract.figures()
    assert {f"{stem}.pdf", f"{stem}.png"} <= set(contract.targets())
    assert job.spec.figure == "figX_best_r2" and job.inputs == (table,)
    # Its rule: described by its caption, rerun when its module changes.
    summary = figure_summary("figX_best_r2")
    assert summary == "Figure X (PDF, PNG): The best test R^2 of each dataset."
    code = figure.code
    (toys / "figures.py").write_text(FIGURE_MODULE + "# edited\n")
    assert figure.code != code
    # Drawn where the experiment of its tables runs, from its tables alone.
    config = tiny_config()
    config["real"]["enabled"] = False
    assert "figX_best_r2" not in load_contract(config, str(SCHEMA_PATH)).figures()

    monkeypatch.chdir(tmp_path)
    Path(table).parent.mkdir(parents=True)
    pd.DataFrame({"dataset": ["gb1", "gb1", "sgemm"], "mean": [0.2, 0.4, 0.3]}).to_parquet(table)
    assert main(["figure", "--spec", job.spec_json, "--tables", table]) == 0
    assert Path(f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"


# --- a claim --------------------------------------------------------------------------------------

TOY_CLAIM = "real_toy_hashwh_above_standard"


def hashwh_above_standard(tables, settings=None) -> list[Claim]:
    """The toy claim: HashWH's mean test R^2 above the standard network's in every cell."""
    means = tables["real_summary"].pivot_table(
        index=["dataset", "train_size"], columns="method", values="mean"
    )
    gain = means["hashwh"] - means["standard"]
    test = "HashWH's mean test R^2 is above the standard network's in every cell."
    return [
        Claim(
            TOY_CLAIM,
            "A toy.",
            test,
            "a recipe",
            HOLDS if (gain > 0).all() else FAILS,
            effect=f"smallest gain {gain.min():+.2f}",
        )
    ]


def real_and_toy(tables, settings=None) -> list[Claim]:
    """The real experiment's group with the toy claim added, as the recipe adds a claim."""
    return [*real_claims(tables, settings), *hashwh_above_standard(tables)]


@pytest.mark.parametrize(("gain", "verdict"), [(0.1, HOLDS), (-0.1, FAILS)])
def test_a_claim_is_checked_in_the_claims_report(gain, verdict, tmp_path, monkeypatch):
    real = EXPERIMENTS["real"]
    tables = (*real.claim_tables, "real_summary")
    monkeypatch.setitem(
        EXPERIMENTS, "real", replace(real, claim_tables=tables, claims=real_and_toy)
    )
    contract = load_contract(str(TINY), str(SCHEMA_PATH))
    table = contract.layout.table_path("real_summary")
    assert table in contract.job(contract.layout.claims_md).inputs

    monkeypatch.chdir(tmp_path)
    Path(table).parent.mkdir(parents=True)
    selected = contract.layout.table_path("real_selected")
    real_selected(0.1)["real_selected"].to_parquet(selected)
    cells = itertools.product(["gb1", "sgemm"], [100, 200], ["standard", "hashwh"])
    rows = [(d, size, m, 0.4 + (gain if m == "hashwh" else 0.0)) for d, size, m in cells]
    summary = pd.DataFrame(rows, columns=["dataset", "train_size", "method", "mean"])
    summary.to_parquet(table)
    spec = {"outputs": {"md": "claims.md", "json": "claims.json"}}
    assert main(["claims", "--spec", json.dumps(spec), "--tables", selected, table]) == 0
    (claim,) = [c for c in json.loads(Path("claims.json").read_text()) if c["id"] == TOY_CLAIM]
    assert claim["verdict"] == claim["across"] == verdict
    assert claim["scope"].startswith("gb1, sgemm at train sizes 100, 200")  # the real one's
    assert f"## {TOY_CLAIM}: **{verdict}**" in Path("claims.md").read_text()
    assert main(["macros", "claims.json", "claims.tex"]) == 0
    macro = f"\\newcommand{{\\claimRealToyHashwhAboveStandardVerdict}}{{{verdict}}}"
    assert macro in Path("claims.tex").read_text()


# --- an experiment --------------------------------------------------------------------------------

TOY_EXPERIMENT = "toy"


def add_toy(plan) -> None:
    """The toy experiment's builder: one training job of the standard network on the first
    real dataset's smallest train size (its label: the experiment's name)."""
    if not plan.enabled(TOY_EXPERIMENT):
        return
    real = plan.config["real"]
    name = curve_datasets(plan.config)[0]
    ds = dataset_settings(plan.config, name)
    (group,) = training_groups({"standard": {}})
    data = plan.real_data(name, ds, min(ds["train_sizes"]), 0)
    labels = {"experiment": TOY_EXPERIMENT, "dataset": name}
    plan.add_train(TOY_EXPERIMENT, name, group, real, data, ds["training"], labels, runtime=False)


def toy_tables(runs) -> dict:
    """The toy aggregation: one row per training job whose records it reads."""
    return {"toy_runs": pd.DataFrame({"records": [str(path) for path in runs]})}


def toy_claims(tables, settings=None) -> list[Claim]:
    """The toy group: every planned run of the toy experiment was aggregated."""
    ran = len(tables["toy_runs"])
    return [Claim("toy_ran", "A toy.", "One row per run.", "a recipe", HOLDS if ran else FAILS)]


TOY = Experiment(
    TOY_EXPERIMENT,
    lambda config: config["real"]["enabled"],  # a toy with no config section of its own
    tables=("toy_runs",),
    aggregation=toy_tables,
    summary="The toy experiment's table.",
    log_line=lambda tables: f"toy: {len(tables['toy_runs'])} runs",
    claim_tables=("toy_runs",),
    claims=toy_claims,
    scope=lambda claim, tables: "the toy's one run",
)


def test_an_experiment_is_planned_aggregated_and_checked(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(EXPERIMENTS, TOY_EXPERIMENT, TOY)
    at = contract_module.BUILDERS.index(contract_module.add_reports)
    builders = (*contract_module.BUILDERS[:at], add_toy, *contract_module.BUILDERS[at:])
    monkeypatch.setattr(contract_module, "BUILDERS", builders)
    contract = load_contract(str(TINY), str(SCHEMA_PATH))
    layout = contract.layout
    (train,) = [job for job in contract.jobs_of("train") if job.labels["experiment"] == "toy"]
    table = layout.table_path("toy_runs")
    aggregation = contract.job(table)
    assert aggregation.kind == "aggregate" and train.spec.outputs["records"] in aggregation.inputs
    assert table in contract.job(layout.claims_md).inputs and table in contract.targets()
    # Its rule: the aggregation rules are made from the registry (workflow/rules/aggregate.smk).
    assert aggregations()[TOY_EXPERIMENT] == "The toy experiment's table."
    assert aggregate_outputs(layout, TOY_EXPERIMENT) == [table]
    assert aggregate_log(layout, TOY_EXPERIMENT) == layout.aggregate_log(TOY_EXPERIMENT)

    monkeypatch.chdir(tmp_path)
    records = train.spec.outputs["records"]
    spec = aggregation.spec_json
    assert main(["aggregate", "--spec", spec, "--runs", records]) == 0
    assert "toy: 1 runs" in capsys.readouterr().out
    assert pd.read_parquet(table)["records"].tolist() == [records]
    claims = {"outputs": {"md": "claims.md", "json": "claims.json"}}
    assert main(["claims", "--spec", json.dumps(claims), "--tables", table]) == 0
    (claim,) = [c for c in json.loads(Path("claims.json").read_text()) if c["id"] == "toy_ran"]
    assert (claim["verdict"], claim["scope"]) == (HOLDS, "the toy's one run")


# --- a method (a network regularizer) -------------------------------------------------------------

REGULARIZER_MODULE = '''
import torch

from whcore.core.methods import METHOD_INFO
from whcore.core.regularizers import Regularizer, member_weight


class ZeroOutput(Regularizer):
    """lam * f(0)^2, the network's output at the all-zero input squared; counts its steps."""

    name = "zero_output"
    PARAMS = METHOD_INFO[name].params
    PER_MEMBER = METHOD_INFO[name].per_member

    def __init__(self, ctx, lam):
        super().__init__(ctx, lam=lam)
        self.lam = member_weight(lam, ctx)
        self.zero = torch.zeros(len(ctx.seeds), 1, ctx.n, dtype=ctx.dtype, device=ctx.device)
        self.steps = 0

    def penalty(self, model):
        self.steps += 1
        return self.lam * model(self.zero)[:, 0] ** 2

    def on_epoch_end(self, model, epoch):
        return {"zero_output_steps": self.steps}
'''


def test_a_method_is_validated_planned_and_trained(toys, tmp_path, monkeypatch):
    (toys / "regularizer.py").write_text(REGULARIZER_MODULE)
    info = MethodInfo(
        {"lam": float}, label="Zero output", per_member=("lam",), module="recipe_toys.regularizer"
    )
    monkeypatch.setitem(METHOD_INFO, "zero_output", info)
    monkeypatch.setattr(regularizers, "METHODS", dict(regularizers.METHODS))

    def config(lams: list) -> dict:
        config = tiny_config()
        config["real"]["methods"]["zero_output"] = {"lam": lams}
        return config

    with pytest.raises(ConfigError, match="zero_output"):  # the schema not written again
        load_contract(config([0.1, 1]), str(SCHEMA_PATH))
    schema = schema_written_again(tmp_path)
    with pytest.raises(ConfigError, match="real.methods.zero_output.lam"):
        load_contract(config(["high"]), schema)
    contract = load_contract(config([0.1, 1]), schema)
    jobs = [job for job in contract.jobs_of("train") if job.spec.method == "zero_output"]
    cells = {(job.labels["dataset"], job.spec.data.train_size) for job in jobs}
    assert len(jobs) == len(cells) == 5  # every (dataset, train size) of the tiny run, one job
    assert all(job.spec.grid == [{"lam": 0.1}, {"lam": 1}] for job in jobs)
    assert re.fullmatch(Wildcards.of(contract.config, contract).methods, "zero_output")

    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (24, 4)).astype(float)
    data = Data(x[:16], x[:16].sum(1), x[16:], x[16:].sum(1))
    training = TrainConfig(epochs=2, batch_size=8, width=1, device="cpu", patience=None)
    records = train_grid(data, "zero_output", [{"lam": 0.1}, {"lam": 1.0}], [0], training)
    trained = records[records["epoch"] > 0]
    assert trained.groupby("epoch")["zero_output_steps"].unique().map(list).to_dict() == {
        1: [2],
        2: [4],  # two steps an epoch, both members stacked in one model
    }


# --- a dataset of the registry --------------------------------------------------------------------


def parse_bits(path) -> pd.DataFrame:
    """The toy dataset's parser: its CSV's 0/1 columns, then y."""
    frame = pd.read_csv(path)
    return frame.astype({column: "uint8" for column in frame.columns[:-1]})


def toy_dataset(mirror: Path) -> DatasetInfo:
    """Every input of {0,1}^6 with a target, as a raw file in ``mirror``."""
    bits = np.array(list(itertools.product([0, 1], repeat=6)))
    frame = pd.DataFrame(bits, columns=[f"bit{i}" for i in range(6)])
    frame["y"] = bits @ np.arange(1, 7) + (bits[:, 0] * bits[:, 1])
    raw = mirror / "bits" / "bits.csv"
    raw.parent.mkdir(parents=True)
    frame.to_csv(raw, index=False)
    content = raw.read_bytes()
    return DatasetInfo(
        "bits",
        "Six bits (a toy)",
        "Bits",
        "bits.csv",
        hashlib.sha256(content).hexdigest(),
        len(content),
        (),
        parse_bits,
        n=6,
        rows=64,
        val_size=16,
        test_size=16,
        source="a recipe's test",
        encoding="6 bits; y = a weighted sum and one interaction",
    )


def with_bits() -> dict:
    """The tiny configuration with the toy dataset in the real data and the ablation."""
    config = tiny_config()
    config["real"]["datasets"]["bits"] = {"train_sizes": [16], "val_size": 16, "test_size": 16}
    config["ablation"]["datasets"]["bits"] = {
        "train_size": 32,
        "test_size": 16,
        "max_depth": 2,
        "n_trees": 2,
    }
    return config


@pytest.mark.usefixtures("no_network")
def test_a_registry_dataset_is_fetched_binarized_and_trained_on(tmp_path, monkeypatch):
    monkeypatch.setitem(REGISTRY, "bits", toy_dataset(tmp_path / "mirror"))
    with pytest.raises(ConfigError, match="ablation.datasets"):  # the schema not written again
        load_contract(with_bits(), str(SCHEMA_PATH))
    contract = load_contract(with_bits(), schema_written_again(tmp_path))
    data = "resources/data/bits.parquet"
    trains = [job for job in contract.jobs_of("train") if job.labels.get("dataset") == "bits"]
    assert len(trains) == 3  # standard, ens, hashwh
    assert all(job.inputs == (data,) for job in trains)
    assert len([job for job in contract.jobs_of("ablation") if data in job.inputs]) == 1
    wildcards = Wildcards.of(contract.config, contract)
    assert re.fullmatch(wildcards.datasets, "bits")
    assert re.fullmatch(wildcards.raw_files, "bits.csv")
    raw = raw_file(SimpleNamespace(dataset="bits"))
    assert raw == "resources/raw/bits/bits.csv"

    monkeypatch.chdir(tmp_path)
    assert main(["download", "bits", "--out", raw, "--mirror", str(tmp_path / "mirror")]) == 0
    assert main(["binarize", "bits", "--raw", raw, "--out", data]) == 0
    assert pd.read_parquet(data).shape == (64, 7)
    (standard,) = [job for job in trains if job.spec.method == "standard"]
    assert main(["train", "--spec", standard.spec_json, "--device", "cpu"]) == 0
    (records,) = Path(standard.spec.outputs["records"]).glob("*.parquet")
    assert pd.read_parquet(records)["epoch"].max() == 3
