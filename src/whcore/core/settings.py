"""The training settings of a network (``TrainConfig``): the one source of their defaults.

Kept free of heavy imports: the workflow reads the defaults when it plans its jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .methods import PRECISIONS

__all__ = ["TrainConfig"]


@dataclass
class TrainConfig:
    epochs: int = 200
    batch_size: int = 16
    lr: float = 0.01
    patience: int | None = 10  # None: no early stopping (train every epoch)
    width: float = 10
    device: str = "auto"
    vectorize: bool = True  # train all seeds and configurations as one stacked model
    precision: str = "fp32"  # fp32; tf32 (CUDA matrix products) or bf16 (autocast): opt-in
    log_every: int = 0  # print a progress line every k epochs (0: never)

    def __post_init__(self):
        for key in ("epochs", "batch_size", "patience"):
            if getattr(self, key) is not None and int(getattr(self, key)) < 1:
                raise ValueError(f"training.{key} must be >= 1, got {getattr(self, key)}")
        if not self.lr > 0:
            raise ValueError(f"training.lr must be > 0, got {self.lr}")
        if self.precision not in PRECISIONS:
            raise ValueError(
                f"training.precision must be one of {PRECISIONS}, got {self.precision!r}"
            )
