"""``Data``: the train / validation / test arrays a network trains on (light: NumPy only, so that
the data layer builds them without loading the training loop)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Data"]


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

    def splits(self):
        yield "train", self.x_train, self.y_train
        yield "val", self.x_val, self.y_val
        if len(self.y_test):
            yield "test", self.x_test, self.y_test
