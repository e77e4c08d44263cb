"""The one way a job writes its outputs: checked before any work, written under a temporary name
and renamed when complete, and never over a result another job wrote for a different spec while
this one ran (``whcore.pipeline.runtime.guards``)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from ...core.io import atomic_folder, atomic_path, write_parquet
from ..runtime.guards import (
    check_apart,
    check_replaceable,
    check_writable,
    naming_a_full_disk,
    refuse_superseded,
    stamp,
)

__all__ = ["Outputs"]

FIX = "name a new path (under results/, say) in the spec's outputs"


class Outputs:
    """The outputs of one job (its spec's), guarded. Made when the job starts: an output that
    is not the project's to replace (``check_replaceable``), one that is or holds the job's own
    input (``check_apart``), or a folder that cannot be written, stops the job before hours of
    work, not after."""

    def __init__(self, spec):
        self.spec = spec.to_dict()  # recorded in every Parquet output's metadata
        self.paths = spec.outputs
        check_replaceable(*spec.replaceable(), fix=FIX, kind=spec.output_kind())
        check_apart(spec.written(), spec.inputs())
        check_writable(*self.paths.values())
        # what each output was when the job started: one that changes meanwhile is another job's
        self.before = {os.path.normpath(path): stamp(path) for path in spec.written()}

    def _guard(self, path) -> None:
        key = os.path.normpath(path)
        refuse_superseded(path, self.spec, self.before[key] if key in self.before else stamp(path))

    @contextmanager
    def file(self, path: str | Path):
        """A temporary path to write ``path`` (one of the job's) to; renamed on success."""
        self._guard(path)
        with naming_a_full_disk(path), atomic_path(path) as tmp:
            yield tmp

    @contextmanager
    def folder(self, role: str):
        """A temporary folder for the output ``role``; it replaces the output on success."""
        self._guard(self.paths[role])
        with naming_a_full_disk(self.paths[role]), atomic_folder(self.paths[role]) as tmp:
            yield tmp

    def table(self, role: str, frame, **meta) -> str:
        """Write ``frame`` as the output ``role`` (Parquet, with the spec and ``meta``)."""
        path = self.paths[role]
        self._guard(path)
        with naming_a_full_disk(path):
            write_parquet(frame, path, {"spec": self.spec, **meta})
        return path

    def figure(self, fig, provenance: dict) -> list[Path]:
        """Write ``fig`` as the output ``stem``'s PDF and PNG."""
        from ..figures.style import save_figure

        stem = Path(self.paths["stem"])
        stem = stem.with_suffix("") if stem.suffix in (".pdf", ".png") else stem
        for path in (stem.with_suffix(".pdf"), stem.with_suffix(".png")):
            self._guard(path)
        with naming_a_full_disk(stem):
            return save_figure(fig, stem, provenance)
