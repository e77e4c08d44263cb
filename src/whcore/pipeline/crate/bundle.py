"""A finished run as one citable bundle: a Workflow Run RO-Crate.

``bundle(results/<run>)`` writes ``results/<run>/<run>.crate.zip``: the run's tables, claims
(``claims.md``, ``claims.json``), figures, provenance and configuration, the plan (every job's
canonical spec, ``jobs.json``), the workflow's code, the software it ran with and the commit,
described by the Provenance Run Crate profile: the workflow run as a CreateAction, Snakemake's
as an OrganizeAction, each job as a CreateAction of its ``whcore`` subcommand with its spec as a
parameter, its inputs and outputs (start and end times from Snakemake's records where the run
folder keeps them), each linked to its step by a ControlAction. The crate is checked before it
is written (``crate.checks``); ``crate.render.render`` redraws its figures and claims from it
alone.

Paths inside the crate are those under ``results/<run>/``; the specs keep the run's own paths.
``bundle(..., slim=True)`` writes the slim crate instead (``crate.slim``: what it leaves out and
why), ``results/<run>/<run>.slim.crate.zip``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from importlib import metadata
from pathlib import Path

from ..config.schema import SCHEMA_PATH
from ..runtime.guards import check_replaceable
from ..runtime.layout import Layout
from ..runtime.marks import CRATE_NAME
from ..runtime.provenance import git_commit
from ..runtime.runrecord import RECORD, config_digest, source_files
from .actions import add_jobs, add_run, snakemake_times
from .checks import PROFILE, VERSION, check_crate, validate_crate
from .open import file_facts
from .slim import cut, describe_slim, reencode, slim_crate_path, slim_selection

__all__ = [
    "JOBS",
    "PROFILE",
    "bundle",
    "check_crate",
    "crate_path",
    "validate_crate",
]

PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": "Process Run Crate",
    "https://w3id.org/ro/wfrun/workflow/0.5": "Workflow Run Crate",
    "https://w3id.org/ro/wfrun/provenance/0.5": "Provenance Run Crate",
}

JOBS = "jobs.json"  # in the crate: every job of the plan (kind, spec, inputs, outputs)
CONFIG = "config.yaml"  # in the crate: the configuration file the run was made by
INSTALLED = "environment/installed.txt"  # the installed distributions, name==version
LOCK = "envs/linux-cpu.lock"  # the tested set of the checkout (a path of the checkout)
CHECKOUT = Path(__file__).resolve().parents[4]  # the checkout whose workflow made the run
# The main workflow (the catalog's place), the folders of its code, and the checkout's top-level
# Snakefile that includes it (the README's `--snakefile <checkout>/Snakefile`).
WORKFLOW_FILES = ("workflow/Snakefile", "workflow/rules", "workflow/schemas", "Snakefile")


def crate_path(root: str | Path) -> Path:
    """``results/<run>/<run>.crate.zip``."""
    root = Path(root)
    return root / f"{root.name}.crate.zip"


def _load(root: Path, configfile: str | None, schema: str):
    """The run's contract, from ``configfile`` or the configuration the run recorded, checked
    against the digest the run recorded."""
    from ..contract import load_contract

    record_path = root / RECORD
    if not record_path.is_file():
        raise ValueError(
            f"{record_path}: no such file; {root} is not a run folder (results/<run> of a run "
            "Snakemake made)"
        )
    record = json.loads(record_path.read_text())
    path = _config_path(record, record_path, configfile)
    contract = load_contract(str(path), schema)
    if contract.layout.root != f"{Layout.RESULTS}/{root.name}":
        raise ValueError(
            f"{path}: run_name {contract.config['run_name']!r} is not the run {root.name!r}"
        )
    if config_digest(contract.config) != record["digest"]:
        raise ValueError(_not_its_configuration(path, record, record_path))
    return contract, path


def _config_path(record: dict, record_path: Path, configfile: str | None) -> Path:
    """``configfile``, else the one configuration file the run records (a crate holds one)."""
    files, _ = source_files(record["source"])
    if configfile is None and len(files) > 1:
        raise ValueError(
            f"{record_path}: the run was made from several configuration files "
            f"({', '.join(files)}) and a crate holds one; merge them into one file and pass it "
            "with --configfile"
        )
    source = configfile or files[0]
    path = Path(source) if Path(source).is_absolute() else record_path.parents[2] / source
    if not path.is_file():
        raise ValueError(
            f"{record_path}: the run's configuration {source} is not there; pass it with "
            "--configfile"
        )
    return path


def _not_its_configuration(path: Path, record: dict, record_path: Path) -> str:
    """Why the configuration file ``path`` is not the run's: the run's own settings differ, or
    --config settings changed its results, which no configuration file records."""
    run = record_path.parent
    files, overrides = source_files(record["source"])
    if overrides:
        return (
            f"{record_path}: {run} was made from {', '.join(files)} with --config settings that "
            f"change its results ({path} gives another digest), and a crate holds a "
            "configuration file; write those settings into a copy of the file and pass it with "
            "--configfile"
        )
    return (
        f"{path}: not the configuration that made {run} (its digest differs from "
        f"{record_path}'s); pass the run's own with --configfile"
    )


def _installed() -> str:
    names = {
        f"{dist.metadata['Name']}=={dist.version}"
        for dist in metadata.distributions()
        if dist.metadata["Name"]
    }
    return "\n".join(sorted(names, key=str.lower)) + "\n"


def bundle(
    root: str | Path,
    configfile: str | None = None,
    schema: str | Path = SCHEMA_PATH,
    out: str | Path | None = None,
    validate: bool = True,
    slim: bool = False,
) -> Path:
    """Write the crate of the finished run ``root`` (results/<run>); returns its path. ``out``
    may replace only a crate of this project (``check_replaceable``). With ``slim``, the slim
    crate (``crate.slim``), by default ``results/<run>/<run>.slim.crate.zip``."""
    root = Path(root).resolve()
    default = slim_crate_path(root) if slim else crate_path(root)
    destination = Path(out).resolve() if out else default
    check_replaceable(
        destination, fix="name a new path ending in .crate.zip with --out", kind="crate"
    )
    contract, config_path = _load(root, configfile, str(schema))
    _check_finished(root, contract)
    with tempfile.TemporaryDirectory() as scratch:  # files made for the crate, until it is written
        crate = _describe(root, contract, config_path, Path(scratch), slim)
        _write_checked(crate, destination, validate)
    return destination


def _check_finished(root: Path, contract) -> None:
    workdir = root.parent.parent
    missing = [path for path in contract.targets() if not (workdir / path).is_file()]
    if missing:
        raise ValueError(
            f"{root}: the run is not finished ({len(missing)} output(s) missing, e.g. "
            f"{missing[0]}); finish it with snakemake first"
        )


def _describe(root: Path, contract, config_path: Path, scratch: Path, slim: bool = False):
    """The crate of the run ``root``: its files, the environment and every action; with
    ``slim``, less of its files (``crate.slim``)."""
    workdir, prefix = root.parent.parent, f"{contract.layout.root}/"
    targets = contract.targets()
    plan = _plan(contract)
    crate = _new_crate(root.name, config_path.name)
    workflow = _add_workflow(crate)
    config_file = add_file(
        crate,
        config_path,
        CONFIG,
        {"name": "configuration", "encodingFormat": "application/yaml"},
    )
    selection = slim_selection(plan, targets, workdir) if slim else None
    files = {}  # run path -> its entity
    for path in [*targets, f"{prefix}{RECORD}"]:
        member = path.removeprefix(prefix)
        if selection and path in selection.left_out:
            continue
        if selection and member.endswith(".parquet"):
            reads = selection.cut.get(path)
            files[path] = _add_reencoded(crate, workdir / path, member, root, scratch, reads)
        else:
            files[path] = add_file(crate, workdir / path, member, within=root)
    if selection:
        describe_slim(crate, selection, files, lambda path: _facts(workdir / path, root), prefix)
    _add_environment(crate, plan, scratch)
    times = snakemake_times(workdir)
    control = add_jobs(crate, workflow, plan, files, prefix, times)
    spans = [times[p] for entry in plan for p in entry["outputs"] if p in times]
    results = [files[path] for path in targets]
    add_run(crate, workflow, config_file, results, control, spans, root.name)
    return crate


def _new_crate(run: str, config_name: str):
    """An empty crate of the run ``run``, conforming to the Workflow Run Crate profiles."""
    from rocrate.model.contextentity import ContextEntity
    from rocrate.rocrate import ROCrate

    crate = ROCrate(version=VERSION)
    crate.name = CRATE_NAME.format(run=run)
    crate.description = (
        f"The run {run} of the HashWH reproduction (configuration {config_name}): "
        "its tables, claims, figures, every job's spec and what produced them."
    )
    crate.license = "https://spdx.org/licenses/MIT"
    crate.root_dataset["datePublished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for uri, name in PROFILES.items():
        profile = crate.add(
            ContextEntity(
                crate,
                uri,
                properties={"@type": "CreativeWork", "name": name, "version": uri[-3:]},
            )
        )
        crate.root_dataset.append_to("conformsTo", profile)
    return crate


def _add_workflow(crate):
    """workflow/Snakefile as the crate's main workflow (at this checkout's commit) and its code."""
    main, *folders, top_level = WORKFLOW_FILES
    workflow = crate.add_workflow(
        CHECKOUT / main,
        main,
        main=True,
        lang="snakemake",
        properties={
            # HowTo: it links to its steps
            "@type": ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"],
            "name": "whcore workflow",
            "version": git_commit(CHECKOUT),
            **_facts(CHECKOUT / main, CHECKOUT),
        },
    )
    for folder in folders:
        for file in sorted((CHECKOUT / folder).iterdir()):
            if file.is_file():
                add_file(crate, file, f"{folder}/{file.name}", within=CHECKOUT)
    add_file(crate, CHECKOUT / top_level, top_level, within=CHECKOUT)
    return workflow


def add_file(crate, source: Path, dest: str, properties=None, within: Path | None = None):
    """``source`` as the crate's File ``dest``, with its sha256 and size (``whcore render``
    checks every member against them). With ``within`` (the run folder, the checkout), a
    symbolic link at ``source`` or in the folders between ``within`` and it is refused: a crate
    holds the files of the run, not what a link in its folder points to."""
    return crate.add_file(source, dest, properties={**(properties or {}), **_facts(source, within)})


def _add_reencoded(crate, source: Path, member: str, root: Path, scratch: Path, reads=None):
    """The run's table ``source`` as the slim crate's File ``member``, re-encoded under
    ``scratch`` (``crate.slim.reencode``), or cut to ``reads`` where the claims state them
    (``crate.slim.cut``); its description names the run's file's sha256 and size."""
    run_file = _facts(source, root)
    target = scratch / "slim" / member
    target.parent.mkdir(parents=True, exist_ok=True)
    how = reencode(source, target) if reads is None else cut(source, target, reads)
    description = (
        f"{how}; the run's file: sha256 {run_file['sha256']}, {run_file['contentSize']} bytes"
    )
    return add_file(crate, target, member, {"description": description})


def _facts(source: Path, within: Path | None) -> dict:
    """``source``'s sha256 and size, links refused below ``within`` (see ``add_file``)."""
    source = Path(source)
    for path in [source, *source.parents] if within else []:
        if path == within or path in within.parents:
            break
        if path.is_symlink():
            raise ValueError(
                f"{path}: a symbolic link; a crate holds files, not what a link points to. "
                "Fix: replace the link by the file it points to, or remove it"
            )
    return file_facts(source)


