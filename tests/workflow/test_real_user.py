"""A real user's run: raw data from the network with no mirror, a mirror that moves, shared
file systems, and paths that must never be abused."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest
from conftest import TINY

from whcore.data.datasets import REGISTRY, download
from whcore.data.download import sha256_of

pytestmark = pytest.mark.workflow

SPEC = REGISTRY["entacmaea"]
TARGET = f"resources/raw/entacmaea/{SPEC.file}"


@pytest.fixture
def file_server(tmp_path):
    """A local HTTP server over a folder laid out like the pinned sources (<dataset>/<file>)."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root: Path, data_mirror: Path, content: bytes | None = None) -> None:
    """Put Entacmaea's raw file (or ``content`` under its name) where the server serves it."""
    dest = root / "entacmaea" / SPEC.file
    dest.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        shutil.copy(data_mirror / "entacmaea" / SPEC.file, dest)
    else:
        dest.write_bytes(content)


def no_mirror_env(base: str) -> dict:
    return {"WHCORE_DATA_MIRROR": "", "WHCORE_TEST_URL_BASE": base}


def test_download_rule_without_a_mirror_fetches_from_the_network(
    tmp_path, file_server, data_mirror, snakemake
):
    root, base = file_server
    serve(root, data_mirror)
    work = tmp_path / "work"
    snakemake(
        TARGET, "--cores", "1", "--configfile", str(TINY), workdir=work, env=no_mirror_env(base)
    )
    assert sha256_of(work / TARGET) == SPEC.sha256


@pytest.mark.parametrize(
    "served,why", [(b"not the dataset", "checksum mismatch"), (None, "HTTP 404")]
)
def test_download_rule_failure_lists_every_place_tried(
    tmp_path, file_server, data_mirror, snakemake, served, why
):
    root, base = file_server
    if served is not None:
        serve(root, data_mirror, served)
    work = tmp_path / "work"
    result = snakemake(
        TARGET,
        "--cores",
        "1",
        "--configfile",
        str(TINY),
        workdir=work,
        env=no_mirror_env(base),
        check=False,
    )
    assert result.returncode != 0
    log = (work / "logs/download/entacmaea" / f"{SPEC.file}.log").read_text()
    assert f"{base}/entacmaea/{SPEC.file}: {why}" in log, log
    assert "no mirror folder" in log and "WHCORE_DATA_MIRROR" in log
    assert not (work / TARGET).exists()
    assert list((work / "resources/raw/entacmaea").glob(".*.tmp")) == []


def test_offline_the_console_names_every_missing_raw_file_and_the_fix(tmp_path, snakemake):
    """The first failed download stops the run; every raw file it still lacks is one line on
    the console with the fix, the mirror named as the config and the environment name it."""
    gb1 = f"resources/raw/gb1/{REGISTRY['gb1'].file}"
    work = tmp_path / "work"
    args = (TARGET, gb1, "--cores", "1", "--configfile", str(TINY))
    result = snakemake(*args, workdir=work, env=no_mirror_env("http://127.0.0.1:9"), check=False)
    assert result.returncode != 0
    lines = [x for x in result.stdout.splitlines() if x.startswith("error: ")]
    assert sorted(x.split(": ")[1] for x in lines) == ["entacmaea", "gb1"], result.stdout
    failed, untried = lines
    assert "(its download failed: logs/download/" in failed
    assert "(not tried: the run stopped at a failed download)" in untried
    for line in lines:
        name = line.split(": ")[1]
        assert (
            f"Fix: connect to the network, or put the file into a folder as <folder>/{name}/"
            in line
        )
        assert line.endswith(
            "set data_mirror: <folder> in the config (or WHCORE_DATA_MIRROR=<folder>)"
        )


def test_a_server_that_never_answers_times_out(tmp_path, monkeypatch):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # accepts connections, never answers
    try:
        monkeypatch.setenv("WHCORE_TEST_URL_BASE", f"http://127.0.0.1:{listener.getsockname()[1]}")
        with pytest.raises(FileNotFoundError, match="after 2 attempts") as err:
            download(
                "entacmaea", tmp_path / SPEC.file, mirror="", retries=2, timeout=0.5, backoff=0
            )
        assert "timed out" in str(err.value)
    finally:
        listener.close()


def test_moving_or_dropping_the_mirror_plans_no_download(tmp_path, data_mirror, snakemake):
    """A checked raw file's identity is its sha256, not where it came from."""
    work = tmp_path / "work"
    args = (TARGET, "--cores", "1", "--configfile", str(TINY))
    snakemake(*args, workdir=work, env={"WHCORE_DATA_MIRROR": str(data_mirror)})
    moved = tmp_path / "moved"
    shutil.copytree(data_mirror / "entacmaea", moved / "entacmaea")
    for env in ({"WHCORE_DATA_MIRROR": ""}, {"WHCORE_DATA_MIRROR": str(moved)}):
        dry = snakemake(*args, "-n", workdir=work, env=env)
        assert "Nothing to be done" in dry.stdout, dry.stdout[-2000:]


def test_download_refuses_to_replace_a_file_that_is_not_the_dataset(tmp_path, data_mirror):
    precious = tmp_path / "notes.txt"
    precious.write_text("my notes")
    with pytest.raises(ValueError, match="refusing to replace it"):
        download("entacmaea", precious, mirror=data_mirror)
    assert precious.read_text() == "my notes"


def test_a_target_path_cannot_run_a_shell_command(tmp_path, snakemake):
    evil = "resources/raw/entacmaea/x;touch PWNED"
    result = snakemake(evil, "-n", "--configfile", str(TINY), workdir=tmp_path, check=False)
    assert result.returncode != 0 and "MissingRuleException" in result.stdout
    assert not (tmp_path / "PWNED").exists()


def test_outputs_honour_the_umask(tmp_path, data_mirror):
    import pandas as pd

    from whcore.core.io import write_parquet

    old = os.umask(0o022)
    try:
        raw = download("entacmaea", tmp_path / SPEC.file, mirror=data_mirror)
        write_parquet(pd.DataFrame({"y": [1.0]}), tmp_path / "t.parquet")
    finally:
        os.umask(old)
    for path in (raw, tmp_path / "t.parquet"):
        assert path.stat().st_mode & 0o777 == 0o644, path


def test_rules_find_whcore_without_an_activated_environment(tmp_path, data_mirror):
    """`make quick` runs .venv/bin/snakemake with the user's PATH: the rules' `whcore` must be
    the one beside Snakemake's interpreter, not whatever (or nothing) is on PATH."""
    import subprocess

    from conftest import snakemake_cmd

    work = tmp_path / "work"
    env = {"PATH": "/usr/bin:/bin", "WHCORE_DATA_MIRROR": str(data_mirror), "HOME": str(tmp_path)}
    result = subprocess.run(
        [*snakemake_cmd(work, TARGET, "--cores", "1", "--configfile", str(TINY))],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert sha256_of(work / TARGET) == SPEC.sha256
