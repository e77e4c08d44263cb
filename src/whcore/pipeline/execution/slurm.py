"""What a run on SLURM does before it submits anything: refuse a job that no node can hold, and
settle the SLURM jobs that a killed Snakemake left behind, so that no job's work is done twice.

A training job asks SLURM for the memory its estimate gives (``whcore.core.footprint``); one that
asks for more than the largest node of the partition has would wait or be rejected for ever,
every retry: ``check_nodes_fit`` refuses the run at start, naming the job, its config key and
the fix.

A Snakemake killed with SIGKILL cannot cancel its SLURM jobs: they wait or run on, and write
their outputs with nobody watching. The next executing run in the folder holds the run lock (no
other Snakemake is alive here) and, before it submits anything:

- cancels the jobs still waiting: they have done no work, and this run submits them again;
- waits for the jobs running, so that their work is kept rather than repeated; it planned its
  jobs before their outputs existed, so it then restarts with the same command line, from the
  folder it was started in (``restart``), to plan from them;
- records, in Snakemake's metadata, the outputs such jobs wrote (then, or earlier while no
  Snakemake watched): Snakemake writes a job's record when it sees the job end, and an output
  without one would never be replanned after a change of its spec. An output is recorded only
  when the spec written into it is the one its job has now; one written for another spec is
  named, with the fix.

Which jobs are this workflow's, from this folder. The plugin names every job after its run's
UUID, drawn anew by each Snakemake, so the next run cannot know the killed one's; the comment it
sets (``rule_<rule>_...``) is that of any Snakemake workflow. The SLURM profile therefore sets the
plugin's job-name prefix to ``MARKER`` (``slurm-jobname-prefix``), and a job is this folder's
only when its name is ``whcore_<UUID>`` and its working directory is this folder, compared
exactly: the plugin submits from Snakemake's working directory as ``getcwd`` gives it, the real
path that ``queued_jobs`` compares with. Another workflow's jobs, or the user's own, from the
same folder are never touched; a run without the marker is refused at start
(``check_job_marker``), since it could not tell its orphans. squeue lists each job as
``id|state|name|comment|folder``: a job is taken when its line is an id, a state, a marked name
and a comment (none holds a ``|``), then exactly this folder, so that no character of a
folder's name (``|``, a newline) can hide one, and a job from ``<anything>|<this folder>`` is
not taken for one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ..runtime.guards import written_spec

__all__ = [
    "MARKER",
    "JobMarkerError",
    "NodeFitError",
    "OrphanWaitError",
    "SlurmQueryError",
    "SlurmStartError",
    "check_job_marker",
    "check_nodes_fit",
    "largest_node_mb",
    "queued_jobs",
    "record_orphan_outputs",
    "restart",
    "settle_orphaned_jobs",
    "slurm_available",
    "wait_minutes",
]

# States of a job that has not started its work; any other state may still write outputs.
WAITING = {"PENDING", "REQUEUED", "CONFIGURING", "RESV_DEL_HOLD", "REQUEUE_HOLD"}
# The job-name prefix that profiles/slurm sets: the plugin names each job "<prefix>_<run UUID>".
MARKER = "whcore"
MARKED_NAME = rf"{MARKER}_[0-9a-f-]{{36}}"
# How long squeue, scancel or sinfo may take to answer.
QUERY_SECONDS = 120
# How long a run waits for the jobs a killed Snakemake left running (checked with the other
# variables, whcore.pipeline.execution.environment). The default is the longest time limit a job of this
# workflow asks for (4 h, times 3 attempts): a job still there after it is not progressing.
WAIT_VARIABLE = "WHCORE_SLURM_WAIT_MINUTES"
DEFAULT_WAIT_MINUTES = 720


class SlurmStartError(RuntimeError):
    """What stops a SLURM run before it submits anything (its message: one line, with the
    fix)."""


class SlurmQueryError(SlurmStartError):
    """SLURM could not be asked which jobs wait or run, or could not cancel them."""


class OrphanWaitError(SlurmStartError):
    """Jobs a killed Snakemake left running did not end within the time allowed."""


def slurm_available() -> bool:
    return bool(shutil.which("squeue") and shutil.which("scancel"))


def _run(args: list[str], purpose: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a SLURM command; raise ``SlurmQueryError`` (it cannot ``purpose``) when it does not
    answer in ``QUERY_SECONDS``, or, with ``check``, when it fails."""
    try:
        # A controller that does not answer must not hold the run for ever.
        done = subprocess.run(
            args, capture_output=True, text=True, check=False, timeout=QUERY_SECONDS
        )
    except subprocess.TimeoutExpired:
        raise SlurmQueryError(
            f"{args[0]} gave no answer in {QUERY_SECONDS} s: cannot {purpose}. Fix: rerun when "
            f"the SLURM controller answers (`{args[0]}` returns)"
        ) from None
    if check and done.returncode != 0:
        why = " ".join(done.stderr.split()) or f"exit status {done.returncode}"  # one line
        raise SlurmQueryError(
            f"{args[0]} failed ({why}): cannot {purpose}. Fix: rerun when `{args[0]}` works"
        )
    return done


