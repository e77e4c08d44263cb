"""Grouped training jobs against one configuration per job, side by side, on this machine.

For one cell of the paper grid (config/config.yaml) per experiment -- spectrum: one g*, train
size and data seed; synthetic: one (n, c), draw and data seed outside the timed draw -- every
configuration of every method is trained twice, each time as separate ``whcore train``
processes, as a workflow would run them:

- one per job: one process per configuration (the job granularity before grouping: spectrum
  jobs stack their seeds, synthetic jobs train their seeds one after another, as the paper
  config did), and
- grouped: one process per group (every lam / rho of one method and b, all seeds, one stacked
  model), the specs the workflow now runs.

Both run the same epochs (``--epochs``, early stopping as configured), one thread each, one
process at a time; the ratio of the summed wall times is the speed-up of grouping, process
start and data loading included (Snakemake's own per-job overhead is not). Records of both
agree to float rounding (checked: largest validation-MSE difference).

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
        if methods and job.spec["method"] not in methods:
            continue
        spec, labels = job.spec, job.spec["labels"]
        found = {**labels, **{k: spec["data"][k] for k in ("train_size", "data_seed")}}
        if all(found.get(k) == v for k, v in want.items()):
            spec = materialize(contract, spec, tmp)
            spec["training"]["epochs"] = epochs
            specs.append(spec)
    return specs


def one_per_job(spec: dict, experiment: str) -> list[dict]:
    """The group's configurations as the jobs they were before grouping."""
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
        ["whcore", "train", "--spec", str(path), "--device", device, "--threads", "1",
         "--log-every", "0"],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - start


def val_mse(folder: Path) -> pd.Series:
    frames = [pd.read_parquet(p) for p in sorted((folder / "records").glob("*.parquet"))]
    frame = pd.concat(frames).sort_values(["method", "lam", "seed", "epoch"], kind="stable")
    return frame["val_mse"].reset_index(drop=True)


def bench(experiment: str, epochs: int, device: str, tmp: Path, methods=()) -> dict:
    contract = paper_contract()
    groups = cell_jobs(contract, experiment, epochs, tmp, methods)
    grouped_s = single_s = 0.0
    largest = 0.0
    for g, spec in enumerate(groups):
        grouped_s += run(spec, tmp / experiment / f"group{g}", device)
        singles = one_per_job(spec, experiment)
        for i, single in enumerate(singles):
            single_s += run(single, tmp / experiment / f"group{g}_single{i}", device)
        together = val_mse(tmp / experiment / f"group{g}")
        alone = pd.concat(
            [val_mse(tmp / experiment / f"group{g}_single{i}") for i in range(len(singles))]
        ).reset_index(drop=True)
        largest = max(largest, float((together - alone).abs().max()))
    row = {
        "experiment": experiment,
        "cell": CELLS[experiment],
        "methods": sorted({s["method"] for s in groups}),
        "device": device,
        "epochs": epochs,
        "configurations": sum(len(s["grid"]) for s in groups),
        "grouped_jobs": len(groups),
        "one_per_job_s": round(single_s, 1),
        "grouped_s": round(grouped_s, 1),
        "speedup": round(single_s / grouped_s, 2),
        "max_val_mse_difference": largest,
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=30, help="epochs per network (30)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K")
    parser.add_argument("--experiments", default="spectrum,synthetic", help="comma-separated")
    parser.add_argument("--methods", default="", help="comma-separated (default: all)")
    parser.add_argument("--out", help="also write the rows here (JSON)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_grouped_"))
    methods = [m for m in args.methods.split(",") if m]
    rows = [bench(e, args.epochs, args.device, tmp, methods) for e in args.experiments.split(",")]
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
