"""A training job eager and replayed from CUDA graphs: wall time, and records compared.

One HashWH job per case of ``bench_launch.CASES`` (4 lambdas x 5 seeds stacked, as the grid's
grouped jobs; generated data of the case's shape) is trained with ``WHCORE_CUDA_GRAPHS=0`` and
``=1``, same seeds, same epochs. Each row gives both wall times, their ratio, and whether every
record (train/val/test MSE of every network and epoch) is bit-identical. A last row measures
how far the capturable Adam (the step count on the device, which graphs need and every CUDA job
now uses) moves the records from the non-capturable fused Adam used before. With ``--units U``,
each case also trains U units (data sets of the case's shape, as a cell's g* draws) one job
after another and as one job of U x 20 stacked networks, both replayed from graphs: wall times,
and the largest difference of a validation MSE between the two (float rounding only).

    python benchmarks/bench_graphs.py [--device cuda] [--epochs 20] [--cases spectrum,synthetic]
                                      [--units 25]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from whcore.core import training
from whcore.core.arrays import Data
from whcore.core.training import TrainConfig, train_grid

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_launch import CASES  # noqa: E402

LAMS = [0.0001, 0.001, 0.01, 0.1]
SEEDS = [0, 1, 2, 3, 4]
COLUMNS = ["config", "seed", "epoch", "train_mse", "val_mse", "test_mse"]


def case_data(case: str, unit: int = 0) -> Data:
    n, _, _, _, rows = CASES[case]
    gen = np.random.default_rng(unit)
    x = gen.integers(0, 2, (3 * rows, n)).astype(np.float32)
    y = (x[:, :3].sum(1) % 2 + 0.1 * gen.standard_normal(3 * rows)).astype(np.float32)
    return Data(
        x[:rows], y[:rows], x[rows : 2 * rows], y[rows : 2 * rows], x[2 * rows :], y[2 * rows :]
    )


def run(case: str, device: str, epochs: int, graphs: str, data=None):
    n, width, batch, b, _ = CASES[case]
    os.environ["WHCORE_CUDA_GRAPHS"] = graphs
    config = TrainConfig(
        epochs=epochs, batch_size=batch, width=width, patience=None, device=device, lr=0.01
    )
    grid = [{"lam": lam, "b": b} for lam in LAMS]
    start = time.perf_counter()
    data = case_data(case) if data is None else data
    records = train_grid(data, "hashwh", grid, SEEDS, config, log=lambda m: None)
    return records, time.perf_counter() - start


def units_row(case: str, args) -> dict:
    """A cell's units trained one job after another, then as one stacked job."""
    units = [case_data(case, unit) for unit in range(args.units)]
    start = time.perf_counter()
    alone = [run(case, args.device, args.epochs, "1", unit)[0] for unit in units]
    alone_s = time.perf_counter() - start
    stacked, stacked_s = run(case, args.device, args.epochs, "1", units)
    diff = max(
        float(np.abs(stacked[stacked["unit"] == u]["val_mse"].to_numpy() - a["val_mse"]).max())
        for u, a in enumerate(alone)
    )
    return {
        "case": case,
        "units": args.units,
        "networks": args.units * len(LAMS) * len(SEEDS),
        "epochs": args.epochs,
        "one_job_per_unit_s": round(alone_s, 3),
        "units_stacked_s": round(stacked_s, 3),
        "speedup": round(alone_s / stacked_s, 2),
        "max_val_mse_diff": diff,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--cases", default="spectrum,synthetic")
    parser.add_argument("--units", type=int, default=0, help="units per cell (0: no rows)")
    parser.add_argument("--out", help="also write the rows here (JSON)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    for case in args.cases.split(","):
        run(case, args.device, 2, "1")  # warm-up: CUDA context, cuBLAS, allocator
        eager, eager_s = run(case, args.device, args.epochs, "0")
        graphed, graphed_s = run(case, args.device, args.epochs, "1")
        rows.append(
            {
                "case": case,
                "networks": len(LAMS) * len(SEEDS),
                "epochs": args.epochs,
                "eager_s": round(eager_s, 3),
                "graphs_s": round(graphed_s, 3),
                "speedup": round(eager_s / graphed_s, 2),
                "records_identical": bool(eager[COLUMNS].equals(graphed[COLUMNS])),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
        if args.units:
            rows.append(units_row(case, args))
            print(json.dumps(rows[-1]), flush=True)
    # The capturable Adam against the fused Adam of before, both eager, first case.
    case = args.cases.split(",")[0]
    now, _ = run(case, args.device, args.epochs, "0")
    made = training.make_optimizer
    training.make_optimizer = lambda model, lr, device, capturable=False: made(model, lr, device)
    try:
        before, _ = run(case, args.device, args.epochs, "0")
    finally:
        training.make_optimizer = made
    diff = float((now["val_mse"] - before["val_mse"]).abs().max())
    rows.append({"case": case, "capturable_adam_max_val_mse_diff": diff})
    print(json.dumps(rows[-1]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
