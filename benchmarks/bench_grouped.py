"""Grouped training jobs against one configuration per job, side by side, on this machine.

For one cell of the paper grid (config/config.yaml) per experiment -- spectrum: one g*, train
size and data seed; synthetic: one (n, c), draw and data seed outside the timed draw -- every
configuration of every method is trained twice, each time as separate ``whcore train``
processes, as a workflow would run them:

- one per job: one process per configuration (spectrum jobs stack their seeds, synthetic jobs
  train their seeds one after another), and
- grouped: one process per group (every lam / rho of one method and b, all seeds, one stacked
  model), the specs the workflow now runs.

Both run the same epochs (``--epochs``, early stopping as configured), one thread each, one
process at a time; the ratio of the summed wall times is the speed-up of grouping, process
start and data loading included (Snakemake's own per-job overhead is not). Both train the same
networks from the same seeds; float rounding differs (batched products of other shapes) and
grows over training, so the report gives the largest relative difference of a network's best
validation MSE between the two.

Each group's arithmetic is also measured in this process (two epochs of the grouped job and of
its first one-configuration job, FLOPs counted by ``torch.utils.flop_counter``): the FLOP/s each
achieves, and that of a large float32 matrix product on the same device and thread count. What
grouping can save is bounded twice over: process starts by the number of configurations per
job, and arithmetic by ``gemm / single`` (``arithmetic_bound``: a stack does the same FLOPs, and
no stack of these small shapes runs faster than a large matrix product). A cell's speed-up is at
most the larger of the two (``speedup_bound``), whatever the epochs.

    python benchmarks/bench_grouped.py [--epochs 30] [--device cpu] [--methods hashwh,ens]
                                       [--experiments spectrum,synthetic] [--out grouped.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
from torch.utils.flop_counter import FlopCounterMode

from whcore.pipeline.jobs.train import TrainSpec, run_job

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_jobs import materialize, paper_contract  # noqa: E402

CELLS = {
    # experiment: labels that pick one cell of its grid
    "spectrum": {"dataset": "draw0", "train_size": 200, "data_seed": 0},
    "synthetic": {"dataset": "n25_draw1", "c": 2, "data_seed": 0},
}


def cell_jobs(contract, experiment: str, epochs: int, tmp: Path, methods) -> list[dict]:
    want = CELLS[experiment]
    specs = []
    for job in contract.jobs.values():
        if job.kind != "train" or job.labels["experiment"] != experiment:
            continue
        if methods and job.spec.method not in methods:
            continue
        spec, labels = job.spec.to_dict(), job.spec.labels
        found = {**labels, **{k: spec["data"][k] for k in ("train_size", "data_seed")}}
        if all(found.get(k) == v for k, v in want.items()):
            spec = materialize(contract, spec, tmp)
            spec["training"]["epochs"] = epochs
            specs.append(spec)
    return specs


def one_per_job(spec: dict, experiment: str) -> list[dict]:
    """The group's configurations, one job each."""
    singles = []
    for params in spec["grid"]:
        single = copy.deepcopy(spec)
        single["grid"] = [params]
        single["training"]["vectorize"] = experiment == "spectrum"
        singles.append(single)
    return singles


