"""Shared pytest fixtures."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from types import SimpleNamespace

import pytest


def pytest_configure(config):
    """One PyTorch thread in the test process, as every job of the workflow has (--threads 1):
    the tests' networks are tiny, and a second thread contending for the cores costs far more
    than it gives (7x the CPU time of a leaderboard test on two busy cores). Set here, not by
    whichever test first runs a job in-process, so that no test's cost depends on the order."""
    import torch

    torch.set_num_threads(1)


# The test files whose tests use the session's tiny run (the fixtures tiny_run and crate). With
# pytest-xdist (`make test`: -n auto) they run first, on one worker and in their order, as
# without it (several change the run's folder or the checkout for a moment), and the run is
# made once; the other workers take every other test meanwhile. A scheduler of our own groups
# them: xdist's `--dist loadgroup` marks are ignored on pytest 9.2 (pytest-xdist issue 1386).
SHARED_RUN_FILES = (
    "tests/pipeline/crate/test_bundle.py",
    "tests/pipeline/crate/test_crate_safety.py",
    "tests/pipeline/crate/test_slim.py",
    "tests/test_readme.py",
    "tests/workflow/test_workflow.py",
)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scheduling by scope, each test its own scope but the files of SHARED_RUN_FILES
    one scope together; the largest scope is handed out first. Only for the default
    distribution (`--dist load`); another one asked for is xdist's own."""
    from xdist.scheduler import LoadScopeScheduling

    if config.getvalue("dist") != "load":
        return None

    class SharedRunFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return SharedRunFirst(config, log)


def scope_of(nodeid: str) -> str:
    """The scope the scheduler hands out a test in: the shared run's, or the test's own."""
    return "shared run" if nodeid.split("::")[0] in SHARED_RUN_FILES else nodeid


def outside_the_shared_files(items) -> list[str]:
    """The files of tests that use the tiny run but are not in SHARED_RUN_FILES."""
    return sorted(
        {
            item.nodeid.split("::")[0]
            for item in items
            if "tiny_run" in item.fixturenames and scope_of(item.nodeid) != "shared run"
        }
    )


def pytest_collection_modifyitems(config, items):
    """A test that uses the tiny run must be in SHARED_RUN_FILES (an error naming its file
    otherwise); tests marked ``gpu`` run where CUDA is present (`pytest -m gpu` runs only them)."""
    import torch

    outside = outside_the_shared_files(items)
    if outside:
        raise pytest.UsageError(
            f"{', '.join(outside)} use the tiny run (tiny_run or crate): add them to "
            "SHARED_RUN_FILES in tests/conftest.py, so that pytest-xdist runs them on the worker "
            "that makes the run"
        )
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA (marked gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# --- tables that several workers' tests write (`make calibration`: -n auto) ----------------------
# A module-scoped fixture that gathers a table's rows lives once per pytest-xdist worker and sees
# only that worker's rows: each worker writes them as a part in the folder the session's
# processes share, and the session's own process joins the parts into the table, rows in order,
# when every worker is done. Without xdist the one process does both.

TABLE_PARTS = "table-parts"


def shared_basetemp(tmp_path_factory) -> Path:
    """The session's temporary folder that every process of it sees (pytest-N/)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def write_table_part(tmp_path_factory, table: Path, head: list[str], rows) -> None:
    """This process's ``rows`` of ``table``, (sort key, line) pairs, under the table's ``head``
    (the same in every process); ``join_table_parts`` makes the table of them."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    folder = shared_basetemp(tmp_path_factory) / TABLE_PARTS
    folder.mkdir(exist_ok=True)
    part = {"table": str(table), "head": head, "rows": [[list(k), line] for k, line in rows]}
    (folder / f"{table.name}.{worker}.json").write_text(json.dumps(part))


def join_table_parts(folder: Path) -> list[Path]:
    """Every table whose parts are in ``folder``, written with its rows sorted by key (in
    place of the table, whole or not at all); the tables written."""
    tables: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("*.json")):
        part = json.loads(path.read_text())
        tables.setdefault(part["table"], []).append(part)
    for name, parts in tables.items():
        rows = sorted((tuple(key), line) for part in parts for key, line in part["rows"])
        table = Path(name)
        table.parent.mkdir(parents=True, exist_ok=True)
        temporary = table.with_name(f".{table.name}.tmp")
        temporary.write_text("\n".join([*parts[0]["head"], *(line for _, line in rows)]) + "\n")
        temporary.replace(table)
    return [Path(name) for name in tables]


def pytest_sessionfinish(session):
    """The session's own process joins the table parts (not a worker: it saw only its own)."""
    if hasattr(session.config, "workerinput"):
        return
    base = getattr(session.config, "_tmp_path_factory", None)
    base = getattr(base, "_basetemp", None)  # None: no test made a temporary folder
    if base is not None and (base / TABLE_PARTS).is_dir():
        join_table_parts(base / TABLE_PARTS)


# --- real datasets (whcore.data.datasets) -------------------------------------------------------------

_LOCAL_HOSTS = {"127.0.0.1", "::1", "localhost"}


