"""The jobs of the analyses that train no network: the tree-spectrum ablation (Figure 5c) and
Entacmaea's exact energy by degree (Figure 5d)."""

from __future__ import annotations

from ..jobs.ablation import AblationSpec
from ..jobs.entacmaea_energy import EntacmaeaEnergySpec
from ..runtime.layout import Layout
from .base import Plan

__all__ = ["add_analyses"]


def add_analyses(plan: Plan) -> None:
    config = plan.config
    if config["ablation"]["enabled"]:
        for name, forest in config["ablation"]["datasets"].items():
            path = plan.layout.table_path(f"ablation_{name}")
            spec = {
                "dataset": name,
                "data": Layout.data(name),
                **forest,
                "steps": config["ablation"]["steps"],
                "seed": config["ablation"]["seed"],
                "repeats": config["ablation"]["repeats"],
                "outputs": {"table": path},
            }
            plan.add(path, AblationSpec, spec)
    if config["entacmaea_energy"]["enabled"]:
        path = plan.layout.table_path("entacmaea_energy")
        spec = {
            "data": Layout.data("entacmaea"),
            "top": config["entacmaea_energy"]["top"],
            "outputs": {"table": path},
        }
        plan.add(path, EntacmaeaEnergySpec, spec)
