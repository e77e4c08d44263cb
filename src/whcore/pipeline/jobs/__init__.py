"""Every kind of job, one module each: its typed spec (fields, defaults, checks, inputs and
outputs, canonical JSON), its run function and its command-line inputs.

``KINDS`` is the one registry the plan (``whcore.pipeline.contract``), the command line and the
rules read. A new kind is a module here whose spec subclasses ``spec.JobSpec`` (``Spec`` names
it) and one line in ``MODULES``; ``register`` adds one at run time.
"""

from __future__ import annotations

import os
from importlib import import_module

from .spec import JobSpec, SpecError, read_spec

__all__ = ["DEVICE_ENV", "KINDS", "MODULES", "JobSpec", "SpecError", "add_job_commands",
           "read_spec", "register"]  # fmt: skip

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
    "download_user",
    "user_data",
    "epistasis",
    "epistasis_figure",
)
DEVICE_ENV = "WHCORE_DEVICE"

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


# --- the command line: one subcommand per kind ---------------------------------------------------


def _device_options(parser) -> None:
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


def _set_up_device(args) -> None:
    """The job's threads and its device, chosen once (``args.device`` becomes the device's
    name, e.g. ``cuda:1`` for a GPU claimed among several)."""
    import torch

    from ...core.devices import choose_device

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    args.device = str(choose_device(args.device, log=lambda msg: print(msg, flush=True)))


def _run(args) -> None:
    """A job subcommand: its spec read and checked, its outputs checked, its device set up,
    then its kind's run function."""
    from .writer import Outputs

    spec = args.kind.read(args.spec)
    outputs = Outputs(spec)
    if spec.DEVICE:
        _set_up_device(args)
    spec.run(args, outputs)


def add_job_commands(sub) -> None:
    """One subcommand per kind: --spec, the kind's own options, and --device / --threads
    where it runs on a device or takes a share of cores."""
    for kind in KINDS.values():
        parser = sub.add_parser(kind.SUBCOMMAND, help=kind.HELP)
        parser.add_argument(
            "--spec", required=True, help="the job's spec: JSON string or YAML/JSON file"
        )
        if kind.DEVICE:
            _device_options(parser)
        elif kind.THREADS:
            parser.add_argument(
                "--threads", type=int, default=1, help="CPU cores this job may use (1)"
            )
        kind.add_arguments(parser)
        parser.set_defaults(func=_run, kind=kind)
