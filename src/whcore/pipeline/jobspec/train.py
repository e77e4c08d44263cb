"""The training job's spec: what one training job trains, validated with a JSON schema.

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

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import jsonschema

from ...core.methods import METHOD_INFO, PRECISIONS, configuration_schema
from ...core.settings import TrainConfig
from ...data.folds import FOLDS, SCHEMES
from ..canonical import param_tag
from .base import Fields, JobSpec, SpecError, optional, read_spec

__all__ = [
    "SPEC_SCHEMA",
    "DataSplit",
    "HeldOutFold",
    "TrainSpec",
    "load_spec",
    "training_defaults",
    "validate_spec",
]

# Settings of a TrainConfig that never change a result: passed beside the spec, never in it.
_RUNTIME = ("device", "log_every")


def training_defaults() -> dict:
    """The training settings a spec (and so a configuration) leaves out: TrainConfig's."""
    return {f.name: f.default for f in dataclasses.fields(TrainConfig) if f.name not in _RUNTIME}


@dataclasses.dataclass(frozen=True)
class HeldOutFold(Fields):
    """A held-out fold of ProteinGym's supervised protocol (``whcore.data.folds``): test is
    every row of fold ``fold`` under ``scheme`` (the table's folds, from its metadata),
    validation a seeded ``val_fraction`` of the other folds' rows, train the rest."""

    scheme: str
    fold: int
    val_fraction: float = 0.2

    def check(self, source: str) -> None:
        if self.scheme not in SCHEMES:
            raise SpecError(
                f"{source}: field data.folds.scheme: {self.scheme!r} is not one of {list(SCHEMES)}"
            )
        if not 0 <= self.fold < FOLDS:
            raise SpecError(f"{source}: field data.folds.fold: {self.fold} is not 0 to {FOLDS - 1}")
        if not 0 < self.val_fraction < 1:
            raise SpecError(
                f"{source}: field data.folds.val_fraction: {self.val_fraction} is not in (0, 1)"
            )


@dataclasses.dataclass(frozen=True)
class DataSplit(Fields):
    """The split a job trains and evaluates on (the same for networks and baselines): a
    subsample of ``train_size`` rows with validation and test by size, or a held-out fold of
    ProteinGym's protocol (``folds``), whose training rows are the other folds'."""

    path: str
    data_seed: int
    train_size: int | None = optional(None)
    source: str = "table"  # a g* file from `whcore synthetic` (synthetic) or a Parquet (table)
    val_size: int | str = "rest"  # a count, or rest
    test_size: int | str = 0
    standardize: bool = False
    folds: HeldOutFold | None = optional(None)

    def check(self, source: str) -> None:
        if (self.train_size is None) == (self.folds is None):
            raise SpecError(
                f"{source}: field data: give train_size (a subsample) or folds (a held-out "
                "fold), exactly one"
            )
        if self.folds is not None and self.source != "table":
            raise SpecError(f"{source}: field data.folds: needs source table, not {self.source}")

    def to_mapping(self) -> dict:
        """The split as the data layer reads it (``load_job_data``)."""
        return dataclasses.asdict(self)

    def identity(self, data) -> dict:
        """The columns naming this split in every record of a job on it (``data``: its
        ``whcore.core.training.Data``): train size and data seed, and for a held-out fold the
        scheme, the fold and the sizes its folds gave."""
        if self.folds is None:
            return {"train_size": self.train_size, "data_seed": self.data_seed}
        return {
            "scheme": self.folds.scheme,
            "fold": self.folds.fold,
            "train_size": len(data.y_train),
            "val_size": len(data.y_val),
            "test_size": len(data.y_test),
            "data_seed": self.data_seed,
        }


_SPLIT_DEFAULTS = {
    f.name: f.default for f in dataclasses.fields(DataSplit) if f.default is not dataclasses.MISSING
}
_SIZE = {"oneOf": [{"type": "integer", "minimum": 0}, {"const": "rest"}]}
_PARAMS = {"type": "object", "additionalProperties": {"type": ["number", "string"]}}
_SEED = {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}  # PyTorch's generator's range

_DEFAULTS = training_defaults()
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
            "required": ["source", "path", "data_seed"],
            "properties": {
                "source": {"enum": ["synthetic", "table"]},
                "path": {"type": "string"},
                "train_size": {"type": "integer", "minimum": 1},
                "val_size": {**_SIZE, "default": _SPLIT_DEFAULTS["val_size"]},
                "test_size": {**_SIZE, "default": _SPLIT_DEFAULTS["test_size"]},
                "data_seed": _SEED,
                "standardize": {"type": "boolean", "default": _SPLIT_DEFAULTS["standardize"]},
                "folds": {
                    "description": "a held-out fold of ProteinGym's protocol (instead of "
                    "train_size)",
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["scheme", "fold"],
                    "properties": {
                        "scheme": {"enum": list(SCHEMES)},
                        "fold": {"type": "integer", "minimum": 0, "maximum": FOLDS - 1},
                        "val_fraction": {
                            "type": "number",
                            "exclusiveMinimum": 0,
                            "exclusiveMaximum": 1,
                            "default": 0.2,
                        },
                    },
                },
            },
        },
        "training": {
            "type": "object",
            "additionalProperties": False,
            "required": ["seeds"],
            "properties": {
                "seeds": {"type": "array", "minItems": 1, "items": _SEED},
                "epochs": {"type": "integer", "minimum": 1, "default": _DEFAULTS["epochs"]},
                "batch_size": {"type": "integer", "minimum": 1, "default": _DEFAULTS["batch_size"]},
                "lr": {"type": "number", "exclusiveMinimum": 0, "default": _DEFAULTS["lr"]},
                "patience": {
                    "description": "epochs without a better validation loss before stopping; "
                    "null: no early stopping",
                    "type": ["integer", "null"],
                    "minimum": 1,
                    "default": _DEFAULTS["patience"],
                },
                "width": {"type": "number", "exclusiveMinimum": 0, "default": _DEFAULTS["width"]},
                "vectorize": {"type": "boolean", "default": _DEFAULTS["vectorize"]},
                "precision": {
                    "description": "fp32; opt-in tf32 (CUDA matrix products) or bf16 (autocast)",
                    "enum": list(PRECISIONS),
                    "default": _DEFAULTS["precision"],
                },
            },
        },
    },
}


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


def load_spec(path: str | Path) -> dict:
    """Read a YAML or JSON training spec file and validate it."""
    return validate_spec(read_spec(Path(path)), str(path))


@dataclasses.dataclass(frozen=True)
class TrainSpec(JobSpec):
    """A training job: one method's group of configurations on one split, every seed."""

    KIND = "train"
    SUBCOMMAND = "train"
    OUTPUTS = ("records",)
    OPTIONAL_OUTPUTS = ("spectra",)

    method: str
    grid: list
    data: DataSplit
    training: dict
    outputs: dict
    spectrum: bool = False
    labels: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, value: dict, source: str = "--spec", where: str = ""):
        """Validated against ``SPEC_SCHEMA`` first (defaults filled, a params shorthand as
        a grid of one)."""
        return super().from_dict(validate_spec(value, source), source, where)

    def check(self, source: str) -> None:
        super().check(source)
        if "spectra" in self.outputs and not self.spectrum:
            raise SpecError(f"{source}: outputs.spectra needs spectrum: true")

    def inputs(self) -> tuple[str, ...]:
        return (self.data.path,)

    def train_config(self, device: str, log_every: int) -> TrainConfig:
        settings: dict[str, Any] = {k: v for k, v in self.training.items() if k != "seeds"}
        return TrainConfig(**settings, device=device, log_every=log_every)
