"""The one list of baseline families: each family's grid parameters, label and colour, and
every method's label (the networks' from ``core.methods``, the baselines' from here).

Kept free of heavy imports: the config schema, the rules' wildcard constraints, the baseline
jobs, the figures' palette and the reports' labels are all derived from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.methods import METHOD_INFO

__all__ = ["BASELINES", "METHOD_LABELS", "PAPER_BASELINES", "BaselineInfo"]


@dataclass(frozen=True)
class BaselineInfo:
    params: dict[str, type]  # grid parameter -> int (counts, depths) or float (weights)
    label: str
    color: str
    in_paper: bool = True  # a rival of the paper's claims (ridge is the field's, not the paper's)


BASELINES: dict[str, BaselineInfo] = {
    "lasso": BaselineInfo({"alpha": float}, "Lasso", "#e7298a"),
    "ridge": BaselineInfo({"alpha": float}, "Ridge", "#a6761d", in_paper=False),
    "rf": BaselineInfo({"n_estimators": int, "max_depth": int}, "Random forest", "#66a61e"),
    "xgboost": BaselineInfo({"n_estimators": int, "max_depth": int}, "XGBoost", "#e6ab02"),
}

# The baselines the paper compares HashWH with: its claims name these rivals and no other.
PAPER_BASELINES = tuple(name for name, info in BASELINES.items() if info.in_paper)

# Every method's label, the networks' first (figures order their legends by it).
METHOD_LABELS = {name: info.label for name, info in METHOD_INFO.items()} | {
    name: info.label for name, info in BASELINES.items()
}
