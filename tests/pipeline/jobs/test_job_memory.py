"""The memory a training job asks a scheduler for comes from the job: at least the lower bound
of what its networks need, at least the floor, doubled on a second attempt, and above the peak
a real `whcore train` process reaches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO

from whcore.core.footprint import (
    JOB_MEMORY_FLOOR_MB,
    MiB,
    job_memory_mb,
    step_rows,
    training_bytes,
)
from whcore.pipeline.contract import load_contract
from whcore.pipeline.contract.base import memory_mb
from whcore.pipeline.jobs.train import Training

SCHEMA = str(REPO / "workflow/schemas/config.schema.yaml")
BIN = Path(sys.executable).parent


def test_every_training_job_of_the_paper_grid_asks_for_at_least_its_lower_bound():
    contract = load_contract(str(REPO / "config/config.yaml"), SCHEMA)
    trains = [job for job in contract.jobs.values() if job.kind == "train"]
    assert trains and all(job.mem_mb >= JOB_MEMORY_FLOOR_MB for job in trains)
    ens = [
        job
        for job in trains
        if job.labels["experiment"] == "synthetic"
        and job.spec.method == "ens"
        and json.loads(job.spec_json)["labels"]["n"] == 100
    ]
    assert ens
    for job in ens:
        training = job.spec.training.to_dict()
        stacked = training["vectorize"]  # timed cells train one network at a time
        members = len(training["seeds"]) * len(job.spec.grid) if stacked else 1
        rows = step_rows("ens", job.spec.grid, 100, training["batch_size"])
        assert job.mem_mb * MiB >= training_bytes(100, training["width"], members, rows)
    # the largest one: 16.6 GB by the lower bound alone, so the request is larger
    assert max(job.mem_mb for job in ens) * MiB > 16.6e9


def test_the_rule_resource_is_the_jobs_estimate_times_the_attempt():
    contract = load_contract(str(REPO / "config/quick.yaml"), SCHEMA)
    path, job = next((p, j) for p, j in contract.jobs.items() if j.kind == "train")
    function = contract.mem_mb_of(path)  # a concrete path: a pattern without wildcards
    assert function({}, 1) == job.mem_mb and function({}, 2) == 2 * job.mem_mb


def test_the_request_covers_the_peak_of_a_real_training_process(tmp_path):
    """FullWH at n = 12 (4096 penalty points a step), three stacked networks: the peak resident
    memory of the process stays below what the job would ask for."""
    target = tmp_path / "g.json"
    subprocess.run(
        [
            str(BIN / "whcore"),
            "target",
            "--spec",
            json.dumps(
                {
                    "family": "random_sparse",
                    "n": 12,
                    "max_degree": 3,
                    "k": 10,
                    "seed": 0,
                    "outputs": {"target": str(target)},
                }
            ),
        ],
        check=True,
        capture_output=True,
    )
    grid = [{"lam": 0.01}, {"lam": 0.1}, {"lam": 1.0}]
    training = {
        "seeds": [0],
        "epochs": 2,
        "patience": None,
        "width": 10,
        "batch_size": 16,
        "vectorize": True,
    }
    spec = {
        "method": "fullwh",
        "grid": grid,
        "data": {
            "source": "synthetic",
            "path": str(target),
            "train_size": 200,
            "val_size": 100,
            "test_size": 100,
            "data_seed": 0,
        },
        "training": training,
        "outputs": {"records": str(tmp_path / "out")},
    }
    # A fresh parent measures its one child: this process's own children peaked elsewhere.
    measure = (
        "import resource, subprocess, sys; "
        "subprocess.run(sys.argv[1:], check=True, capture_output=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            measure,
            str(BIN / "whcore"),
            "train",
            "--device",
            "cpu",
            "--spec",
            json.dumps(spec),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    peak_kib = int(done.stdout.split()[-1])
    assert peak_kib > 100 * 1024  # PyTorch alone takes more: the child's peak was measured
    asked = memory_mb("fullwh", grid, Training.from_dict(training), 400, 12)
    assert asked * 1024 > peak_kib, (asked, peak_kib / 1024)


def test_the_estimate_grows_with_the_job():
    small = job_memory_mb(20, 10, 4, 16 + 2**10, 1000)
    assert small == JOB_MEMORY_FLOOR_MB
    large = job_memory_mb(20, 10, 4, 16 + 2**20, 1000)
    assert large * MiB > 3 * training_bytes(20, 10, 4, 16 + 2**20)
    assert job_memory_mb(20, 10, 8, 16 + 2**20, 1000) > large
