"""Protection of a run's outputs that does not depend on Snakemake's own lock folder.

- ``hold_run_lock``: one executing Snakemake per working directory. An exclusive ``flock`` on a
  file of our own, held for the life of the process and released by the kernel however it
  ends (Snakemake deletes ``.snakemake/locks`` on exit, so its lock cannot be relied on).
- ``die_with``: a job whose Snakemake died (SIGKILL) stops instead of running on as an orphan.
- ``refuse_superseded``: a job never renames its result over one that another job wrote for a
  different spec after this job started (its ``stamp`` changed since).
- ``check_writable``: output folders are checked before hours of training, not after: they can
  be written and their disk has room (``MIN_FREE_BYTES``).
- ``naming_a_full_disk``: a disk that fills while an output is written is one line naming it.
- ``check_replaceable``: every writer (a job, ``binarize``, ``macros``, ``render``, ``bundle``)
  replaces only what this project wrote as the same kind of output (``kind_of``: a file's mark,
  or a folder of marked Parquet files); a user's file or folder, wherever it is, and the
  project's output of another kind, are refused and nothing touched.
- ``check_apart``: a job never writes over its own input or a folder holding it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "MIN_FREE_BYTES",
    "RunLockedError",
    "check_apart",
    "check_replaceable",
    "check_writable",
    "kind_of",
    "mark_of",
    "die_with",
    "hold_run_lock",
    "naming_a_full_disk",
    "owned",
    "refuse_superseded",
    "stamp",
    "written_spec",
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
    """Exit this process (status 3, no output written) soon after process ``pid`` is gone.
    ``None`` or a pid that is already gone at the start (a stale value) watches nothing."""
    if not pid or not _alive(pid):
        return None

    def watch():
        while _alive(pid):
            time.sleep(interval)
        log(f"the Snakemake process {pid} that started this job is gone: stopping")
        os._exit(3)

    thread = threading.Thread(target=watch, name="die-with-parent", daemon=True)
    thread.start()
    return thread


def parent_from_environment() -> int | None:
    value = os.environ.get(PARENT_ENV, "")
    return int(value) if value.isdigit() else None


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


_MAX_SCAN = 64 * 2**20  # a figure larger than this is not one of ours
SNAKEMAKE_TIMESTAMP = ".snakemake_timestamp"  # what Snakemake keeps in a folder output
# The marks the text files of this project's writers start with (the writers take them from
# here, so that a writer and its mark never part).
CLAIMS_TITLE = "# The paper's claims, checked against this run's measurements"  # claims.md
OWN_DATA_TITLE = "# Your data: which method predicts it best"  # claims.md of a user's own data
MACROS_MARK = "(whcore macros)"  # on the first line of a `whcore macros` TeX file
CRATE_NAME = "whcore run {run}"  # the name of a `whcore bundle` crate's root dataset


def _marked_crate(path: Path) -> bool:
    """Whether the zip ``path`` is a crate of ``whcore bundle``: its metadata names a run."""
    import json
    import zipfile

    with zipfile.ZipFile(path) as archive:
        graph = json.loads(archive.read("ro-crate-metadata.json"))["@graph"]
    root = next(entity for entity in graph if entity.get("@id") == "./")
    return str(root.get("name", "")).startswith(CRATE_NAME.format(run=""))


def _json_kind(value) -> str | None:
    """``target`` (a g* target's JSON), ``claims`` (the paper's claims or a user's own-data
    comparison) or None."""
    if isinstance(value, dict):
        if {"n", "frequencies", "amplitudes"} <= set(value):
            return "target"
        return "claims" if value.get("report") == "own data" else None
    if isinstance(value, list) and all(isinstance(v, dict) and "verdict" in v for v in value):
        return "claims"
    return None


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_software(data: bytes) -> str:
    """The ``Software`` text chunk of the PNG ``data`` (what the figure writer sets), or ''."""
    import struct

    at = len(_PNG_SIGNATURE)
    while at + 8 <= len(data) and data.startswith(_PNG_SIGNATURE):
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + size]
        if kind == b"tEXt" and body.startswith(b"Software\0"):
            return body.split(b"\0", 1)[1].decode("latin-1")
        at += 12 + size
    return ""


def _pdf_creator(data: bytes) -> str:
    """The ``Creator`` of the PDF ``data``'s document information dictionary (the one its
    last trailer names), or '': a title or a text that says "whcore" is not the creator."""
    import re

    trailers = re.findall(rb"trailer\s*<<(.*?)>>", data, re.S)
    info = re.search(rb"/Info\s+(\d+)\s+0\s+R", trailers[-1]) if trailers else None
    if not data.startswith(b"%PDF") or info is None:
        return ""
    body = re.search(rb"(?:^|\s)" + info.group(1) + rb"\s+0\s+obj\s*<<(.*?)>>\s*endobj", data, re.S)
    creator = re.search(rb"/Creator\s*\(([^)]*)\)", body.group(1)) if body else None
    return creator.group(1).decode("latin-1") if creator else ""


def _only_macros(text: str) -> bool:
    """Whether a macros file holds only what ``whcore macros`` writes (comments and claim
    macros): one with lines a user added is theirs too, and is not replaced."""
    return all(line.startswith(("%", "\\newcommand{\\claim")) for line in text.splitlines() if line)


def _by_creator(creator: str) -> bool:
    return creator == "whcore" or creator.startswith("whcore ")


def _parquet_kind(path: Path) -> str | None:
    """``data:<dataset>`` for a binarized table (its metadata names the dataset and the
    source's digest), ``table`` for any other Parquet the project wrote, else None."""
    from ...core.io import read_parquet_metadata

    meta = read_parquet_metadata(path)
    if isinstance(meta, dict) and {"dataset", "source_sha256"} <= set(meta):
        return f"data:{meta['dataset']}"
    return "table" if meta else None


def mark_of(path: Path) -> str | None:
    """The kind of whcore output the file ``path`` is, read from the mark it carries as data
    (never a substring of its bytes): ``table`` or ``data:<dataset>`` (a Parquet's ``whcore``
    metadata), ``figure`` (a PDF's Creator, a PNG's Software), ``crate`` (its root's name),
    ``target`` / ``claims`` (the form of the JSON), ``claims.md``, ``provenance`` or ``macros``
    (the first line); None for a file that carries none."""
    import json

    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            return _parquet_kind(path)
        if suffix == ".zip":  # read member by member: a crate may be larger than _MAX_SCAN
            return "crate" if _marked_crate(path) else None
        if path.stat().st_size > _MAX_SCAN:
            return None
        data = path.read_bytes()
        if suffix == ".png":
            return "figure" if _by_creator(_png_software(data)) else None
        if suffix == ".pdf":
            return "figure" if _by_creator(_pdf_creator(data)) else None
        first = data.split(b"\n", 1)[0].decode()
        if suffix == ".json":
            return _json_kind(json.loads(data))
        if suffix == ".md" and first in (CLAIMS_TITLE, OWN_DATA_TITLE):
            return "claims.md"
        if suffix == ".tsv" and "whcore_version" in first:
            return "provenance"
        if suffix == ".tex" and first.startswith("%") and MACROS_MARK in first:
            return "macros" if _only_macros(data.decode()) else None
    except Exception:  # unreadable, or not the format its name says: not ours
        return None
    return None


RECORDS = "records"  # the kind of a training job's output: a folder of marked Parquet files
# What a writer that names no kind writes at a path, by its suffix.
_KIND_OF_SUFFIX = {
    ".parquet": ("table",),
    ".pdf": ("figure",),
    ".png": ("figure",),
    ".zip": ("crate",),
    ".json": ("target", "claims"),
    ".md": ("claims.md",),
    ".tsv": ("provenance",),
    ".tex": ("macros",),
}


def _records_folder(path: Path) -> bool:
    entries = [e for e in path.iterdir() if e.name != SNAKEMAKE_TIMESTAMP]
    return all(e.is_file() and e.suffix == ".parquet" and mark_of(e) for e in entries)


def kind_of(path: Path) -> str | None:
    """The kind of whcore output the existing ``path`` is: ``mark_of`` a file, ``records`` for
    a folder of marked Parquet files (a training job's), else None."""
    if path.is_dir() and not path.is_symlink():
        return RECORDS if _records_folder(path) else None
    return mark_of(path) if path.is_file() else None


def owned(path: Path) -> bool:
    """Whether an existing output path is one a job of this project wrote: it carries a mark."""
    return kind_of(path) is not None


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
    wanted = (kind,) if kind else _KIND_OF_SUFFIX.get(path.suffix.lower(), (RECORDS,))
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
    ``owned`` (a file without the project's mark, a folder holding anything but marked Parquet
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
