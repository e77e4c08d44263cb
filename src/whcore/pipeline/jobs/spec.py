"""The typed job spec: the base of every job kind, read from and written as canonical JSON.

A spec holds exactly what determines one job's result, its outputs included: its fields, their
defaults and types are the dataclass's. ``from_dict`` checks a mapping field by field (a
missing, unknown or mistyped field is refused in one line naming it) and fills the defaults;
``to_dict`` gives the canonical mapping back (the spec Snakemake passes, and every output's
metadata records). A field declared with ``optional`` is written only when it differs from its
default, so a setting added to a kind leaves the specs that do not use it unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import types
import typing
from pathlib import Path
from typing import ClassVar

from ...data.folds import FOLDS, SCHEMES
from ..runtime.canonical import canonical, canonical_json
from ..runtime.marks import RECORDS
from ..runtime.yaml_files import read_yaml

__all__ = [
    "DEVICE_ENV",
    "DataSplit",
    "Fields",
    "HeldOutFold",
    "JobSpec",
    "SpecError",
    "device_options",
    "optional",
    "parse_spec",
    "read_spec",
    "set_up_device",
]

DEVICE_ENV = "WHCORE_DEVICE"


class SpecError(ValueError):
    """A spec that does not validate; the message names the source, the field and the fix."""


def optional(default):
    """A field written out only when it differs from ``default``."""
    return dataclasses.field(default=default, metadata={"optional": True})


def parse_spec(text: str | Path) -> tuple[str, object]:
    """(where it came from, what it holds) of a spec given as a JSON string or as the path of a
    YAML/JSON file; ``read_spec`` checks that it is a mapping."""
    if isinstance(text, str) and text.lstrip().startswith(("{", "[")):
        try:
            return "--spec", json.loads(text)
        except json.JSONDecodeError as err:
            raise SpecError(f"--spec: not valid JSON ({err})") from None
    return str(text), read_yaml(text, "spec file", SpecError)


def read_spec(text: str | Path) -> dict:
    """A spec given as a JSON string or as the path of a YAML/JSON file, as a mapping (its
    kind checks its fields)."""
    return _mapping(*parse_spec(text))


def _mapping(source: str, spec) -> dict:
    if not isinstance(spec, dict):
        raise SpecError(f"{source}: a spec must be a mapping of fields, got {type(spec).__name__}")
    return spec


_NAMES = {
    int: "an integer",
    float: "a number",
    str: "a string",
    bool: "true or false",
    dict: "a mapping",
    list: "a list",
    type(None): "null",
}


def _matches(value, hint) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arm) for arm in typing.get_args(hint))
    if origin is not None:
        hint = origin
    if hint is typing.Any:
        return True
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if dataclasses.is_dataclass(hint):
        return isinstance(value, dict)
    return isinstance(value, hint)


def _describe(hint) -> str:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_describe(arm) for arm in typing.get_args(hint))
    hint = typing.get_origin(hint) or hint
    return "a mapping" if dataclasses.is_dataclass(hint) else _NAMES.get(hint, hint.__name__)


def _nested(hint):
    """The dataclass a field holds (directly or as ``X | None``), or None."""
    arms = typing.get_args(hint) if typing.get_origin(hint) else (hint,)
    return next((arm for arm in arms if dataclasses.is_dataclass(arm)), None)


class Fields:
    """Typed fields from a mapping and back (the machinery of ``JobSpec`` and its parts)."""

    @classmethod
    def from_dict(cls, value: dict, source: str = "--spec", where: str = ""):
        if not isinstance(value, dict):
            raise SpecError(f"{source}: field {where or '(top level)'}: not a mapping")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        hints = typing.get_type_hints(cls)
        for key in value:
            if key not in fields:
                raise SpecError(
                    f"{source}: field {where + key}: unknown; {cls.__name__} has "
                    f"{', '.join(fields)}"
                )
        kwargs = {}
        for name, f in fields.items():
            key = where + name
            if name not in value:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise SpecError(f"{source}: field {key}: missing ({cls.__name__})")
                continue
            item, hint = value[name], hints[name]
            if not _matches(item, hint):
                raise SpecError(f"{source}: field {key}: {item!r:.60} is not {_describe(hint)}")
            if isinstance(item, float) and not math.isfinite(item):  # JSON's Infinity, NaN
                raise SpecError(f"{source}: field {key}: {item} is not a finite number")
            nested = _nested(hint)
            if nested is not None and isinstance(item, dict):
                item = nested.from_dict(item, source, f"{key}.")
            kwargs[name] = item
        spec = cls(**kwargs)
        spec.check(source)
        return spec

    def check(self, source: str) -> None:
        """Checks across fields (a kind overrides it); raise SpecError naming the field."""

    def to_dict(self) -> dict:
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("optional") and value == f.default:
                continue
            out[f.name] = value.to_dict() if isinstance(value, Fields) else value
        return canonical(out)


# --- the split a job trains and evaluates on (the same for networks and baselines) ----------------

SOURCES = ("synthetic", "table")  # a g* file from `whcore target`, or a binarized Parquet


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
    source: str = "table"  # a g* file from `whcore target` (synthetic) or a Parquet (table)
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
        if self.source not in SOURCES:
            raise SpecError(f"{source}: field data.source: {self.source!r} is not one of {SOURCES}")
        if self.train_size is not None and self.train_size < 1:
            raise SpecError(f"{source}: field data.train_size: {self.train_size} is not >= 1")
        for key in ("val_size", "test_size"):
            size = getattr(self, key)
            if size != "rest" and not (isinstance(size, int) and size >= 0):
                raise SpecError(f"{source}: field data.{key}: {size!r} is not a count or rest")
        if not 0 <= self.data_seed < 2**32:
            raise SpecError(
                f"{source}: field data.data_seed: {self.data_seed} is not 0 to 2^32 - 1"
            )
        if self.folds is not None and self.source != "table":
            raise SpecError(f"{source}: field data.folds: needs source table, not {self.source}")

    def identity(self, data) -> dict:
        """The columns naming this split in every record of a job on it (``data``: its
        ``whcore.core.arrays.Data``): train size and data seed, and for a held-out fold the
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


