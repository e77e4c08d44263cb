"""Per-job training times of the paper grid (config/config.yaml), for the wall-time estimate of
the README's cluster section.

The training jobs are grouped by experiment, dataset (real data only: the datasets differ in n,
width and train sizes), method, group (b for HashWH, m for EN-S: HashWH evaluates 2^b points
per step) and whether they stack their networks. For one representative job per group -- the
median train size -- the job is run twice after a warm-up run with small epoch budgets (1 and 2
epochs, no early stopping) on this machine; the difference gives the seconds per epoch
(training and evaluation), the rest is the job's fixed cost (data, setup). A group whose 1-epoch
warm-up alone takes longer than ``--single-run-above`` seconds is estimated from that run, its
fixed cost counted as epoch time (an over-estimate by at most fixed cost / threshold: fixed
costs are about 1 s, so about 3% at 30 s). Jobs that train
their networks one after another (the timed cells, or vectorize: false) are measured with one
network and scaled by the number of networks (seeds x configurations); stacked jobs with all of
them. A job's time is then fixed + epochs x per-epoch (of all its networks) for an assumed
number of epochs per model.

    python benchmarks/bench_jobs.py [--epochs 100] [--device cpu] [--threads 1]
                                    [--methods standard,hashwh] [--single-run-above 30]

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
from whcore.pipeline.contract import Contract, load_contract
from whcore.pipeline.jobs.train import TrainSpec, run_cell
from whcore.pipeline.runtime.layout import wildcards_of

REPO = Path(__file__).resolve().parents[1]


def timed(specs: list[dict], epochs: int, device: str) -> float:
    """Seconds of one run of a job's spec (or a cell's specs, trained as one:
    ``run_cell``) for ``epochs`` epochs (no early stopping). Jobs that train their networks
    one after another are run with one network each (``networks`` scales them)."""
    specs = copy.deepcopy(specs)
    for spec in specs:
        spec["training"].update(epochs=epochs, patience=epochs + 1)
        if not spec["training"]["vectorize"]:
            spec["training"]["seeds"] = spec["training"]["seeds"][:1]
            spec["grid"] = spec["grid"][:1]
    start = time.perf_counter()
    run_cell([TrainSpec.from_dict(spec) for spec in specs], device, log=lambda msg: None)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def networks(spec: dict) -> int:
    """How many networks a job trains: every seed of every configuration of its grid."""
    return len(spec["training"]["seeds"]) * len(spec["grid"])


def contract_of(configfile: str, stack_units: bool = False) -> Contract:
    """The plan of ``configfile``; with ``stack_units``, its cells run as one job each."""
    config = yaml.safe_load(Path(configfile).read_text())
    config["stack_units"] = stack_units or config.get("stack_units", False)
    return load_contract(config, str(REPO / "workflow/schemas/config.schema.yaml"))


def cells_of(contract: Contract, jobs: list) -> list[list]:
    """``jobs`` as the Snakemake jobs that run them: a cell's together (``stack_units``),
    every other job alone."""
    cell_of = {}
    for cells in contract.cells:
        pattern = cells.outputs(contract.layout)["records"][0]
        for path in contract.jobs:
            if path not in cell_of and (found := wildcards_of(pattern, path)) is not None:
                cell = contract.cell_jobs(cells, found)
                cell_of.update({job.spec.outputs["records"]: cell for job in cell})
    grouped = {}
    for job in jobs:
        cell = cell_of.get(job.spec.outputs["records"], [job])
        grouped[cell[0].spec.outputs["records"]] = cell
    return list(grouped.values())


def paper_contract() -> Contract:
    return contract_of(str(REPO / "config/config.yaml"))


def materialize(contract: Contract, spec: dict, tmp: Path) -> dict | None:
    """A copy of a training spec whose data exist: its g* written under ``tmp`` (once), a real
    dataset read from resources/ (None when it is missing)."""
    spec = copy.deepcopy(spec)
    data = spec["data"]
    if data["source"] == "synthetic":
        target = contract.jobs[data["path"]].spec.to_dict()
        path = tmp / data["path"].replace("/", "_")
        if not path.exists():
            g = (
                degree_ladder(target["n"], target["max_degree"], target["seed"])
                if target["family"] == "degree_ladder"
                else random_sparse(target["n"], target["k"], target["max_degree"], target["seed"])
            )
            g.to_json(path)
        data["path"] = str(path)
    else:
        data["path"] = str(REPO / data["path"])
        if not Path(data["path"]).exists():
            return None
    return spec


def job_groups(contract: Contract, methods=()) -> list[tuple[tuple, list]]:
    """The paper grid's training jobs by (experiment, dataset, method, group, stacked or one by
    one); the dataset only for real data. EN-S last: its epochs are by far the slowest (it
    evaluates the network on all of SPRIGHT's samples every step), so a time limit cuts the
    table there."""
    groups = defaultdict(list)
    for job in contract.jobs.values():
        if job.kind == "train" and (not methods or job.spec.method in methods):
            experiment = job.labels["experiment"]
            dataset = job.spec.labels["dataset"] if experiment == "real" else ""
            group = Path(job.spec.outputs["records"]).parent.name  # b7, m7, default
            stacked = "stacked" if job.spec.training.vectorize else "one by one"
            groups[(experiment, dataset, job.spec.method, group, stacked)].append(job)
    return sorted(groups.items(), key=lambda kv: (kv[0][2] == "ens", kv[0]))


def cost_row(key, jobs, contract, device: str, epochs: int, tmp: Path, single_run_above: float):
    """A group's Snakemake jobs (each a list of training jobs: one, or a cell's), a
    representative one's fixed and per-epoch seconds, its and the group's hours (None when its
    dataset is missing)."""
    experiment, dataset, method, group, stacked = key
    jobs = sorted(jobs, key=lambda cell: cell[0].spec.data.train_size)
    cell = jobs[len(jobs) // 2]
    specs = [materialize(contract, job.spec.to_dict(), tmp) for job in cell]
    if None in specs:
        print(f"skip {experiment}/{dataset}/{method}: {cell[0].spec.data.path} missing")
        return None
    warm_up = timed(specs, 1, device)  # also warms file caches, allocator, kernels
    if warm_up > single_run_above:
        fixed, per_epoch = 0.0, warm_up
    else:
        t1, t2 = timed(specs, 1, device), timed(specs, 2, device)
        per_epoch = max(t2 - t1, 0.0)
        fixed = max(t1 - per_epoch, 0.0)
    # a job that trains its networks one after another loads its data once
    spec = specs[0]
    scale = 1 if spec["training"]["vectorize"] else networks(spec)
    if cell[0].spec.training.patience is None:  # no early stopping: every configured epoch runs
        epochs = cell[0].spec.training.epochs
    job_s = fixed + scale * epochs * per_epoch
    return {
        "experiment": experiment,
        "dataset": dataset,
        "method": method,
        "group": group,
        "training": stacked,
        "jobs": len(jobs),
        "units": len(cell),
        "example": cell[0].spec.outputs["records"],
        "networks": networks(spec) * len(cell),
        "epochs": epochs,
        "per_epoch_s": round(per_epoch * scale, 3),
        "fixed_s": round(fixed, 2),
        "one_run": warm_up > single_run_above,
        "job_s": round(job_s, 1),
        "group_h": round(job_s * len(jobs) / 3600, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--epochs",
        type=int,
        default=100,
        help="assumed epochs per model until early stopping (default 100)",
    )
    parser.add_argument(
        "--configfile",
        default=str(REPO / "config/config.yaml"),
        help="the configuration whose jobs to time (default: the paper grid, config/config.yaml)",
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--methods", default="", help="comma-separated (default: all)")
    parser.add_argument(
        "--single-run-above",
        type=float,
        default=30.0,
        help="seconds: a group whose 1-epoch warm-up takes longer is estimated from it (30)",
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated: measure only the groups whose name (experiment/dataset/method/"
        "group, e.g. real/sgemm/ens/m7) contains one of these (default: all)",
    )
    parser.add_argument(
        "--stack-units",
        action="store_true",
        help="time the jobs as stack_units runs them: a cell's jobs as one (one representative "
        "cell per group)",
    )
    parser.add_argument("--out", help="also write the table here (JSON)")
    parser.add_argument("--markdown", help="also write the table here (Markdown, for the README)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    contract = contract_of(args.configfile, args.stack_units)
    groups = [
        (key, cells_of(contract, jobs))
        for key, jobs in job_groups(contract, [m for m in args.methods.split(",") if m])
    ]
    wanted = [w for w in args.only.split(",") if w]
    groups = [
        (k, jobs) for k, jobs in groups if not wanted or any(w in "/".join(k) for w in wanted)
    ]
    tmp = Path(tempfile.mkdtemp(prefix="bench_jobs_"))
    rows, total_h = [], 0.0
    for key, jobs in groups:
        row = cost_row(key, jobs, contract, args.device, args.epochs, tmp, args.single_run_above)
        if row is None:
            continue
        rows.append(row)
        print(json.dumps(row), flush=True)
        # Written after every row: a run cut short by a time limit keeps what it measured.
        total_h = sum(r["job_s"] * r["jobs"] for r in rows) / 3600
        if args.out:
            Path(args.out).write_text(json.dumps({"rows": rows, "total_h": total_h}, indent=1))
        if args.markdown:
            Path(args.markdown).write_text(markdown(rows, total_h, args, len(groups)))
    print(
        f"total: {sum(r['jobs'] for r in rows)} training jobs, {total_h:.1f} job-hours at "
        f"{args.epochs} epochs per model on {args.device} ({args.threads} thread(s))"
    )


def markdown(rows: list[dict], total_h: float, args, groups: int) -> str:
    """The cost table as the README shows it (``groups``: how many rows a full run has)."""
    device = args.device
    if device.startswith("cuda"):
        device = torch.cuda.get_device_name(torch.device(device))
    lines = [
        f"Measured on {device} at {args.epochs} epochs per model where a job stops early, its "
        f"configured epochs where it does not (benchmarks/bench_jobs.py --configfile "
        f"{Path(args.configfile).name}, torch {torch.__version__}).",
        "",
        "| experiment | dataset | method | group | training | jobs | units per job | networks per "
        "job | epochs | fixed s | s per epoch | hours |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        per_epoch = f"{r['per_epoch_s']}{' (one run)' if r['one_run'] else ''}"
        lines.append(
            f"| {r['experiment']} | {r['dataset']} | {r['method']} | {r['group']} | "
            f"{r['training']} | {r['jobs']} | {r['units']} | {r['networks']} | {r['epochs']} | "
            f"{r['fixed_s']} | "
            f"{per_epoch} | "
            f"{r['group_h']} |"
        )
    label = "**all**" if len(rows) == groups else f"**{len(rows)} of {groups} groups**"
    if args.methods:
        label += f" ({args.methods} only)"
    lines.append(
        f"| {label} | | | | | {sum(r['jobs'] for r in rows)} | | | | | | **{total_h:.1f}** |"
    )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
