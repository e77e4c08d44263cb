"""A run's processes, watched without relying on Snakemake's own bookkeeping.

- ``hold_run_lock``: one executing Snakemake per working directory. An exclusive ``flock`` on a
  file of our own, held for the life of the process and released by the kernel however it
  ends (Snakemake deletes ``.snakemake/locks`` on exit, so its lock cannot be relied on).
- ``die_with``: a job whose Snakemake died (SIGKILL) stops instead of running on as an orphan
  (the Snakemake's pid reaches it in ``PARENT_ENV``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from pathlib import Path

__all__ = [
    "LOCK_FILE",
    "PARENT_ENV",
    "RunLockedError",
    "die_with",
    "hold_run_lock",
    "parent_from_environment",
]

LOCK_FILE = ".whcore/run.lock"
PARENT_ENV = "WHCORE_SNAKEMAKE_PID"
_held: list = []  # open lock files: closing one would release its lock


class RunLockedError(RuntimeError):
    """Another executing Snakemake holds this working directory."""


def hold_run_lock(workdir: str | Path = ".") -> Path:
    """Take the working directory's run lock for the rest of this process, or raise
    ``RunLockedError`` naming the process that holds it."""
    path = Path(workdir) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise RunLockedError(
            f"{path.resolve().parent.parent}: another Snakemake is running here ({holder}); "
            "wait for it to finish, or run this configuration in another directory (-d)"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    handle.flush()
    _held.append(handle)
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def die_with(pid: int | None, interval: float = 1.0, log=print) -> threading.Thread | None:
    """Exit this process (status 3, no output written) soon after process ``pid`` is gone,
    saying first (one line) that it watches it. ``None`` or a pid that is already gone at the
    start (a stale value) watches nothing."""
    if not pid or not _alive(pid):
        return None

    def watch():
        while _alive(pid):
            time.sleep(interval)
        log(f"the Snakemake process {pid} that started this job is gone: stopping")
        os._exit(3)

    thread = threading.Thread(target=watch, name="die-with-parent", daemon=True)
    thread.start()
    log(f"watching the Snakemake process {pid} that started this job: it stops if that is gone")
    return thread


def parent_from_environment() -> int | None:
    value = os.environ.get(PARENT_ENV, "")
    return int(value) if value.isdigit() else None
