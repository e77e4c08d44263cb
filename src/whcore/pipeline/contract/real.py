"""The jobs of the real-data experiment (Figures 5a, 5b, A7): the user's datasets, training and
baselines on each split, ProteinGym's supervised protocol, and the learned epistasis."""

from __future__ import annotations

import itertools

from ...data.datasets import REGISTRY
from ...data.folds import FOLDS
from ...data.own_data import raw_file_name
from ..analyses.grids import training_groups
from ..config import dataset_settings, epistasis_datasets
from ..experiments.datasets import (
    curve_datasets,
    leaderboard_datasets,
    own_datasets,
    proteingym_datasets,
)
from ..jobs.baselines import BaselinesSpec
from ..jobs.binarize_own import BinarizeOwnSpec
from ..jobs.download_own import DownloadOwnSpec
from ..jobs.epistasis import EpistasisSpec
from ..jobs.epistasis_figure import EpistasisFigureSpec
from ..jobs.leaderboard import LeaderboardSpec, network_settings
from ..jobs.train import training_defaults
from ..runtime.layout import Layout
from .base import Plan
from .cells import Cells

__all__ = ["add_epistasis", "add_real", "add_own_data"]


def _protocol_folds(config: dict) -> list[tuple[str, str, int]]:
    """(dataset, split scheme, held-out fold) of every unit of ProteinGym's protocol."""
    return [
        (name, scheme, fold)
        for name, schemes in proteingym_datasets(config).items()
        for scheme in schemes
        for fold in range(FOLDS)
    ]


def _protocol_data(config: dict, name: str, scheme: str, fold: int) -> dict:
    """A held-out fold of a dataset (validation carved from the other folds): networks
    and baselines read exactly this."""
    return {
        "source": "table",
        "path": Layout.data(name),
        "data_seed": 0,
        "folds": {"scheme": scheme, "fold": fold},
        "standardize": config["real"]["standardize"],
    }


def add_own_data(plan: Plan) -> None:
    """A dataset given by file (or url and sha256): its download, then its binarization
    to ``resources/data/<name>.parquet`` as every real dataset."""
    if not plan.config["real"]["enabled"]:
        return
    leaderboard = leaderboard_datasets(plan.config)
    for name, source in own_datasets(plan.config).items():
        raw = source.get("file")
        if raw is None:
            raw = Layout.RAW.format(dataset=name, filename=raw_file_name(source))
            spec = {
                "dataset": name,
                "url": source["url"],
                "sha256": source["sha256"],
                "outputs": {"raw": raw},
            }
            plan.add(raw, DownloadOwnSpec, spec, labels={"dataset": name})
        data = Layout.data(name)
        spec = {"dataset": name, "raw": raw, "source": source, "outputs": {"data": data}}
        plan.add(data, BinarizeOwnSpec, spec, labels={"dataset": name})
        if name in leaderboard:
            _add_leaderboard(plan, name, raw, source, leaderboard[name])


def _add_leaderboard(plan: Plan, name: str, raw: str, source: dict, schemes: list) -> None:
    """The leaderboard mode on a user's file: One-Hot and ridge, and the networks the dataset
    trains (standard, HashWH) with the grids and training of its ``leaderboard`` key over the
    mode's defaults (``whcore.pipeline.jobs.leaderboard.network_settings``)."""
    settings = dataset_settings(plan.config, name)
    own = settings.get("leaderboard", {})
    grids, training = network_settings(settings["methods"], own.get("methods"), own.get("training"))
    path = plan.layout.table_path(f"leaderboard_{name}")
    spec = {
        "dataset": name,
        "raw": raw,
        "source": source,
        "schemes": schemes,
        "methods": ["onehot", "ridge", *grids],
        "grids": grids,
        "training": training,
        "ensemble": own.get("ensemble", 1),
        "outputs": {"table": path},
    }
    plan.add(path, LeaderboardSpec, spec, labels={"dataset": name})


