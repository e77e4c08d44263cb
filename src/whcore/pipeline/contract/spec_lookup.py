"""``whcore spec``: the spec of the job of a config that writes an output, and its command
(for people: run one job of the workflow by hand)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..runtime.layout import Layout
from .schema import SCHEMA_PATH

__all__ = ["add_lookup_command", "stale_outputs"]


_MAX_SHOWN = 8  # input files written out in the suggested command; beyond, $(whcore spec --inputs)
_MAX_KEPT = 8  # files no whcore job wrote named in --stale's summary line; beyond, a count


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


def _repository(folder: str, names: list[str]) -> bool:
    """Whether ``folder`` is a repository's metadata or a repository's work tree (``.git``)."""
    return os.path.basename(folder) == ".git" or ".git" in names


def _run_files(root: str):
    """The files under ``root`` as (path, whether a remover may judge it): a repository's
    files (a ``.git`` folder, and everything in a repository nested in the run folder) are
    never entered, so never judged; a repository's files are listed as one entry, its folder."""
    for folder, dirs, files in os.walk(root):
        if folder != root and _repository(folder, dirs + files):
            dirs.clear()
            yield os.path.normpath(folder), False
            continue
        if ".git" in dirs:
            dirs.remove(".git")
            yield os.path.normpath(os.path.join(folder, ".git")), False
        for name in files:
            yield os.path.normpath(os.path.join(folder, name)), True


def _stale(layout, path: str) -> bool:
    """Whether ``path`` is the project's to remove: at one of the layout's paths and carrying
    the mark of the kind of output written there (a Snakemake timestamp in a records folder)."""
    from ..runtime.marks import SNAKEMAKE_TIMESTAMP, kind_of

    if os.path.islink(path) or not layout.writes(path):  # a link is no writer's output
        return False
    return os.path.basename(path) == SNAKEMAKE_TIMESTAMP or kind_of(Path(path)) is not None


def stale_outputs(contract) -> tuple[list[str], list[str]]:
    """The files under the run's folder (results/<run>/) that no job of the config writes, as
    (stale, foreign). Stale: those a job of this project wrote there (its path is one of the
    layout's and it carries the project's mark as data): what an earlier configuration of the
    same run name left (its records for methods this one no longer has, say). Foreign: all
    others (a user's notes, a crate saved under another name), never to be removed; a
    repository (``.git``, or one nested in the run folder) is one foreign entry, never entered.
    No table reads either: an aggregation reads the contract's inputs. The run's record, its
    crates (``whcore bundle``, ``--slim``) and its reports (``snakemake --report``) are the run's own."""
    from ..runtime.runrecord import RECORD

    outputs = contract.all_outputs()
    folders = {path for path, job in outputs.items() if job.kind == "train"}
    layout = contract.layout
    own = {os.path.join(layout.root, RECORD), layout.crate, layout.slim_crate, *layout.reports}
    stale, foreign = [], []
    for path, judged in _run_files(layout.root):
        if path in outputs or os.path.dirname(path) in folders or path in own:
            continue
        (stale if judged and _stale(layout, path) else foreign).append(path)
    return sorted(stale), sorted(foreign)


def _check_made_by(contract, config: str) -> None:
    """Refuse, in one line, to judge the files of a run folder by ``config`` unless the run
    records it as its maker: by another configuration, a run's own outputs would look stale."""
    from ..runtime.runrecord import RECORD, config_digest, recorded_maker

    root = contract.layout.root
    maker = recorded_maker(root)
    if maker is None:
        if os.path.isdir(root):
            raise ValueError(
                f"{root}/{RECORD}: no such file, so nothing says which configuration made {root}; "
                "nothing was listed or removed. Fix: rerun the workflow with the configuration "
                "that made it (which records it), or sort its files by hand"
            )
        return
    digest, theirs = maker
    mine = config_digest(contract.config)
    if digest != mine:
        raise ValueError(
            f"{root}: made by another configuration ({theirs}, digest {digest[:12]}) than "
            f"{config} (digest {mine[:12]}); nothing was listed or removed. Fix: pass the run's "
            "own configuration (its file, with any --config settings written into it)"
        )


def _remove(paths: list[str], root: str) -> list[str]:
    """Delete ``paths``, then the folders under ``root`` that held them and are left empty,
    deepest first; returns those folders. No other folder is touched: an empty folder that
    held none of them (a user's, or a repository's ``refs/heads``) is not this remover's."""
    emptied = set()
    for path in paths:
        Path(path).unlink(missing_ok=True)
        folder = os.path.dirname(path)
        while folder != root and Path(root) in Path(folder).parents:
            emptied.add(folder)
            folder = os.path.dirname(folder)
    removed = []
    for folder in sorted(emptied, key=lambda f: -f.count("/")):
        if not os.listdir(folder):
            os.rmdir(folder)
            removed.append(folder)
    return removed


def _report_stale(contract, config: str, remove: bool) -> None:
    """Print the stale files (deleted with ``remove``) and, on stderr, the count and the
    files of the run folder that no whcore job wrote, which are kept."""
    _check_made_by(contract, config)
    stale, foreign = stale_outputs(contract)
    for path in stale:
        print(path)
    root = contract.layout.root
    if remove:
        for folder in _remove(stale, root):
            print(f"{folder}/")
    verb = (
        "removed"
        if remove
        else "written by no job of this config (a dry run: --remove removes them)"
    )
    kept = ""
    if foreign:
        shown = ", ".join(foreign[:_MAX_KEPT]) + (", ..." if len(foreign) > _MAX_KEPT else "")
        kept = f"; {len(foreign)} file(s) no whcore job wrote are kept, never removed: {shown}"
    print(f"{len(stale)} file(s) under {root}/ {verb}{kept}", file=sys.stderr)


def _cmd_spec(args) -> None:
    from . import load_contract

    if not Path(args.schema).is_file():
        raise ValueError(
            f"--schema {args.schema}: no such file; pass the checkout's "
            "workflow/schemas/config.schema.yaml"
        )
    listing = args.list or args.stale
    if (args.output is None) != listing:
        raise ValueError(
            "give an output path, or --list for every output of the config (--stale: the files "
            "of its run folder that none writes)"
        )
    if args.remove and not args.stale:
        raise ValueError("--remove goes with --stale (it deletes the files --stale lists)")
    contract = load_contract(args.config, str(args.schema))
    if args.stale:
        _report_stale(contract, args.config, args.remove)
        return
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
    what.add_argument(
        "--stale",
        action="store_true",
        help="list the files of the config's run folder (results/<run_name>/) that no job of it "
        "writes: what an earlier configuration of the same run name left; no table reads them. "
        "The config must be the one the run records (configuration.json)",
    )
    p.add_argument(
        "--remove",
        action="store_true",
        help="with --stale: delete those files; files no whcore job wrote are listed, never deleted",
    )
    p.add_argument(
        "--schema",
        default=str(SCHEMA_PATH),
        help="the workflow's config schema (default: this checkout's)",
    )
    p.set_defaults(func=_cmd_spec)
