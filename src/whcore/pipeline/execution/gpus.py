"""Picking a GPU when several training jobs share one machine.

``snakemake --resources gpu=N`` only *counts* GPUs: it starts at most N jobs that declare
``gpu=1`` at once, but never tells a job which device is its own, so every job would otherwise
land on ``cuda:0``. Each job therefore claims a device itself, without a coordinator, by taking
an exclusive ``flock`` on ``<lock_dir>/<hostname>/gpu<id>.lock``. The kernel drops the lock when
the process ends, however it ends (even SIGKILL or an out-of-memory kill), so no stale claim
outlives its job. The hostname folder keeps nodes apart when ``lock_dir`` sits on a filesystem
shared by a cluster, and ``<id>`` names the physical device (from CUDA_VISIBLE_DEVICES, which
SLURM sets per job), so two SLURM jobs on one node, each seeing its own GPUs as cuda:0..3,
never block each other.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import torch

from ...core.devices import pick_device

__all__ = ["claim_gpu", "choose_device", "physical_ids"]

POLL_S = 0.2  # seconds between attempts while waiting for a device to come free

# Claims made by choose_device, by (lock folder, device count): the open files keep the locks
# held for the life of the process, and a second call reuses the claim instead of taking another.
_HELD: dict[tuple[str, int], tuple[int, IO[str] | None]] = {}


def _cuda_count() -> int:
    return torch.cuda.device_count()


def _set_current(device: torch.device) -> None:
    torch.cuda.set_device(device)


def _try_lock(path: Path) -> IO[str] | None:
    """The open, exclusively locked file at ``path``, or None if another process holds it."""
    handle = open(path, "a+")  # "a+", not "w": never truncate a file whose lock we do not hold
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.truncate(0)
    handle.write(f"{os.getpid()}\n")  # for humans looking at who holds what
    handle.flush()
    return handle


def physical_ids(count: int) -> list[str]:
    """A name per visible device index: its entry of CUDA_VISIBLE_DEVICES (an index or a UUID)
    where that lists ``count`` devices, else the index itself."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")]
    if len(visible) != count or not all(visible):
        return [str(i) for i in range(count)]
    return ["".join(c if c.isalnum() or c in "-_" else "_" for c in v) for v in visible]


def claim_gpu(
    count: int,
    lock_dir: str | os.PathLike,
    wait_s: float = 0.0,
    log: Callable[[str], object] = print,
) -> tuple[int, IO[str] | None]:
    """Claim a free device index in ``range(count)``; return ``(index, handle)``.

    The lock is held as long as ``handle`` stays open (keep a reference to it). If every device
    stays claimed for ``wait_s`` seconds, fall back to sharing device ``pid % count`` with a
    warning; the handle is then None.
    """
    if count <= 0:
        raise ValueError(f"claim_gpu needs at least one device to choose from, got count={count}")
    host = socket.gethostname()
    folder = Path(lock_dir) / host
    folder.mkdir(parents=True, exist_ok=True)
    ids = physical_ids(count)
    # Start from a pid-dependent index so that jobs starting together do not all race for gpu0.
    start = os.getpid() % count
    order = [(start + k) % count for k in range(count)]
    deadline = time.monotonic() + wait_s
    while True:
        for index in order:
            handle = _try_lock(folder / f"gpu{ids[index]}.lock")
            if handle is not None:
                return index, handle
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        time.sleep(min(POLL_S, remaining))
    index = os.getpid() % count
    log(
        f"warning: all {count} GPUs on {host} are claimed: more jobs than devices are running; "
        f"sharing cuda:{index} (lower --resources gpu= to at most {count})"
    )
    return index, None


def choose_device(
    requested: str = "auto",
    lock_dir: str | os.PathLike = ".whcore/gpu",
    log: Callable[[str], object] = print,
) -> torch.device:
    """``pick_device``, except that "auto" and "cuda" claim a free GPU when several are
    visible (a job of a workflow); with one visible (e.g. a SLURM job restricted by
    CUDA_VISIBLE_DEVICES) it is used without any locking."""
    device = pick_device(requested)
    if device.type == "cpu" or requested.startswith("cuda:"):
        return device  # an explicit index is the user's choice: no claim
    count = _cuda_count()
    if count == 1:
        return torch.device("cuda", 0)
    key = (str(Path(lock_dir).resolve()), count)
    if key not in _HELD:
        _HELD[key] = claim_gpu(count, lock_dir, log=log)
    device = torch.device("cuda", _HELD[key][0])
    # Make it the current device too: kernels launched without an explicit device (the fused
    # FWHT extension, for one) go to the current device, which would otherwise stay cuda:0.
    _set_current(device)
    return device
