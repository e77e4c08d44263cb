"""The clean-machine install: the lock and the Makefile's torch step (envs/check_install.py).

The check itself asks PyPI and runs as a CI stage (`make check-install`); these tests cover its
logic offline, and what the Makefile does with the lock's torch line.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import load_script
from packaging.requirements import Requirement
from packaging.tags import Tag

REPO = Path(__file__).resolve().parent.parent
LOCK = REPO / "envs" / "linux-cpu.lock"
CPU_TORCH = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
CP311_LINUX = [Tag("cp311", "cp311", "manylinux_2_28_x86_64"), Tag("py3", "none", "any")]


check = load_script("check_install")


def test_lock_pins_torch_by_its_public_version():
    """`torch==X+cpu` exists on PyTorch's index alone: a clean pip fails on it at once. A public
    version is met both by the CPU build (X+cpu) and by a user's own wheel of X."""
    others, torch = check.split_lock(LOCK.read_text().splitlines())
    assert str(torch.specifier).startswith("==")
    assert "+" not in str(torch.specifier), "a local label in the lock breaks a clean install"
    assert all("torch" != Requirement(line).name for line in others)
    assert len(others) > 50


@pytest.mark.parametrize(
    "lines,message",
    [
        (["numpy==2.0"], "exactly once, found 0"),
        (["torch==2.1", "torch==2.2"], "exactly once, found 2"),
        (["--extra-index-url https://x", "torch==2.1"], "belong in the Makefile"),
    ],
)
def test_split_lock_rejects(lines, message):
    with pytest.raises(ValueError, match=message):
        check.split_lock(lines)


def test_split_lock_skips_comments():
    others, torch = check.split_lock(["# header", "", "numpy==2.0  # why", "torch==2.1"])
    assert others == ["numpy==2.0"] and str(torch) == "torch==2.1"


def test_project_requirements_expand_own_extras(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "Pkg_A"\ndependencies = ["torch>=2", "numpy"]\n'
        "[project.optional-dependencies]\n"
        'flow = ["snakemake>=9"]\ndev = ["pkg-a[flow]", "pytest"]\n'
    )
    assert check.project_requirements(pyproject, "dev") == [
        "torch>=2",
        "numpy",
        "pytest",
        "snakemake>=9",
    ]
    lines, torch = check.split_lock(check.project_requirements(pyproject, "flow"))
    assert lines == ["numpy", "snakemake>=9"] and str(torch) == "torch>=2"


def test_the_real_dev_extra_reaches_the_workflow_tools():
    names = {
        Requirement(r).name for r in check.project_requirements(REPO / "pyproject.toml", "dev")
    }
    assert {"torch", "snakemake", "snakemake-executor-plugin-slurm", "pytest", "ruff"} <= names
    assert "whcore" not in names


def test_matching_wheels_by_version_and_platform():
    files = [
        CPU_TORCH,
        "torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
        "torch-2.12.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.13.0-cp311-none-macosx_11_0_arm64.whl",
        "torchvision-0.28.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.13.0.tar.gz",
    ]
    assert check.matching_wheels(files, Requirement("torch==2.13.0"), CP311_LINUX) == [CPU_TORCH]
    assert check.matching_wheels(files, Requirement("torch==2.14.0"), CP311_LINUX) == []
    cp310 = [Tag("cp310", "cp310", "manylinux_2_28_x86_64")]
    assert check.matching_wheels(files, Requirement("torch>=2.1"), cp310) == []


def test_index_files_reads_a_simple_page():
    page = f'<html><body><a href="/whl/{CPU_TORCH}#sha256=ab">{CPU_TORCH}</a><br/></body></html>'
    assert check.index_files(page) == [CPU_TORCH]


def test_clean_pip_env_drops_every_package_source():
    env = check.clean_pip_env(
        {
            "PATH": "/bin",
            "PIP_FIND_LINKS": "/opt/wheels",
            "PIP_EXTRA_INDEX_URL": "file:///opt/pypi",
            "PIP_CONSTRAINT": "/etc/c.txt",
            "PIP_NO_INDEX": "1",
            "PIP_CERT": "/etc/ca.crt",
            "PIP_CONFIG_FILE": "/etc/pip.conf",
        }
    )
    assert env["PIP_CONFIG_FILE"] == os.devnull
    assert env["PIP_CERT"] == "/etc/ca.crt" and env["PATH"] == "/bin"
    assert not {"PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT", "PIP_NO_INDEX"} & set(
        env
    )


