"""What a training watches as it runs: when to stop (``EarlyStopping``), how long its parts
took (``Stopwatch``, without synchronizing a GPU inside the loop) and the job's progress line
(``Progress``). Used by ``core.training``."""

from __future__ import annotations

import math
import time

import torch

__all__ = ["EarlyStopping", "Progress", "Stopwatch"]


class EarlyStopping:
    """Stop once ``patience`` epochs have passed without a new best validation loss
    (``patience=None``: never). The untrained network (epoch 0) is never a candidate: counting
    starts at epoch 1."""

    def __init__(self, patience: int | None):
        self.patience = patience
        self.best = math.inf
        self.best_epoch = 0

    def update(self, epoch: int, val_loss: float) -> bool:
        """Record one epoch; True when training should stop after it."""
        if epoch < 1:
            return False
        if val_loss < self.best:
            self.best, self.best_epoch = val_loss, epoch
        return self.patience is not None and epoch - self.best_epoch >= self.patience


class Stopwatch:
    """Accumulated time of code blocks. On CUDA it records events on the stream instead of
    synchronizing the host inside the loop (a synchronization per step would idle the GPU);
    ``seconds()`` synchronizes once and adds up the spans."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self._seconds = 0.0
        self._spans: list = []

    def __enter__(self):
        if self.cuda:
            self._start = torch.cuda.Event(enable_timing=True)
            self._start.record()
        else:
            self._start = time.perf_counter()

    def __exit__(self, *exc):
        if self.cuda:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            self._spans.append((self._start, end))
        else:
            self._seconds += time.perf_counter() - self._start

    def seconds(self) -> float:
        if self._spans:
            self._spans[-1][1].synchronize()
            self._seconds += sum(a.elapsed_time(b) for a, b in self._spans) / 1000
            self._spans.clear()
        return self._seconds


def _duration(seconds: float) -> str:
    """``seconds`` in a short form: 42s, 3m07s, 2h05m."""
    seconds = max(int(round(seconds)), 0)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """The progress line of a job that trains ``stacks`` stacked models one after another, each
    for at most ``epochs`` epochs::

        epoch 20/200: best val MSE 0.0123, 6/6 training, 12s elapsed, ~1m48s left

    (``model 2/3, epoch ...`` when the job trains several models in turn): the lowest validation
    MSE of the model's networks so far (epoch 0, the untrained network, left out), how many of
    them are still training, and the job's time left, assuming every remaining epoch takes as
    long as the mean so far and nothing stops early (early stopping often ends it sooner)."""

    def __init__(self, epochs: int, stacks: int = 1):
        self.epochs, self.stacks = epochs, stacks
        self.done = 0  # stacks finished
        self.start = time.perf_counter()

    def line(self, epoch: int, best_val_mse: float, active: int, size: int) -> str:
        elapsed = time.perf_counter() - self.start
        fraction = (self.done + epoch / self.epochs) / self.stacks
        left = elapsed * (1 - fraction) / fraction if fraction > 0 else math.nan
        model = f"model {self.done + 1}/{self.stacks}, " if self.stacks > 1 else ""
        eta = _duration(left) if math.isfinite(left) else "?"
        return (
            f"{model}epoch {epoch}/{self.epochs}: best val MSE {best_val_mse:.4g}, "
            f"{active}/{size} training, {_duration(elapsed)} elapsed, ~{eta} left"
        )
