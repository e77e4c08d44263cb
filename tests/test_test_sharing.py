"""The tests' own parallel set-up (tests/conftest.py): the tiny run's tests are one scope for
pytest-xdist's scheduler, a test that uses the run elsewhere is caught, and ``made_once`` makes
its folder once however many workers ask, and reports a failure to every worker; a table whose
rows several workers measured is joined whole, in order."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import (
    SHARED_RUN_FILES,
    TABLE_PARTS,
    join_table_parts,
    made_once,
    outside_the_shared_files,
    scope_of,
    write_table_part,
)


def test_the_shared_files_are_one_scope_and_every_other_test_its_own():
    inside = [f"{path}::test_{i}" for i, path in enumerate(SHARED_RUN_FILES)]
    assert {scope_of(nodeid) for nodeid in inside} == {"shared run"}
    other = "tests/core/test_wht.py::test_fast_matches_dense[3]"
    assert scope_of(other) == other


def test_a_test_of_the_tiny_run_outside_the_shared_files_is_named():
    item = SimpleNamespace  # what the check reads of a collected test: its id and fixtures
    items = [
        item(nodeid=f"{SHARED_RUN_FILES[0]}::test_a", fixturenames=["tiny_run"]),
        item(nodeid="tests/core/test_x.py::test_b", fixturenames=["crate", "tiny_run"]),
        item(nodeid="tests/core/test_y.py::test_c", fixturenames=["tmp_path"]),
    ]
    assert outside_the_shared_files(items) == ["tests/core/test_x.py"]
    assert outside_the_shared_files(items[::2]) == []


class Factory:
    """tmp_path_factory as a worker of pytest-N/ sees it: its own basetemp popen-<worker>/."""

    def __init__(self, root, worker):
        self.base = root / f"popen-{worker}"
        self.base.mkdir(parents=True, exist_ok=True)

    def getbasetemp(self):
        return self.base


def test_made_once_makes_the_folder_once_for_every_worker(tmp_path, monkeypatch):
    made = []

    def make(folder):
        made.append(folder)
        (folder / "result").write_text("done")

    folders = []
    for worker in ("gw0", "gw1", "gw0"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        folders.append(made_once(Factory(tmp_path, worker), "run", make))
    assert made == [tmp_path / "run"] and set(folders) == {tmp_path / "run"}
    assert (tmp_path / "run" / "result").read_text() == "done"


def test_a_failure_is_raised_in_every_worker_and_not_made_again(tmp_path, monkeypatch):
    calls = []

    def make(folder):
        calls.append(folder)
        raise RuntimeError("snakemake failed")

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    with pytest.raises(RuntimeError, match="snakemake failed"):
        made_once(Factory(tmp_path, "gw0"), "run", make)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    with pytest.raises(AssertionError, match="run, made by another worker, failed:\n.*snakemake"):
        made_once(Factory(tmp_path, "gw1"), "run", make)
    assert len(calls) == 1


def test_a_table_written_in_parts_by_two_workers_is_joined_whole_and_in_order(
    tmp_path, monkeypatch
):
    table, other = tmp_path / "out" / "rates.md", tmp_path / "out" / "other.md"
    table.parent.mkdir()
    table.write_text("a stale table\n")
    head = ["# rates", "| case | rate |"]
    for worker, rows in {
        "gw0": [((1, 0), "| b | 2 |")],
        "gw1": [((0, 1), "| a1 |"), ((0, 0), "| a0 |")],
    }.items():
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        write_table_part(Factory(tmp_path / "pytest-1", worker), table, head, rows)
    write_table_part(Factory(tmp_path / "pytest-1", "gw1"), other, ["# other"], [((0,), "| x |")])
    written = join_table_parts(tmp_path / "pytest-1" / TABLE_PARTS)
    assert sorted(written) == [other, table]
    assert table.read_text() == "# rates\n| case | rate |\n| a0 |\n| a1 |\n| b | 2 |\n"
    assert other.read_text() == "# other\n| x |\n"
    assert sorted(p.name for p in table.parent.iterdir()) == ["other.md", "rates.md"]