def queued_jobs(workdir: str | Path = ".") -> dict[str, tuple[str, str]]:
    """This user's queued or running SLURM jobs that this workflow submitted (named
    ``whcore_<run UUID>``) from ``workdir``: job id -> (state, comment)."""
    listing = _run(
        ["squeue", "--me", "--noheader", "--format=%i|%T|%j|%k|%Z"],
        "tell whether a killed Snakemake left SLURM jobs here",
    )
    # A folder's name may hold "|" or a newline: it ends the record and is matched as written,
    # never split; the id, the state, a marked name and the plugin's comment before it
    # (rule_<rule>_wildcards_<values>, the values constrained) hold neither, so a job from
    # "<anything>|<this folder>" is not this folder's.
    folder = re.escape(str(Path(workdir).resolve()))
    fields = rf"^(\d+)\|([A-Z_]+)\|{MARKED_NAME}\|([^|\n]*)\|{folder}$"
    record = re.compile(fields, re.MULTILINE)
    return {job: (state, comment) for job, state, comment in record.findall(listing.stdout)}


class JobMarkerError(SlurmStartError):
    """A SLURM run whose jobs would not carry this workflow's marker."""


def check_job_marker(prefix: str | None) -> None:
    """Raise ``JobMarkerError`` unless the plugin's job-name prefix is ``MARKER``: without it,
    the next run could not tell this run's jobs from others'."""
    if prefix != MARKER:
        raise JobMarkerError(
            f"slurm-jobname-prefix is {prefix or ''!r}, not {MARKER!r}: the next run could not "
            "tell this run's SLURM jobs from other workflows' if Snakemake were killed. Fix: "
            f"--workflow-profile profiles/slurm, or slurm-jobname-prefix: {MARKER} in your "
            "profile"
        )


class NodeFitError(SlurmStartError):
    """A job asks for more than any node of the partition has."""


def largest_node_mb(partition: str = "") -> int | None:
    """The memory (MiB) of the largest node of ``partition`` (all partitions when empty), as
    ``sinfo`` reports it; ``None`` when it cannot tell."""
    args = ["sinfo", "--noheader", "--Node", "--format=%m"]
    listing = _run(
        [*args, f"--partition={partition}"] if partition else args,
        "tell the memory of the partition's nodes",
        check=False,
    )
    sizes = [int(m) for m in re.findall(r"\d+", listing.stdout)] if listing.returncode == 0 else []
    return max(sizes, default=None)


def check_nodes_fit(requests: dict[str, tuple[int, str]], partition: str = "") -> None:
    """Raise ``NodeFitError`` for the largest request (output path -> (MiB, config key)) that
    no node of ``partition`` can hold."""
    largest = largest_node_mb(partition) if shutil.which("sinfo") else None
    if largest is None or not requests:
        return
    path, (mem_mb, key) = max(requests.items(), key=lambda item: item[1][0])
    if mem_mb > largest:
        too_big = sum(1 for need, _ in requests.values() if need > largest)
        where = f"partition {partition}" if partition else "this cluster"
        raise NodeFitError(
            f"config key {key}: the training job of {path} asks SLURM for {mem_mb:,} MiB (its "
            f"memory estimate), more than the largest node of {where} has ({largest:,} MiB, "
            f"sinfo); {too_big} job(s) in all could never start. Fix: a smaller setting of that "
            "key, or a partition with larger nodes (WHCORE_SLURM_PARTITION)"
        )


def wait_minutes(environ=os.environ) -> int:
    """How long to wait for a killed Snakemake's running jobs: ``WAIT_VARIABLE``, or the
    default."""
    value = environ.get(WAIT_VARIABLE, "").strip()
    return int(value) if value else DEFAULT_WAIT_MINUTES


