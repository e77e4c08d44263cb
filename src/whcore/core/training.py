"""The training loop: Adam on minibatches, any regularizer, early stopping, tidy records.

All networks of a job (every training seed of every configuration in a grid) can train together
as one stacked model (``MLP`` with S members): each member has its own initialization, batch
order, hashing matrices and early-stopping state, and the records equal those of training the
networks one by one up to floating-point rounding.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from .arrays import Data
from .devices import pick_device
from .models import MLP
from .monitoring import EarlyStopping, Progress, Stopwatch
from .regularizers import Context, make_regularizer
from .rng import derive_seed
from .settings import TrainConfig

if TYPE_CHECKING:  # pandas loads when records are built, so `import whcore` stays light
    import pandas as pd

__all__ = [
    "EarlyStopping",
    "GraphedStep",
    "Member",
    "Progress",
    "Stopwatch",
    "TrainConfig",
    "train",
    "train_grid",
    "train_members",
]


def step(
    model: MLP, opt: torch.optim.Optimizer, reg, x: torch.Tensor, y: torch.Tensor, reg_watch=None
) -> None:
    """One minibatch step of every member: MSE on (S, B, n) inputs plus the regularizer's
    penalty, one backward pass (members are independent: the sum separates), one Adam step."""
    pred = model(x)
    loss = ((pred - y) ** 2).mean(-1)
    if reg_watch is None:
        term = reg.penalty(model)
    else:
        with reg_watch:
            term = reg.penalty(model)
    if term is not None:
        loss = loss + term
    opt.zero_grad(set_to_none=True)
    loss.sum().backward()
    opt.step()


def make_optimizer(
    model: MLP, lr: float, device: torch.device, capturable: bool = False
) -> torch.optim.Optimizer:
    """Adam with its fused kernel where PyTorch has one (CUDA; CPU from PyTorch 2.4): one call
    per step updates every parameter, the same arithmetic as the default per-tensor loop.
    ``capturable``: its step count lives on the device, so a CUDA graph can replay the step."""
    params = list(model.parameters())
    if device.type in ("cpu", "cuda"):
        try:
            return torch.optim.Adam(params, lr=lr, fused=True, capturable=capturable)
        except RuntimeError:  # no fused kernel for this device in this PyTorch (macOS Intel: 2.2)
            pass
    return torch.optim.Adam(params, lr=lr, capturable=capturable)


def graphs_wanted(reg, config: TrainConfig, device: torch.device) -> bool:
    """Whether a job's steps are replayed from CUDA graphs: on CUDA, for a graph-safe penalty,
    outside bf16 autocast (its cast cache does not survive capture); WHCORE_CUDA_GRAPHS=0 turns
    it off. A replayed step launches one graph instead of about a hundred kernels: 16x faster
    for the spectrum experiment's 20 networks on an H200 (docs/cost.md), the same arithmetic."""
    return (
        device.type == "cuda"
        and reg.GRAPH_SAFE
        and config.precision != "bf16"
        and os.environ.get("WHCORE_CUDA_GRAPHS", "1") != "0"
    )


class GraphedStep:
    """``step`` on the minibatch of ``idx`` (see ``minibatch``), captured once per batch shape as a CUDA
    graph and replayed. The indices are copied into the graph's own buffer before each replay;
    the penalty's device generators are registered with the graph, so each replay draws what
    the eager step would have drawn. Capture the first time only after eager steps have run
    (cuBLAS handles, autograd, the allocator and cached factors are then set up): training
    runs its first epoch eagerly."""

    def __init__(self, model: MLP, opt, reg, x: torch.Tensor, y: torch.Tensor, rows):
        self.model, self.opt, self.reg, self.x, self.y, self.rows = model, opt, reg, x, y, rows
        self.graphs: dict[tuple, tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}

    def __call__(self, idx: torch.Tensor) -> None:
        if idx.shape not in self.graphs:
            self.graphs[idx.shape] = self._capture(idx)
        graph, static = self.graphs[idx.shape]
        static.copy_(idx)
        graph.replay()

    def _capture(self, idx: torch.Tensor):
        static = idx.clone()
        graph = torch.cuda.CUDAGraph()
        for gen in self.reg.graph_generators():
            graph.register_generator_state(gen)
        # Capturing records kernels without running them; the gradients it allocates belong to
        # the graph and are overwritten, not accumulated, by each replay.
        with torch.cuda.graph(graph):
            step(self.model, self.opt, self.reg, *minibatch(self.x, self.y, static, self.rows))
        return graph, static


