"""Every ``whcore.`` dotted name that a docstring, a comment or a page of docs/ names exists:
a module, or a name inside one (a function, a class, a constant, an attribute of a class)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NAME = re.compile(r"(?<![/\w.])whcore(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
FILES = ("yaml", "yml", "json", "lock", "zip", "toml")  # whcore.yaml is a file, not a module
SOURCES = sorted(
    [*(REPO / "src" / "whcore").rglob("*.py"), *(REPO / "docs").rglob("*.md"), REPO / "README.md"]
)


def names_in(text: str) -> set[str]:
    """The dotted names in ``text`` (a name ending a sentence loses its full stop)."""
    names = {name.rstrip(".") for name in NAME.findall(text)}
    return {name for name in names if name.rsplit(".", 1)[1] not in FILES}


def resolves(name: str) -> bool:
    """Whether ``name`` is a module, or a chain of attributes of the longest module it starts
    with."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        try:
            for attribute in parts[cut:]:
                value = getattr(value, attribute)
        except AttributeError:
            return False
        return True
    return False


def test_the_check_sees_a_name_that_does_not_exist():
    assert resolves("whcore.data.loading.split_data")
    assert resolves("whcore.pipeline.jobs.train.TrainSpec.run")
    assert not resolves("whcore.pipeline.jobs.split_data")
    assert not resolves("whcore.wht")
    assert names_in("see `whcore.core.rng`. And whcore.x.") == {"whcore.core.rng", "whcore.x"}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_module_exists(path):
    missing = sorted(name for name in names_in(path.read_text()) if not resolves(name))
    assert not missing, f"{path.relative_to(REPO)} names {missing}"