def settle_orphaned_jobs(
    workdir: str | Path = ".",
    poll_seconds: float = 10.0,
    log: Callable[[str], None] = print,
    minutes: float | None = None,
) -> tuple[list[str], list[str]]:
    """Cancel this folder's waiting SLURM jobs and wait for its running ones to end, at most
    ``minutes`` (``wait_minutes()`` by default; then ``OrphanWaitError``); return the ids of
    both. Call with the run lock held: jobs found then belong to a killed Snakemake."""
    if not slurm_available():
        return [], []
    minutes = wait_minutes() if minutes is None else minutes
    jobs = queued_jobs(workdir)
    waiting = [job for job, (state, _) in jobs.items() if state in WAITING]
    running = {job: state for job, (state, _) in jobs.items() if job not in waiting}
    if waiting:
        _run(
            ["scancel", *waiting],
            f"cancel the SLURM jobs a killed Snakemake left waiting here ({' '.join(waiting)})",
        )
        log(
            f"Cancelled {len(waiting)} SLURM job(s) that a killed Snakemake left waiting here "
            f"({' '.join(waiting)}): none had started, this run submits them again."
        )
    if running:
        log(
            f"Waiting for {len(running)} SLURM job(s) that a killed Snakemake left running here "
            f"({' '.join(running)}), at most {minutes:g} min ({WAIT_VARIABLE}), so that their "
            "work is kept (scancel them to stop waiting: their outputs are then made again)."
        )
        _wait_for(running, workdir, poll_seconds, minutes)
    return waiting, list(running)


def _wait_for(left: dict[str, str], workdir, poll_seconds: float, minutes: float) -> None:
    """Poll until none of ``left`` (job id -> state) is queued, or raise ``OrphanWaitError``
    after ``minutes`` naming those still there."""
    deadline = time.monotonic() + minutes * 60
    while left:
        if time.monotonic() >= deadline:
            named = ", ".join(f"{job} ({state})" for job, state in left.items())
            raise OrphanWaitError(
                f"gave up after {minutes:g} min waiting for {len(left)} SLURM job(s) that a "
                f"killed Snakemake left running here: {named}. Fix: rerun when `squeue --me` no "
                f"longer lists them, `scancel {' '.join(left)}` (this run then makes their "
                f"outputs again), or a longer {WAIT_VARIABLE}"
            )
        time.sleep(poll_seconds)
        still = queued_jobs(workdir)
        left = {job: still[job][0] for job in left if job in still}


def _job_spec(job) -> dict | None:
    """The spec a rule passes its job (``params.spec``, JSON), if it has one."""
    spec = getattr(job.params, "spec", None)
    return json.loads(spec) if isinstance(spec, str) else None


def record_orphan_outputs(workflow, log: Callable[[str], None] = print) -> list[str]:
    """Record as finished the jobs of Snakemake's plan (``workflow``, in ``onstart``) that are
    done, have no Snakemake record, and whose outputs hold the spec the job has now; return
    their first outputs. Outputs written for another spec are named (they are kept: deleting
    them is the fix)."""
    dag, persistence = workflow.dag, workflow.persistence
    recorded, other_spec = [], []
    for job in dag.jobs:
        if dag.needrun(job) or not job.output or persistence.has_metadata(job):
            continue
        spec = _job_spec(job)
        written = [written_spec(path) for path in job.output]  # None: no spec in it
        if spec is None or not all(map(os.path.exists, job.output)) or not any(written):
            continue
        if all(value in (None, spec) for value in written):
            workflow.async_run(persistence.finished(job))
            recorded.append(str(job.output[0]))
        else:
            other_spec.append(str(job.output[0]))
    if recorded:
        log(
            f"Recorded {len(recorded)} output(s) that SLURM jobs of a killed Snakemake wrote "
            f"(e.g. {recorded[0]}): they are kept, not made again."
        )
    if other_spec:
        log(
            f"warning: {len(other_spec)} output(s) without Snakemake's record were written for "
            f"another spec than the configuration's now ({', '.join(other_spec)}). Fix: delete "
            "them and rerun, to make them for this configuration."
        )
    return recorded


def restart(workflow) -> None:
    """Replace this Snakemake by a new one with the same command line, started in the folder
    this one was started in, its lock released (the run lock of ``processes.hold_run_lock`` is a
    descriptor that closes on exec)."""
    workflow.persistence.unlock()
    sys.stdout.flush()
    sys.stderr.flush()
    # -d has changed the working directory since Snakemake started in ``workflow.rundir``:
    # the command line's relative paths (-d itself, --configfile, the profile) start there.
    os.chdir(workflow.rundir)
    os.execv(sys.executable, sys.orig_argv)
