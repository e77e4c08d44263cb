"""``whcore stale``: the files of a run folder that no job of its configuration writes, judged by
the configuration the run records; listed (a dry run), or removed with ``--remove`` where this
project wrote them, never a file it did not write."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..config.schema import add_schema_option
from . import contract_of

__all__ = ["add_stale_command", "stale_outputs"]

_MAX_KEPT = 8  # files no whcore job wrote named in the summary line; beyond, a count


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


def _cmd_stale(args) -> None:
    _report_stale(contract_of(args), args.config, args.remove)


def add_stale_command(sub) -> None:
    p = sub.add_parser(
        "stale",
        help="list (or remove) the files of a run folder that no job of its config writes",
        description="List the files of the config's run folder (results/<run_name>/) that no "
        "job of it writes: what an earlier configuration of the same run name left; no table "
        "reads them. The config must be the one the run records (configuration.json). A dry "
        "run unless --remove is given.",
    )
    p.add_argument("config", help="the run's config file (what `snakemake --configfile` took)")
    p.add_argument(
        "--remove",
        action="store_true",
        help="delete those files; files no whcore job wrote are listed, never deleted",
    )
    add_schema_option(p)
    p.set_defaults(func=_cmd_stale)