@pytest.fixture
def no_network(monkeypatch):
    """Refuse every connection and name lookup that is not to this machine (tests must never
    touch the network; local test servers still work)."""
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(self, address):
        if isinstance(address, tuple) and address[0] not in _LOCAL_HOSTS:
            raise OSError(f"network access disabled in tests: {address}")
        return real_connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host not in _LOCAL_HOSTS:
            raise socket.gaierror(f"network access disabled in tests: {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def _find_mirror() -> Path | None:
    env = os.environ.get("WHCORE_DATA_MIRROR")
    if env:
        return Path(env)
    fallback = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "raw"
    return fallback if fallback.is_dir() else None


@pytest.fixture(scope="session")
def data_mirror() -> Path:
    """The folder of raw dataset files (WHCORE_DATA_MIRROR, else ../shared/datasets/raw)."""
    mirror = _find_mirror()
    if mirror is None or not mirror.is_dir():
        pytest.skip(
            "no raw-data mirror: set WHCORE_DATA_MIRROR to a folder holding the raw files as "
            "<folder>/<dataset>/<file> (docs/datasets.md lists them)"
        )
    return mirror


@pytest.fixture(scope="session")
def real_dataset(data_mirror, tmp_path_factory):
    """A function name -> namespace(frame, raw, parquet, seconds): each real dataset is copied
    from the mirror and binarized once per test session."""
    from whcore.data.datasets import binarize, download, paths

    root = tmp_path_factory.mktemp("resources")
    cache = {}

    def get(name: str) -> SimpleNamespace:
        if name not in cache:
            raw, parquet = paths(name, root)
            download(name, raw, data_mirror)
            start = time.perf_counter()
            frame = binarize(name, raw, parquet)
            cache[name] = SimpleNamespace(
                frame=frame, raw=raw, parquet=parquet, seconds=time.perf_counter() - start
            )
        return cache[name]

    return get


# --- Snakemake (one runner for every workflow test) ----------------------------------------------

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / ".test" / "config.yaml"


def snakemake_env(**extra) -> dict:
    """The test's environment with this interpreter's `whcore` and `snakemake` first on PATH
    (rules call the `whcore` command)."""
    import sys

    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, **extra}


def snakemake_cmd(workdir: Path, *args, checkout: Path = REPO) -> list[str]:
    import sys

    return [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(checkout / "Snakefile"),
        "-d",
        str(workdir),
        *args,
    ]


def run_snakemake(
    *args,
    workdir: Path,
    env: dict | None = None,
    check: bool = True,
    timeout: float = 900,
    cwd: Path | None = None,
    checkout: Path = REPO,
):
    """Run Snakemake in ``workdir`` with the Snakefile of ``checkout``; targets go before
    --configfile/--config. With ``check`` a failure raises with the end of its output."""
    import subprocess

    result = subprocess.run(
        snakemake_cmd(workdir, *args, checkout=checkout),
        env=snakemake_env(**(env or {})),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=timeout,
        check=False,
        cwd=cwd,
    )
    # Snakemake's notice that it reads the workflow's default profile (profiles/default) opens
    # every run's output; what the tests check comes after it.
    notice = "Using workflow specific profile"
    lines = result.stdout.splitlines(keepends=True)
    result.stdout = "".join(line for line in lines if not line.startswith(notice))
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout[-4000:]}")
    return result


def made_once(tmp_path_factory, name: str, make) -> Path:
    """A folder ``name`` that ``make(folder)`` fills once per test session, also where
    pytest-xdist runs the tests in several workers (`make test`: -n auto): the first worker to
    need it makes it under a lock in the folder the workers share, the others wait and use it
    as it is. A failure is recorded there and raised in every worker, not made again."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent  # pytest-N/, above each worker's popen-gwK/
    folder, done, failed = shared / name, shared / f"{name}.done", shared / f"{name}.failed"
    with FileLock(str(shared / f"{name}.lock")):
        if failed.exists():
            raise AssertionError(f"{name}, made by another worker, failed:\n{failed.read_text()}")
        if not done.exists():
            folder.mkdir()
            try:
                make(folder)
            except Exception as err:
                failed.write_text(f"{worker}: {err}")
                raise
            done.touch()
    return folder


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, data_mirror) -> Path:
    """The working folder of one finished run of .test/config.yaml (results/tiny/),
    made once per session (minutes of CPU): the workflow's and the bundle's tests share it."""

    def make(workdir: Path) -> None:
        env = {"WHCORE_DATA_MIRROR": str(data_mirror)}
        run_snakemake("--cores", "2", "--configfile", str(TINY), workdir=workdir, env=env)

    return made_once(tmp_path_factory, "tiny", make)


@pytest.fixture
def snakemake():
    """``snakemake(*args, workdir=..., env=..., check=True)``: Snakemake as a subprocess."""
    return run_snakemake


@pytest.fixture(scope="session")
def crate(tiny_run, tmp_path_factory) -> Path:
    """The tiny run's crate, made by the rule `bundle` (`whcore bundle`, which validates it) in
    a copy of the run: the copy plans no other job."""
    import re
    import shutil

    def make(folder: Path) -> None:
        work = folder / "work"
        shutil.copytree(tiny_run, work, symlinks=True)  # timestamps kept
        done = run_snakemake("bundle", "--cores", "1", "--configfile", str(TINY), workdir=work)
        jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", done.stdout, re.MULTILINE))
        assert jobs == {"bundle": "1", "total": "1"}, done.stdout[-2000:]

    return (
        made_once(tmp_path_factory, "bundled", make)
        / "work"
        / "results"
        / "tiny"
        / "tiny.crate.zip"
    )


def figure_spec(figure_id: str, stem, settings: dict | None = None) -> str:
    """The spec of a `whcore figure` job drawing ``figure_id`` to ``stem``.pdf/.png."""
    import json

    return json.dumps(
        {"figure": figure_id, "settings": settings or {}, "outputs": {"stem": str(stem)}}
    )


def load_script(name: str):
    """A script of envs/ (not a package) as a module, e.g. ``load_script("check_install")``."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "envs" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
