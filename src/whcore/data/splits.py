"""Disjoint train / validation / test index sets from a seed (stable, see ``whcore.rng``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.rng import stable_permutation

__all__ = ["Split", "split_indices"]


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
