"""Atomic file output: write to a temporary name beside the target, then rename.

Parquet (``write_parquet``, ``read_parquet_metadata``) needs PyArrow, from the ``data`` extra;
it is imported on first use, so ``atomic_path`` works in the core install."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["atomic_folder", "atomic_path", "read_parquet_metadata", "write_parquet"]


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path):
    """Yield a temporary path; on success rename it to ``path``, on error delete it.

    A crash never leaves a half-written file under the final name."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    # mkstemp creates the file 0600; a finished output gets the mode of any new file (umask),
    # so collaborators on a shared file system can read it.
    os.fchmod(fd, 0o666 & ~_current_umask())
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_folder(path: str | Path):
    """Yield a temporary folder; on success it replaces the folder ``path`` (whatever was there
    before is removed), on error it is deleted. ``path`` holds the old folder, the whole new
    one, or (for an instant between two renames, or after a crash in that instant) nothing:
    never a part of either."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_current_umask())  # mkdtemp makes it 0700
    try:
        yield tmp
        old = None
        if path.is_dir() and not path.is_symlink():
            # Renamed aside, not deleted in place: a crash while deleting must not leave a
            # half-deleted folder where a finished one is expected.
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, old / path.name)
        else:
            path.unlink(missing_ok=True)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_parquet(df: pd.DataFrame, path: str | Path, metadata: dict | None = None) -> None:
    """Write ``df`` atomically; ``metadata`` (JSON-able values) goes into the schema metadata
    under the key ``whcore``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    if metadata:
        existing = table.schema.metadata or {}
        table = table.replace_schema_metadata(
            {**existing, b"whcore": json.dumps(metadata, sort_keys=True).encode()}
        )
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_parquet_metadata(path: str | Path) -> dict:
    """The ``whcore`` metadata written by ``write_parquet`` (empty if there is none)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"whcore")
    return json.loads(raw) if raw else {}
