"""PyTorch's default CPU threads against one thread, at the sizes of the README's example.

Times, in one process, the README's training-loop example as written (50 steps; its own
``torch.set_num_threads(1)`` set aside, so that the thread count is the one under test) and
``train`` with HashWH on the same data (n = 20, b = 8, 256 rows, batches of 16, 5 epochs: 80
steps) at width 2 and at the paper's width 10. The two settings alternate run by run, so that a
change in the machine's load falls on both; prints the median, min and max of each, and the
load average before and after (the CPU is shared: the median is the figure to quote).

    python benchmarks/bench_threads.py [--runs 25]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import statistics
import time
from pathlib import Path
from unittest import mock

import numpy as np
import torch

from whcore import Data, TrainConfig, train

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example():
    """The README's example, run as written but for its thread setting and its printing."""
    text = README.read_text()
    section = text[text.index("## Use HashWH in your own training loop") :]
    code = compile(re.search(r"```python\n(.*?)```", section, re.DOTALL)[1], "README", "exec")

    def run():
        with mock.patch.object(torch, "set_num_threads", lambda threads: None):
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, {})

    return run


def hashwh_training(width: float):
    """``train`` with HashWH at the example's sizes: 80 steps, no early stopping."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (256, 20)).astype(np.float32)
    y = (-1.0) ** x[:, :3].sum(1)
    data = Data(x, y, x[:64], y[:64])
    config = TrainConfig(epochs=5, width=width, patience=None, device="cpu")
    return lambda: train(data, "hashwh", {"lam": 0.01, "b": 8}, [0], config, log=lambda m: None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=25, help="runs of each setting (25)")
    args = parser.parse_args()
    cases = {
        "README example, 50 steps, width 2": readme_example(),
        "train(), HashWH, 80 steps, width 2": hashwh_training(2),
        "train(), HashWH, 80 steps, width 10": hashwh_training(10),
    }
    default = torch.get_num_threads()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    for name, run in cases.items():
        run()  # allocator, BLAS handles: not in the times
        seconds = {default: [], 1: []}
        for _ in range(args.runs):
            for threads in seconds:
                torch.set_num_threads(threads)
                start = time.perf_counter()
                run()
                seconds[threads].append(time.perf_counter() - start)
        for threads, times in seconds.items():
            ms = [t * 1000 for t in times]
            print(
                f"{name}, {threads} thread(s): median {statistics.median(ms):.0f} ms "
                f"(min {min(ms):.0f}, max {max(ms):.0f})"
            )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
