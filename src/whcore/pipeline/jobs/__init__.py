"""Every kind of job, one module each: its typed spec (fields, defaults, checks, inputs and
outputs, canonical JSON), its run function and its command-line inputs.

``KINDS`` is the one registry the plan (``whcore.pipeline.contract``), the command line and the
rules read. A new kind is a module here whose spec subclasses ``spec.JobSpec`` (``Spec`` names
it) and one line in ``MODULES``; ``register`` adds one at run time.
"""

from __future__ import annotations

from importlib import import_module

from .spec import DEVICE_ENV, JobSpec, SpecError, device_options, read_spec

__all__ = [
    "DEVICE_ENV",
    "KINDS",
    "MODULES",
    "JobSpec",
    "SpecError",
    "add_job_commands",
    "read_spec",
    "register",
]

# The modules of the kinds, in the order the command line lists their subcommands.
MODULES = (
    "target",
    "train",
    "baselines",
    "ablation",
    "entacmaea_energy",
    "aggregate",
    "figure",
    "claims",
    "download_own",
    "binarize_own",
    "leaderboard",
    "epistasis",
    "epistasis_figure",
)

KINDS: dict[str, type[JobSpec]] = {}


def register(spec: type[JobSpec]) -> type[JobSpec]:
    """Add a kind of job to ``KINDS`` (its ``KIND`` and ``SUBCOMMAND`` must be new)."""
    for other in KINDS.values():
        if spec.KIND == other.KIND or spec.SUBCOMMAND == other.SUBCOMMAND:
            raise ValueError(
                f"job kind {spec.__name__}: kind {spec.KIND!r} or subcommand "
                f"{spec.SUBCOMMAND!r} is taken by {other.__name__}"
            )
    KINDS[spec.KIND] = spec
    return spec


for _name in MODULES:
    register(import_module(f"{__name__}.{_name}").Spec)


def add_job_commands(sub) -> None:
    """One subcommand per kind: --spec, the kind's own options, and --device / --threads
    where it runs on a device or takes a share of cores."""
    for kind in KINDS.values():
        parser = sub.add_parser(kind.SUBCOMMAND, help=kind.HELP)
        parser.add_argument(
            "--spec", required=True, help="the job's spec: JSON string or YAML/JSON file"
        )
        if kind.DEVICE:
            device_options(parser)
        elif kind.THREADS:
            parser.add_argument(
                "--threads", type=int, default=1, help="CPU cores this job may use (1)"
            )
        kind.add_arguments(parser)
        parser.set_defaults(func=kind.execute)
