"""The library is light: importing it, its core and running the README's training loop load no
package of the data, pipeline or workflow extras; the core install asks for none of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import tomllib
from conftest import load_script
from packaging.markers import default_environment
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


check = load_script("check_core")

# Import names of what the extras bring (pandas is a core requirement, for train's records, but
# loads only when records are built).
HEAVY = [
    "pandas",
    "pyarrow",
    "openpyxl",
    "sklearn",
    "scipy",
    "xgboost",
    "matplotlib",
    "seaborn",
    "yaml",
    "jsonschema",
    "snakemake",
]

# Each stage runs in one fresh interpreter, in order; it prints which HEAVY modules are loaded.
STAGES = {
    "import whcore": "import whcore",
    "import whcore.core and every module in it": """
        import importlib, pkgutil
        import whcore.core
        for info in pkgutil.iter_modules(whcore.core.__path__):
            importlib.import_module(f"whcore.core.{info.name}")
    """,
    "every public name of whcore": """
        for name in whcore.__all__:
            getattr(whcore, name)
    """,
    "the README's training loop": "exec(compile(README_EXAMPLE, 'README.md', 'exec'), {})",
}


def test_import_whcore_loads_no_extra_package():
    lines = [
        "import json, sys",
        f"README_EXAMPLE = {check.readme_example(README)!r}",
        f"HEAVY = {HEAVY!r}",
        "loaded = {}",
    ]
    for stage, code in STAGES.items():
        lines.append(textwrap.dedent(code).strip())
        lines.append(f"loaded[{stage!r}] = [m for m in HEAVY if m in sys.modules]")
    lines.append("print(json.dumps(loaded))")
    # One thread: the example's tensors are tiny, and threads that contend for a busy machine's
    # cores make it 5x slower.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    code = "\n".join(lines)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert list(loaded) == list(STAGES)
    assert loaded == {stage: [] for stage in STAGES}, loaded


def test_the_core_check_runs_the_example_that_test_readme_runs():
    from test_readme import python_blocks

    assert check.readme_example(README) == python_blocks(check.SECTION)[0]


def test_the_core_check_looks_for_every_extra_package():
    names = check.extra_distributions(REPO / "pyproject.toml")
    assert {"pyarrow", "scikit-learn", "scipy", "xgboost", "xgboost-cpu", "snakemake"} <= set(names)
    assert not {"torch", "numpy", "pandas", "whcore"} & set(names)


def test_the_core_install_requires_no_extra_package():
    core = {Requirement(r).name for r in PROJECT["dependencies"]}
    assert core == {"torch", "numpy", "pandas"}
    extras = PROJECT["optional-dependencies"]
    assert {"data", "pipeline", "workflow", "dev"} <= set(extras)
    # Each extra builds on the one before it.
    for extra, base in [("pipeline", "data"), ("workflow", "pipeline"), ("dev", "workflow")]:
        assert f"whcore[{base}]" in extras[extra], extra


def test_one_xgboost_distribution_per_platform():
    """xgboost-cpu and xgboost install the same module `xgboost`: their markers never overlap."""
    lines = [Requirement(r) for extra in PROJECT["optional-dependencies"].values() for r in extra]
    lines += [Requirement(r) for r in PROJECT["dependencies"]]
    xgb = [r for r in lines if r.name in ("xgboost", "xgboost-cpu")]
    assert sorted(r.name for r in xgb) == ["xgboost", "xgboost-cpu"]  # once each, in one place
    for platform in ("linux", "darwin", "win32"):
        env = {**default_environment(), "sys_platform": platform}
        chosen = [r.name for r in xgb if r.marker is None or r.marker.evaluate(env)]
        assert chosen == (["xgboost"] if platform == "darwin" else ["xgboost-cpu"]), platform


def test_the_command_without_the_pipeline_extra_names_the_extra():
    """`pip install whcore` alone installs the `whcore` command too: it must say what to install,
    not end in a traceback."""
    code = (
        "import sys; sys.modules['yaml'] = None\n"  # as if the extra were not installed
        "from whcore.command import main\n"
        "sys.exit(main(['--version']))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "whcore: the command line needs the pipeline extra (no module 'yaml'): "
        "pip install 'whcore[pipeline]'"
    )
    assert "Traceback" not in result.stderr
