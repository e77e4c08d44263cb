"""Protection of a run's outputs: what a writer may replace, and when (the run lock and the
parent watchdog: ``runtime.processes``; the marks that tell an output's kind: ``runtime.marks``).

- ``refuse_superseded``: a job never renames its result over one that another job wrote for a
  different spec after this job started (its ``stamp`` changed since).
- ``check_writable``: output folders are checked before hours of training, not after: they can
  be written and their disk has room (``MIN_FREE_BYTES``).
- ``naming_a_full_disk``: a disk that fills while an output is written is one line naming it.
- ``check_replaceable``: every writer (a job, ``binarize``, ``macros``, ``render``, ``bundle``)
  replaces only what this project wrote as the same kind of output (``marks.kind_of``: a file's
  mark, or a folder of marked Parquet files); a user's file or folder, wherever it is, and the
  project's output of another kind, are refused and nothing touched.
- ``check_apart``: a job never writes over its own input or a folder holding it.
"""

from __future__ import annotations

import errno
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

from .marks import kind_of, written_kinds

__all__ = [
    "MIN_FREE_BYTES",
    "check_apart",
    "check_replaceable",
    "check_writable",
    "naming_a_full_disk",
    "refuse_superseded",
    "stamp",
    "written_spec",
]


def written_spec(path: str | Path) -> dict | None:
    """The spec a job wrote into ``path`` (a Parquet file, or a folder of them), or ``None``
    when there is none to read."""
    from ...core.io import read_parquet_metadata

    path = Path(path)
    try:
        written = min(path.glob("*.parquet")) if path.is_dir() else path
        return read_parquet_metadata(written).get("spec")
    except Exception:  # missing, empty folder, not Parquet
        return None


def stamp(path: str | Path) -> tuple | None:
    """What tells that ``path`` was written again: its inode, size and modification time (a
    writer renames a new file or folder over it), or None where there is nothing."""
    try:
        facts = os.stat(path)
    except OSError:
        return None
    return (facts.st_ino, facts.st_size, facts.st_mtime_ns)


def refuse_superseded(path: str | Path, spec: dict, before: tuple | None) -> None:
    """Raise if ``path`` (a file, or a folder of Parquet files) was written for another spec
    since this job started, when its ``stamp`` was ``before``. The stamps are compared, not
    the modification time with the clock: an output dated in the future (a clock set wrong,
    a copy) is no sign of another job."""
    path = Path(path)
    if not path.exists() or stamp(path) == before:
        return
    if written_spec(path) != spec:  # unreadable: not ours to judge, and not ours to replace
        raise RuntimeError(
            f"{path}: written by another job for a different spec while this one ran; "
            "keeping it and discarding this result (an orphan of an earlier run?)"
        )


# A job writes at most tens of megabytes (record tables, a binarized table, a figure). Below
# this much free space it stops at start, naming the folder, not when training is done.
MIN_FREE_BYTES = 100 * 2**20
_FULL_DISK_FIX = "free space there or run in a working directory on a larger disk"


def check_writable(*paths: str | Path) -> None:
    """Create the folders of ``paths`` and check a file can be written there (else a
    ``PermissionError``) and that their disk has ``MIN_FREE_BYTES`` free (else an ``OSError``),
    in one line naming the folder."""
    for folder in {Path(p).parent for p in paths}:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / f".whcore-write-test-{os.getpid()}"
            probe.touch()
            probe.unlink()
        except OSError as err:
            raise PermissionError(
                f"{folder}: cannot write outputs here ({err.strerror}); fix the folder's "
                "permissions or run in a writable directory"
            ) from None
        free = shutil.disk_usage(folder).free
        if free < MIN_FREE_BYTES:
            raise OSError(
                f"{folder}: its disk has {free // 2**20} MiB free, less than the "
                f"{MIN_FREE_BYTES // 2**20} MiB a job's outputs may take; {_FULL_DISK_FIX}"
            )


