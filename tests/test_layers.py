"""The package's layers: core imports nothing above it, data imports core only."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "whcore"
RANK = {"core": 0, "data": 1, "pipeline": 2}


def imported_layers(path: Path) -> set[str]:
    """The whcore layers a module imports (absolute or relative imports, any depth)."""
    layer_parts = path.relative_to(PACKAGE).parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(layer_parts[: len(layer_parts) - node.level + 1])
                parts = base + (node.module.split(".") if node.module else [])
                names = [parts + [alias.name] for alias in node.names]
            else:
                names = [(node.module or "").split(".")]
        elif isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
        else:
            continue
        for parts in names:
            if parts and parts[0] == "whcore":
                parts = parts[1:]
            if parts and parts[0] in RANK:
                found.add(parts[0])
    return found


@pytest.mark.parametrize("layer", sorted(RANK))
def test_no_import_runs_back_up(layer):
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        above = {other for other in imported_layers(path) if RANK[other] > RANK[layer]}
        assert not above, f"{path.relative_to(PACKAGE)} imports {sorted(above)}"


def test_the_check_sees_imports():
    assert imported_layers(PACKAGE / "pipeline" / "cli.py") >= {"data"}
    assert "core" in imported_layers(PACKAGE / "data" / "loading.py")
