"""Job specifications: what one training job trains, validated with a JSON schema.

A spec is YAML or JSON::

    method: hashwh
    grid: [{lam: 0.01, b: 7}, {lam: 0.1, b: 7}]   # or params: {lam: 0.01, b: 7} for one
    data:
      source: synthetic          # a g* file from `whcore synthetic`, or `table` (a Parquet)
      path: results/synthetic/spectrum/target_d0.json
      train_size: 200
      val_size: rest             # a count, or rest
      test_size: 0
      data_seed: 0
      standardize: false
    training: {seeds: [0, 1, 2, 3, 4], epochs: 500, batch_size: 16, lr: 0.01, patience: 10,
               width: 10, vectorize: true, precision: fp32}
    spectrum: false              # exact spectral metrics per epoch (n <= 20 only)
    labels: {experiment: spectrum, dataset: draw0}   # copied into every record
    outputs: {records: runs/, spectra: spectra/}   # folders; spectra: with spectrum only

The configurations of a grid may differ only in the weights that members of one stacked model
can differ in (lam, rho); each gets its own file in every output folder, named by its
parameters (``b7_lam0.01.parquet``).

The device and the progress-log frequency are not part of a spec (they never change a result):
``whcore train --device ... --log-every ...``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema

from ..core.methods import METHOD_INFO, PRECISIONS, configuration_schema
from .canonical import param_tag, read_yaml

__all__ = [
    "SPEC_SCHEMA",
    "SpecError",
    "load_spec",
    "read_spec",
    "training_defaults",
    "validate_spec",
]

_SIZE = {"oneOf": [{"type": "integer", "minimum": 0}, {"const": "rest"}]}
_PARAMS = {"type": "object", "additionalProperties": {"type": ["number", "string"]}}
_SEED = {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}  # PyTorch's generator's range

SPEC_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["method", "data", "training", "outputs"],
    "not": {"required": ["params", "grid"]},
    "properties": {
        "method": {"type": "string"},
        "params": {
            "description": "one configuration (shorthand for a grid of one)",
            **_PARAMS,
        },
        "grid": {
            "description": "the configurations this job trains, one output file each",
            "type": "array",
            "minItems": 1,
            "items": _PARAMS,
        },
        "spectrum": {"type": "boolean", "default": False},
        "labels": {
            "description": "free-form identity columns copied into every record",
            "type": "object",
            "additionalProperties": {"type": ["string", "number", "integer"]},
            "default": {},
        },
        "outputs": {
            "type": "object",
            "additionalProperties": False,
            "required": ["records"],
            "properties": {"records": {"type": "string"}, "spectra": {"type": "string"}},
        },
        "data": {
            "type": "object",
            "additionalProperties": False,
            "required": ["source", "path", "train_size", "data_seed"],
            "properties": {
                "source": {"enum": ["synthetic", "table"]},
                "path": {"type": "string"},
                "train_size": {"type": "integer", "minimum": 1},
                "val_size": {**_SIZE, "default": "rest"},
                "test_size": {**_SIZE, "default": 0},
                "data_seed": _SEED,
                "standardize": {"type": "boolean", "default": False},
            },
        },
        "training": {
            "type": "object",
            "additionalProperties": False,
            "required": ["seeds"],
            "properties": {
                "seeds": {"type": "array", "minItems": 1, "items": _SEED},
                "epochs": {"type": "integer", "minimum": 1, "default": 200},
                "batch_size": {"type": "integer", "minimum": 1, "default": 16},
                "lr": {"type": "number", "exclusiveMinimum": 0, "default": 0.01},
                "patience": {
                    "description": "epochs without a better validation loss before stopping; "
                    "null: no early stopping",
                    "type": ["integer", "null"],
                    "minimum": 1,
                    "default": 10,
                },
                "width": {"type": "number", "exclusiveMinimum": 0, "default": 10},
                "vectorize": {"type": "boolean", "default": True},
                "precision": {
                    "description": "fp32; opt-in tf32 (CUDA matrix products) or bf16 (autocast)",
                    "enum": list(PRECISIONS),
                    "default": "fp32",
                },
            },
        },
    },
}


def training_defaults() -> dict:
    """The training settings a spec (and so a configuration) leaves out."""
    fields = SPEC_SCHEMA["properties"]["training"]["properties"]
    return {key: field["default"] for key, field in fields.items() if "default" in field}


class SpecError(ValueError):
    """A spec that does not validate; the message names the source, the field and the fix."""


def _fill_defaults(schema: dict, value: dict) -> None:
    for key, sub in schema.get("properties", {}).items():
        if key not in value and "default" in sub:
            value[key] = sub["default"]
        if isinstance(value.get(key), dict) and sub.get("type") == "object":
            _fill_defaults(sub, value[key])


def _check_configurations(spec: dict, field: str, source: str) -> None:
    """Each configuration against its method's entry in the registry: the same parameter
    names, types and bounds as a configuration file's grids, finite numbers only."""
    method = spec["method"]
    if method not in METHOD_INFO:
        raise SpecError(
            f"{source}: field method: unknown method {method!r}; use one of {list(METHOD_INFO)}"
        )
    validator = jsonschema.Draft202012Validator(configuration_schema(method))
    for index, params in enumerate(spec["grid"]):
        where = field if field == "params" else f"grid.{index}"
        for err in validator.iter_errors(params):
            key = ".".join([where, *map(str, err.path)])
            raise SpecError(f"{source}: field {key}: {err.message} ({method})")
        for key, value in params.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise SpecError(f"{source}: field {where}.{key}: {value} is not a finite number")


def validate_spec(spec: dict, source: str = "spec") -> dict:
    """Validate, fill defaults and return the spec; raise SpecError naming the field."""
    validator = jsonschema.Draft202012Validator(SPEC_SCHEMA)
    errors = sorted(validator.iter_errors(spec), key=lambda e: list(e.path))
    if errors:
        err = errors[0]
        field = ".".join(str(p) for p in err.path) or "(top level)"
        message = err.message
        if err.validator == "not":
            message = "give either params (one configuration) or grid (several), not both"
        raise SpecError(f"{source}: field {field}: {message}")
    spec = json.loads(json.dumps(spec))  # a deep copy
    _fill_defaults(SPEC_SCHEMA, spec)
    field = "params" if "params" in spec else "grid"
    spec["grid"] = spec.get("grid") or [spec.pop("params", {})]
    _check_configurations(spec, field, source)
    tags = [param_tag(p) for p in spec["grid"]]
    if len(set(tags)) < len(tags):
        raise SpecError(f"{source}: field grid: a configuration appears twice ({tags})")
    return spec


def read_spec(text: str | Path) -> dict:
    """A spec given as a JSON string or as the path of a YAML/JSON file (not validated: every
    kind of job has its own fields)."""
    if isinstance(text, str) and text.lstrip().startswith("{"):
        source = "--spec"
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as err:
            raise SpecError(f"--spec: not valid JSON ({err})") from None
    else:
        source, spec = str(text), read_yaml(text, "spec file", SpecError)
    if not isinstance(spec, dict):
        raise SpecError(f"{source}: a spec must be a mapping of fields, got {type(spec).__name__}")
    return spec


def load_spec(path: str | Path) -> dict:
    """Read a YAML or JSON training spec file and validate it."""
    return validate_spec(read_spec(Path(path)), str(path))
