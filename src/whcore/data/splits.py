"""Disjoint train / validation / test index sets from a seed (stable, see ``whcore.core.rng``),
and the seeds of a unit of replication.

The unit of replication is one subsample: a dataset (or g* draw), a train size and a data seed.
Everything random about a unit (the inputs sampled for a g*, the split, the training seeds of
its networks and the seeds of its baselines) derives from ``unit_seed``, so no two units share
inputs, a split or an initialization: training seed 0 of one unit is not seed 0 of another."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.rng import derive_seed, stable_permutation

__all__ = ["Split", "split_indices", "training_seed", "unit_seed", "unit_split"]


def unit_seed(train_size: int, data_seed: int, source: str) -> int:
    """The seed of one unit: its source (a table's dataset name, or a g* draw's
    ``SparseTarget.digest``), train size and data seed."""
    return derive_seed("unit", source, int(train_size), int(data_seed))


def training_seed(unit: int, seed: int) -> int:
    """The seed a network with training seed ``seed`` of ``unit`` starts from (weights, batch
    order, hashing matrices): unique per (unit, seed)."""
    return derive_seed("training", int(unit), int(seed))


def unit_split(size: int, train: int, val: int | str, test: int | str, unit: int) -> Split:
    """The split of a unit (``unit_seed``) of a table of ``size`` rows."""
    return split_indices(size, train, val, test, derive_seed("split", unit))


@dataclass(frozen=True)
class Split:
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


def split_indices(size: int, train: int, val: int | str, test: int | str, seed: int) -> Split:
    """Permute range(size) with ``seed`` and cut it into train, validation and test.

    ``val`` and ``test`` are counts, or ``"rest"``: everything left after the train (and any
    counted) part; if both are ``"rest"`` the remainder is split into two halves (the paper's
    Entacmaea rule: validation gets the larger half when the remainder is odd).
    """
    for name, value in (("train", train), ("val", val), ("test", test)):
        if value != "rest" and (not isinstance(value, (int, np.integer)) or value < 0):
            raise ValueError(
                f"split size {name} must be a non-negative int or 'rest', got {value!r}"
            )
    if train == "rest":
        raise ValueError("the train size must be a number, not 'rest'")
    fixed = train + sum(v for v in (val, test) if v != "rest")
    if fixed > size:
        raise ValueError(
            f"split sizes train={train}, val={val}, test={test} need {fixed} rows "
            f"but the dataset has only {size}"
        )
    rest = size - fixed
    if val == "rest" and test == "rest":
        val, test = rest - rest // 2, rest // 2
    elif val == "rest":
        val = rest
    elif test == "rest":
        test = rest
    perm = stable_permutation(size, seed)
    return Split(
        train=perm[:train],
        val=perm[train : train + val],
        test=perm[train + val : train + val + test],
    )