@pytest.fixture
def torch_index(tmp_path):
    """A local simple index whose torch page lists ``files`` (written by the test)."""
    (tmp_path / "torch").mkdir()
    handler = functools.partial(_Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def serve(files: list[str]) -> str:
        links = "".join(f'<a href="{name}">{name}</a>' for name in files)
        (tmp_path / "torch" / "index.html").write_text(f"<html><body>{links}</body></html>")
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield serve
    server.shutdown()
    server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/"


def test_check_torch_against_an_index(torch_index, capsys, monkeypatch):
    monkeypatch.setattr(check, "sys_tags", lambda: CP311_LINUX)
    url = torch_index([CPU_TORCH])
    assert check.check_torch(Requirement("torch==2.13.0"), url, True, "lock")
    assert f"is met by {CPU_TORCH}" in capsys.readouterr().out
    assert not check.check_torch(Requirement("torch==2.14.0"), url, False, "lock")
    assert "lists no wheel for this platform" in capsys.readouterr().out


def test_check_torch_unreachable_is_skipped_or_fails_when_required(capsys):
    url = _closed_port_url()
    assert check.check_torch(Requirement("torch==2.13.0"), url, False, "lock")
    assert capsys.readouterr().out.startswith("skip lock: torch==2.13.0 not checked")
    assert not check.check_torch(Requirement("torch==2.13.0"), url, True, "lock")
    assert capsys.readouterr().out.startswith("FAIL lock")


def make_environment() -> dict[str, str]:
    """This process's environment without the caller's make variables: those a `make test
    TORCH_INDEX=...` passes down (MAKEFLAGS and its kin) and the Makefile's own settings
    (`TORCH_INDEX=... make test`), so that a plan shows the Makefile's defaults."""
    import re

    names = set(re.findall(r"^(\w+) \?=", (REPO / "Makefile").read_text(), re.MULTILINE))
    names |= {"MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKELEVEL", "GNUMAKEFLAGS"}
    return {k: v for k, v in os.environ.items() if k not in names}


def make_plan(*args: str) -> str:
    """What `make -n ARGS` would run (nothing is run), whatever make variables the caller set."""
    done = subprocess.run(
        ["make", "-n", *args], cwd=REPO, capture_output=True, text=True, env=make_environment()
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_plan_ignores_the_callers_make_variables(monkeypatch, tmp_path):
    """`make test TORCH_INDEX=<a mirror>` (the Makefile's advice offline) hands its variables
    to the tests through MAKEFLAGS; `TORCH_INDEX=... make test` through the environment."""
    mirror = "https://mirror.example/simple"
    monkeypatch.setenv("MAKEFLAGS", f" -- TORCH_INDEX={mirror} LOCK=")
    monkeypatch.setenv("MAKELEVEL", "1")
    monkeypatch.setenv("TORCH_INDEX", mirror)
    plan = make_plan("install", f"VENV={tmp_path / 'venv'}")  # a venv to make, whatever exists
    assert mirror not in plan and "--index-url https://download.pytorch.org/whl/cpu" in plan
    assert "-r envs/linux-cpu.lock" in plan


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_makefile_installs_the_lock_torch_first_from_the_cpu_index(tmp_path):
    """`make -n` shows the plan: torch alone, the lock's version, the CPU index, short limits."""
    plan = make_plan("install", f"VENV={tmp_path / 'venv'}")
    _, torch = check.split_lock(LOCK.read_text().splitlines())
    torch_step = plan.index(f"'{torch}'")
    assert "--no-deps" in plan[:torch_step] and "--timeout 15 --retries 1" in plan[:torch_step]
    assert "--index-url https://download.pytorch.org/whl/cpu" in plan[:torch_step]
    assert torch_step < plan.index("-r envs/linux-cpu.lock")
    # Without a torch index (macOS, or a user's choice) pip takes torch with the rest.
    plan = make_plan("install", f"VENV={tmp_path / 'venv'}", "TORCH_INDEX=")
    assert "--index-url" not in plan and "-r envs/linux-cpu.lock" in plan


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_check_core_installs_the_core_alone_after_the_same_torch_step(tmp_path):
    """`make check-core`: a fresh venv, torch by the install's own step, then `pip install .`
    without an extra (the lock's versions as constraints), then envs/check_core.py."""
    venv = tmp_path / "core"
    plan = make_plan("check-core", f"CORE_VENV={venv}")
    _, torch = check.split_lock(LOCK.read_text().splitlines())
    torch_step = plan.index(f"{venv}/bin/pip install --quiet --no-deps --timeout 15 --retries 1")
    assert f"rm -rf {venv}" in plan[:torch_step]
    assert f"--index-url https://download.pytorch.org/whl/cpu '{torch}'" in plan[torch_step:]
    core_step = plan.index(f"{venv}/bin/pip install --quiet -c envs/linux-cpu.lock .\n")
    assert torch_step < core_step < plan.index(f"{venv}/bin/python envs/check_core.py")
