"""whcore.pipeline.aggregation.records: a run's summary at its best validation epoch, model
selection on validation (never test, never the untrained network), diverged runs counted."""

import numpy as np
import pandas as pd

from whcore.pipeline.aggregation import forward_fill_epochs, run_summaries, select_models, summarize
from whcore.pipeline.aggregation.records import with_variants


def records(method, lam, seed, val, test, status=None):
    """Per-epoch records of one model: val/test MSE and R^2 per epoch."""
    epochs = len(val)
    return pd.DataFrame(
        {
            "dataset": "d",
            "method": method,
            "lam": lam,
            "seed": seed,
            "train_size": 10,
            "data_seed": 0,
            "epoch": range(epochs),
            "epoch_time": 1.0,
            "stack_size": 1,
            "val_mse": val,
            "val_r2": 1 - np.asarray(val),
            "test_r2": test,
            "status": status or ["ok"] * epochs,
            "note": "",
        }
    )


def test_summaries_report_the_best_validation_epoch():
    runs = records("hashwh", 0.1, 0, val=[0.9, 0.3, 0.5, 0.6], test=[0.0, 0.7, 0.9, 0.95])
    summary = run_summaries(runs, ["dataset", "method", "train_size", "data_seed"])
    row = summary.iloc[0]
    assert row["best_epoch"] == 1 and row["test_r2"] == 0.7  # not the best test epoch
    assert row["train_time"] == 4 and row["time_to_best"] == 2 and not row["diverged"]


def test_the_untrained_network_is_never_selected():
    # Epoch 0 (before any step) has the lowest validation loss: still epoch 2 is reported.
    runs = records("standard", np.nan, 0, val=[0.1, 0.6, 0.4, 0.5], test=[0.9, 0.2, 0.5, 0.4])
    row = run_summaries(runs, ["dataset", "method", "train_size", "data_seed"]).iloc[0]
    assert row["best_epoch"] == 2 and row["test_r2"] == 0.5


def test_selection_uses_validation_not_test():
    runs = pd.concat(
        [
            records("hashwh", 0.1, 0, val=[0.5, 0.2], test=[0.1, 0.3]),  # best validation
            records("hashwh", 1.0, 0, val=[0.5, 0.4], test=[0.1, 0.99]),  # best test
        ]
    )
    keys = ["dataset", "method", "train_size", "data_seed"]
    chosen = select_models(run_summaries(runs, keys), keys + ["seed"])
    assert len(chosen) == 1 and chosen["lam"].iloc[0] == 0.1 and chosen["test_r2"].iloc[0] == 0.3


def test_diverged_runs_are_counted_not_dropped():
    runs = pd.concat(
        [
            records(
                "hashwh", 0.1, 0, val=[0.5, np.nan], test=[0.1, np.nan], status=["ok", "diverged"]
            ),
            records("hashwh", 1.0, 0, val=[0.5, 0.4], test=[0.1, 0.2]),
            records(
                "hashwh", 0.1, 1, val=[0.5, np.nan], test=[0.1, np.nan], status=["ok", "diverged"]
            ),
            records("hashwh", 1.0, 1, val=[np.nan], test=[np.nan], status=["diverged"]),
        ]
    )
    keys = ["dataset", "method", "train_size", "data_seed"]
    summary = run_summaries(runs, keys)
    assert summary["diverged"].sum() == 3
    chosen = select_models(summary, keys + ["seed"]).set_index("seed")
    assert chosen.loc[0, "lam"] == 1.0 and not chosen.loc[0, "diverged"]
    assert chosen.loc[1, "diverged"] and np.isnan(chosen.loc[1, "test_r2"])
    assert chosen["n_diverged_configs"].tolist() == [1, 2]
    table = summarize(chosen.reset_index(), ["dataset", "method"])
    assert table["count"].iloc[0] == 1 and table["n_diverged"].iloc[0] == 1


def test_forward_fill_carries_final_values():
    frame = pd.DataFrame(
        {"run": [0, 0, 1, 1, 1], "epoch": [0, 1, 0, 1, 2], "x": [1.0, 2.0, 5.0, 6.0, 7.0]}
    )
    filled = forward_fill_epochs(frame, ["run"], ["x"])
    assert filled[filled["run"] == 0]["x"].tolist() == [1.0, 2.0, 2.0]


def test_b_is_a_nullable_integer_column():
    records = pd.DataFrame({"method": ["hashwh", "standard"], "b": [7.0, float("nan")]})
    typed = with_variants(records, split_b=True)
    assert str(typed["b"].dtype) == "Int64" and typed["b"].tolist()[0] == 7
    assert typed["b"].isna().tolist() == [False, True]
    assert str(with_variants(records[["method"]], split_b=False)["b"].dtype) == "Int64"


def test_an_aggregations_log_line_is_its_experiments():
    """The aggregation job logs the line its experiment's entry names: the selections'
    divergence, or the protocol's Spearman mean per scheme and method over its folds."""
    from whcore.pipeline.aggregation import fold_means, selected_divergence
    from whcore.pipeline.experiments import EXPERIMENTS, resolve

    selected = pd.DataFrame({"n_diverged_configs": [2, 0], "diverged": [False, True]})
    selected["variant"] = ["standard", "hashwh"]
    line = resolve(EXPERIMENTS["real"].log_line)({"real_selected": selected, "real_summary": None})
    assert line.startswith("diverged: 2 trained model(s)") and "1 of 2 selections" in line
    protocol = pd.DataFrame(
        {
            "scheme": ["random", "random", "modulo"],
            "method": ["ridge", "ridge", "ridge"],
            "spearman_mean": [0.51234, 0.51234, 0.3],
            "spearman_se": [0.01, 0.01, 0.02],
            "folds": [5, 5, 5],
        }
    )
    assert resolve(EXPERIMENTS["proteingym"].log_line) is fold_means
    assert resolve(EXPERIMENTS["spectrum"].log_line) is selected_divergence
    assert fold_means({"proteingym": protocol}).splitlines() == [
        "random ridge: Spearman 0.5123 +- 0.0100 over 5 folds",
        "modulo ridge: Spearman 0.3000 +- 0.0200 over 5 folds",
    ]
