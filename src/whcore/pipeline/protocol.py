"""ProteinGym's supervised protocol, the parts that do not train: the fold of every row (the
file's fold column, or computed when the file has none), the split of one held-out fold
(validation carved from the training folds) and the scores of a fold (Spearman, MSE, R^2)
with their mean and standard error over the folds.

ProteinGym scores a supervised model by K-fold cross-validation (K = 5) on three split
schemes, given as columns of its files: ``fold_random_5`` (rows assigned to folds at random),
``fold_modulo_5`` (by the mutated position modulo 5) and ``fold_contiguous_5`` (by contiguous
blocks of positions). Where a file has no such column, ``compute_folds`` computes it this way:
random, a seeded uniform permutation of the rows dealt into K folds of sizes differing by at
most one; modulo, ``(position - 1) mod K`` of the row's one mutated position; contiguous, the
range of mutated positions cut into K blocks of equal width. Modulo and contiguous folds need
one mutated position per row (ProteinGym defines them for single mutants only); the wild type
(no mutation) goes to the random scheme's fold of its row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "SCHEMES",
    "compute_folds",
    "fold_indices",
    "fold_scores",
    "spearman",
    "summarize_folds",
]

SCHEMES = ("fold_random_5", "fold_modulo_5", "fold_contiguous_5")


def _positions(mutants: pd.Series, scheme: str) -> np.ndarray:
    positions = np.zeros(len(mutants), dtype=np.int64)
    for row, text in enumerate(mutants.astype(str)):
        tokens = [t for t in text.strip().split(":") if t]
        if len(tokens) != 1:
            raise ValueError(
                f"row {row + 1}: mutant {text!r} has {len(tokens)} mutated positions; "
                f"{scheme} needs exactly one. Fix: use fold_random_5 for multiple mutants, or "
                f"give the fold column {scheme} in the file"
            )
        digits = "".join(ch for ch in tokens[0][1:-1] if ch.isdigit())
        positions[row] = int(digits)
    return positions


def compute_folds(mutants: pd.Series, scheme: str, k: int = 5, seed: int = 0) -> np.ndarray:
    """The fold (0..k-1) of every row under ``scheme`` (one of ``SCHEMES``), computed from the
    mutants (``A12P``) as the module says."""
    if scheme not in SCHEMES:
        raise ValueError(f"split scheme {scheme!r} is not one of {list(SCHEMES)}")
    rows = len(mutants)
    if scheme == "fold_random_5":
        order = np.random.default_rng(seed).permutation(rows)
        folds = np.empty(rows, dtype=np.int64)
        folds[order] = np.arange(rows) % k
        return folds
    positions = _positions(mutants, scheme)
    if scheme == "fold_modulo_5":
        return (positions - 1) % k
    low, high = positions.min(), positions.max()
    width = (high - low + 1) / k
    return np.minimum(((positions - low) / width).astype(np.int64), k - 1)


def fold_indices(folds, held_out: int, val_fraction: float = 0.2, seed: int = 0):
    """(train, validation, test) row indices for the held-out fold ``held_out``: test is every
    row of that fold, exactly; validation a seeded ``val_fraction`` of the other folds' rows,
    train the rest of them."""
    folds = np.asarray(folds)
    test = np.flatnonzero(folds == held_out)
    if not len(test):
        raise ValueError(f"fold {held_out} has no rows (folds present: {sorted(set(folds))})")
    rest = np.flatnonzero(folds != held_out)
    shuffled = np.random.default_rng(seed).permutation(rest)
    n_val = max(1, int(round(val_fraction * len(rest))))
    return np.sort(shuffled[n_val:]), np.sort(shuffled[:n_val]), test


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
    (standard deviation / sqrt(folds)), with the number of folds."""
    metrics = [m for m in ("spearman", "mse", "r2") if m in scores]
    grouped = scores.groupby(list(by), sort=True)
    table = grouped[metrics].mean().add_suffix("_mean")
    se = grouped[metrics].std(ddof=1) / np.sqrt(grouped.size().to_numpy()[:, None])
    table = table.join(se.add_suffix("_se"))
    table["folds"] = grouped.size()
    return table.reset_index()
