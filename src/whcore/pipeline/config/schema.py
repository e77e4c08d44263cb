"""The workflow's config schema: its part derived from the registries, written into the file.

``workflow/schemas/config.schema.yaml`` is the schema in force, as a reader sees it: the
definitions that follow from the registries (the network methods and their grids, the baseline
families and theirs, the training precisions, the paper's datasets) are generated into it
between two marker lines, and a test checks that they are current. The package ships it as
``whcore/pipeline/config/config.schema.yaml`` (in a checkout, a link to the workflow's file;
in a wheel, its copy), so that an installed ``whcore spec``, ``stale`` and ``plan`` validate a
config against the schema of their own version. After changing a registry::

    python -m whcore.pipeline.config.schema          # rewrite the generated part
    python -m whcore.pipeline.config.schema --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from ...core.methods import METHOD_INFO, PRECISIONS, value_schema
from ...data.datasets import REGISTRY
from ..analyses.families import BASELINES

__all__ = ["SCHEMA_PATH", "add_schema_option", "registry_definitions", "render"]

SCHEMA_PATH = Path(__file__).with_name("config.schema.yaml")  # package data (pyproject.toml)
BEGIN = "  # --- generated from the registries (python -m whcore.pipeline.config.schema); do not edit ---"
END = "  # --- end of the generated definitions ---"


def add_schema_option(parser) -> None:
    """The ``--schema`` option of a command that reads a workflow config."""
    parser.add_argument(
        "--schema",
        default=str(SCHEMA_PATH),
        help="the workflow's config schema (default: the one this whcore ships)",
    )


def _grid_schema(method: str, param: str) -> dict:
    items = value_schema(method, param)
    return {"type": "array", "minItems": 1, "uniqueItems": True, "items": items}


def _methods() -> dict:
    """A ``methods`` block: one property per method, one grid per parameter."""
    properties = {}
    for name, info in METHOD_INFO.items():
        grids = {param: _grid_schema(name, param) for param in info.params}
        required = [param for param in info.params if param not in info.defaults]
        properties[name] = (
            {
                "type": "object",
                "additionalProperties": False,
                "required": required,
                "properties": grids,
            }
            if grids
            else {"type": ["object", "null"], "maxProperties": 0}
        )
    return {
        "description": "network methods and their hyperparameter grids (lists of values)",
        "type": "object",
        "propertyNames": {"enum": list(METHOD_INFO)},
        "properties": properties,
    }


def _baselines() -> dict:
    """A ``baselines`` block: one property per family, one grid per parameter."""
    grid = {int: "#/$defs/int_values", float: "#/$defs/nonneg_values"}
    return {
        "description": "baseline model families and their grids",
        "type": "object",
        "propertyNames": {"enum": list(BASELINES)},
        "properties": {
            name: {
                "type": "object",
                "additionalProperties": False,
                "required": list(info.params),
                "properties": {p: {"$ref": grid[kind]} for p, kind in info.params.items()},
            }
            for name, info in BASELINES.items()
        },
    }


def registry_definitions() -> dict:
    """The schema's ``$defs`` that follow from the registries."""
    return {
        "methods": _methods(),
        "baselines": _baselines(),
        "precision": {"enum": list(PRECISIONS)},
        "paper_dataset": {"enum": list(REGISTRY)},
    }


def render(text: str) -> str:
    """``text`` (the schema file) with its generated part rewritten from the registries."""
    lines = text.split("\n")
    try:
        start, stop = lines.index(BEGIN), lines.index(END)
    except ValueError:
        raise ValueError(
            f"the config schema lacks its marker lines {BEGIN!r} and {END!r}"
        ) from None
    dumped = yaml.safe_dump(
        registry_definitions(), sort_keys=False, default_flow_style=None, width=96
    )
    generated = ["  " + line for line in dumped.rstrip("\n").split("\n")]
    return "\n".join(lines[: start + 1] + generated + lines[stop:])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not current")
    parser.add_argument("--schema", default=str(SCHEMA_PATH), help="the schema file")
    args = parser.parse_args(argv)
    path = Path(args.schema)
    text = path.read_text()
    current = render(text)
    if args.check:
        if current != text:
            print(
                f"{path}: out of date; run python -m whcore.pipeline.config.schema",
                file=sys.stderr,
            )
            return 1
        return 0
    path.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main())
