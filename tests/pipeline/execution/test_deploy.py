"""The conda environment of `--sdm conda` installs this checkout wherever Snakemake copies it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from whcore.pipeline.execution.deploy import conda_env_file

REPO = Path(__file__).resolve().parents[3]


def test_the_env_file_names_the_checkout_by_its_absolute_path(tmp_path):
    path = Path(conda_env_file(REPO, tmp_path))
    assert path == tmp_path.resolve() / ".whcore" / "conda" / "whcore.yaml"
    env = yaml.safe_load(path.read_text())
    (pip,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    # the jobs run the `whcore` command: the pipeline extra, after the index and the pins
    assert pip[-1] == f"-e {REPO}[pipeline]"
    # the path that pip installs is this checkout: its pyproject names whcore
    checkout = Path(pip[-1].split(" ", 1)[1].removesuffix("[pipeline]"))
    assert 'name = "whcore"' in (checkout / "pyproject.toml").read_text()
    # a copy elsewhere (what Snakemake does before creating it) still names the checkout
    copy = tmp_path / "elsewhere" / "env.yaml"
    copy.parent.mkdir()
    shutil.copy(path, copy)
    assert yaml.safe_load(copy.read_text()) == env


def test_the_file_is_rewritten_only_when_it_changes(tmp_path):
    path = Path(conda_env_file(REPO, tmp_path))
    before = path.stat().st_mtime_ns
    assert conda_env_file(REPO, tmp_path) == str(path)
    assert path.stat().st_mtime_ns == before  # Snakemake's environment hash stays put


def test_a_template_without_the_placeholder_is_refused(tmp_path):
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "whcore.yaml").write_text("dependencies: [python=3.11]\n")
    with pytest.raises(ValueError, match="no {checkout} placeholder"):
        conda_env_file(tmp_path, tmp_path)


def test_the_env_pins_the_tested_set_with_cpu_torch(tmp_path):
    """The versions of the lock CI tests (as pip constraints), torch from PyTorch's CPU index
    (PyPI's Linux torch is the CUDA build), the lock's Python. The environment itself is never
    created here (no conda in CI); its comment says so."""
    text = Path(conda_env_file(REPO, tmp_path)).read_text()
    env = yaml.safe_load(text)
    (pip,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    lock = REPO / "envs" / "linux-cpu.lock"
    assert pip == [
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        f"-c {lock}",
        f"-e {REPO}[pipeline]",
    ]
    assert "python=3.11" in env["dependencies"] and "Python 3.11" in lock.read_text()
    assert any(line.startswith("torch==") and "+" not in line for line in lock.read_text().split())
    assert "NOT RUN BY CI" in text
