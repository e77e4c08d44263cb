"""Run lock, orphan watchdog, superseded outputs and writable folders (whcore.pipeline.guards)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from whcore.core.io import write_parquet
from whcore.pipeline import guards


def test_run_lock_refuses_a_second_process_and_frees_on_death(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from whcore.pipeline.guards import hold_run_lock; "
         f"hold_run_lock({str(tmp_path)!r}); print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(guards.RunLockedError, match=f"pid {holder.pid}"):
            guards.hold_run_lock(tmp_path)
    finally:
        holder.kill()  # SIGKILL: the kernel releases the lock, no stale lock file blocks
        holder.wait()
    assert guards.hold_run_lock(tmp_path) == tmp_path / guards.LOCK_FILE


def test_die_with_stops_the_job_when_its_parent_is_gone(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import time; from whcore.pipeline.guards import die_with; "
         f"die_with({parent.pid}, interval=0.05); time.sleep(60)"],
    )  # fmt: skip
    time.sleep(0.5)
    assert child.poll() is None  # the parent lives: the job runs on
    parent.kill()
    parent.wait()
    assert child.wait(timeout=10) == 3


def test_die_with_watches_nothing_without_a_live_parent():
    assert guards.die_with(None) is None
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert guards.die_with(dead.pid) is None


def test_a_result_written_for_another_spec_meanwhile_is_never_replaced(tmp_path):
    path = tmp_path / "runs.parquet"
    started = time.time()
    write_parquet(pd.DataFrame({"x": [1]}), path, {"spec": {"training": {"epochs": 50}}})
    with pytest.raises(RuntimeError, match="different spec"):
        guards.refuse_superseded(path, {"training": {"epochs": 6001}}, started)
    guards.refuse_superseded(path, {"training": {"epochs": 50}}, started)  # the same job: fine
    guards.refuse_superseded(path, {"training": {"epochs": 6001}}, time.time() + 5)  # older


def test_unwritable_output_folder_is_named_before_any_work(tmp_path):
    blocker = tmp_path / "results"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(PermissionError, match=f"{blocker / 'runs'}: cannot write outputs"):
        guards.check_writable(blocker / "runs" / "r.parquet")
    guards.check_writable(tmp_path / "ok" / "r.parquet")
    assert os.listdir(tmp_path / "ok") == []


def test_provenance_names_the_code_libraries_device_host_and_time():
    from whcore.pipeline.provenance import git_commit, provenance

    record = provenance("cpu")
    assert record["device"] == "cpu" and record["host"] and record["started"]
    assert record["whcore_version"] and {"torch", "numpy", "pandas"} <= set(record["libraries"])
    assert record["git_commit"].removesuffix("+dirty") == git_commit().removesuffix("+dirty")
    assert git_commit(Path("/")) == "not a checkout"


def _fake_slurm(tmp_path: Path, listing: str) -> Path:
    """`squeue` printing ``listing`` and `scancel` recording its arguments, first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text(f"#!/bin/sh\ncat <<'END'\n{listing}END\n")
    (bin_dir / "scancel").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "cancelled"}\n')
    for tool in ("squeue", "scancel"):
        (bin_dir / tool).chmod(0o755)
    return bin_dir


def test_slurm_jobs_a_killed_snakemake_left_here_are_cancelled(tmp_path, monkeypatch):
    """Only Snakemake's jobs (comment rule_...) whose working directory is this one."""
    here, elsewhere = tmp_path / "run", tmp_path / "other"
    here.mkdir(), elsewhere.mkdir()
    listing = (
        f"101|{here}|rule_train_wildcards_experiment=real\n"
        f"102|{here}/|rule_train_spectrum_wildcards_x\n"  # the same folder, written otherwise
        f"103|{elsewhere}|rule_train_wildcards_experiment=real\n"  # another run's
        f"104|{here}|my own interactive job\n"  # not Snakemake's
    )
    monkeypatch.setenv("PATH", f"{_fake_slurm(tmp_path, listing)}{os.pathsep}{os.environ['PATH']}")
    assert guards.cancel_orphaned_slurm_jobs(here) == ["101", "102"]
    assert (tmp_path / "cancelled").read_text() == "101 102\n"


def test_no_orphan_means_no_scancel_and_no_slurm_means_nothing(tmp_path, monkeypatch):
    here = tmp_path / "run"
    here.mkdir()
    monkeypatch.setenv("PATH", f"{_fake_slurm(tmp_path, '')}{os.pathsep}{os.environ['PATH']}")
    assert guards.cancel_orphaned_slurm_jobs(here) == []
    assert not (tmp_path / "cancelled").exists()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert guards.cancel_orphaned_slurm_jobs(here) == []