# --- the spec of a kind of job -------------------------------------------------------------------


class JobSpec(Fields):
    """A job's spec: a kind's fields and ``outputs`` ({role: path}), and what the kind is to the
    plan, the rules and the command line (its class attributes). A kind's module subclasses it
    with its fields, ``run`` and, where it takes more than its spec, ``add_arguments`` and
    ``command_inputs``."""

    KIND: ClassVar[str]  # the plan's name for the kind
    SUBCOMMAND: ClassVar[str]  # the `whcore` subcommand that runs it
    HELP: ClassVar[str]  # that subcommand's one-line help
    OUTPUTS: ClassVar[tuple[str, ...]]  # the output roles it must name
    OPTIONAL_OUTPUTS: ClassVar[tuple[str, ...]] = ()
    FIGURE: ClassVar[bool] = False  # its output is a stem, written as .pdf and .png
    FOLDERS: ClassVar[bool] = False  # its outputs are folders (one file per configuration)
    FINAL: ClassVar[bool] = False  # its outputs are what `all` builds
    DEVICE: ClassVar[bool] = False  # it runs on a device (--device, --threads for PyTorch)
    THREADS: ClassVar[bool] = False  # it takes a share of cores (--threads)
    TABLES: ClassVar[str] = ""  # it reads the tables the plan gives it: --tables' help

    def check(self, source: str) -> None:
        outputs = self.outputs  # type: ignore[attr-defined]
        missing = [role for role in self.OUTPUTS if role not in outputs]
        extra = [r for r in outputs if r not in self.OUTPUTS + self.OPTIONAL_OUTPUTS]
        if missing or extra or not all(isinstance(p, str) for p in outputs.values()):
            roles = ", ".join(self.OUTPUTS + self.OPTIONAL_OUTPUTS)
            raise SpecError(f"{source}: field outputs must name {roles} (paths)")

    def inputs(self) -> tuple[str, ...]:
        """The files the job reads that its spec names (the plan adds those it does not:
        the tables an aggregation, a figure or the claims read)."""
        return ()

    def written(self) -> list[str]:
        """Every path the job writes (a figure's stem as its PDF and PNG)."""
        outputs = self.outputs.values()  # type: ignore[attr-defined]
        if self.FIGURE:
            stems = [stem.removesuffix(".pdf").removesuffix(".png") for stem in outputs]
            return [f"{stem}{suffix}" for stem in stems for suffix in (".pdf", ".png")]
        return list(outputs)

    def output_kind(self) -> str | None:
        """The kind of output it writes (``runtime.marks.kind_of``): records folders where its
        outputs are folders, else the kind each output's suffix says (None)."""
        return RECORDS if self.FOLDERS else None

    def replaceable(self) -> list[str]:
        """The existing paths the job may replace (checked before it starts): what it writes."""
        return self.written()

    def command_inputs(self, inputs: tuple[str, ...], plan) -> dict[str, list[str]]:
        """The file options its subcommand takes beside the spec ({option: [paths]}), from the
        job's ``inputs`` (or ``plan``'s lookups): its tables where it reads some (``TABLES``),
        else none unless the kind says."""
        return {"--tables": list(inputs)} if self.TABLES else {}

    @classmethod
    def add_arguments(cls, parser) -> None:
        """The subcommand's options beside --spec (the files it reads that its spec does not
        name): --tables where it reads tables (``TABLES``), else none unless the kind says."""
        if cls.TABLES:
            tables_option(parser, cls.TABLES)

    def run(self, args, outputs) -> None:
        """Run the job (``args``: its subcommand's options; ``outputs``: the guarded writer,
        ``writer.Outputs``)."""
        raise NotImplementedError(f"job kind {self.KIND} has no run function")

    @classmethod
    def execute(cls, args) -> None:
        """A job started by its subcommand: its spec read and checked, its outputs checked
        (the guarded writer), its device set up where it has one, then ``run``."""
        from .writer import Outputs

        spec = cls.read(args.spec)
        outputs = Outputs(spec)
        if cls.DEVICE:
            set_up_device(args)
        spec.run(args, outputs)

    @classmethod
    def read(cls, text: str | Path):
        """The spec of ``--spec`` (a JSON string or a YAML/JSON file's path)."""
        source, spec = parse_spec(text)
        return cls.from_dict(_mapping(source, spec), source)

    def to_json(self) -> str:
        return canonical_json(self.to_dict())


def tables_option(parser, help: str) -> None:
    """--tables: the Parquet tables a job reads, beside its spec."""
    parser.add_argument("--tables", nargs="+", required=True, help=help)


def device_options(parser) -> None:
    """--device and --threads, for a kind that runs on a device."""
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CPU threads for PyTorch (the job's share of cores; 0: PyTorch's default)",
    )
    parser.add_argument(
        "--device",
        default=os.environ.get(DEVICE_ENV, "auto"),
        help=f"auto (CUDA when present; with several GPUs a free one), cpu, cuda or cuda:K "
        f"(default: ${DEVICE_ENV} or auto)",
    )


def set_up_device(args) -> None:
    """The job's threads and its device, chosen once (``args.device`` becomes the device's
    name, e.g. ``cuda:1`` for a GPU claimed among several)."""
    import torch

    from ..execution.gpus import choose_device

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    args.device = str(choose_device(args.device, log=lambda msg: print(msg, flush=True)))
