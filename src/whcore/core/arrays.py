"""``Data``: the train / validation / test arrays a network trains on (light: NumPy only, so that
the data layer builds them without loading the training loop)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Data", "varying_columns"]


@dataclass
class Data:
    """Train / validation / test arrays (X 0/1 of shape (N, n), y of shape (N,))."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    y_test: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n(self) -> int:
        return self.x_train.shape[1]

    def on_varying_columns(self) -> Data:
        """These arrays on the columns that vary over the training rows (``varying_columns``)."""
        keep = varying_columns(self.x_train)
        test = self.x_test[:, keep] if self.x_test.shape[1] == self.n else self.x_test
        return Data(
            self.x_train[:, keep], self.y_train, self.x_val[:, keep], self.y_val, test, self.y_test
        )

    def splits(self):
        yield "train", self.x_train, self.y_train
        yield "val", self.x_val, self.y_val
        if len(self.y_test):
            yield "test", self.x_test, self.y_test


def varying_columns(x: np.ndarray) -> np.ndarray:
    """Whether each column of ``x`` takes more than one value over its rows (none do over no
    rows). A fit learns nothing about a column that is constant over the rows it is fitted on:
    a linear model with an intercept gives it weight 0, but a network's first-layer weights on it
    keep their random start, so a row that differs there (a substitution no training row has)
    would be predicted with that noise. Fits that can see such rows keep these columns only."""
    x = np.asarray(x)
    if not len(x):
        return np.zeros(x.shape[1], dtype=bool)
    return x.min(axis=0) != x.max(axis=0)
