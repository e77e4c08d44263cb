"""The SLURM profile on a real SLURM: a single-node cluster on this machine (localhost only) runs
a tiny configuration of the workflow through profiles/slurm (tests/slurm/run_slurm_test.sh)
while a running job is cancelled and Snakemake is killed, reruns it to completion, and compares
its tables with a local run's (tests/slurm/chaos.py).

It installs packages with apt-get and starts daemons as root, so it runs only when asked:
WHCORE_SLURM_TEST=1 (the SLURM stage of .ci/run sets it). Run it with ``-s`` to see the job ids
and their states.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from whcore.pipeline.execution import slurm

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "slurm" / "run_slurm_test.sh"
pytestmark = pytest.mark.workflow


def _skip_reason() -> str | None:
    if os.environ.get("WHCORE_SLURM_TEST") != "1":
        return (
            "starts a real SLURM cluster (apt-get install, daemons as root): set "
            "WHCORE_SLURM_TEST=1 to run it (the SLURM stage of .ci/run does)"
        )
    if os.geteuid() != 0:
        return "needs root to start munged, slurmctld and slurmd"
    if not (shutil.which("slurmctld") and shutil.which("sbatch")) and not shutil.which("apt-get"):
        return "SLURM is not installed and there is no apt-get to install it"
    conf = Path("/etc/slurm/slurm.conf")
    if conf.exists() and "whcore test cluster" not in conf.read_text().splitlines()[0]:
        return f"{conf} belongs to a real SLURM installation; the test will not replace it"
    return None


@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_workflow_runs_through_the_slurm_profile_and_survives_chaos(tmp_path):
    env = dict(os.environ)
    # snakemake, whcore and the jobs' Python: this interpreter's environment.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        [str(SCRIPT), str(tmp_path)],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=1500,
        check=False,
    )
    print(proc.stdout)  # the SLURM jobs, their states and times (pytest -s, or on failure)
    assert proc.returncode == 0, proc.stdout[-4000:]
    report = json.loads((tmp_path / "chaos.json").read_text())
    _check_profile(report["jobs"], report["retried"])
    _check_chaos_run(report)
    assert (
        tmp_path / "chaos" / "results" / "tiny" / "figures" / "fig2_sae_evolution.pdf"
    ).is_file()
    # Everything it started is gone again.
    for daemon in ("slurmctld", "slurmd", "munged"):
        pid_file = {"munged": tmp_path / "cluster" / "munge" / "munged.pid"}.get(
            daemon, tmp_path / "cluster" / f"{daemon}.pid"
        )
        assert not pid_file.exists(), f"{daemon} was not stopped"
    assert not Path("/etc/slurm/slurm.conf").exists()


def _check_profile(jobs: list[dict], retried: str) -> None:
    """Each Snakemake job is a SLURM job of its own (7 of them, with retries and resubmissions
    in the chaos run); a training job asks for one GPU, the rule's time limit and the memory of
    its estimate, twice both on its second attempt; the training jobs run side by side. Every
    job carries the workflow's mark (whcore_<run id>), by which the rerun finds its orphans."""
    assert len({job["comment"] for job in jobs}) == 7
    assert all(re.fullmatch(slurm.MARKED_NAME, job["name"]) for job in jobs), jobs
    training = [job for job in jobs if job["comment"].startswith("rule_train_spectrum")]
    assert {job["gpus"] for job in training} == {"gres:gpu:1"}
    for job in training:
        first_attempt = job["id"] != retried
        expected = ("02:00:00", "2000M") if first_attempt else ("04:00:00", "4000M")
        assert (job["time_limit"], job["memory"]) == expected, job
    (start_a, end_a), (start_b, end_b) = sorted(
        (job["start"], job["end"]) for job in training if job["state"] == "COMPLETED"
    )[:2]
    assert start_a < end_b and start_b < end_a, training


def _check_chaos_run(report: dict) -> None:
    """The chaos run (tests/slurm/chaos.py): a running job cancelled, Snakemake killed with jobs
    waiting and running, the same command rerun. It ends with the undisturbed run's tables and
    runs no job twice."""
    rerun = report["rerun_output"]
    assert report["rerun_status"] == 0, rerun[-4000:]
    # The kill left jobs running and waiting (one held back). The rerun cancelled the waiting
    # ones, waited for the running ones, restarted to plan from what they made, and recorded
    # the outputs that they and the jobs that ended while no Snakemake watched had written.
    assert "RUNNING" in report["at_kill"].values()
    assert report["at_kill"][report["held"]] == "PENDING"
    for line in ("Cancelled", "Waiting for", "Restarting", "Recorded"):
        assert line in rerun, (line, rerun[-4000:])
    jobs = report["jobs"]
    assert sum(job["id"] == report["cancelled"] and job["state"] == "CANCELLED" for job in jobs)
    # Every Snakemake job completed once, and ran once more only where the test cancelled it
    # while it ran: no work done twice because Snakemake was killed.
    completed = Counter(job["comment"] for job in jobs if job["state"] == "COMPLETED")
    ran = Counter(job["comment"] for job in jobs if job["ran"])
    expected_runs = Counter(completed)
    expected_runs.update(job["comment"] for job in jobs if job["id"] == report["cancelled"])
    assert set(completed.values()) == {1} and len(completed) == 7, completed
    assert ran == expected_runs, (ran, expected_runs)
    # The same tables as the undisturbed (local) run, timing columns aside; nothing half-written.
    assert report["tables_compared"] >= 10 and report["table_differences"] == []
    assert report["leftovers"] == []
