"""Per-job training times of the paper grid (config/config.yaml), for the wall-time estimate of
the README's cluster section.

For one representative job per (experiment, method) -- the median train size of its group --
the job is run twice with small epoch budgets (1 and 2 epochs, no early stopping) on this
machine; the difference gives the seconds per epoch (training and evaluation), the rest is the
job's fixed cost (data, setup). Jobs that train their seeds one after another (vectorize: false)
are measured with one seed and scaled by the number of seeds; stacked jobs with all seeds. A
job's time is then fixed + epochs x per-epoch for an assumed number of epochs per model.

    python benchmarks/bench_jobs.py [--epochs 100] [--device cpu] [--threads 1]

Needs resources/data/{gb1,avgfp,sgemm,entacmaea}.parquet for the real-data jobs (run
`snakemake resources/data/gb1.parquet ...` first); jobs of missing datasets are skipped.
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import torch
import yaml

from whcore.data.synthetic import degree_ladder, random_sparse
from whcore.pipeline.contract import Contract, validate_config
from whcore.pipeline.jobs import run_job

REPO = Path(__file__).resolve().parents[1]
DEVICE = "cpu"


def timed(spec: dict, epochs: int) -> float:
    spec = copy.deepcopy(spec)
    spec["training"].update(epochs=epochs, patience=epochs + 1)
    if not spec["training"].get("vectorize", True):
        spec["training"]["seeds"] = spec["training"]["seeds"][:1]
    start = time.perf_counter()
    run_job(spec, DEVICE, log=lambda msg: None)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--epochs",
        type=int,
        default=100,
        help="assumed epochs per model until early stopping (default 100)",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", help="also write the table here (JSON)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    validate_config(config, str(REPO / "workflow/schemas/config.schema.yaml"))
    global DEVICE
    DEVICE = args.device
    contract = Contract(config)
    tmp = Path(tempfile.mkdtemp(prefix="bench_jobs_"))
    targets = {}
    for path, job in contract.jobs.items():
        if job.kind == "target":
            targets[path] = (job.spec, tmp / path.replace("/", "_"))
    groups = defaultdict(list)
    for job in contract.jobs.values():
        if job.kind == "train":
            groups[(job.labels["experiment"], job.spec["method"])].append(job)

    rows, total = [], 0.0
    # EN-S last: its epochs are by far the slowest (it evaluates the network on all of SPRIGHT's
    # samples every step).
    for (experiment, method), jobs in sorted(
        groups.items(), key=lambda kv: (kv[0][1] == "ens", kv[0])
    ):
        jobs = sorted(jobs, key=lambda j: j.spec["data"]["train_size"])
        job = jobs[len(jobs) // 2]
        spec = copy.deepcopy(job.spec)
        data = spec["data"]
        if data["source"] == "synthetic":
            target, path = targets[data["path"]]
            if not path.exists():
                g = (
                    degree_ladder(target["n"], target["max_degree"], target["seed"])
                    if target["family"] == "degree_ladder"
                    else random_sparse(
                        target["n"], target["k"], target["max_degree"], target["seed"]
                    )
                )
                g.to_json(path)
            data["path"] = str(path)
        else:
            data["path"] = str(REPO / data["path"])
            if not Path(data["path"]).exists():
                print(f"skip {experiment}/{method}: {data['path']} missing")
                continue
        t1, t2 = timed(spec, 1), timed(spec, 2)
        per_epoch = max(t2 - t1, 0.0)
        fixed = max(t1 - per_epoch, 0.0)
        scale = 1 if spec["training"].get("vectorize", True) else len(spec["training"]["seeds"])
        job_s = scale * (fixed + args.epochs * per_epoch)
        total += job_s * len(jobs)
        rows.append(
            {
                "experiment": experiment,
                "method": method,
                "jobs": len(jobs),
                "example": job.spec["outputs"]["records"],
                "seeds": len(spec["training"]["seeds"]),
                "per_epoch_s": round(per_epoch * scale, 3),
                "fixed_s": round(fixed * scale, 2),
                "job_s": round(job_s, 1),
                "group_h": round(job_s * len(jobs) / 3600, 1),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    print(
        f"total: {sum(r['jobs'] for r in rows)} training jobs, {total / 3600:.0f} job-hours at "
        f"{args.epochs} epochs per model on {args.device} ({args.threads} thread(s))"
    )
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "total_h": total / 3600}, indent=1))


if __name__ == "__main__":
    main()
