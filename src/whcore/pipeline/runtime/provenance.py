"""What produced an output: whcore's version and commit, library versions, device, host, time.

Every table and run record carries it in its Parquet metadata (key ``provenance`` beside the
job's ``spec``), every figure in its PDF/PNG metadata, and the report shows it.
"""

from __future__ import annotations

import functools
import platform
import socket
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LIBRARIES", "git_commit", "provenance", "provenance_table"]

LIBRARIES = ("torch", "numpy", "pandas", "scikit-learn", "xgboost-cpu", "xgboost", "pyarrow")
_STARTED = time.strftime("%Y-%m-%dT%H:%M:%S%z")


def git_commit(where: Path | None = None) -> str:
    """The commit of the checkout holding whcore (``+dirty`` with local changes), or
    "not a checkout" for an installed package."""
    where = where or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return "not a checkout"
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "not a checkout"
    return commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _versions() -> dict[str, str]:
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def device_name(device: str | None) -> str:
    """ "cpu", or the CUDA device's name ("cuda:0 NVIDIA H100 80GB HBM3")."""
    if not device or not device.startswith("cuda"):
        return device or "cpu"
    import torch

    return f"{device} {torch.cuda.get_device_name(torch.device(device))}"


@functools.cache
def _static() -> dict:
    from ... import __version__

    return {
        "whcore_version": __version__,
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "libraries": _versions(),
        "host": socket.gethostname(),
        "started": _STARTED,
    }


def provenance(device: str | None = None) -> dict:
    """This process's provenance; ``device`` is the device the job actually used."""
    return {**_static(), "device": device_name(device)}


def provenance_table(paths) -> pd.DataFrame:
    """One row per distinct provenance among the Parquet files ``paths`` (the tables of a run),
    with the number of files and their names: what produced this run's results."""
    import pandas as pd

    from ...core.io import read_parquet_metadata

    rows = []
    for path in paths:
        record = read_parquet_metadata(path).get("provenance") or {"whcore_version": "unknown"}
        libraries = record.get("libraries", {})
        rows.append(
            {
                **{k: v for k, v in record.items() if k != "libraries"},
                "libraries": ", ".join(
                    f"{name} {version}" for name, version in sorted(libraries.items())
                ),
                "file": Path(path).name,
            }
        )
    frame = pd.DataFrame(rows)
    keys = [c for c in frame.columns if c not in ("file", "started")]
    return (
        frame.groupby(keys, dropna=False)
        .agg(files=("file", "count"), names=("file", ", ".join), started=("started", "min"))
        .reset_index()
    )
