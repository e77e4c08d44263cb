"""The split a job trains and evaluates on (the same for networks and baselines)."""

from __future__ import annotations

import dataclasses

from ...data.folds import FOLDS, SCHEMES
from .spec import Fields, SpecError, optional

__all__ = ["DataSplit", "HeldOutFold"]

SOURCES = ("synthetic", "table")  # a g* file from `whcore target`, or a binarized Parquet


@dataclasses.dataclass(frozen=True)
class HeldOutFold(Fields):
    """A held-out fold of ProteinGym's supervised protocol (``whcore.data.folds``): test is
    every row of fold ``fold`` under ``scheme`` (the table's folds, from its metadata),
    validation a seeded ``val_fraction`` of the other folds' rows, train the rest."""

    scheme: str
    fold: int
    val_fraction: float = 0.2

    def check(self, source: str) -> None:
        if self.scheme not in SCHEMES:
            raise SpecError(
                f"{source}: field data.folds.scheme: {self.scheme!r} is not one of {list(SCHEMES)}"
            )
        if not 0 <= self.fold < FOLDS:
            raise SpecError(f"{source}: field data.folds.fold: {self.fold} is not 0 to {FOLDS - 1}")
        if not 0 < self.val_fraction < 1:
            raise SpecError(
                f"{source}: field data.folds.val_fraction: {self.val_fraction} is not in (0, 1)"
            )


@dataclasses.dataclass(frozen=True)
class DataSplit(Fields):
    """The split a job trains and evaluates on (the same for networks and baselines): a
    subsample of ``train_size`` rows with validation and test by size, or a held-out fold of
    ProteinGym's protocol (``folds``), whose training rows are the other folds'."""

    path: str
    data_seed: int
    train_size: int | None = optional(None)
    source: str = "table"  # a g* file from `whcore target` (synthetic) or a Parquet (table)
    val_size: int | str = "rest"  # a count, or rest
    test_size: int | str = 0
    standardize: bool = False
    folds: HeldOutFold | None = optional(None)

    def check(self, source: str) -> None:
        if (self.train_size is None) == (self.folds is None):
            raise SpecError(
                f"{source}: field data: give train_size (a subsample) or folds (a held-out "
                "fold), exactly one"
            )
        if self.source not in SOURCES:
            raise SpecError(f"{source}: field data.source: {self.source!r} is not one of {SOURCES}")
        if self.train_size is not None and self.train_size < 1:
            raise SpecError(f"{source}: field data.train_size: {self.train_size} is not >= 1")
        for key in ("val_size", "test_size"):
            size = getattr(self, key)
            if size != "rest" and not (isinstance(size, int) and size >= 0):
                raise SpecError(f"{source}: field data.{key}: {size!r} is not a count or rest")
        if not 0 <= self.data_seed < 2**32:
            raise SpecError(
                f"{source}: field data.data_seed: {self.data_seed} is not 0 to 2^32 - 1"
            )
        if self.folds is not None and self.source != "table":
            raise SpecError(f"{source}: field data.folds: needs source table, not {self.source}")

    def identity(self, data) -> dict:
        """The columns naming this split in every record of a job on it (``data``: its
        ``whcore.core.arrays.Data``): train size and data seed, and for a held-out fold the
        scheme, the fold and the sizes its folds gave."""
        if self.folds is None:
            return {"train_size": self.train_size, "data_seed": self.data_seed}
        return {
            "scheme": self.folds.scheme,
            "fold": self.folds.fold,
            "train_size": len(data.y_train),
            "val_size": len(data.y_val),
            "test_size": len(data.y_test),
            "data_seed": self.data_seed,
        }
