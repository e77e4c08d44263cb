"""Experiment 2's tables: selected models per pair and the runtime curves of the selected
models (Figures 4, A5, A6)."""

from __future__ import annotations

from .records import (
    forward_fill_epochs,
    read_runs,
    run_summaries,
    select_models,
    selected_records,
    summarize,
    with_typed_curves,
    with_variants,
)

__all__ = ["synthetic_tables"]


def synthetic_tables(runs) -> dict:
    """Experiment 2: selected models per pair and the runtime curves of the selected models."""
    records = with_variants(read_runs(runs), split_b=True)
    keys = ["dataset", "n", "c", "draw", "variant", "method", "train_size", "data_seed"]
    selected = select_models(run_summaries(records, keys), keys + ["seed"])
    chosen = selected_records(records, selected, keys).sort_values(keys + ["seed", "epoch"])
    run_keys = keys + ["seed"]
    chosen["cum_time"] = chosen.groupby(run_keys)["epoch_time"].cumsum()
    # The untrained network (epoch 0) is never a candidate for either curve.
    trained = chosen["epoch"] > 0
    val_mse, test_r2 = chosen["val_mse"].where(trained), chosen["test_r2"].where(trained)
    # Test R^2 of the best-validation epoch so far: what early stopping at that epoch reports.
    best_so_far = val_mse.groupby([chosen[k] for k in run_keys]).cummin() == val_mse
    chosen["stopped_test_r2"] = test_r2.where(best_so_far)
    chosen["stopped_test_r2"] = chosen.groupby(run_keys)["stopped_test_r2"].ffill()
    # The best test R^2 reached so far (the reference's max_test_r2): Figure 4b, panels I-II.
    chosen["max_test_r2"] = test_r2.groupby([chosen[k] for k in run_keys]).cummax()
    columns = ["cum_time", "stopped_test_r2", "max_test_r2"]
    filled = forward_fill_epochs(chosen, run_keys, columns)
    curves = (
        filled.groupby(["dataset", "n", "c", "draw", "variant", "epoch"])
        .agg(
            cum_time=("cum_time", "mean"),
            test_r2=("stopped_test_r2", "mean"),
            test_r2_sem=("stopped_test_r2", "sem"),
            max_test_r2=("max_test_r2", "mean"),
            max_test_r2_sem=("max_test_r2", "sem"),
        )
        .reset_index()
    )
    summary = summarize(selected, ["n", "c", "draw", "variant"])
    # Per-run curves of the models trained one at a time: the speed claim compares their
    # times to reach each R^2 level, unit by unit.
    timed = selected.loc[selected["timed_alone"] & ~selected["diverged"], run_keys]
    runs = chosen.merge(timed, on=run_keys)[[*run_keys, "b", "epoch", "cum_time", "max_test_r2"]]
    return {
        "synthetic_selected": selected,
        "synthetic_summary": with_typed_curves(summary, selected, ["method", "b"]),
        "synthetic_curves": with_typed_curves(curves, selected, ["method", "b"]),
        "synthetic_runs": runs.reset_index(drop=True),
    }