def _disk_full(err: BaseException | None) -> bool:
    """Whether ``err``, or an error it arose from, is a full disk or quota: Matplotlib's PDF
    writer, failing to write, raises a zlib error whose context is the ENOSPC."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


@contextmanager
def naming_a_full_disk(path: str | Path):
    """A full disk (or quota) while writing ``path`` raises one line naming it: PyArrow's and
    Matplotlib's own messages name no file, or another error than the disk's."""
    try:
        yield
    except Exception as err:
        if not _disk_full(err):
            raise
        raise OSError(f"{path}: the disk filled while writing it; {_FULL_DISK_FIX}") from None


def _holds(folder: Path, path: Path) -> bool:
    """Whether ``folder`` is ``path`` or one of the folders holding it (both resolved)."""
    return folder == path or folder in path.parents


def _data_folder(path: Path) -> bool:
    """Whether ``path`` (resolved) is the working directory's data folder, a folder holding it
    or one of its dataset folders: ``resources/``, ``resources/data/``, ``resources/raw/`` and
    ``resources/raw/<dataset>/``."""
    from .layout import Layout

    raw, data = (Path(folder).resolve() for folder in Layout.DATA_FOLDERS)
    return _holds(path, raw) or _holds(path, data) or path.parent == raw


def _refusal(path: Path, fix: str, kind: str | None) -> str | None:
    """Why the writer of ``kind`` may not replace ``path`` (None: it may)."""
    here = Path.cwd().resolve()
    resolved = path.resolve()
    what = None
    if _holds(resolved, here):
        what = "the working directory or a folder holding it"
    elif _data_folder(resolved):
        what = "a data folder (raw or binarized tables) or a folder holding one"
    if what:
        return f"{path}: an output may not be {what}; nothing was written. Fix: {fix}"
    if not (path.exists() or path.is_symlink()):
        return None
    found = kind_of(path)
    if found is None:
        what = "folder" if path.is_dir() else "file"
        return (
            f"{path}: an existing {what} that no whcore job wrote; it is kept and nothing "
            f"was written. Fix: {fix}, or move it away if it may be replaced"
        )
    wanted = (kind,) if kind else written_kinds(path)
    if found not in wanted:
        return (
            f"{path}: holds another kind of whcore output ({found}, not {' or '.join(wanted)}); "
            f"it is kept and nothing was written. Fix: {fix}"
        )
    return None


def check_replaceable(*paths: str | Path, fix: str = "name a new path", kind: str | None = None):
    """The rule of every writer of this project (jobs, ``binarize``, ``macros``, ``render``,
    ``bundle``): an existing path is replaced only by the same kind of output it holds.

    Call it with every path about to be written, before any work; ``kind`` is what the writer
    writes there (``kind_of``'s names; by default the kind a path of that suffix holds, and
    ``records`` for a path without one). It raises ``FileExistsError``, in one line naming the
    path and ending in ``Fix: <fix>``, at the first of ``paths`` that is the working directory
    or a folder holding it, that is a data folder or holds one (``resources/``,
    ``resources/data/``, ``resources/raw/``, a dataset's raw folder), that exists and is not
    owned (``marks.owned``: a file without the project's mark, a folder holding anything but marked Parquet
    files), or that holds another kind of output (claims.json for a macros file, a table for a
    crate or a records folder, one dataset's binarized table for another's). Nothing is
    touched; a missing path passes. Lying under ``results/`` or ``resources/`` is no mark: a
    user's file there is kept."""
    for path in map(Path, paths):
        refusal = _refusal(path, fix, kind)
        if refusal:
            raise FileExistsError(refusal)


def check_apart(outputs, inputs) -> None:
    """Refuse, in one line naming both, an output of a job that is one of its own ``inputs`` or
    a folder holding one: writing it would destroy what the job reads."""
    for output in outputs:
        for source in inputs:
            if _holds(Path(output).resolve(), Path(source).resolve()):
                raise FileExistsError(
                    f"{output}: an output may not be the job's input {source} or a folder "
                    "holding it; nothing was written. Fix: name a new path in the spec's outputs"
                )
