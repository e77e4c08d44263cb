"""Job outputs are written whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from whcore.core import io
from whcore.core.io import atomic_folder


def test_a_folder_replaces_the_old_one_whole(tmp_path):
    target = tmp_path / "runs" / "job"
    target.mkdir(parents=True)
    (target / "stale.parquet").write_text("old")
    with atomic_folder(target) as folder:
        assert folder != target and (target / "stale.parquet").exists()  # old one still there
        (folder / "a.parquet").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["a.parquet"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["job"]  # no leftovers
    assert target.stat().st_mode & 0o777 == 0o777 & ~io._current_umask()


def test_a_failed_write_leaves_the_old_folder_and_no_temporary(tmp_path):
    target = tmp_path / "job"
    target.mkdir()
    (target / "kept.parquet").write_text("old")
    with pytest.raises(RuntimeError), atomic_folder(target) as folder:
        (folder / "half.parquet").write_text("partial")
        raise RuntimeError("training crashed")
    assert [p.name for p in tmp_path.iterdir()] == ["job"]
    assert [p.name for p in target.iterdir()] == ["kept.parquet"]


def test_a_crash_while_removing_the_old_folder_leaves_the_whole_new_one(tmp_path, monkeypatch):
    target = tmp_path / "job"
    target.mkdir()
    for name in ("a", "b", "c"):
        (target / f"{name}.parquet").write_text("old")

    class DiesWhileRemoving:  # deletes one old file, then the process "dies"
        @staticmethod
        def rmtree(path, ignore_errors=False):
            next(iter(sorted(Path(path).rglob("*.parquet")))).unlink()
            raise KeyboardInterrupt

    monkeypatch.setattr(io, "shutil", DiesWhileRemoving)
    with pytest.raises(KeyboardInterrupt), atomic_folder(target) as folder:
        (folder / "new.parquet").write_text("new")
    # The new folder was in place before the old one's removal began.
    assert [p.name for p in target.iterdir()] == ["new.parquet"]
