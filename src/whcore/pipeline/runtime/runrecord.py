"""The configuration a run folder was made by: one run name never hides another run.

``results/<run>/configuration.json`` records the digest of the configuration that made the
run (its settings that change a result: every key but the runtime ones) and the files it came
from. An executing Snakemake of another configuration under the same ``run_name`` is refused at
start, naming both, unless it is asked to replace the run (``--config replace_run=True``); the
outputs no job of the new configuration writes stay where they are, never read into its tables
(the aggregations read the contract's inputs), and ``whcore stale CONFIG``, given the
configuration the run records, lists them (``--remove`` deletes those this project wrote). A
run folder that holds no file but its record (its run failed before any job wrote an output)
has nothing to protect: any configuration takes it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .canonical import canonical_json

__all__ = [
    "RECORD",
    "RUNTIME_KEYS",
    "RunConflictError",
    "claim_run",
    "config_digest",
    "recorded_maker",
    "run_conflict",
    "source_files",
    "source_label",
]

RECORD = "configuration.json"  # under results/<run>/
# Keys that never change a result (and the request to replace a run): no part of the digest.
# How the jobs run (stack_units: a cell's jobs as one) is one of them: each job's spec is the same.
RUNTIME_KEYS = (
    "log_every",
    "data_mirror",
    "device",
    "train_threads",
    "stack_units",
    "replace_run",
)
OVERRIDES = " and --config"  # a source's mark of settings given on the command line


def source_label(files: list[str], overrides: bool) -> str:
    """The ``source`` a run records: its configuration files, and whether --config added
    settings (``config/quick.yaml and --config``)."""
    return ", ".join(files) + (OVERRIDES if overrides else "")


def source_files(source: str) -> tuple[list[str], bool]:
    """The configuration files a recorded ``source`` names, and whether --config added settings
    (``source_label`` read back)."""
    return source.removesuffix(OVERRIDES).split(", "), source.endswith(OVERRIDES)


class RunConflictError(RuntimeError):
    """A run folder made by another configuration than this one."""


def config_digest(config: dict) -> str:
    settings = {k: v for k, v in config.items() if k not in RUNTIME_KEYS}
    return hashlib.sha256(canonical_json(settings).encode()).hexdigest()


def _record(root: str | Path) -> Path:
    return Path(root) / RECORD


def recorded_maker(root: str | Path) -> tuple[str, str] | None:
    """The digest and source of the configuration that made ``root`` (results/<run>), as its
    record says (``unreadable`` when it cannot be read), or None when it has no record."""
    path = _record(root)
    if not path.is_file():
        return None
    try:
        recorded = json.loads(path.read_text())
        return recorded["digest"], recorded["source"]
    except (OSError, ValueError, KeyError, TypeError):
        return "unreadable", f"unknown ({path} is unreadable)"


def _holds_outputs(root: str | Path) -> bool:
    """Whether ``root`` holds a file other than its record (an output of some job)."""
    record = _record(root)
    return any(path.is_file() and path != record for path in Path(root).rglob("*"))


def run_conflict(root: str | Path, config: dict, source: str) -> str | None:
    """None when ``root`` (results/<run>) is new, unrecorded, made by this configuration or
    holds nothing but its record; else the one line that says which configuration made it and
    how to go on."""
    maker = recorded_maker(root)
    if maker is None:
        return None
    digest, theirs = maker
    mine = config_digest(config)
    if digest == mine or not _holds_outputs(root):
        return None
    run = config["run_name"]
    return (
        f"{root}: made by another configuration ({theirs}, digest {digest[:12]}) than this one "
        f"({source}, digest {mine[:12]}); nothing was run. Fix: give this configuration a run of "
        f"its own (--config run_name={run}-2), or replace that run (--config replace_run=True)"
    )


def claim_run(root: str | Path, config: dict, source: str) -> None:
    """At the start of an executing run: raise ``RunConflictError`` if another configuration
    made ``root`` (unless ``replace_run``), else record this configuration as its maker."""
    from ...core.io import atomic_path

    conflict = run_conflict(root, config, source)
    if conflict and not config.get("replace_run"):
        raise RunConflictError(conflict)
    path = _record(root)
    maker = recorded_maker(root)
    if maker is None or maker[0] != config_digest(config):
        payload = {
            "digest": config_digest(config),
            "source": source,
            "run_name": config["run_name"],
        }
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
