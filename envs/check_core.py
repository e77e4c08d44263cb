"""The light install (``make check-core``): run by the Python of a fresh venv that holds
``pip install .`` alone, the library without any extra.

1. no distribution that an extra of ``pyproject.toml`` names is installed (pandas is the core's:
   the training loop's records are a DataFrame);
2. ``whcore`` is the installed build, not this checkout's ``src/``;
3. the README's library example ("Use HashWH in your own training loop") runs as written;
4. ``whcore.train`` runs and returns its records;
5. the package data is installed as files: the claims' sheet, and the config schema equal to
   the checkout's ``workflow/schemas/config.schema.yaml`` (in the checkout a link to it).

Standard library only (the venv has no ``packaging``). Usage: python envs/check_core.py
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Use HashWH in your own training loop"


def extra_distributions(pyproject: Path) -> list[str]:
    """Every distribution named by an extra (all platforms' markers), less the project's own."""
    project = tomllib.loads(pyproject.read_text())["project"]
    core = {_name(text) for text in project["dependencies"]}
    names = {
        _name(text) for extra in project.get("optional-dependencies", {}).values() for text in extra
    }
    return sorted(names - core - {_name(project["name"])})


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement).group(0).lower().replace("_", "-")


def readme_example(readme: Path) -> str:
    """The python block of the README's section SECTION (as tests/test_readme.py reads it)."""
    text = readme.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start : end if end > 0 else None], re.DOTALL)[0]


# The package data (pyproject.toml) -> the checkout's file it must equal, if any.
PACKAGE_DATA = {
    "whcore/pipeline/claims/sheet.toml": "src/whcore/pipeline/claims/sheet.toml",
    "whcore/pipeline/config/config.schema.yaml": "workflow/schemas/config.schema.yaml",
}


def package_data_failures() -> list[str]:
    """What of the package data the install lacks, holds as a link, or holds changed."""
    installed = {str(file): file for file in importlib.metadata.files("whcore") or []}
    failures = []
    for name, source in PACKAGE_DATA.items():
        path = Path(installed[name].locate()) if name in installed else None
        if path is None or path.is_symlink() or not path.is_file():
            failures.append(f"the install lacks the package data {name} as a file")
        elif path.read_bytes() != (REPO / source).read_bytes():
            failures.append(f"the installed {name} differs from the checkout's {source}")
    return failures


def main() -> int:
    failures = []
    installed = []
    for name in extra_distributions(REPO / "pyproject.toml"):
        try:
            installed.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    if installed:
        failures.append(f"the core install brought packages of the extras: {', '.join(installed)}")

    import whcore

    if Path(whcore.__file__).resolve().is_relative_to(REPO / "src"):
        failures.append(f"whcore comes from the checkout ({whcore.__file__}), not the install")

    failures += package_data_failures()

    import torch

    torch.set_num_threads(1)  # tiny tensors: threads contending for a busy machine cost 5x
    scope: dict = {}
    exec(compile(readme_example(REPO / "README.md"), "README.md", "exec"), scope)
    loss = scope["loss"].item()
    if not loss < 0.5:  # as tests/test_readme.py: the parity has variance 1
        failures.append(f"the README's example ended at a loss of {loss:.3f} (>= 0.5)")

    import numpy as np

    gen = np.random.default_rng(0)
    x = gen.integers(0, 2, (64, 6)).astype(np.float32)
    y = (-1.0) ** x[:, :2].sum(1)
    data = whcore.Data(x[:48], y[:48], x[48:], y[48:])
    config = whcore.TrainConfig(epochs=2, patience=None, device="cpu", width=1)
    records = whcore.train(data, "hashwh", {"lam": 0.01, "b": 3}, [0], config, log=lambda _: None)
    if len(records) != 3:  # epochs 0, 1 and 2
        failures.append(f"whcore.train returned {len(records)} records for 3 epochs")

    for failure in failures:
        print(f"FAIL {failure}")
    if not failures:
        print(
            f"ok   core install: whcore {whcore.__version__} from {Path(whcore.__file__).parent}, "
            f"torch {importlib.metadata.version('torch')}, no extra's package, its package data; "
            f"the README's example (loss {loss:.3f}) and whcore.train ran"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
