"""The benchmarks use whcore's public names only, and only names that exist.

No test runs the benchmarks (they take minutes to hours), so a renamed or removed library name
would break them only when someone next runs one. This check reads every Python file under
benchmarks/ and fails on:

- an import of a private name (``_x``) from a whcore module, or of a private whcore module;
- an access to a private attribute (``obj._x``, or ``getattr(obj, "_x")``) of anything
  (dunder names such as ``__name__`` are public);
- an import of a whcore module that does not exist, or of a name its module does not have;
- an attribute chain on a name bound by a whcore import (``models.CPU_CHUNK_ELEMENTS``) that
  does not resolve.

and every benchmark module must import (their imports of one another included).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
SOURCES = sorted(BENCHMARKS.rglob("*.py"))
MISSING = object()
ATTRIBUTE_FUNCTIONS = ("getattr", "setattr", "hasattr", "delattr")


def private(name: str) -> bool:
    """A name with a leading underscore that is not a dunder (``__name__`` is public)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_whcore(module: str | None) -> bool:
    return module is not None and (module == "whcore" or module.startswith("whcore."))


def load(module: str):
    """(the module, None), or (None, why it cannot be used)."""
    if any(private(part) for part in module.split(".")):
        return None, f"imports the private module {module}"
    try:
        return importlib.import_module(module), None
    except ModuleNotFoundError as err:
        if err.name and module.startswith(err.name) and is_whcore(err.name):
            return None, f"imports {module}, which does not exist"
        raise  # a dependency is missing: the environment's problem, not the benchmark's


def member(module, name: str):
    """``module.name``: an attribute, else a submodule not imported yet; MISSING if neither."""
    if hasattr(module, name):
        return getattr(module, name)
    full = f"{module.__name__}.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as err:
        if err.name == full:
            return MISSING
        raise


def chain(node: ast.Attribute) -> tuple[str | None, list[str]]:
    """``a.b.c`` -> ("a", ["b", "c"]); (None, ...) when the chain does not start at a name."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), attributes[::-1]


def problems(source: str, filename: str = "<source>") -> list[str]:
    """What in ``source`` (a benchmark's code) uses a private or a missing whcore name."""
    tree = ast.parse(source, filename)
    found: list[str] = []
    bound: dict[str, object] = {}  # a name a whcore import binds -> its object
    for node in ast.walk(tree):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ImportFrom) and node.level == 0 and is_whcore(node.module):
            module, why = load(node.module)
            if why:
                found.append(f"{where}: {why}")
                continue
            for alias in node.names:
                if alias.name == "*":
                    found.append(f"{where}: from {node.module} import * (name what is used)")
                elif private(alias.name):
                    found.append(f"{where}: imports the private name {node.module}.{alias.name}")
                elif (value := member(module, alias.name)) is MISSING:
                    found.append(f"{where}: {node.module} has no {alias.name}")
                else:
                    bound[alias.asname or alias.name] = value
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if not is_whcore(alias.name):
                    continue
                module, why = load(alias.name)
                if why:
                    found.append(f"{where}: {why}")
                elif alias.asname:
                    bound[alias.asname] = module
                else:  # `import whcore.a.b` binds `whcore`
                    bound["whcore"] = importlib.import_module("whcore")
        elif isinstance(node, ast.Attribute) and private(node.attr):
            found.append(f"{where}: uses the private attribute .{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ATTRIBUTE_FUNCTIONS
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and private(node.args[1].value)
        ):
            found.append(f"{where}: uses the private attribute {node.args[1].value!r}")
    # Attribute chains on what the whcore imports bound (the file never rebinds those names).
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name, attributes = chain(node)
        if name not in bound or any(private(a) for a in attributes):
            continue  # not a whcore name, or reported above
        value, path = bound[name], name
        for attribute in attributes:
            path += f".{attribute}"
            value = (
                member(value, attribute)
                if hasattr(value, "__path__")
                else (getattr(value, attribute, MISSING))
            )
            if value is MISSING:
                message = f"{filename}:{node.lineno}: {path} does not exist"
                if message not in found:
                    found.append(message)
                break
    return found


def test_the_benchmarks_are_all_read():
    names = {str(path.relative_to(BENCHMARKS)) for path in SOURCES}
    assert {"run.py", "parts/common.py", "parts/wht.py", "bench_ens.py"} <= names, names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_a_benchmark_uses_public_names_that_exist(path):
    found = problems(path.read_text(), str(path.relative_to(REPO)))
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "source, reported",
    [
        ("from whcore.core.wht import _butterflies", "private name whcore.core.wht._butterflies"),
        ("from whcore.core.wht import fwht as f, _radix_split", "private name"),
        ("from whcore.core._secret import x", "private module whcore.core._secret"),
        ("import whcore.core._secret", "private module"),
        ("chunks = model._member_chunks(x)", "private attribute ._member_chunks"),
        ("op = func._schema.name", "private attribute ._schema"),
        ("chunks = getattr(model, '_member_chunks')(x)", "private attribute '_member_chunks'"),
        ("from whcore.core.nowhere import fwht", "whcore.core.nowhere, which does not exist"),
        ("import whcore.nowhere", "whcore.nowhere, which does not exist"),
        ("from whcore.core.wht import fast_fwht", "whcore.core.wht has no fast_fwht"),
        ("from whcore.core import nowhere", "whcore.core has no nowhere"),
        ("from whcore.core.wht import *", "import *"),
        ("from whcore.core import models\nmodels.CHUNK = 1", "models.CHUNK does not exist"),
        ("import whcore.core.models as m\nm.MLP.forwards", "m.MLP.forwards does not exist"),
        ("import whcore.core.wht\nwhcore.core.wht.fwht2(x)", "whcore.core.wht.fwht2 does not"),
    ],
)
def test_the_check_reports_what_would_break_a_benchmark(source, reported):
    found = problems(source)
    assert len(found) == 1 and reported in found[0], found


def test_the_check_accepts_public_names():
    source = """
import whcore.core.wht
from whcore.core import models
from whcore.core.models import MLP
from whcore.core.wht import butterflies, fwht as transform
from whcore.pipeline.jobs.train import spectrum_callback
from .common import _local_helper  # a benchmark's own module, not whcore's

limit = models.CPU_CHUNK_ELEMENTS
chunks = MLP(3).member_chunks
y = whcore.core.wht.fwht(x) + transform(x) + butterflies(x)
name = type(y).__name__ + func.name()
"""
    assert problems(source) == []


def test_every_benchmark_module_imports():
    # In a fresh interpreter: the benchmarks import each other by their own top-level names
    # (bench_jobs, parts), which must not meet the test modules' in this process.
    modules = [
        ".".join(path.relative_to(BENCHMARKS).with_suffix("").parts).removesuffix(".__init__")
        for path in SOURCES
    ]
    code = (
        "import importlib, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "for name in sys.argv[2:]:\n"
        "    importlib.import_module(name)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(BENCHMARKS), *modules], check=True, timeout=300)
