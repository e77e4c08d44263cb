"""Every job subcommand stops with the Snakemake that started it, and never writes over a
result that another job wrote for a different spec while it ran (not only `whcore train`)."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from whcore.core.io import write_parquet
from whcore.pipeline.jobs.entacmaea_energy import EntacmaeaEnergySpec
from whcore.pipeline.jobs.target import TargetSpec
from whcore.pipeline.jobs.writer import Outputs
from whcore.pipeline.runtime.processes import PARENT_ENV


def _table(path, rows=2000, n=12):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (rows, n))
    frame = pd.DataFrame(x, columns=[f"b{i}" for i in range(n)]).assign(y=rng.normal(size=rows))
    frame.to_parquet(path)
    return path


def _baselines_spec(tmp_path, n_estimators: int) -> str:
    return json.dumps(
        {
            "dataset": "toy",
            "family": "rf",
            "grid": {"n_estimators": [n_estimators], "max_depth": [12]},
            "data": {
                "path": str(_table(tmp_path / "t.parquet")),
                "train_size": 1000,
                "val_size": 500,
                "test_size": 500,
                "data_seed": 0,
                "standardize": False,
            },
            "outputs": {"records": str(tmp_path / "rf.parquet")},
        }
    )


def test_a_baselines_job_stops_when_its_snakemake_is_killed(tmp_path):
    """Snakemake SIGKILLed while `whcore baselines` runs: the job must exit (status 3) within
    seconds and write nothing, never write its result later over a newer run's."""
    parent = subprocess.Popen(["sleep", "600"])  # stands in for the Snakemake process
    env = {**os.environ, PARENT_ENV: str(parent.pid)}
    command = [sys.executable, "-m", "whcore.pipeline.cli", "baselines", "--threads", "1"]
    job = subprocess.Popen(
        [*command, "--spec", _baselines_spec(tmp_path, 20000)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # Killed once the job watches it (its imports may take seconds on a loaded machine).
    assert f"watching the Snakemake process {parent.pid}" in job.stdout.readline()
    time.sleep(1)  # fitting under way
    assert job.poll() is None, job.stdout.read()
    parent.kill()
    parent.wait()
    try:
        status = job.wait(timeout=30)
    finally:
        job.kill()
    assert status == 3, job.stdout.read()
    assert "is gone: stopping" in job.stdout.read()
    assert not (tmp_path / "rf.parquet").exists()


def test_a_table_written_meanwhile_for_another_spec_is_kept(tmp_path):
    path = tmp_path / "table.parquet"
    spec = EntacmaeaEnergySpec.from_dict({"data": "d.parquet", "outputs": {"table": str(path)}})
    outputs = Outputs(spec)
    write_parquet(pd.DataFrame({"a": [1]}), path, {"spec": {"top": 5}})  # another job's, since
    with pytest.raises(RuntimeError, match="written by another job for a different spec"):
        outputs.table("table", pd.DataFrame({"a": [2]}))
    assert pd.read_parquet(path)["a"].tolist() == [1]
    outputs = Outputs(spec)  # the table is older than the job: replaced
    outputs.table("table", pd.DataFrame({"a": [3]}))
    assert pd.read_parquet(path)["a"].tolist() == [3]


def test_a_file_that_is_no_table_is_guarded_too(tmp_path):
    """A g* file (JSON, no spec inside) written by another job while this one ran is kept."""
    path = tmp_path / "g.json"
    spec = TargetSpec.from_dict(
        {
            "family": "degree_ladder",
            "n": 4,
            "max_degree": 2,
            "seed": 0,
            "outputs": {"target": str(path)},
        }
    )
    outputs = Outputs(spec)
    path.write_text("{}")
    with pytest.raises(RuntimeError, match="written by another job"):
        with outputs.file(path) as tmp:
            tmp.write_text("mine")
    assert path.read_text() == "{}" and list(tmp_path.glob(".g.json.*")) == []
