"""What one unit of each experiment costs on this CPU, where its seconds go, and what paying a
job's process start-up once per unit would save.

Run in the working folder of a finished run (the one holding .snakemake/ and results/<run>/):

    python benchmarks/bench_units.py --configfile config/faithful.yaml [--jobs 3] [--epochs 2]

Four measurements, each against a baseline taken in the same run:
1. **A unit's cost today**, from Snakemake's records of the run's jobs
   (``whcore.pipeline.claims.costs``): wall seconds per unit of each experiment, and the jobs
   per unit (a unit is one more g* draw or subsample in every cell of the experiment).
2. **Start-up per job.** ``--jobs`` training jobs of each experiment, cut to ``--epochs``
   epochs and writing under a temporary folder, run twice: each as its own ``whcore train``
   process (today's way; the baseline), then all of them in one Python process (start-up paid
   once). The difference per job is what a process per job costs beyond its work: interpreter,
   imports (PyTorch and the optimizer's lazy import of its compiler), device set-up.
3. **A cell's jobs as one** (``stack_units``): one cell of each experiment, its jobs cut to
   ``--epochs`` epochs, each as its own ``whcore train`` process (the baseline) against the cell
   as one process (``whcore train --spec`` with their specs as a list: start-up once, one
   stacked model), in CPU-seconds.
4. **The arithmetic.** One training step of the spectrum network (n = 10, width 10, 8 networks
   stacked, HashWH b = 8: 256 points) in GFLOP/s, against this thread's fp32 matmul roof
   (``torch.mm`` of 1024 x 1024 matrices) measured in the same run.

It prints, per experiment, the ceiling of the start-up lever: a unit's jobs in one process would
cost ``unit - (jobs per unit - 1) x start-up`` instead of ``unit``.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import torch
import yaml

from whcore.pipeline.claims import plan
from whcore.pipeline.claims.costs import experiment_of, job_seconds
from whcore.pipeline.cli import main as whcore_main
from whcore.pipeline.contract import load_contract
from whcore.pipeline.experiments import cost_rules, unit_keys
from whcore.pipeline.runtime.layout import matches, wildcards_of

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def unit_table(config: dict) -> dict[str, dict]:
    """Per experiment with units: the run's units, jobs and wall seconds (from its records)."""
    table = {
        e: {"units": u, "jobs": 0, "seconds": 0.0}
        for e, u in plan.config_units(config, unit_keys()).items()
    }
    for rule, output, seconds in job_seconds("."):
        row = table.get(experiment_of(rule, output, config["run_name"], cost_rules()))
        if row is not None:
            row["jobs"] += 1
            row["seconds"] += seconds
    return {e: row for e, row in table.items() if row["jobs"]}


def sample_specs(contract, per_experiment: int, epochs: int, tmp: Path) -> list[tuple[str, str]]:
    """(experiment, spec JSON) of up to ``per_experiment`` training jobs of each experiment,
    their epochs cut to ``epochs`` and their outputs under ``tmp``."""
    chosen = defaultdict(list)
    for _, job in sorted(contract.jobs.items()):
        experiment = job.labels.get("experiment")
        if job.kind != "train" or len(chosen[experiment]) >= per_experiment:
            continue
        if not Path(job.spec.data.path).exists():
            continue  # a real dataset the run has not binarized (or a g* it has not drawn)
        folder = tmp / f"job{sum(map(len, chosen.values()))}"
        chosen[experiment].append(json.dumps(cut(job.spec, epochs, folder)))
    return [(e, s) for e, specs in chosen.items() for s in specs]


def cut(spec, epochs: int, folder: Path) -> dict:
    """A training job's spec cut to ``epochs`` epochs, its outputs under ``folder``."""
    spec = copy.deepcopy(spec.to_dict())
    spec["training"].update(epochs=epochs, patience=None)
    spec["outputs"] = {name: str(folder / name) for name in spec["outputs"]}
    return spec


def sample_cells(configfile: str, epochs: int, tmp: Path) -> list[tuple[str, list[str]]]:
    """(experiment, the specs of one cell) for each experiment whose jobs ``stack_units``
    runs as cells, their epochs cut to ``epochs`` and their outputs under ``tmp``."""
    config = yaml.safe_load(Path(configfile).read_text())
    contract = load_contract({**config, "stack_units": True}, str(SCHEMA))
    chosen = []
    for cells in contract.cells:
        pattern = cells.outputs(contract.layout)["records"][0]
        first = next(path for path in sorted(contract.jobs) if matches(pattern, path))
        jobs = contract.cell_jobs(cells, wildcards_of(pattern, first))
        if all(Path(job.spec.data.path).exists() for job in jobs):
            folders = [tmp / f"{cells.rule}_{index}" for index in range(len(jobs))]
            specs = [json.dumps(cut(j.spec, epochs, f)) for j, f in zip(jobs, folders)]
            chosen.append((cells.experiment, specs))
    return chosen


