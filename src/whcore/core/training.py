"""The training loop: Adam on minibatches, any regularizer, early stopping, tidy records.

All training seeds of a job can train together as one stacked model (``MLP`` with S members):
each member has its own initialization, batch order, hashing matrices and early-stopping state,
and the records equal those of training the seeds one by one up to floating-point rounding.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from .models import MLP
from .regularizers import Context, make_regularizer
from .rng import derive_seed

__all__ = ["TrainConfig", "Data", "train", "train_seeds", "pick_device", "EarlyStopping"]

EVAL_CHUNK = 16384  # rows per forward pass when evaluating large splits


@dataclass
class TrainConfig:
    epochs: int = 200
    batch_size: int = 16
    lr: float = 0.01
    patience: int | None = 10  # None: no early stopping (train every epoch)
    width: float = 10
    device: str = "auto"
    vectorize: bool = True  # train all seeds as one stacked model
    log_every: int = 0  # print a progress line every k epochs (0: never)

    def __post_init__(self):
        for key in ("epochs", "batch_size", "patience"):
            if getattr(self, key) is not None and int(getattr(self, key)) < 1:
                raise ValueError(f"training.{key} must be >= 1, got {getattr(self, key)}")
        if not self.lr > 0:
            raise ValueError(f"training.lr must be > 0, got {self.lr}")


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


def pick_device(requested: str = "auto") -> torch.device:
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {requested!r} was requested but CUDA is not available")
    return torch.device(requested)


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


class _Timer:
    """Accumulated wall time of code blocks; synchronizes CUDA so the times are real."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.total = 0.0

    def __enter__(self):
        if self.cuda:
            torch.cuda.synchronize()
        self._start = time.perf_counter()

    def __exit__(self, *exc):
        if self.cuda:
            torch.cuda.synchronize()
        self.total += time.perf_counter() - self._start


def _predict(model: MLP, x: torch.Tensor) -> torch.Tensor:
    """(S, N) predictions of all members on shared inputs, in chunks."""
    with torch.no_grad():
        parts = [model(x[i : i + EVAL_CHUNK]) for i in range(0, len(x), EVAL_CHUNK)]
    out = torch.cat(parts, dim=-1) if parts else x.new_zeros(0)
    return out.reshape(model.n_members, -1)


def step(
    model: MLP, opt: torch.optim.Optimizer, reg, x: torch.Tensor, y: torch.Tensor, reg_timer=None
) -> None:
    """One minibatch step of every member: MSE on (S, B, n) inputs plus the regularizer's
    penalty, one backward pass (members are independent: the sum separates), one Adam step."""
    pred = model(x)
    loss = ((pred - y) ** 2).mean(-1)
    if reg_timer is None:
        term = reg.penalty(model)
    else:
        with reg_timer:
            term = reg.penalty(model)
    if term is not None:
        loss = loss + term
    opt.zero_grad(set_to_none=True)
    loss.sum().backward()
    opt.step()


def make_optimizer(model: MLP, lr: float, device: torch.device) -> torch.optim.Optimizer:
    """Adam with its fused kernel where PyTorch has one (CPU, CUDA): one call per step updates
    every parameter, the same arithmetic as the default per-tensor loop."""
    if device.type in ("cpu", "cuda"):
        return torch.optim.Adam(model.parameters(), lr=lr, fused=True)
    return torch.optim.Adam(model.parameters(), lr=lr)


