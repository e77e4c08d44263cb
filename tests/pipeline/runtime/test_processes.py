"""The run lock and the orphan watchdog (whcore.pipeline.runtime.processes)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from whcore.pipeline.runtime import processes


def test_run_lock_refuses_a_second_process_and_frees_on_death(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from whcore.pipeline.runtime.processes import hold_run_lock; "
            f"hold_run_lock({str(tmp_path)!r}); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(processes.RunLockedError, match=f"pid {holder.pid}"):
            processes.hold_run_lock(tmp_path)
    finally:
        holder.kill()  # SIGKILL: the kernel releases the lock, no stale lock file blocks
        holder.wait()
    assert processes.hold_run_lock(tmp_path) == tmp_path / processes.LOCK_FILE


def test_die_with_stops_the_job_when_its_parent_is_gone(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from whcore.pipeline.runtime.processes import die_with; "
            f"die_with({parent.pid}, interval=0.05, log=lambda m: print(m, flush=True)); "
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    # Killed only once the job watches it (a loaded machine may take seconds to import).
    assert f"watching the Snakemake process {parent.pid}" in child.stdout.readline()
    time.sleep(0.2)
    assert child.poll() is None  # the parent lives: the job runs on
    parent.kill()
    parent.wait()
    assert child.wait(timeout=10) == 3


def test_die_with_watches_nothing_without_a_live_parent():
    assert processes.die_with(None) is None
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert processes.die_with(dead.pid) is None