def _plan(contract) -> list[dict]:
    """Every job of the run: its kind, subcommand, canonical spec, inputs and outputs."""
    from ..contract import SUBCOMMANDS

    return [
        {
            "id": job_id,
            "kind": job.kind,
            "subcommand": SUBCOMMANDS[job.kind],
            "spec": json.loads(job.spec_json),
            "inputs": list(job.inputs),
            "command_inputs": contract.command_inputs(job),
            "outputs": contract.written_by(job),
        }
        for job_id, job in sorted(contract.jobs.items())
    ]


def _add_environment(crate, plan: list[dict], scratch: Path) -> None:
    """The plan (``jobs.json``), the installed distributions and the lock; the files made here
    are written under ``scratch``, which must outlive the crate's writing."""
    (scratch / JOBS).write_text(json.dumps(plan, indent=1, sort_keys=True) + "\n")
    add_file(
        crate,
        scratch / JOBS,
        JOBS,
        {"name": "every job's canonical spec", "encodingFormat": "application/json"},
    )
    (scratch / "installed.txt").write_text(_installed())
    add_file(
        crate,
        scratch / "installed.txt",
        INSTALLED,
        {"name": "installed distributions (bundling environment)"},
    )
    if (CHECKOUT / LOCK).is_file():
        add_file(crate, CHECKOUT / LOCK, LOCK, {"name": "the tested set (lock)"}, CHECKOUT)


def _write_checked(crate, destination: Path, validate: bool) -> None:
    """Write ``crate`` to ``destination`` if it passes the checks (and roc-validator, with
    ``validate``). It is written beside its destination under its own name (the validator reads
    *.zip), checked, then renamed: a crate that fails a check never appears under the final
    name."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".bundle-", dir=destination.parent) as part:
        written = Path(part) / destination.name
        crate.write_zip(written)
        problems = check_crate(written)
        if validate and not problems:
            problems = validate_crate(written)
        if problems:
            raise RuntimeError(f"{destination}: not a valid crate: " + "; ".join(problems))
        os.replace(written, destination)