def _mse_r2(pred: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-member MSE and R^2 (with the split's own mean)."""
    sse = ((pred - y) ** 2).sum(-1)
    sst = ((y - y.mean()) ** 2).sum()
    return sse / len(y), 1 - sse / sst


def train(
    data: Data,
    method: str,
    params: dict,
    seeds: Sequence[int],
    config: TrainConfig,
    epoch_callback: Callable | None = None,
    log: Callable[[str], None] = print,
) -> pd.DataFrame:
    """Train one model per seed; return per-epoch records (see ``train_seeds``).

    With ``config.vectorize`` all seeds form one stacked model; otherwise they are trained one
    after another (so that per-epoch times are those of a single model, as in the paper).
    """
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("at least one training seed is needed")
    if config.vectorize:
        return train_seeds(data, method, params, seeds, config, epoch_callback, log)
    frames = [train_seeds(data, method, params, [s], config, epoch_callback, log) for s in seeds]
    return pd.concat(frames, ignore_index=True)


def train_seeds(
    data: Data,
    method: str,
    params: dict,
    seeds: Sequence[int],
    config: TrainConfig,
    epoch_callback: Callable | None = None,
    log: Callable[[str], None] = print,
) -> pd.DataFrame:
    """Train the seeds as one stacked model. Records: one row per (seed, epoch) with
    train/val/test MSE and R^2, ``epoch_time`` and ``reg_time`` (seconds, the stacked model's
    time divided by its number of members), ``status`` ("ok" or "diverged") and ``note``,
    plus whatever the regularizer's epoch hook and ``epoch_callback(model, epoch)`` return
    (a dict of per-member tensors or floats). Epoch 0 is the untrained network."""
    device = pick_device(config.device)
    n = data.n
    model = MLP(n, config.width, seeds=seeds, device=device)
    reg = make_regularizer(method, params, Context(n=n, seeds=seeds, device=device))
    opt = make_optimizer(model, config.lr, device)
    tensors = {
        name: (
            torch.as_tensor(x, dtype=torch.float32, device=device),
            torch.as_tensor(y, dtype=torch.float32, device=device),
        )
        for name, x, y in data.splits()
    }
    x_train, y_train = tensors["train"]
    # Every split in one forward pass per evaluation: all rows stacked once, then cut up.
    x_all = torch.cat([x for x, _ in tensors.values()])
    bounds = np.cumsum([0] + [len(y) for _, y in tensors.values()]).tolist()
    order_gens = []
    for seed in seeds:
        gen = torch.Generator()
        gen.manual_seed(derive_seed(seed, "batch_order"))
        order_gens.append(gen)

    members = len(seeds)
    stoppers = [EarlyStopping(config.patience) for _ in seeds]
    active = [True] * members
    records: list[dict] = []
    start = time.perf_counter()

    def evaluate(epoch: int, epoch_time: float, reg_time: float, extra: dict):
        row_base = {
            "epoch": epoch,
            "epoch_time": epoch_time / members,
            "reg_time": reg_time / members,
        }
        metrics = {}
        pred = _predict(model, x_all)
        for (name, (_, y)), lo, hi in zip(tensors.items(), bounds[:-1], bounds[1:]):
            mse, r2 = _mse_r2(pred[:, lo:hi], y)
            metrics[f"{name}_mse"], metrics[f"{name}_r2"] = mse.tolist(), r2.tolist()
        if epoch_callback is not None:
            for key, value in epoch_callback(model, epoch).items():
                metrics[key] = torch.as_tensor(value).reshape(-1).tolist()
        for s, seed in enumerate(seeds):
            if not active[s]:
                continue
            row = {"seed": seed, **row_base, **extra}
            row.update({key: values[s] for key, values in metrics.items()})
            finite = all(math.isfinite(row[f"{name}_mse"]) for name in tensors)
            row["status"], row["note"] = (
                ("ok", "")
                if finite
                else ("diverged", "non-finite predictions (loss became NaN or infinite)")
            )
            records.append(row)
            if not finite or stoppers[s].update(epoch, row["val_mse"]):
                active[s] = False

    evaluate(0, 0.0, 0.0, {})
    for epoch in range(1, config.epochs + 1):
        if not any(active):
            break
        epoch_timer, reg_timer = _Timer(device), _Timer(device)
        with epoch_timer:
            perm = torch.stack([torch.randperm(len(y_train), generator=g) for g in order_gens])
            perm = perm.to(device)
            for lo in range(0, len(y_train), config.batch_size):
                idx = perm[:, lo : lo + config.batch_size]
                step(model, opt, reg, x_train[idx], y_train[idx], reg_timer)
            with reg_timer:
                extra = reg.on_epoch_end(model, epoch)
        evaluate(epoch, epoch_timer.total, reg_timer.total, extra)
        if config.log_every and epoch % config.log_every == 0:
            best = max((r["val_r2"] for r in records if r["status"] == "ok"), default=math.nan)
            log(
                f"epoch {epoch}: {sum(active)}/{members} members training, "
                f"best val R^2 {best:.4f}, {time.perf_counter() - start:.1f}s elapsed"
            )
    # One block of epochs per seed, in the order the seeds were given.
    position = {seed: i for i, seed in enumerate(seeds)}
    records.sort(key=lambda row: (position[row["seed"]], row["epoch"]))
    return pd.DataFrame.from_records(records)
