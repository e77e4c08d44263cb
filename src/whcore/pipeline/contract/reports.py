"""The jobs that read tables: each experiment's aggregation (model selection on validation),
the figures of the figure registry and the claims report."""

from __future__ import annotations

from ..figures.registry import FIGURES
from ..jobs.aggregate import TABLES, AggregateSpec
from ..jobs.claims import ClaimsSpec
from ..jobs.figure import FigureSpec
from .base import Plan
from .config import protocol_datasets

__all__ = ["CLAIM_TABLES", "EXPERIMENT_OF_TABLES", "add_reports", "aggregate_inputs"]

# The tables the claims are checked against ("ablation": one table per ablation dataset).
CLAIM_TABLES = {
    "spectrum": ("spectrum_selected", "spectrum_epochs"),
    "synthetic": ("synthetic_selected", "synthetic_runs"),
    "real": ("real_selected",),
    "protocol": ("protocol",),
    "leaderboard": ("leaderboard",),
    "ablation": ("ablation",),
    "entacmaea_energy": ("entacmaea_energy",),
}
# The experiment writing each table: a figure is drawn where the experiments of its tables run.
EXPERIMENT_OF_TABLES = {
    name: experiment
    for tables in (TABLES, CLAIM_TABLES)
    for experiment, names in tables.items()
    for name in names
}


def aggregate_inputs(plan: Plan, experiment: str, dataset: str | None = None) -> dict:
    """An aggregation's input files by role (the `whcore aggregate` options); the
    protocol's are those of one dataset."""
    labels = {"experiment": experiment}
    if experiment == "protocol":
        labels["dataset"] = dataset
    inputs = {"runs": plan.outputs("train", **labels)}
    if experiment == "spectrum":
        inputs["spectra"] = sorted(
            job.spec.outputs["spectra"]
            for job in plan.jobs.values()
            if job.kind == "train" and "spectra" in job.spec.outputs
        )
        inputs["targets"] = plan.outputs("target", experiment="spectrum")
    if experiment in ("real", "protocol"):
        inputs["baselines"] = plan.outputs("baselines", **labels)
    return inputs


def figure_settings(config: dict) -> dict:
    """What figures (and the speed claim's runtime cell) need to know from the config."""
    spectrum, synthetic = config["spectrum"], config["synthetic"]
    return {
        "figure_train_size": spectrum["figure_train_size"],
        "figure_draw": spectrum["figure_draw"],
        "runtime_n": synthetic["runtime_figure"]["n"],
        "runtime_c": synthetic["runtime_figure"]["c"],
        "runtime_dataset": config["real"]["runtime_dataset"],
        "run_name": config["run_name"],
    }


def _add_aggregation(plan: Plan, experiment: str, dataset: str | None = None) -> None:
    inputs = aggregate_inputs(plan, experiment, dataset)
    inputs = tuple(path for paths in inputs.values() for path in paths)
    if dataset is not None:  # the protocol: one table per dataset
        path = plan.layout.protocol_table(dataset)
        spec = {"experiment": experiment, "dataset": dataset, "outputs": {"protocol": path}}
        labels = {"experiment": experiment, "dataset": dataset}
        plan.add(path, AggregateSpec, spec, inputs, labels)
        return
    names = TABLES[experiment]
    spec = {"experiment": experiment, "outputs": dict(zip(names, plan.tables(names)))}
    if experiment == "spectrum":
        spec["figure_train_size"] = plan.config["spectrum"]["figure_train_size"]
    path = plan.layout.table_path(names[0])
    plan.add(path, AggregateSpec, spec, inputs, {"experiment": experiment})


def add_reports(plan: Plan) -> None:
    for name in protocol_datasets(plan.config):
        _add_aggregation(plan, "protocol", name)
    for experiment in TABLES:
        if experiment != "protocol" and plan.enabled(experiment):
            _add_aggregation(plan, experiment)
    settings = figure_settings(plan.config)
    for figure_id, figure in FIGURES.items():
        if not all(plan.enabled(EXPERIMENT_OF_TABLES[name]) for name in figure.tables):
            continue
        stem = plan.layout.figure_stem(figure_id)
        spec = {"figure": figure_id, "settings": settings, "outputs": {"stem": stem}}
        tables = tuple(plan.tables(figure.tables))
        plan.add(f"{stem}.pdf", FigureSpec, spec, tables, {"figure": figure_id})
    names = [n for e, names in CLAIM_TABLES.items() if plan.enabled(e) for n in names]
    outputs = {
        "md": plan.layout.claims_md,
        "json": plan.layout.claims_json,
        "provenance": plan.layout.provenance,
    }
    if plan.own_data_only():
        settings = {**settings, "report": "own_data"}
    claims = {"outputs": outputs, "settings": settings}
    plan.add(outputs["md"], ClaimsSpec, claims, tuple(plan.tables(names)))
