"""The jobs that read tables: each experiment's aggregation (model selection on validation),
the figures of the figure registry and the claims report."""

from __future__ import annotations

from ..experiments import EXPERIMENTS, aggregated, experiment_of_table
from ..figures.registry import FIGURES
from ..jobs.aggregate import AggregateSpec
from ..jobs.claims import ClaimsSpec
from ..jobs.figure import FigureSpec
from .base import Plan

__all__ = ["add_reports", "aggregate_inputs"]


def aggregate_inputs(plan: Plan, experiment: str, dataset: str | None = None) -> dict:
    """An aggregation's input files by role (the `whcore aggregate` options: its training
    records and its registry entry's roles); an experiment of one table per dataset reads
    those of ``dataset``."""
    labels = {"experiment": experiment}
    if dataset is not None:
        labels["dataset"] = dataset
    inputs = {"runs": plan.outputs("train", **labels)}
    for role in EXPERIMENTS[experiment].roles:
        inputs[role] = _role_inputs(plan, role, labels)
    return inputs


def _role_inputs(plan: Plan, role: str, labels: dict) -> list[str]:
    """The files of one role beyond the training records: the spectra its training jobs
    write, the g* targets, the baselines' records."""
    if role == "spectra":
        return sorted(
            job.spec.outputs["spectra"]
            for job in plan.jobs.values()
            if job.kind == "train" and "spectra" in job.spec.outputs
        )
    if role == "targets":
        return plan.outputs("target", experiment=labels["experiment"])
    return plan.outputs("baselines", **labels)


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
    entry = EXPERIMENTS[experiment]
    spec = {"experiment": experiment}
    spec.update({key: plan.config[entry.config_section][key] for key in entry.settings})
    labels = {"experiment": experiment}
    if dataset is not None:  # one table per dataset
        (name,) = entry.tables
        spec["dataset"] = labels["dataset"] = dataset
        spec["outputs"] = {name: plan.layout.table_path(f"{name}_{dataset}")}
    else:
        spec["outputs"] = dict(zip(entry.tables, plan.tables(entry.tables)))
    path = next(iter(spec["outputs"].values()))
    plan.add(path, AggregateSpec, spec, inputs, labels)


def add_reports(plan: Plan) -> None:
    for entry in sorted(aggregated(), key=lambda e: not e.per_dataset):  # per dataset first
        for dataset in entry.datasets(plan.config):
            _add_aggregation(plan, entry.name, dataset)
        if not entry.per_dataset and plan.enabled(entry.name):
            _add_aggregation(plan, entry.name)
    settings = figure_settings(plan.config)
    for figure_id, figure in FIGURES.items():
        if not all(plan.enabled(experiment_of_table(name)) for name in figure.tables):
            continue
        stem = plan.layout.figure_stem(figure_id)
        spec = {"figure": figure_id, "settings": settings, "outputs": {"stem": stem}}
        tables = tuple(plan.tables(figure.tables))
        plan.add(f"{stem}.pdf", FigureSpec, spec, tables, {"figure": figure_id})
    names = [n for e in EXPERIMENTS.values() if plan.enabled(e.name) for n in e.claim_tables]
    outputs = {
        "md": plan.layout.claims_md,
        "json": plan.layout.claims_json,
        "provenance": plan.layout.provenance,
    }
    if plan.own_data_only():
        settings = {**settings, "report": "own_data"}
    claims = {"outputs": outputs, "settings": settings}
    plan.add(outputs["md"], ClaimsSpec, claims, tuple(plan.tables(names)))
