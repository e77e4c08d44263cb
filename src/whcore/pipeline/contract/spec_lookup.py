"""``whcore spec``: the spec of the job of a config that writes an output, and its command
(for people: run one job of the workflow by hand)."""

from __future__ import annotations

import os
import sys

from ..config.schema import add_schema_option
from ..runtime.layout import Layout
from . import contract_of

__all__ = ["add_lookup_command"]


_MAX_SHOWN = 8  # input files written out in the suggested command; beyond, $(whcore spec --inputs)


def _relative(path: str) -> str:
    """``path`` as the workflow names it: relative to the working directory when inside it."""
    path = os.path.normpath(path)
    if os.path.isabs(path):
        relative = os.path.relpath(path)
        return path if relative.startswith("..") else relative
    return path


def _not_an_output(contract, path: str, args) -> ValueError:
    """One line: why ``path`` names no job of the config, what is near, how to list them."""
    import difflib

    root = contract.layout.root
    listing = f"`whcore spec {args.config} --list` lists all {len(contract.all_outputs())}"
    if Layout.is_resource(path):
        return ValueError(
            f"{path}: data files come from `whcore download` / `whcore binarize` (no spec: "
            f"they take the dataset's name, e.g. {Layout.data('gb1')}); {listing}"
        )
    if contract.layout.is_other_run(path):
        why = f"this config's outputs are under {root}/ (run_name: {contract.layout.run})"
    else:
        why = f"no job of {args.config} writes it"
    near = difflib.get_close_matches(path, contract.all_outputs(), n=3, cutoff=0.6)
    nearest = f"; nearest: {', '.join(near)}" if near else ""
    return ValueError(f"{path}: {why}{nearest}; {listing}")


def _command_line(args, subcommand: str, inputs: dict[str, list[str]]) -> str:
    """The command that runs the job: this spec and its input files (written out when few,
    else as ``$(whcore spec --inputs ...)``)."""
    import shlex

    this = f"{shlex.quote(args.config)} {shlex.quote(args.output)}"
    words = ["whcore", subcommand, "--spec", f'"$(whcore spec {this})"']
    if sum(len(paths) for paths in inputs.values()) > _MAX_SHOWN:
        words.append(f"$(whcore spec --inputs {this})")
    elif inputs:
        words.append(" ".join(shlex.join([option, *paths]) for option, paths in inputs.items()))
    return " ".join(words)


def _cmd_spec(args) -> None:
    if (args.output is None) != args.list:
        raise ValueError(
            "give an output path, or --list for every output of the config (the files of its "
            "run folder that none writes: whcore stale)"
        )
    contract = contract_of(args)
    if args.list:
        for path, job in sorted(contract.all_outputs().items()):
            print(f"{job.spec.SUBCOMMAND:<16} {path}")
        return
    path = _relative(args.output)
    job = contract.job_writing(path)
    if job is None:
        raise _not_an_output(contract, path, args)
    subcommand, inputs = job.spec.SUBCOMMAND, contract.command_inputs(job)
    if args.kind:
        print(subcommand)
    elif args.inputs:
        import shlex

        print(" ".join(shlex.join([option, *paths]) for option, paths in inputs.items()))
    else:
        print(job.spec_json)
        print(f"run it: {_command_line(args, subcommand, inputs)}", file=sys.stderr)


def add_lookup_command(sub) -> None:
    p = sub.add_parser(
        "spec",
        help="print the spec of the job writing an output of a config (for whcore <kind> --spec)",
        description="Print, as JSON, the spec of the job of a workflow config that writes an "
        "output (exactly what Snakemake passes it), and on stderr the command that runs that "
        "job. Paths are as under the workflow's working directory.",
    )
    p.add_argument("config", help="the config file (what `snakemake --configfile` takes)")
    p.add_argument(
        "output",
        nargs="?",
        help="any output of a job: a training records folder or a file in it, a table, a "
        "figure's PDF or PNG, claims.md, ...",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--kind", action="store_true", help="print only the subcommand that takes the spec"
    )
    what.add_argument(
        "--inputs",
        action="store_true",
        help="print only the input-file options the subcommand takes beside the spec",
    )
    what.add_argument(
        "--list", action="store_true", help="list every output of the config with its subcommand"
    )
    add_schema_option(p)
    p.set_defaults(func=_cmd_spec)