def one_process_per_cell(cells, tmp: Path) -> tuple[float, float]:
    """Wall and CPU seconds of each cell's jobs as one `whcore train` process (stack_units)."""
    specs = [(e, spec) for e, cell in cells for spec in cell]
    fresh(specs, tmp)
    cpu0, wall0 = cpu_seconds(resource.RUSAGE_CHILDREN), time.perf_counter()
    for _, cell in cells:
        cell_spec = "[" + ",".join(cell) + "]"
        command = [sys.executable, "-m", "whcore.pipeline.cli", "train", "--spec", cell_spec]
        subprocess.run([*command, "--threads", "1"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - wall0, cpu_seconds(resource.RUSAGE_CHILDREN) - cpu0


def fresh(specs: list[tuple[str, str]], tmp: Path) -> None:
    """Remove what an earlier pass wrote (a job refuses to overwrite outputs it did not own)."""
    for _, spec in specs:
        for path in json.loads(spec)["outputs"].values():
            subprocess.run(["rm", "-rf", path], check=True)


def one_process_per_job(specs, tmp: Path) -> tuple[float, float]:
    """Wall and CPU seconds of every job as its own `whcore train` process (today)."""
    fresh(specs, tmp)
    cpu0, wall0 = cpu_seconds(resource.RUSAGE_CHILDREN), time.perf_counter()
    for _, spec in specs:
        command = [sys.executable, "-m", "whcore.pipeline.cli", "train", "--spec", spec]
        subprocess.run([*command, "--threads", "1"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - wall0, cpu_seconds(resource.RUSAGE_CHILDREN) - cpu0


def one_process(specs, tmp: Path) -> tuple[float, float]:
    """Wall and CPU seconds of the same jobs in this process, one after another."""
    fresh(specs, tmp)
    cpu0, wall0 = cpu_seconds(resource.RUSAGE_SELF), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        for _, spec in specs:
            if whcore_main(["train", "--spec", spec, "--threads", "1"]) != 0:
                raise RuntimeError(f"a job failed in one process: {spec[:200]}")
    return time.perf_counter() - wall0, cpu_seconds(resource.RUSAGE_SELF) - cpu0


def step_rate(members: int = 8, points: int = 256, repeats: int = 100) -> float:
    """GFLOP/s of a forward and backward pass of the spectrum network (n = 10, width 10) with
    ``members`` stacked networks on ``points`` points each (HashWH b = 8's penalty batch)."""
    from whcore.core.models import MLP

    model = MLP(10, 10, seeds=list(range(members)))
    x = torch.randint(0, 2, (members, points, 10)).float()
    macs = sum(w.shape[1] * w.shape[2] for w in model.weights)  # per point and member
    flops = 3 * 2 * macs * points * members  # forward, and backward's two products

    def step():
        model.zero_grad()
        model(x).pow(2).sum().backward()

    return flops / best_seconds(step, repeats) / 1e9


def matmul_roof(size: int = 1024, repeats: int = 10) -> float:
    """GFLOP/s of one fp32 ``torch.mm`` of two ``size`` x ``size`` matrices."""
    a, b = torch.rand(size, size), torch.rand(size, size)
    return 2 * size**3 / best_seconds(lambda: torch.mm(a, b), repeats) / 1e9


def best_seconds(fn, repeats: int) -> float:
    """The fastest of ``repeats`` timed calls after three warm-up calls (the machine is
    shared: the minimum is the least disturbed)."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configfile", required=True, help="the configuration of the run")
    parser.add_argument("--jobs", type=int, default=3, help="training jobs per experiment (3)")
    parser.add_argument("--epochs", type=int, default=2, help="epochs of each such job (2)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    contract = load_contract(args.configfile, str(SCHEMA))
    table = unit_table(contract.config)
    if not table:
        sys.exit(
            "no finished job of this run in ./.snakemake/metadata: run it in its working folder"
        )
    with tempfile.TemporaryDirectory(prefix="bench_units_") as folder:
        tmp = Path(folder)
        specs = sample_specs(contract, args.jobs, args.epochs, tmp)
        one_process(specs[:1], tmp)  # warm-up: this process's first job imports the rest
        today_wall, today_cpu = one_process_per_job(specs, tmp)
        once_wall, once_cpu = one_process(specs, tmp)
    # CPU-seconds, not wall: on a shared machine a process waits for a core; the run's unit
    # costs are job wall times on cores of their own, where the two agree for one thread.
    startup = (today_cpu - once_cpu) / len(specs)
    print(
        f"{len(specs)} jobs at {args.epochs} epochs: one process each {today_wall:.1f} s wall "
        f"({today_cpu:.1f} CPU-s), all in one process {once_wall:.1f} s ({once_cpu:.1f} CPU-s): "
        f"start-up {startup:.2f} CPU-s a job ({(today_wall - once_wall) / len(specs):.2f} s wall)"
    )
    for experiment, row in table.items():
        unit = row["seconds"] / row["units"]
        jobs = row["jobs"] / row["units"]
        saved = min(max(jobs - 1, 0) * startup, unit)
        print(
            f"{experiment}: {row['units']} units, {row['jobs']} jobs ({jobs:.1f} a unit), "
            f"{unit:.0f} s a unit; start-up {saved / unit:.0%} of it: ceiling "
            f"{unit / max(unit - saved, 1e-9):.2f}x with a unit's jobs in one process"
        )
    with tempfile.TemporaryDirectory(prefix="bench_cells_") as folder:
        for experiment, cell in sample_cells(args.configfile, args.epochs, Path(folder)):
            specs = [(experiment, spec) for spec in cell]
            alone_wall, alone_cpu = one_process_per_job(specs, Path(folder))
            cell_wall, cell_cpu = one_process_per_cell([(experiment, cell)], Path(folder))
            print(
                f"{experiment}: a cell of {len(cell)} jobs at {args.epochs} epochs: one "
                f"process a job {alone_wall:.1f} s wall ({alone_cpu:.1f} CPU-s), the cell as one "
                f"job (stack_units) {cell_wall:.1f} s ({cell_cpu:.1f} CPU-s): "
                f"{alone_cpu / cell_cpu:.2f}x in CPU-s"
            )
    rate, roof = step_rate(), matmul_roof()
    print(
        f"spectrum network step: {rate:.1f} GFLOP/s against this thread's matmul roof "
        f"{roof:.1f} GFLOP/s ({rate / roof:.0%})"
    )


if __name__ == "__main__":
    main()
