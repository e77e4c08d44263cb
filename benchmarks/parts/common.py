"""What the benchmark parts share: paths, timing, ratios, allocation counts, the summary table.

Timings: A and B alternate, each repetition times both back to back, ratios are the median of
the per-repetition ratios (robust on a shared machine). On a GPU the times synchronize the
device.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

ROOT = Path(__file__).resolve().parents[2]
RUN_SCRIPT = ROOT / "benchmarks" / "run.py"  # the entry point (the memory probe runs it)
MIRROR = os.environ.get("WHCORE_DATA_MIRROR") or str(ROOT.parent / "shared" / "datasets" / "raw")


# ---------------------------------------------------------------------------- timing helpers
def sync(device: torch.device) -> None:
    """Wait for the device's queued work (a no-op off CUDA)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_calls(fn, calls: int, device: torch.device) -> float:
    """Seconds per call of ``fn``, over ``calls`` calls in a row."""
    sync(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync(device)
    return (time.perf_counter() - start) / calls


def interleaved(fns: dict, device: torch.device, reps: int, budget: float = 0.2) -> dict:
    """Per-call seconds of each function: each repetition times every function back to back
    (``calls`` calls each, sized so that the slowest takes about ``budget`` seconds).
    Returns {name: list of per-call seconds, one per repetition}."""
    for fn in fns.values():  # warm-up (and one call to size the loops)
        fn()
    probe = max(time_calls(fn, 1, device) for fn in fns.values())
    calls = max(1, int(budget / max(probe, 1e-6)))
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            times[name].append(time_calls(fn, calls, device))
    return times


def ratio(times: dict, a: str, b: str) -> float:
    """Median over repetitions of time(a) / time(b)."""
    return float(np.median(np.array(times[a]) / np.array(times[b])))


def med(values) -> float:
    """The median, as a float."""
    return float(np.median(values))


# ------------------------------------------------------------------------- allocation counts
class AllocationCounter(TorchDispatchMode):
    """Bytes of every tensor created by operations inside the block (an upper bound on the
    extra memory the block needs, device independent)."""

    def __enter__(self):
        self.bytes = 0
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            # func.name(): "aten::view.default" -> "aten::view", the operator's schema name
            if torch.is_tensor(t) and func.name().partition(".")[0] not in VIEWS:
                self.bytes += t.numel() * t.element_size()
        return out


VIEWS = {
    "aten::view",
    "aten::_unsafe_view",
    "aten::reshape",
    "aten::expand",
    "aten::t",
    "aten::transpose",
    "aten::slice",
    "aten::select",
    "aten::unsqueeze",
    "aten::alias",
    "aten::detach",
    "aten::squeeze",
    "aten::as_strided",
}


def allocated(fn) -> int:
    """Bytes of the tensors one call of ``fn`` creates (``AllocationCounter``)."""
    with AllocationCounter() as counter:
        fn()
    return counter.bytes


# ---------------------------------------------------------------------------- summary table
HEADER = ["| part | setting | measured | ratio | target | met |", "|---|---|---|---|---|---|"]


def met(ok: bool) -> str:
    """A target's verdict in the summary table."""
    return "yes" if ok else "no"


def summary(result: dict, tables: Iterable[Callable[[dict], list[str]]]) -> str:
    """The run's Markdown table: a blank line, the header, then each part's rows (``tables``:
    one function per part, the run's result -> its rows; a part that did not run has none)."""
    lines = ["", *HEADER]
    for table in tables:
        lines += table(result)
    return "\n".join(lines)