def _mse_r2(pred: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-member MSE and R^2 (with the split's own mean); ``y`` shared (N,) or per member
    (S, N)."""
    sse = ((pred - y) ** 2).sum(-1)
    sst = ((y - y.mean(-1, keepdim=True)) ** 2).sum(-1)
    return sse / y.shape[-1], 1 - sse / sst


def minibatch(x: torch.Tensor, y: torch.Tensor, idx: torch.Tensor, rows: torch.Tensor):
    """Every member's minibatch (``idx``: (S, B) row indices): from shared data (``x`` of shape
    (N, n)) or from each member's own (``x`` of shape (S, N, n); ``rows``: arange(S)[:, None])."""
    if x.dim() == 2:
        return x[idx], y[idx]
    return x[rows, idx], y[rows, idx]


def member_tensors(data: Data | Sequence[Data], members: Sequence[Member], device):
    """Each split as float32 tensors on ``device``: (x (N, n), y (N,)) for one data set, or
    each member's own unit stacked, (x (S, N, n), y (S, N)), for a list of them."""

    def tensor(a):
        return torch.as_tensor(a, dtype=torch.float32, device=device)

    if isinstance(data, Data):
        return {name: (tensor(x), tensor(y)) for name, x, y in data.splits()}
    units = list(data)
    shapes = {tuple((name, x.shape, y.shape) for name, x, y in unit.splits()) for unit in units}
    if len(shapes) != 1:
        raise ValueError(
            "the units of one stacked job must have the same splits of the same sizes and the "
            f"same n; got {sorted(shapes)}: train units of other sizes as separate jobs"
        )
    index = torch.tensor([m.unit for m in members], device=device)
    per_unit = [{name: (x, y) for name, x, y in unit.splits()} for unit in units]
    tensors = {}
    for name in per_unit[0]:
        x = torch.stack([tensor(splits[name][0]) for splits in per_unit])
        y = torch.stack([tensor(splits[name][1]) for splits in per_unit])
        tensors[name] = (x[index], y[index])
    return tensors


@dataclass(frozen=True)
class Member:
    """One network of a job: a configuration (its index in the grid, its parameters), a
    training seed and a unit (its index in the job's list of data sets; 0 for one data set).
    Members with the same seed start from the same weights and see the same batches and
    hashing matrices, so a configuration's records do not depend on its group."""

    config: int
    params: dict
    seed: int
    unit: int = 0


def train(
    data: Data,
    method: str,
    params: dict,
    seeds: Sequence[int],
    config: TrainConfig,
    epoch_callback: Callable | None = None,
    log: Callable[[str], None] = print,
) -> pd.DataFrame:
    """Train one model per seed; return per-epoch records (see ``train_members``)."""
    records = train_grid(data, method, [params], seeds, config, epoch_callback, log)
    return records.drop(columns="config")


def train_grid(
    data: Data | Sequence[Data],
    method: str,
    grid: Sequence[dict],
    seeds: Sequence[int] | Sequence[Sequence[int]],
    config: TrainConfig,
    epoch_callback: Callable | None = None,
    log: Callable[[str], None] = print,
) -> pd.DataFrame:
    """Train every (configuration, seed) of one method; the records' ``config`` column is the
    configuration's index in ``grid``. The configurations may differ only in the weights a
    regularizer lets differ between members (lam, rho).

    With ``config.vectorize`` every network forms one stacked model; otherwise they are trained
    one after another (so that per-epoch times are those of a single model, as in the paper).

    ``data`` may be a list of data sets of one shape (a cell's units: g* draws, subsamples):
    every (configuration, seed) is then trained on each, all in one stacked model, each member
    on its own data, and the records gain a ``unit`` column (the data set's index). ``seeds``
    is then one list for every unit, or a list of lists, one per unit (a unit's networks start
    from seeds derived from the unit, as its job alone would). A member's records equal those
    of its unit trained alone, up to float rounding: on a GPU one stack of many small networks
    costs what one of few costs (docs/cost.md).
    """
    if not grid:
        raise ValueError("at least one configuration is needed")
    units = [data] if isinstance(data, Data) else list(data)
    if not units:
        raise ValueError("at least one data set is needed (data is an empty list)")
    members = [
        Member(c, dict(params), s, u)
        for u, unit_seeds in enumerate(_seeds_per_unit(seeds, len(units)))
        for c, params in enumerate(grid)
        for s in unit_seeds
    ]
    stacks = [members] if config.vectorize else [[m] for m in members]
    progress = Progress(config.epochs, len(stacks))
    frames = []
    for stack in stacks:
        frames.append(train_members(data, method, stack, config, epoch_callback, log, progress))
        progress.done += 1
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


def _seed_list(seeds) -> list[int]:
    # seeds=3 could mean seed 3 or three seeds (and seeds=0 no seeds): neither is guessed
    if isinstance(seeds, numbers.Integral):
        raise TypeError(
            f"seeds must be a list of seeds, one network each, got the int {seeds}; pass "
            f"[{seeds}] for one network from seed {seeds}, or range(k) for k networks"
        )
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("at least one training seed is needed")
    return seeds


def _seeds_per_unit(seeds, units: int) -> list[list[int]]:
    """``train_grid``'s ``seeds``, one list per unit: a list of seeds is every unit's."""
    nested = (
        not isinstance(seeds, numbers.Integral)
        and len(seeds) > 0
        and all(isinstance(s, Sequence) for s in seeds)
    )
    if not nested:
        return [_seed_list(seeds)] * units
    if len(seeds) != units:
        raise ValueError(
            f"seeds: {len(seeds)} lists of seeds for {units} data sets; give one list per data "
            "set, or one list for all"
        )
    return [_seed_list(s) for s in seeds]


def _precision(config: TrainConfig, device: torch.device):
    """The opt-in reduced precision of a run: TF32 matrix products on CUDA, or bfloat16
    autocast; fp32 (the default) changes nothing."""
    if config.precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    if config.precision == "tf32" and device.type == "cuda":
        return _tf32()
    return contextlib.nullcontext()


@contextlib.contextmanager
def _tf32():
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


def train_members(
    data: Data | Sequence[Data],
    method: str,
    members: Sequence[Member],
    config: TrainConfig,
    epoch_callback: Callable | None = None,
    log: Callable[[str], None] = print,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Train the members as one stacked model. Records: one row per (member, epoch) with
    ``config``, ``seed``, train/val/test MSE and R^2, ``epoch_time`` and ``reg_time`` (seconds,
    the stacked model's time divided by its number of members, ``stack_size``; ``reg_time``
    is NaN for an epoch replayed from CUDA graphs, whose penalty runs inside the graph and is
    not timed apart: see ``GraphedStep``), ``status``
    ("ok" or "diverged") and ``note``, plus whatever the regularizer's epoch hook and
    ``epoch_callback(model, epoch, members)`` return (a dict of per-member tensors or floats).
    Epoch 0 is the untrained network. Every ``config.log_every`` epochs ``log`` gets a line of
    ``progress`` (a ``Progress``; by default this stack's own)."""
    device = pick_device(config.device)
    progress = Progress(config.epochs) if progress is None else progress
    n = (data if isinstance(data, Data) else data[0]).n
    seeds = [m.seed for m in members]
    model = MLP(n, config.width, seeds=seeds, device=device)
    reg = make_regularizer(method, [m.params for m in members], Context(n, seeds, device))
    graphs = graphs_wanted(reg, config, device)
    # Capturable on every CUDA job, graphed or not, so that WHCORE_CUDA_GRAPHS changes no number.
    opt = make_optimizer(model, config.lr, device, capturable=device.type == "cuda")
    tensors = member_tensors(data, members, device)
    x_train, y_train = tensors["train"]
    train_rows = y_train.shape[-1]
    rows = torch.arange(len(members), device=device)[:, None]
    graphed = GraphedStep(model, opt, reg, x_train, y_train, rows) if graphs else None
    # Every split in one forward pass per evaluation: all rows stacked once, then cut up.
    x_all = torch.cat([x for x, _ in tensors.values()], dim=-2)
    bounds = np.cumsum([0] + [y.shape[-1] for _, y in tensors.values()]).tolist()
    unit_column = not isinstance(data, Data)  # a list of data sets: records name the unit
    order_gens = []
    for seed in seeds:
        gen = torch.Generator()
        gen.manual_seed(derive_seed(seed, "batch_order"))
        order_gens.append(gen)

    size = len(members)
    stoppers = [EarlyStopping(config.patience) for _ in members]
    active = [True] * size
    records: list[dict] = []

    def evaluate(epoch: int, epoch_time: float, reg_time: float, extra: dict):
        row_base = {
            "epoch": epoch,
            "epoch_time": epoch_time / size,
            "reg_time": reg_time / size,
            "stack_size": size,
        }
        metrics = {}
        pred = model.predict(x_all).reshape(size, -1).float()
        for (name, (_, y)), lo, hi in zip(tensors.items(), bounds[:-1], bounds[1:]):
            mse, r2 = _mse_r2(pred[:, lo:hi], y)
            metrics[f"{name}_mse"], metrics[f"{name}_r2"] = mse.tolist(), r2.tolist()
        if epoch_callback is not None:
            for key, value in epoch_callback(model, epoch, members).items():
                metrics[key] = torch.as_tensor(value).reshape(-1).tolist()
        for s, member in enumerate(members):
            if not active[s]:
                continue
            row = {"config": member.config, "seed": member.seed, **row_base, **extra}
            if unit_column:
                row["unit"] = member.unit
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
        epoch_watch, reg_watch = Stopwatch(device), Stopwatch(device)
        # Reduced precision (opt-in) trains; the records always evaluate in float32.
        with epoch_watch, _precision(config, device):
            perm = torch.stack([torch.randperm(train_rows, generator=g) for g in order_gens])
            perm = perm.to(device)
            with reg_watch:
                reg.on_epoch_start(-(-train_rows // config.batch_size))  # the epoch's steps
            for lo in range(0, train_rows, config.batch_size):
                idx = perm[:, lo : lo + config.batch_size]
                if graphed is not None and epoch > 1:  # the penalty's time is the step's
                    graphed(idx)
                else:
                    step(model, opt, reg, *minibatch(x_train, y_train, idx, rows), reg_watch)
            with reg_watch:
                extra = reg.on_epoch_end(model, epoch)
        reg_seconds = math.nan if graphed is not None and epoch > 1 else reg_watch.seconds()
        evaluate(epoch, epoch_watch.seconds(), reg_seconds, extra)
        if config.log_every and epoch % config.log_every == 0:
            ok = [r["val_mse"] for r in records if r["status"] == "ok" and r["epoch"] > 0]
            log(progress.line(epoch, min(ok, default=math.nan), sum(active), size))
    # One block of epochs per member, in the order the members were given.
    position = {(m.unit, m.config, m.seed): i for i, m in enumerate(members)}
    records.sort(
        key=lambda row: (position[row.get("unit", 0), row["config"], row["seed"]], row["epoch"])
    )
    import pandas as pd

    return pd.DataFrame.from_records(records)
