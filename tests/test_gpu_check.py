"""The prepared GPU check cannot run here (no GPU), and its first run on a lent machine must not
fail on a typo: its scripts must parse, and every benchmark option it passes must exist."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = [ROOT / "benchmarks" / "gpu_check.sh", ROOT / "benchmarks" / "gpu_prepare.sh"]


def benchmark_calls(script: Path) -> list[tuple[str, set[str]]]:
    """(benchmark file, the options the script passes it) for every benchmark it runs."""
    text = script.read_text().replace("\\\n", " ")
    calls = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for name, rest in re.findall(r"(benchmarks/\w+\.py)(.*)", line):
            calls.append((name, set(re.findall(r"(?<!\S)(--[a-z][a-z-]*)", rest))))
    return calls


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_scripts_parse(script):
    subprocess.run(["bash", "-n", str(script)], check=True)


def test_every_option_the_check_passes_exists():
    calls = benchmark_calls(SCRIPTS[0])
    assert {name for name, _ in calls} == {
        "benchmarks/run.py",
        "benchmarks/bench_grouped.py",
        "benchmarks/bench_jobs.py",
        "benchmarks/bench_precision.py",
        "benchmarks/bench_launch.py",
        "benchmarks/bench_graphs.py",
    }
    for name, options in calls:
        help_text = subprocess.run(
            [sys.executable, str(ROOT / name), "--help"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        known = set(re.findall(r"--[a-z][a-z-]*", help_text))
        assert options and options <= known, f"{name}: {sorted(options - known)} unknown"


def test_the_gpu_tests_the_check_selects_exist():
    # gpu_check.sh runs pytest on the modules that hold GPU tests (grep 'mark.gpu').
    modules = [p for p in (ROOT / "tests").rglob("test_*.py") if "mark.gpu" in p.read_text()]
    assert any(p.name == "test_wht.py" for p in modules), modules
    assert "grep -rl --include='test_*.py' 'mark.gpu' tests" in SCRIPTS[0].read_text()