def run(spec: dict, folder: Path, device: str) -> float:
    spec = copy.deepcopy(spec)
    spec["outputs"] = {role: str(folder / role) for role in spec["outputs"]}
    path = folder / "spec.json"
    folder.mkdir(parents=True)
    path.write_text(json.dumps(spec))
    start = time.perf_counter()
    subprocess.run(
        # `whcore train` by this interpreter: the same install whatever PATH holds
        [
            sys.executable,
            "-m",
            "whcore.pipeline.cli",
            "train",
            "--spec",
            str(path),
            "--device",
            device,
            "--threads",
            "1",
            "--log-every",
            "0",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def gemm_rate(device: str) -> float:
    """FLOP/s of a large float32 matrix product on ``device`` (median of 5)."""
    size = 8192 if device.startswith("cuda") else 2048
    a, b = (torch.randn(size, size, device=device) for _ in range(2))
    times = []
    for _ in range(6):
        start = time.perf_counter()
        a @ b
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return 2 * size**3 / sorted(times[1:])[2]


def arithmetic_rate(spec: dict, device: str, epochs: int = 2) -> float:
    """FLOP/s of a job's arithmetic: its FLOPs for ``epochs`` epochs (counted once) over the
    wall time of a second, uncounted run in this process (no process start, no data files)."""
    spec = copy.deepcopy(spec)
    spec["training"]["epochs"] = epochs
    with FlopCounterMode(display=False) as counter:
        run_job(TrainSpec.from_dict(spec), device, log=lambda msg: None)
    start = time.perf_counter()
    run_job(TrainSpec.from_dict(spec), device, log=lambda msg: None)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return counter.get_total_flops() / (time.perf_counter() - start)


def best_val_mse(folder: Path) -> dict[tuple[str, int], float]:
    """The best validation MSE of each network, by (configuration file, seed)."""
    best = {}
    for path in sorted((folder / "records").glob("*.parquet")):
        for seed, mse in pd.read_parquet(path).groupby("seed")["val_mse"].min().items():
            best[path.name, seed] = mse
    return best


def bench(experiment: str, epochs: int, device: str, tmp: Path, methods=()):
    """Yield the experiment's row after every group (the groups measured so far)."""
    contract = paper_contract()
    groups = cell_jobs(contract, experiment, epochs, tmp, methods)
    gemm = gemm_rate(device)
    per_group = []
    for g, spec in enumerate(groups):
        group_s = run(spec, tmp / experiment / f"group{g}", device)
        singles = one_per_job(spec, experiment)
        singles_s = sum(
            run(single, tmp / experiment / f"group{g}_single{i}", device)
            for i, single in enumerate(singles)
        )
        together = best_val_mse(tmp / experiment / f"group{g}")
        alone = {}
        for i in range(len(singles)):
            alone.update(best_val_mse(tmp / experiment / f"group{g}_single{i}"))
        difference = max(abs(together[k] - alone[k]) / alone[k] for k in alone)
        tag = Path(spec["outputs"]["records"]).parent.name
        single_rate = arithmetic_rate(singles[0], device)
        per_group.append(
            {
                "group": f"{spec['method']}/{tag}",
                "configurations": len(spec["grid"]),
                "one_per_job_s": round(singles_s, 1),
                "grouped_s": round(group_s, 1),
                "speedup": round(singles_s / group_s, 2),
                "best_val_mse_rel_difference": difference,
                "single_gflops": round(single_rate / 1e9, 1),
                "grouped_gflops": round(arithmetic_rate(spec, device) / 1e9, 1),
                "arithmetic_bound": round(gemm / single_rate, 2),
            }
        )
        print(json.dumps(per_group[-1]), flush=True)
        single_s = sum(row["one_per_job_s"] for row in per_group)
        grouped_s = sum(row["grouped_s"] for row in per_group)
        yield {
            "experiment": experiment,
            "cell": CELLS[experiment],
            "methods": sorted({s["method"] for s in groups}),
            "device": device,
            "epochs": epochs,
            "configurations": sum(len(s["grid"]) for s in groups[: g + 1]),
            "grouped_jobs": f"{g + 1} of {len(groups)}",
            "one_per_job_s": round(single_s, 1),
            "grouped_s": round(grouped_s, 1),
            "speedup": round(single_s / grouped_s, 2),
            "best_val_mse_rel_difference": max(r["best_val_mse_rel_difference"] for r in per_group),
            "gemm_gflops": round(gemm / 1e9, 1),
            # (starts + arithmetic) / (starts + arithmetic) <= the larger of the two ratios
            "speedup_bound": round(
                max(
                    sum(r["configurations"] for r in per_group) / len(per_group),
                    max(r["arithmetic_bound"] for r in per_group),
                ),
                2,
            ),
            "groups": per_group,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=30, help="epochs per network (30)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K")
    parser.add_argument("--experiments", default="spectrum,synthetic", help="comma-separated")
    parser.add_argument("--methods", default="", help="comma-separated (default: all)")
    parser.add_argument("--out", help="also write the rows here (JSON)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as the timed processes (--threads 1)
    tmp = Path(tempfile.mkdtemp(prefix="bench_grouped_"))
    methods = [m for m in args.methods.split(",") if m]
    done = []
    for experiment in args.experiments.split(","):
        for row in bench(experiment, args.epochs, args.device, tmp, methods):
            # Written after every group: a run cut short by a time limit keeps what it measured.
            if args.out:
                Path(args.out).write_text(json.dumps([*done, row], indent=1))
        print(json.dumps(row), flush=True)
        done.append(row)


if __name__ == "__main__":
    main()
