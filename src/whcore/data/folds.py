"""ProteinGym's supervised split schemes: the fold of every row and the split of one held-out
fold (the data layer's part of ``whcore.pipeline.analyses.proteingym``).

ProteinGym scores a supervised model by K-fold cross-validation (K = 5) on three split
schemes, given as columns of its files: ``fold_random_5`` (rows assigned to folds at random),
``fold_modulo_5`` (by the mutated position modulo 5) and ``fold_contiguous_5`` (by contiguous
blocks of positions). Where a file has no such column, ``compute_folds`` computes it as
ProteinGym's fold script defines it (``proteinnpt/utils/cv_split.py`` of
OATML-Markslab/ProteinNPT at ba50f15, read, not copied): the mutated positions of the table,
sorted and deduplicated, are numbered i = 0, 1, ...; modulo puts position i in fold ``i mod K``
(the i-th distinct position, not the position itself); contiguous cuts the sorted positions into
K runs, the first ``n mod K`` runs one position longer (``divmod(n, K)``); random draws every
row's fold independently and uniformly from 0..K-1 (fold sizes vary, as ProteinGym's do). The
random draw depends on the seed: ProteinGym's own draw came from one global NumPy stream over all
of its assays and cannot be re-drawn, so its fold column is used exactly where the file has it.
Modulo and contiguous folds need one mutated position per row (ProteinGym defines them for single
mutants only, ``keep_singles``); the wild type (no mutation) goes to the random scheme's fold of
its row.

A binarized table carries the folds of its configured schemes in its metadata (key ``folds``:
one fold per row of the table, in its order; ``fold_sources``: the file's column or computed),
so the jobs split it without the raw file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.rng import derive_seed
from .splits import Split

__all__ = [
    "FOLDS",
    "SCHEMES",
    "compute_folds",
    "fold_indices",
    "fold_split",
    "fold_unit_seed",
    "keep_singles",
    "validation_split",
]

SCHEMES = ("fold_random_5", "fold_modulo_5", "fold_contiguous_5")
FOLDS = 5  # ProteinGym's K: folds 0..4
WILD_TYPE_NAMES = ("wt", "_wt", "wildtype", "wild_type")


def _positions(mutants: pd.Series, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """(the one mutated position of every row, whether the row is the wild type)."""
    positions = np.zeros(len(mutants), dtype=np.int64)
    wild = np.zeros(len(mutants), dtype=bool)
    for row, text in enumerate(mutants.astype(str)):
        tokens = [t for t in text.strip().split(":") if t]
        if not tokens or text.strip().lower() in WILD_TYPE_NAMES:
            wild[row] = True
            continue
        if len(tokens) != 1:
            raise ValueError(
                f"row {row + 1}: mutant {text!r} has {len(tokens)} mutated positions; "
                f"{scheme} needs exactly one. Fix: use fold_random_5 for multiple mutants, or "
                f"give the fold column {scheme} in the file"
            )
        digits = "".join(ch for ch in tokens[0][1:-1] if ch.isdigit())
        positions[row] = int(digits)
    return positions, wild


def compute_folds(mutants: pd.Series, scheme: str, k: int = FOLDS, seed: int = 0) -> np.ndarray:
    """The fold (0..k-1) of every row under ``scheme`` (one of ``SCHEMES``), computed from the
    mutants (``A12P``) as the module says."""
    if scheme not in SCHEMES:
        raise ValueError(f"split scheme {scheme!r} is not one of {list(SCHEMES)}")
    random = np.random.default_rng(seed).integers(0, k, len(mutants))
    if scheme == "fold_random_5":
        return random
    positions, wild = _positions(mutants, scheme)
    if wild.all():
        return random
    distinct = np.unique(positions[~wild])  # sorted
    if len(distinct) < k:
        raise ValueError(
            f"{scheme}: {len(distinct)} mutated positions for {k} folds. Fix: use fold_random_5"
        )
    if scheme == "fold_modulo_5":
        by_position = np.arange(len(distinct)) % k
    else:
        size, longer = divmod(len(distinct), k)
        by_position = np.repeat(np.arange(k), [size + (i < longer) for i in range(k)])
    folds = by_position[np.searchsorted(distinct, positions)]
    return np.where(wild, random, folds)


def keep_singles(mutants: pd.Series) -> np.ndarray:
    """Whether each row is a single mutant (one ``:``-free substitution), the rows ProteinGym's
    supervised benchmark scores for an assay that also holds multiple mutants."""
    text = mutants.fillna("").astype(str).str.strip()
    wild = text.str.lower().isin(WILD_TYPE_NAMES)
    return ((text != "") & ~wild & ~text.str.contains(":")).to_numpy()


def fold_indices(folds, held_out: int, val_fraction: float = 0.2, seed: int = 0):
    """(train, validation, test) row indices for the held-out fold ``held_out``: test is every
    row of that fold, exactly; validation a seeded ``val_fraction`` of the other folds' rows,
    train the rest of them."""
    folds = np.asarray(folds)
    test = np.flatnonzero(folds == held_out)
    if not len(test):
        raise ValueError(f"fold {held_out} has no rows (folds present: {sorted(set(folds))})")
    train, val = validation_split(np.flatnonzero(folds != held_out), val_fraction, seed)
    return train, val, test


def validation_split(rows, val_fraction: float = 0.2, seed: int = 0):
    """(train, validation) of the row indices ``rows``: a seeded ``val_fraction`` of them (at
    least one) validates, the rest trains; both sorted."""
    shuffled = np.random.default_rng(seed).permutation(np.asarray(rows))
    n_val = max(1, int(round(val_fraction * len(shuffled))))
    return np.sort(shuffled[n_val:]), np.sort(shuffled[:n_val])


def fold_unit_seed(source: str, scheme: str, held_out: int, data_seed: int) -> int:
    """The seed of one unit of the protocol: a table (its dataset name), a split scheme, a
    held-out fold and a data seed (its validation rows, training seeds and baselines' seeds
    derive from it, as ``whcore.data.splits.unit_seed`` does for a subsample)."""
    return derive_seed("fold unit", source, scheme, int(held_out), int(data_seed))


def fold_split(folds, held_out: int, val_fraction: float, unit: int):
    """The ``whcore.data.splits.Split`` of a held-out fold of a unit (``fold_unit_seed``)."""
    seed = derive_seed("fold split", unit) % 2**32
    train, val, test = fold_indices(folds, held_out, val_fraction, seed)
    return Split(train=train, val=val, test=test)