def add_real(plan: Plan) -> None:
    """Every method and baseline family on every split of every dataset, and on every
    held-out fold of the datasets under ProteinGym's protocol."""
    config, real = plan.config, plan.config["real"]
    if not real["enabled"]:
        return
    for name in curve_datasets(config):
        ds = dataset_settings(config, name)
        for size, dseed, group in itertools.product(
            ds["train_sizes"], range(real["data_seeds"]), training_groups(ds["methods"])
        ):
            plan.add_train(
                "real",
                name,
                group,
                real,
                plan.real_data(name, ds, size, dseed),
                ds["training"],
                {"experiment": "real", "dataset": name},
                runtime=name == real["runtime_dataset"],
                table=(REGISTRY[name].rows, REGISTRY[name].n) if name in REGISTRY else None,
            )
    # A cell: the subsamples (data seeds) of one dataset and train size.
    plan.stack(Cells("real", "dseed", tuple(str(d) for d in range(real["data_seeds"]))))
    for name, scheme, fold in _protocol_folds(config):
        ds = dataset_settings(config, name)
        for group in training_groups(ds["methods"]):
            plan.add_train(
                "proteingym",
                name,
                group,
                real,
                _protocol_data(config, name, scheme, fold),
                ds["training"],
                {"experiment": "proteingym", "dataset": name},
                runtime=False,
                fold=(scheme, fold),
            )
    _add_baselines(plan)


def _add_baselines(plan: Plan) -> None:
    config, real = plan.config, plan.config["real"]
    for name in curve_datasets(config):
        ds = dataset_settings(config, name)
        for (family, grid), size, dseed in itertools.product(
            ds["baselines"].items(), ds["train_sizes"], range(real["data_seeds"])
        ):
            path = plan.layout.baseline.format(dataset=name, family=family, size=size, dseed=dseed)
            data = plan.real_data(name, ds, size, dseed)
            _add_baseline(plan, path, name, family, grid, data, {"experiment": "real"})
    for name, scheme, fold in _protocol_folds(config):
        for family, grid in dataset_settings(config, name)["baselines"].items():
            path = plan.layout.proteingym_baseline.format(
                dataset=name, scheme=scheme, family=family, fold=fold
            )
            data = _protocol_data(config, name, scheme, fold)
            labels = {"experiment": "proteingym", "dataset": name}
            _add_baseline(plan, path, name, family, grid, data, labels)


def _add_baseline(plan: Plan, path, dataset, family, grid, data, labels) -> None:
    """One baseline job: every setting of one family's ``grid`` fitted on one split."""
    spec = {
        "dataset": dataset,
        "family": family,
        "grid": grid,
        "data": data,
        "outputs": {"records": path},
    }
    plan.add(path, BaselinesSpec, spec, labels=labels)


def add_epistasis(plan: Plan) -> None:
    """For each analysed dataset: the spectra of the selected standard and HashWH networks
    (top interactions, energy by degree) and their figure."""
    config, settings = plan.config, plan.config["epistasis"]
    if not (config["real"]["enabled"] and settings["enabled"]):
        return
    names = epistasis_datasets(config)
    selected = plan.layout.table_path("real_selected")
    for name in names:
        ds = dataset_settings(config, name)
        tables = {
            "interactions": plan.layout.table_path(f"epistasis_{name}"),
            "energy": plan.layout.table_path(f"epistasis_energy_{name}"),
            "sites": plan.layout.table_path(f"epistasis_sites_{name}"),
        }
        spec = {
            "dataset": name,
            "data": plan.real_data(name, ds, max(ds["train_sizes"]), 0),
            "methods": [m for m in ("standard", "hashwh") if m in ds["methods"]],
            "training": {**training_defaults(), **ds["training"]},
            "top": settings["top"],
            "spright": {"m": settings["m"], "d": settings["d"]},
            "outputs": tables,
        }
        plan.add(tables["interactions"], EpistasisSpec, spec, (Layout.data(name), selected))
        stem = plan.layout.figure_stem(f"epistasis_{name}")
        title = config["real"]["datasets"][name].get("title", name)
        figure = {
            "dataset": name,
            "title": title,
            "run_name": config["run_name"],
            "outputs": {"stem": stem},
        }
        plan.add(
            f"{stem}.pdf", EpistasisFigureSpec, figure, tuple(tables.values()), {"dataset": name}
        )
