"""ProteinGym's supervised protocol, the parts that do not train: the fold of every row (the
file's fold column, or computed when the file has none), the split of one held-out fold
(validation carved from the training folds) and the scores of a fold (Spearman, MSE, R^2)
with their mean and standard error over the folds.

The folds and the split of a held-out fold live in the data layer (``whcore.data.folds``,
where the rules computing folds for a file without fold columns are documented); the jobs
split a binarized table by the folds its metadata carries.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ...data.folds import SCHEMES, compute_folds, fold_indices

__all__ = [
    "SCHEMES",
    "SCHEME_LABELS",
    "compute_folds",
    "fold_indices",
    "fold_scores",
    "protocol_folds",
    "protocol_summary",
    "spearman",
    "summarize_folds",
]

SCHEME_LABELS = {
    "fold_random_5": "random",
    "fold_modulo_5": "modulo",
    "fold_contiguous_5": "contiguous",
}


def spearman(a, b) -> float:
    """Spearman's rank correlation (ties share their average rank)."""
    ra = pd.Series(np.asarray(a, dtype=float)).rank().to_numpy()
    rb = pd.Series(np.asarray(b, dtype=float)).rank().to_numpy()
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = np.sqrt((ra**2).sum() * (rb**2).sum())
    return float((ra * rb).sum() / denominator) if denominator > 0 else float("nan")


def fold_scores(y, prediction) -> dict:
    """Spearman, MSE and R^2 of one held-out fold."""
    y, prediction = np.asarray(y, dtype=float), np.asarray(prediction, dtype=float)
    residual = ((y - prediction) ** 2).sum()
    total = ((y - y.mean()) ** 2).sum()
    return {
        "spearman": spearman(y, prediction),
        "mse": float(residual / len(y)),
        "r2": float(1 - residual / total) if total > 0 else float("nan"),
    }


def summarize_folds(scores: pd.DataFrame, by=("dataset", "scheme", "method")) -> pd.DataFrame:
    """Per ``by`` group, every metric's mean over the folds and its standard error
    (standard deviation / sqrt(folds)), with the number of folds.

    A fold whose Spearman is not finite (no fit finished, or a constant prediction) failed: it
    is left out of every mean and counted in ``failed_folds``; ``folds`` counts the others."""
    metrics = [m for m in ("spearman", "mse", "r2") if m in scores]
    finished = np.isfinite(scores["spearman"].to_numpy(dtype=float))
    kept = scores.assign(**{m: scores[m].where(finished) for m in metrics})
    grouped = kept.groupby(list(by), sort=True)
    folds = grouped["spearman"].count()
    table = grouped[metrics].mean().add_suffix("_mean")
    se = grouped[metrics].std(ddof=1) / np.sqrt(folds.to_numpy()[:, None])
    table = table.join(se.add_suffix("_se"))
    table["folds"] = folds
    table["failed_folds"] = grouped.size() - folds
    return table.reset_index()


def _protocol_frames(tables: dict) -> pd.DataFrame:
    frames = [t for name, t in tables.items() if re.fullmatch(r"proteingym_[a-z0-9_]+", name)]
    if not frames:
        raise ValueError(f"no proteingym_<dataset> table among {sorted(tables)}")
    return pd.concat(frames, ignore_index=True)


def protocol_folds(tables: dict) -> pd.DataFrame:
    """One row per (dataset, scheme, method, held-out fold) of the ``proteingym_<dataset>``
    tables, with its Spearman (NaN where the fold failed)."""
    return _protocol_frames(tables)[["dataset", "scheme", "method", "fold", "spearman"]]


def protocol_summary(tables: dict) -> pd.DataFrame:
    """One row per (dataset, scheme, method) of the ``proteingym_<dataset>`` tables: the mean
    and standard error over the folds of every score, and the numbers of folds (finished and
    failed)."""
    table = _protocol_frames(tables)
    columns = [c for c in table.columns if c.endswith(("_mean", "_se", "folds"))]
    return table.drop_duplicates(["dataset", "scheme", "method"])[
        ["dataset", "scheme", "method", *columns]
    ].reset_index(drop=True)
