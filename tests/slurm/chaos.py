"""The chaos run on the test cluster: the configuration of an undisturbed run, run again while
SLURM jobs are cancelled and Snakemake is killed; then the same command to completion.

    python tests/slurm/chaos.py REFERENCE_RUN CHAOS_RUN REPORT.json -- SNAKEMAKE ARGS...

1. starts Snakemake (SNAKEMAKE ARGS, run in CHAOS_RUN) and waits until two training jobs run
   while others wait;
2. holds one waiting job (`scontrol hold`: it waits until the kill, whatever the timing),
   cancels one running training job (`scancel`: Snakemake retries it) and waits until Snakemake
   has submitted it again;
3. kills Snakemake (SIGKILL: its SLURM jobs wait and run on), notes each job's state then, and
   waits until one of the jobs it left running has ended;
4. `snakemake --unlock`, then the same command again, to completion;
5. writes REPORT.json: the jobs it cancelled, the state of each job at the kill, every SLURM
   job of the two runs (comment, state, whether it ever ran), the rerun's exit status and
   output, the tables that differ from REFERENCE_RUN's (timing columns aside) and temporary
   files left under results/. tests/slurm/test_slurm.py asserts on it.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from whcore.pipeline.execution.slurm import queued_jobs

TRAINING = "rule_train_spectrum"
# Columns that measure time: they differ between any two runs.
TIMING = re.compile(r"time")
SUBMITTED = re.compile(r"submitted with SLURM jobid (\d+)")


def wait_until(what: str, condition, timeout: float = 300.0, every: float = 0.5):
    """Poll ``condition`` until it returns something true; return that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(every)
    raise TimeoutError(f"chaos: gave up after {timeout:.0f} s waiting for {what}")


def job_record(job: str) -> dict:
    """A finished or live job as the controller knows it (MinJobAge keeps it for 10 minutes)."""
    shown = subprocess.run(
        ["scontrol", "show", "job", "-o", job], capture_output=True, text=True, check=True
    ).stdout
    fields = dict(f.split("=", 1) for f in shown.split() if "=" in f)
    return {
        "id": job,
        "name": fields.get("JobName", ""),
        "comment": fields.get("Comment", ""),
        "state": fields.get("JobState", ""),
        # A job cancelled while it waited never had a batch host.
        "ran": fields.get("BatchHost", "(null)") != "(null)",
        "gpus": fields.get("TresPerJob", "-"),
        "time_limit": fields.get("TimeLimit", ""),
        "memory": fields.get("MinMemoryNode", ""),
        "start": fields.get("StartTime", ""),
        "end": fields.get("EndTime", ""),
    }


def table_differences(reference: Path, chaos: Path) -> list[str]:
    """Parquet tables under ``results/`` that are missing or differ between the two runs, timing
    columns aside (values compared exactly, row order included)."""
    ref_files = {p.relative_to(reference) for p in (reference / "results").rglob("*.parquet")}
    new_files = {p.relative_to(chaos) for p in (chaos / "results").rglob("*.parquet")}
    differences = [f"only in one run: {p}" for p in sorted(ref_files ^ new_files)]
    for path in sorted(ref_files & new_files):
        old, new = pd.read_parquet(reference / path), pd.read_parquet(chaos / path)
        old, new = (t.drop(columns=[c for c in t.columns if TIMING.search(c)]) for t in (old, new))
        if not old.equals(new):
            differences.append(str(path))
    return differences


def leftovers(run: Path) -> list[str]:
    """Temporary outputs (whcore.core.io writes under .NAME.*.tmp, swaps through .NAME.*.old)."""
    return sorted(
        str(p.relative_to(run))
        for pattern in (".*.tmp", ".*.old")
        for p in (run / "results").rglob(pattern)
    )


def hold_one(jobs: list[str]) -> str | None:
    """Hold the first of ``jobs`` that is still waiting (one may start meanwhile)."""
    for job in jobs:
        if subprocess.run(["scontrol", "hold", job], capture_output=True).returncode == 0:
            return job
    return None


def start(command: list[str], workdir: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=workdir, stdout=log.open("w"), stderr=subprocess.STDOUT, text=True
    )


def main(reference: Path, workdir: Path, report: Path, command: list[str]) -> int:
    first_log, rerun_log = workdir / "chaos_first.log", workdir / "chaos_rerun.log"
    snakemake = start(command, workdir, first_log)

    def training(state: str):
        return [j for j, (s, c) in queued_jobs(workdir).items() if s == state and TRAINING in c]

    wait_until(
        "two training jobs running and one waiting",
        lambda: len(training("RUNNING")) >= 2 and training("PENDING"),
    )
    # A waiting job held back stays waiting until the kill, whatever the timing of the others.
    held = wait_until("a waiting job held back", lambda: hold_one(training("PENDING")))
    cancelled = training("RUNNING")[0]
    comment = queued_jobs(workdir)[cancelled][1]
    subprocess.run(["scancel", cancelled], check=True)
    retried = wait_until(
        f"Snakemake to submit the cancelled job {cancelled} again",
        lambda: next(
            (j for j, (_, c) in queued_jobs(workdir).items() if c == comment and j != cancelled),
            None,
        ),
        timeout=240,
    )
    snakemake.send_signal(signal.SIGKILL)
    snakemake.wait()
    at_kill = {job: state for job, (state, _) in queued_jobs(workdir).items()}
    left_running = [job for job, state in at_kill.items() if state == "RUNNING"]
    wait_until(
        "a job of the killed Snakemake to end",
        lambda: any(job not in queued_jobs(workdir) for job in left_running),
    )

    subprocess.run([*command, "--unlock"], cwd=workdir, check=True, capture_output=True)
    rerun = start(command, workdir, rerun_log)
    rerun_status = rerun.wait(timeout=900)

    output = first_log.read_text() + rerun_log.read_text()
    ids = sorted(set(SUBMITTED.findall(output)) | {cancelled}, key=int)
    jobs = [job_record(job) for job in ids]
    report.write_text(
        json.dumps(
            {
                "cancelled": cancelled,
                "held": held,
                "retried": retried,
                "at_kill": at_kill,
                "jobs": jobs,
                "rerun_status": rerun_status,
                "rerun_output": rerun_log.read_text()[-20000:],
                "table_differences": table_differences(reference, workdir),
                "tables_compared": len(list((workdir / "results").rglob("*.parquet"))),
                "leftovers": leftovers(workdir),
            },
            indent=1,
        )
    )
    print_jobs(jobs, {cancelled: "cancelled by the test", held: "held by the test"}, at_kill)
    return 0 if rerun_status == 0 else 1


def print_jobs(jobs: list[dict], notes: dict[str, str], at_kill: dict[str, str]) -> None:
    columns = ("id", "state", "ran", "gpus", "time_limit", "memory", "start", "end", "comment")
    print(" ".join(f"{c.upper():<10}" for c in columns), "NOTE")
    for job in jobs:
        note = notes.get(job["id"], "")
        if job["id"] in at_kill:
            note = f"{note}; {at_kill[job['id']]} at the kill".lstrip("; ")
        print(" ".join(f"{str(job[c]):<10}" for c in columns), note)


if __name__ == "__main__":
    reference, workdir, report, dashes, *command = sys.argv[1:]
    assert dashes == "--", __doc__
    sys.exit(main(Path(reference), Path(workdir), Path(report), command))
