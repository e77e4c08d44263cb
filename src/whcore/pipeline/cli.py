"""The ``whcore`` command line: one subcommand per pipeline step (what Snakemake rules call).

The job subcommands (``jobs``: one per kind) take their job's spec; ``whcore spec``
(``contract.spec_lookup``) prints the spec of any job of a config, ``whcore stale``
(``contract.stale``) lists or removes what no job of a run's config writes; the data commands
below take a dataset's name.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import __version__
from ..data import datasets
from .contract.spec_lookup import add_lookup_command
from .contract.stale import add_stale_command
from .execution.environment import check_environment
from .jobs import add_job_commands
from .runtime.guards import check_replaceable
from .runtime.layout import Layout
from .runtime.processes import die_with, parent_from_environment

__all__ = ["build_parser", "main"]


# --- the data commands (for people: the rules call them with wildcards only) --------------------


def _cmd_download(args) -> None:
    from ..data.download import mirror_warning

    warning = mirror_warning(args.mirror)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    path = datasets.download(
        args.dataset, args.out, args.mirror, retries=args.retries, timeout=args.timeout
    )
    print(f"{path}: ok (sha256 {datasets.get(args.dataset).sha256})")


def _cmd_binarize(args) -> None:
    check_replaceable(args.out, kind=f"data:{args.dataset}")
    frame = datasets.binarize(args.dataset, args.raw, args.out, verify=not args.no_verify)
    print(f"wrote {args.out}: {len(frame)} rows x {frame.shape[1] - 1} features")


def _cmd_describe(args) -> None:
    print(datasets.describe(args.dataset, args.data))


def _add_data_commands(sub) -> None:
    p = sub.add_parser("download", help="fetch a raw dataset file (mirror, then pinned URLs)")
    p.add_argument("dataset", choices=tuple(datasets.REGISTRY), help="which dataset")
    p.add_argument(
        "--out",
        required=True,
        help="where the raw file goes, e.g. "
        + Layout.RAW.format(dataset="<dataset>", filename="<file>"),
    )
    p.add_argument("--mirror", help="mirror folder (default: $WHCORE_DATA_MIRROR; '' for none)")
    p.add_argument("--retries", type=int, default=3, help="attempts per URL (default 3)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per attempt (default 60)")
    p.set_defaults(func=_cmd_download)

    p = sub.add_parser("binarize", help="raw file -> binary design matrix Parquet")
    p.add_argument("dataset", choices=tuple(datasets.REGISTRY), help="which dataset")
    p.add_argument("--raw", required=True, help="the raw file from `whcore download`")
    p.add_argument("--out", required=True, help=f"e.g. {Layout.data('<dataset>')}")
    p.add_argument(
        "--no-verify",
        action="store_true",
        help="skip the sha256 and shape checks (for deliberately modified files)",
    )
    p.set_defaults(func=_cmd_binarize)

    p = sub.add_parser("describe", help="shape, feature names, target summary and source")
    p.add_argument("dataset", choices=tuple(datasets.REGISTRY), help="which dataset")
    p.add_argument("--data", required=True, help="the binarized Parquet")
    p.set_defaults(func=_cmd_describe)


# --- the run's bundle (a Workflow Run RO-Crate) and what it redraws ------------------------------


def _cmd_bundle(args) -> None:
    from .crate.bundle import bundle

    path = bundle(
        args.run,
        args.configfile,
        args.schema,
        args.out,
        validate=not args.no_validate,
        slim=args.slim,
    )
    print(f"wrote {path}: {path.stat().st_size / 1e6:.1f} MB")


TEX_IN_OUT = "<out>/claims.tex"  # what a bare `render --tex` writes
MACROS_FIX = "write the macros to a file of their own (claims.tex)"


def _cmd_render(args) -> None:
    from .crate.render import render, rendered_folder

    out = Path(args.out) if args.out else rendered_folder(args.crate)
    tex = out / "claims.tex" if args.tex == TEX_IN_OUT else args.tex
    if tex:  # refused before the rendering, not after (write_macros checks it again)
        check_replaceable(tex, fix=MACROS_FIX, kind="macros")
    bound = {"seconds": args.max_seconds} if args.max_seconds else {}  # else render's own
    # A figure a slim crate keeps as PDF is copied, not redrawn: render says so (notice).
    written = render(args.crate, out, log=lambda msg: None, notice=print, **bound)
    print(f"wrote {len(written)} file(s) under {out}")
    if tex:  # from the claims just rendered: nothing is drawn twice
        _write_macros(out / "claims.json", tex)


def _write_macros(claims_json: str | Path, tex: str | Path) -> None:
    from .claims.macros import write_macros

    print(f"wrote {write_macros(claims_json, tex)}")


def _cmd_macros(args) -> None:
    import tempfile
    import zipfile

    if not zipfile.is_zipfile(args.claims):
        _write_macros(args.claims, args.tex)
        return
    from .crate.open import open_crate

    # A crate is read, not rendered: its claims.json, checked against the crate's sha256.
    check_replaceable(args.tex, fix=MACROS_FIX, kind="macros")
    with tempfile.TemporaryDirectory() as tmp:
        _write_macros(open_crate(args.claims, tmp).member("claims.json"), args.tex)


def _add_bundle_commands(sub) -> None:
    from .config.schema import add_schema_option

    p = sub.add_parser(
        "bundle",
        help="a finished run as one Workflow Run RO-Crate (results/<run>/<run>.crate.zip)",
    )
    p.add_argument("run", help="the run folder, results/<run>")
    p.add_argument(
        "--configfile",
        help="the configuration that made the run (default: the one its configuration.json names)",
    )
    add_schema_option(p)
    p.add_argument(
        "--out",
        help="where the crate goes (default: results/<run>/<run>.crate.zip, with --slim "
        "results/<run>/<run>.slim.crate.zip)",
    )
    p.add_argument(
        "--slim",
        action="store_true",
        help="a small crate rendering the same claims: every table a claim reads, the PDF of "
        "the figures whose per-epoch tables it leaves out; render redraws the other figures",
    )
    p.add_argument(
        "--no-validate",
        action="store_true",
        help="skip roc-validator (the crate's own checks stay)",
    )
    p.set_defaults(func=_cmd_bundle)

    p = sub.add_parser(
        "render", help="redraw every figure and the claims report from a run's crate alone"
    )
    p.add_argument("crate", help="a crate from `whcore bundle` (<run>.crate.zip)")
    p.add_argument(
        "--out", help="the folder to write into (default: <run>-rendered beside the crate)"
    )
    p.add_argument(
        "--tex",
        nargs="?",
        const=TEX_IN_OUT,
        help=f"also write the claims' TeX macros (as `macros`) to this file (alone: {TEX_IN_OUT})",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        help="stop a render that takes longer (default 600: a crate may be crafted to be slow)",
    )
    p.set_defaults(func=_cmd_render)

    p = sub.add_parser(
        "macros", help="a run's claims as TeX macros (\\claim<Id><Field>) for a manuscript"
    )
    p.add_argument(
        "claims",
        help="a claims.json (results/<run>/, a render's, docs/faithful/) or a run's crate "
        "(<run>.crate.zip: its claims.json, checked, nothing rendered)",
    )
    p.add_argument("tex", help="the .tex file to write, e.g. claims.tex")
    p.set_defaults(func=_cmd_macros)


# --- the design planner -------------------------------------------------------------------------


def _run_config(run: Path, configfile: str | None) -> tuple[dict, str]:
    """The configuration that made ``run`` (results/<run>), as its record names it (its files
    merged in order, as Snakemake merges them) or as ``configfile`` gives it: (the settings,
    the files as a Snakemake argument)."""
    from .claims.plan import merged
    from .runtime.runrecord import recorded_maker, source_files
    from .runtime.yaml_files import read_yaml

    files = [configfile] if configfile else []
    if configfile is None:
        made = recorded_maker(run)
        files, overrides = source_files(made[1]) if made else ([], False)
        if not made or overrides or made[0] == "unreadable":
            raise ValueError(
                f"{run / 'configuration.json'}: names no configuration file that holds every "
                f"setting ({made[1] if made else 'no record'}); give it with --configfile"
            )
    config: dict = {}
    for file in files:
        config = merged(config, read_yaml(file, "config file"))
    return config, " ".join(files)


def _plan_costs(args, run: Path, units: dict[str, int]) -> tuple[dict[str, float], float]:
    """Seconds per unit of each experiment and the fixed seconds: from ``--costs`` (a YAML of
    ``per_unit: {experiment: seconds}`` and ``fixed: seconds``) or measured from the run."""
    from .claims.costs import unit_costs
    from .experiments import cost_rules
    from .runtime.yaml_files import read_yaml

    if not args.costs:
        return unit_costs(run.parent.parent, run.name, units, cost_rules())
    table = read_yaml(args.costs, "costs file")
    try:
        per_unit = {str(e): float(v) for e, v in table["per_unit"].items()}
        return per_unit, float(table.get("fixed", 0.0))
    except (KeyError, TypeError, AttributeError, ValueError) as err:
        raise ValueError(
            f"{args.costs}: field per_unit (or fixed) unreadable ({err}); write "
            "'per_unit: {spectrum: 120.0}' (seconds per unit) and 'fixed: 600' (seconds)"
        ) from None


def _cmd_plan(args) -> None:
    import copy

    import yaml

    from .claims import plan
    from .config.schema import SCHEMA_PATH
    from .config.validation import load_config
    from .experiments import unit_keys

    run = Path(args.run)
    models = plan.read_models(Path(args.claims) if args.claims else run / "claims.json")
    raw, configfile = _run_config(run, args.configfile)
    config = load_config(copy.deepcopy(raw), str(SCHEMA_PATH))
    units = plan.run_units(config, models, unit_keys())
    cost = _plan_costs(args, run, units)
    gpu = args.gpu_hours is not None
    hours, option = (args.gpu_hours, "--gpu-hours") if gpu else (args.cpu_hours, "--cpu-hours")
    planned = plan.plan(models, units, cost, hours * 3600, args.draws, option)
    layer = plan.overlay(planned, config["run_name"], unit_keys())
    load_config(plan.merged(raw, layer), str(SCHEMA_PATH))  # the overlay must make a valid config
    # One --configfile with both files: a second --configfile would replace the first.
    command = f"snakemake --configfile {configfile} {args.out}"
    Path(args.out).write_text(f"# whcore plan of {run}: {command}\n" + yaml.safe_dump(layer))
    label = "GPU-hours" if gpu else "core-hours"
    for line in plan.plan_lines(models, units, planned, cost, args.cores, args.draws, label):
        print(line)
    print(f"wrote {args.out}: {command}")


def _add_plan_command(sub) -> None:
    p = sub.add_parser(
        "plan",
        help="units per experiment that decide the most claims within a budget (a config overlay)",
    )
    p.add_argument("run", help="a finished run folder, results/<run> (its claims.json, its jobs)")
    p.add_argument("--claims", help="the claims.json to plan from (default: <run>/claims.json)")
    p.add_argument(
        "--configfile", help="the configuration that made the run (default: the one it records)"
    )
    p.add_argument(
        "--costs",
        help="seconds per unit instead of those measured from the run's jobs (YAML: "
        "per_unit: {experiment: seconds}, fixed: seconds)",
    )
    budget = p.add_mutually_exclusive_group(required=True)
    budget.add_argument("--cpu-hours", type=float, help="core-hours for the whole planned run")
    budget.add_argument(
        "--gpu-hours",
        type=float,
        help="hours of one GPU for the whole planned run (costs measured on one)",
    )
    p.add_argument("--cores", type=int, default=1, help="cores the run gets (for its wall time)")
    p.add_argument("--out", default="plan.yaml", help="the overlay to write (default plan.yaml)")
    p.add_argument("--draws", type=int, default=2000, help="simulated runs per design")
    p.set_defaults(func=_cmd_plan)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="whcore", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"whcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (
        add_job_commands,
        _add_data_commands,
        add_lookup_command,
        add_stale_command,
        _add_bundle_commands,
        _add_plan_command,
    ):
        add(sub)
    return parser


def _printable(text: str) -> str:
    """``text`` with its control characters escaped (``\\x1b``): a message names files and
    crate members that anyone may have named, and a terminal would obey their escape codes.
    Its line breaks stay (a failed download lists every place it tried, a line each), each
    following line indented, so that no name can begin a line that reads as a message of its
    own."""
    escaped = "".join(
        f"\\x{ord(char):02x}"
        if (ord(char) < 32 and char != "\n") or 127 <= ord(char) < 160
        else char
        for char in text
    )
    return escaped.replace("\n", "\n  ")


def main(argv=None) -> int:
    try:  # before the parser, whose defaults read the environment
        check_environment()
    except ValueError as err:
        print(f"whcore: error: {_printable(str(err))}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    # A job whose Snakemake is killed stops with it, whatever its kind: an orphan would write
    # its result later, over one that a newer run wrote meanwhile.
    die_with(parent_from_environment(), log=lambda msg: print(msg, flush=True))
    try:
        args.func(args)
    except BrokenPipeError:  # `whcore spec CONFIG --list | head`: the reader stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ValueError, OSError, RuntimeError) as err:
        print(f"whcore {args.command}: error: {_printable(str(err))}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
