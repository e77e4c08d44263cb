"""How large a training job is, before it runs: the network's layer sizes, the points a
regularizer evaluates per step, and an estimate of the memory one training job needs.

Free of heavy imports, so that a configuration can be refused at start (naming the key) when a
job could never run, instead of failing hours later inside PyTorch.
"""

from __future__ import annotations

import math

__all__ = [
    "describe_bytes",
    "job_memory_mb",
    "layer_sizes",
    "penalty_points",
    "step_rows",
    "training_bytes",
]

FLOAT_BYTES = 4  # float32
SPRIGHT_STAGES = 3  # EN-S samples C = 3 stages of 2^m hashes (whcore.core.spright)
MiB = 2**20
# What a job asks a scheduler for: a `whcore train` process with PyTorch loaded peaks at 398 MiB
# before its networks (measured: a standard network, n = 16); above that, three FullWH networks
# at n = 16 peaked at 2.3 times ``training_bytes`` (PyTorch keeps more than autograd's
# outputs). The request adds headroom to both; a job never asks for less than the floor.
PROCESS_BYTES = 512 * MiB
PEAK_OVER_BOUND = 3
DATA_COPIES = 3  # the table, its float array and the tensors made from it
JOB_MEMORY_FLOOR_MB = 2000


def layer_sizes(n: int, width: float) -> list[int]:
    """[n, c n, c n, n, 1] for the width multiplier c (hidden sizes rounded, at least 1)."""
    if n < 1:
        raise ValueError(f"the input dimension n must be >= 1, got {n}")
    if width <= 0:
        raise ValueError(f"the width multiplier must be > 0, got {width}")
    hidden = max(1, int(round(width * n)))
    return [n, hidden, hidden, n, 1]


def penalty_points(method: str, params: dict, n: int) -> int:
    """The inputs one member evaluates per step for its penalty (0 without one): all 2^n for
    FullWH, R 2^b for HashWH, EN-S's SPRIGHT samples (3 stages x (2 n d + 1) delays x 2^m,
    at most 2^n distinct)."""
    if method == "fullwh":
        return 2**n
    if method == "hashwh":
        return int(params.get("repetitions", 1)) * 2 ** int(params["b"])
    if method == "ens":
        delays = 2 * n * int(params.get("d", 3)) + 1
        return min(2**n, SPRIGHT_STAGES * delays * 2 ** int(params["m"]))
    return 0


def training_bytes(n: int, width: float, members: int, rows: int) -> int:
    """A lower bound of the memory that training ``members`` stacked networks takes when a
    step passes ``rows`` inputs (a batch plus the penalty's points) per member: weights,
    gradients and Adam's two moments, and the hidden layers' outputs that autograd keeps for
    the backward pass (PyTorch keeps more: the true peak is higher)."""
    sizes = layer_sizes(n, width)
    weights = sum(a * b + b for a, b in zip(sizes, sizes[1:]))
    kept = rows * sum(sizes[1:-1])
    return FLOAT_BYTES * members * (4 * weights + kept)


def step_rows(method: str, grid: list[dict], n: int, batch_size: int) -> int:
    """The inputs one member passes per step: a batch plus its penalty's points (the largest
    over the configurations of ``grid``)."""
    return batch_size + max(penalty_points(method, params, n) for params in grid)


def job_memory_mb(n: int, width: float, members: int, rows: int, data_values: int) -> int:
    """The memory (MiB) to request for a training job of ``members`` stacked networks passing
    ``rows`` inputs per step, on a table of ``data_values`` numbers: the process, the measured
    peak over ``training_bytes`` and the data's copies, at least ``JOB_MEMORY_FLOOR_MB``."""
    need = (
        PROCESS_BYTES
        + PEAK_OVER_BOUND * training_bytes(n, width, members, rows)
        + DATA_COPIES * FLOAT_BYTES * 2 * data_values  # float64 arrays
    )
    return max(JOB_MEMORY_FLOOR_MB, math.ceil(need / MiB))


def describe_bytes(count: float) -> str:
    """``count`` bytes as a short human figure (12.0 GiB, 3.2 PiB)."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    power = min(len(units) - 1, max(0, int(math.log(max(count, 1), 1024))))
    return f"{count / 1024**power:.1f} {units[power]}" if power else f"{int(count)} B"
