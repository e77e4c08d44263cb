"""Snakemake's own records of the jobs a run finished: ``.snakemake/metadata`` of the working
folder, one JSON file per output, named by the output path in URL-safe base64 (split into
folders where the name is long). The crate's actions take their start and end times from
them, the planner the cost of a unit."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["job_records"]


def job_records(workdir: str | Path) -> Iterator[tuple[str, dict]]:
    """(output path, record) of every readable record under ``workdir``/.snakemake/metadata;
    a file that is not a record (or cannot be read) is skipped."""
    folder = Path(workdir) / ".snakemake" / "metadata"
    for dirpath, _, files in os.walk(folder):
        for name in files:
            file = Path(dirpath) / name
            encoded = "".join(file.relative_to(folder).parts)  # long names are split in folders
            try:
                output = base64.urlsafe_b64decode(encoded).decode()
                record = json.loads(file.read_text())
            except (ValueError, OSError):
                continue
            if isinstance(record, dict):
                yield output, record
