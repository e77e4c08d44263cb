"""ProteinGym's supervised protocol on one dataset: the table of every method's score on every
held-out fold of every split scheme, with their mean and standard error over the folds.

Model selection as everywhere (``records``): per held-out fold, method and training seed the
configuration with the best validation R^2 (validation carved from the training folds), read at
its own best-validation epoch; a fold's score (Spearman, MSE, R^2 on the held-out fold) is the
mean over the training seeds of the selected configurations (a baseline has one fit). Per
(dataset, scheme, method), ``whcore.pipeline.analyses.proteingym.summarize_folds`` gives each score's
mean over the folds and its standard error.
"""

from __future__ import annotations

import numpy as np

from ..analyses.proteingym import summarize_folds
from .records import select_networks_and_baselines

__all__ = ["FOLD_KEYS", "fold_means", "proteingym_tables"]

FOLD_KEYS = ["dataset", "scheme", "method", "fold", "train_size", "val_size", "test_size"]
_SCORES = {"test_spearman": "spearman", "test_mse": "mse", "test_r2": "r2"}


def proteingym_tables(runs, baseline_runs) -> dict:
    """The ``proteingym`` table of one dataset: one row per (scheme, method, held-out fold) with
    its scores, the rows of its split and the seeds behind it, and the method's mean and
    standard error over the folds of its scheme (``<score>_mean``, ``<score>_se``, ``folds``,
    ``failed_folds``)."""
    keys = ["variant", *FOLD_KEYS]
    selected = select_networks_and_baselines(runs, baseline_runs, keys)
    for column in _SCORES:
        if column not in selected:
            selected[column] = np.nan
    grouped = selected.groupby(FOLD_KEYS, sort=True)
    folds = grouped[list(_SCORES)].mean().rename(columns=_SCORES)
    folds["seeds"] = grouped["test_r2"].count()
    folds["diverged"] = grouped["diverged"].sum().astype(int)
    folds = folds.reset_index()
    summary = summarize_folds(folds, by=("dataset", "scheme", "method"))
    table = folds.merge(summary, on=["dataset", "scheme", "method"], how="left")
    return {"proteingym": table}


def fold_means(tables: dict) -> str:
    """The log lines of the protocol's aggregation: each scheme's and method's Spearman, mean
    and standard error over its held-out folds."""
    summary = tables["proteingym"].drop_duplicates(["scheme", "method"])
    return "\n".join(
        f"{row.scheme} {row.method}: Spearman {row.spearman_mean:.4f} "
        f"+- {row.spearman_se:.4f} over {row.folds} folds"
        for row in summary.itertuples()
    )
