"""Experiment 3's tables: networks and baselines selected per pair (Figures 5a, 5b, A7)."""

from __future__ import annotations

import pandas as pd

from .records import (
    read_runs,
    run_summaries,
    select_models,
    summarize,
    with_typed_curves,
    with_variants,
)

__all__ = ["real_tables"]


def real_tables(runs, baseline_runs) -> dict:
    """Experiment 3: networks (b tuned like any hyperparameter) and baselines, per pair."""
    keys = ["dataset", "variant", "method", "train_size", "data_seed"]
    frames = []
    if runs:
        records = with_variants(read_runs(runs), split_b=False)
        frames.append(select_models(run_summaries(records, keys), keys + ["seed"]))
    if baseline_runs:
        base = read_runs(baseline_runs)
        base = base.assign(
            variant=base["method"],
            seed=-1,
            diverged=base["status"] != "ok",
            train_time=base["fit_time"],
        )
        frames.append(select_models(base, keys + ["seed"]))
    selected = pd.concat(frames, ignore_index=True)
    summary = summarize(selected, ["dataset", "variant", "train_size"])
    return {
        "real_selected": selected,
        # b is tuned like any hyperparameter here: a curve is a method, whatever its b
        "real_summary": with_typed_curves(summary, selected, ["method"]),
    }
