"""The jobs of the experiments on synthetic targets: the spectrum experiment (Figures 1-3,
A1-A4) and the synthetic one (Figures 4, A5, A6): their g* draws and training jobs."""

from __future__ import annotations

import itertools

from ..analyses.grids import training_groups
from ..jobs.target import TargetSpec
from .base import Plan
from .cells import Cells

__all__ = ["add_spectrum", "add_synthetic"]


def _add_target(plan: Plan, experiment, dataset, family, n, max_degree, k, seed) -> None:
    path = plan.layout.target.format(experiment=experiment, dataset=dataset)
    spec = {
        "family": family,
        "n": n,
        "max_degree": max_degree,
        "k": k,
        "seed": seed,
        "outputs": {"target": path},
    }
    plan.add(path, TargetSpec, spec, labels={"experiment": experiment})
    plan.targets_of.setdefault(experiment, {})[dataset] = {**spec, "path": path}


def add_spectrum(plan: Plan) -> None:
    """Degree-ladder draws, each trained by every method at every train size and data seed,
    with exact spectra per epoch."""
    exp = plan.config["spectrum"]
    if not exp["enabled"]:
        return
    for draw in range(exp["draws"]):
        _add_target(
            plan,
            "spectrum",
            f"draw{draw}",
            "degree_ladder",
            exp["n"],
            exp["max_degree"],
            None,
            draw,
        )
    for (dataset, target), size, dseed, group in itertools.product(
        plan.targets_of["spectrum"].items(),
        exp["train_sizes"],
        range(exp["data_seeds"]),
        training_groups(exp["methods"]),
    ):
        data = {
            "source": "synthetic",
            "path": target["path"],
            "train_size": size,
            "val_size": "rest",
            "test_size": 0,
            "data_seed": dseed,
            "standardize": False,
        }
        labels = {"experiment": "spectrum", "dataset": dataset, "draw": target["seed"]}
        plan.add_train(
            "spectrum",
            dataset,
            group,
            exp,
            data,
            exp["training"],
            labels,
            runtime=False,
            table=(2 ** exp["n"], exp["n"]),
        )
    plan.stack(Cells("spectrum", "dataset", tuple(plan.targets_of["spectrum"])))


def add_synthetic(plan: Plan) -> None:
    """Random sparse draws of every n, trained at c x samples_per_c x n samples."""
    exp = plan.config["synthetic"]
    if not exp["enabled"]:
        return
    for n, draw in itertools.product(exp["ns"], range(exp["draws"])):
        _add_target(
            plan,
            "synthetic",
            f"n{n}_draw{draw}",
            "random_sparse",
            n,
            exp["max_degree"],
            exp["k"],
            draw,
        )
    # Figures 4b and A6 and the speed-up claim read the per-model times of one draw.
    timed_draw = plan.config["spectrum"]["figure_draw"]
    for (dataset, target), c, dseed, group in itertools.product(
        plan.targets_of["synthetic"].items(),
        exp["cs"],
        range(exp["data_seeds"]),
        training_groups(exp["methods"]),
    ):
        size = c * exp["samples_per_c"] * target["n"]
        data = {
            "source": "synthetic",
            "path": target["path"],
            "train_size": size,
            "val_size": int(exp["val_factor"] * size),
            "test_size": int(exp["test_factor"] * size),
            "data_seed": dseed,
            "standardize": exp["standardize"],
        }
        labels = {
            "experiment": "synthetic",
            "dataset": dataset,
            "n": target["n"],
            "c": c,
            "draw": target["seed"],
        }
        plan.add_train(
            "synthetic",
            dataset,
            group,
            exp,
            data,
            exp["training"],
            labels,
            runtime=target["seed"] == timed_draw,
            table=(size + data["val_size"] + data["test_size"], target["n"]),
        )
    # A cell: the draws of one n, c and data seed but the timed one (one model at a time).
    draws = [f"n{{n}}_draw{draw}" for draw in range(exp["draws"]) if draw != timed_draw]
    plan.stack(Cells("synthetic", "dataset", tuple(draws)))
