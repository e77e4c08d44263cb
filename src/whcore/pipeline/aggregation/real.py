"""Experiment 3's tables: networks and baselines selected per pair (Figures 5a, 5b, A7)."""

from __future__ import annotations

from .records import select_networks_and_baselines, summarize, with_typed_curves

__all__ = ["real_tables"]


def real_tables(runs, baseline_runs) -> dict:
    """Experiment 3: networks (b tuned like any hyperparameter) and baselines, per pair."""
    keys = ["dataset", "variant", "method", "train_size", "data_seed"]
    selected = select_networks_and_baselines(runs, baseline_runs, keys)
    summary = summarize(selected, ["dataset", "variant", "train_size"])
    return {
        "real_selected": selected,
        # b is tuned like any hyperparameter here: a curve is a method, whatever its b
        "real_summary": with_typed_curves(summary, selected, ["method"]),
    }
