"""The Snakefile's side of the contract: everything the workflow's rules take from the package.

``workflow/rules/common.smk`` calls ``start`` once and keeps the names its rules need: the
contract (every job's spec and inputs), the layout (every path), the conda environment file,
the wildcard constraints, the input functions of the aggregations and the hooks Snakemake runs
at start and on error. The logic lives here so that it is unit-tested
(``tests/pipeline/test_snakefile.py``); Snakemake's objects (``workflow``, ``rules``,
``ancient``) are passed in, never imported.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..core.methods import METHOD_INFO
from ..data.datasets import REGISTRY
from ..data.download import mirror_warning, missing_raw_lines
from .analyses.families import BASELINES
from .config import ConfigError
from .contract import Contract, load_contract
from .execution import slurm
from .execution.deploy import conda_env_file
from .execution.environment import EnvironmentValueError, check_environment, job_environment
from .experiments import EXPERIMENTS, ROLES, aggregated
from .experiments.datasets import leaderboard_datasets, own_datasets, proteingym_datasets
from .figures.registry import FIGURES
from .runtime.layout import Layout
from .runtime.runrecord import run_conflict, source_label

__all__ = [
    "AGGREGATE_SHELL",
    "StartError",
    "Wildcards",
    "WorkflowStart",
    "aggregate_inputs",
    "aggregate_log",
    "aggregate_outputs",
    "aggregations",
    "alternatives",
    "command_line_targets",
    "config_source",
    "describe_rule",
    "figure_summary",
    "minutes_per_attempt",
    "raw_file",
    "refuse_jobs_no_node_holds",
    "report_missing_raw_files",
    "settle_slurm_orphans",
    "start",
    "unknown_targets",
]

# `whcore aggregate` with one option per input role (an empty role passes no file). One command
# for every experiment: Snakemake evaluates a rule's shell command again when the job runs, when
# a loop variable no longer names the rule's experiment.
AGGREGATE_SHELL = (
    "whcore aggregate --spec {params.spec:q} "
    + " ".join(f"--{role} {{input.{role}:q}}" for role in ROLES)
    + " > {log:q} 2>&1"
)


class StartError(Exception):
    """A run refused at start; the message is the one line the user sees (with its fix)."""


def config_source(config_files, overridden: bool, default: str) -> str:
    """The config files of this run for its record and error messages (the default one where
    none was given; ``overridden``: --config replaced some values). A file inside the working
    directory is named relative to it (``config/quick.yaml``, as typed: Snakemake gives it
    absolute, and a published crate would carry its maker's home folder); one outside stays
    absolute, so that a run folder copied elsewhere still finds it (``whcore bundle`` resolves a
    relative one against the run's working directory)."""
    return source_label([_named(path) for path in config_files or [default]], overridden)


def _named(path) -> str:
    try:
        relative = os.path.relpath(path) if os.path.isabs(path) else str(path)
    except ValueError:  # another drive (Windows): no relative path exists
        return str(path)
    return str(path) if relative.split(os.sep)[0] == os.pardir else relative


def alternatives(names) -> str:
    """A wildcard constraint matching exactly ``names`` (none: a pattern matching nothing)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


@dataclass(frozen=True)
class Wildcards:
    """The rules' wildcard constraints, each matching exactly the names its rules serve: the
    registry's datasets and raw files, the methods and baseline families, and the datasets of
    the user's own rules (disjoint from the registry's)."""

    methods: str
    families: str
    datasets: str  # the registry's
    raw_files: str
    own_datasets: str  # given by file or url (their binarization)
    own_downloads: str  # given by url
    epistasis_datasets: str  # whose learned epistasis is analysed
    leaderboard_datasets: str  # scored by ProteinGym's leaderboard mode
    proteingym_datasets: str  # under ProteinGym's supervised protocol
    schemes: str  # the protocol's split schemes
    trained_alone: str  # whose training jobs run one each, not in a cell (stack_units)

    @classmethod
    def of(cls, config: dict, contract: Contract) -> Wildcards:
        real = config["real"]["enabled"]
        protocol = proteingym_datasets(config)
        return cls(
            methods=alternatives(METHOD_INFO),
            families=alternatives(BASELINES),
            datasets=alternatives(REGISTRY),
            raw_files=alternatives(info.file for info in REGISTRY.values()),
            own_datasets=alternatives(own_datasets(config) if real else []),
            own_downloads=alternatives(
                job.labels["dataset"] for job in contract.jobs_of("download_own")
            ),
            epistasis_datasets=alternatives(
                job.labels["dataset"] for job in contract.jobs_of("epistasis_figure")
            ),
            leaderboard_datasets=alternatives(leaderboard_datasets(config)),
            proteingym_datasets=alternatives(protocol),
            schemes=alternatives(sorted({s for schemes in protocol.values() for s in schemes})),
            trained_alone=alternatives(contract.trained_alone()),
        )


@dataclass(frozen=True)
class WorkflowStart:
    """What the rules need of one run: its contract and layout, the conda environment file of
    ``--sdm conda``, the wildcard constraints and the GPU request of a training job."""

    contract: Contract
    env: str
    wildcards: Wildcards
    gpu: int

    @property
    def layout(self) -> Layout:
        return self.contract.layout


def start(config: dict, workflow_dir, checkout, source: str, warn=None) -> WorkflowStart:
    """Validate the config and plan the run; set the environment the jobs inherit; warn (on
    stderr, or by ``warn``) of a data mirror that is not one and of a run of another
    configuration in the run's folder. A bad config or WHCORE_* value raises ``StartError``
    with the one line to show (no traceback)."""
    warn = warn or (lambda line: print(line, file=sys.stderr))
    # `--sdm conda`: every job's environment installs this checkout (envs/whcore.yaml, rendered
    # with the checkout's absolute path, since Snakemake copies the file before creating it).
    env = conda_env_file(checkout)
    try:
        contract = load_contract(
            config, os.path.join(workflow_dir, "schemas", "config.schema.yaml")
        )
        # A bad WHCORE_* value is refused here, before the config's settings replace the
        # caller's (the jobs take device and log_every from the config).
        check_environment()
        # Settings that never change a result reach the jobs through the environment, never as
        # rule params (a param change would replan every job downstream).
        os.environ.update(job_environment(config, os.getpid()))
    except ConfigError as err:
        raise StartError(f"Error in {source}: {err}") from None
    except EnvironmentValueError as err:
        raise StartError(f"Error: {err}") from None
    if warning := mirror_warning(config["data_mirror"] or None, "config key data_mirror"):
        warn(warning)
    # One run name never hides another run: an executing run of another configuration than
    # the one that made results/<run>/ is refused at start (onstart), a dry run warned.
    conflict = run_conflict(contract.layout.root, config, source)
    if conflict and not config["replace_run"]:
        warn(f"warning: {conflict}")
    gpu = 1 if config["device"] == "cuda" else 0
    return WorkflowStart(contract, env, Wildcards.of(config, contract), gpu)


def raw_file(wildcards) -> str:
    """An input function: the raw file of the registry dataset of ``wildcards.dataset``."""
    return Layout.RAW.format(dataset=wildcards.dataset, filename=REGISTRY[wildcards.dataset].file)


def minutes_per_attempt(minutes: int):
    """A runtime request (SLURM's time limit) that grows with each retry: a job stopped at its
    time limit asks for twice the time on its second attempt, three times on its third."""
    return lambda wildcards, attempt: minutes * attempt


def aggregate_inputs(contract: Contract, experiment: str, ancient):
    """An input function: an aggregation's inputs by role (every role of `whcore aggregate`,
    empty where the experiment has none), and the logs of its training jobs (the protocol's:
    those of the dataset of its wildcard). Snakemake forgives an input newer than the outputs
    whose checksum is the one recorded when the job ran, but it cannot checksum a folder: the
    training folders are ``ancient`` (Snakemake's marker, passed in: new timestamps, as in a
    copy of the run folder, never replan the aggregation) and each training job's log, a small
    file rewritten whenever the job runs, carries the dependency instead."""

    def inputs_of(wildcards):
        inputs = contract.aggregate_inputs(experiment, wildcards.get("dataset"))
        by_role = {role: inputs.get(role, []) for role in ROLES}
        for role in ("runs", "spectra"):
            by_role[role] = ancient(by_role[role])
        logs = [contract.layout.log(path) for path in inputs["runs"]]
        return {**by_role, "training_logs": logs}

    return inputs_of


def aggregate_outputs(layout: Layout, experiment: str) -> list[str]:
    """The tables of an experiment's aggregation (of one table per dataset: a pattern of
    ``{dataset}``)."""
    entry = EXPERIMENTS[experiment]
    suffix = "_{dataset}" if entry.per_dataset else ""
    return [layout.table_path(f"{name}{suffix}") for name in entry.tables]


def aggregate_log(layout: Layout, experiment: str) -> str:
    per_dataset = EXPERIMENTS[experiment].per_dataset
    return layout.aggregate_log(f"{experiment}_{{dataset}}" if per_dataset else experiment)


def aggregations() -> dict[str, str]:
    """The aggregation rules to define: {experiment: its `--list-rules` line}."""
    return {entry.name: entry.summary for entry in aggregated()}


def describe_rule(rules, name: str, text: str) -> None:
    """Set the `--list-rules` line of the rule defined as ``name`` (a rule's docstring must be
    a plain string: an f-string there does not parse on Python 3.12 and later). ``rules``
    (Snakemake's) knows a rule by the name it was defined with, also where the workflow is
    used as a module whose rules are renamed (`use rule * from whcore as whcore_*`)."""
    getattr(rules, name).rule.docstring = text


def figure_summary(figure_id: str, width: int = 80) -> str:
    """A figure rule's one-line description: the start of the figure's caption, cut at a word
    (never inside parentheses) to at most ``width`` characters and ' ...'."""
    number = figure_id.split("_")[0].removeprefix("fig")
    number = f" {number}" if figure_id.startswith("fig") else ""
    text = FIGURES[figure_id].caption.split(". ")[0].rstrip(".") + "."
    if len(text) > width:
        text = text[:width].rsplit(" ", 1)[0]
        if text.count("(") > text.count(")"):
            text = text[: text.rindex("(")]
        text = text.rstrip(",;: ") + " ..."
    return f"Figure{number} (PDF, PNG): {text}"


def memory_requests(jobs, contract: Contract) -> dict[str, dict[str, tuple]]:
    """The memory each planned training job asks for, by SLURM partition: {partition: {output:
    (mem_mb, the config key that sets its method's size)}}. ``jobs``: Snakemake's jobs to run."""
    by_partition: dict[str, dict[str, tuple]] = {}
    for job in jobs:
        planned = contract.job(str(job.output[0])) if job.output else None
        if planned is None or not planned.mem_mb:
            continue
        experiment = planned.labels["experiment"]
        section = EXPERIMENTS[experiment].config_section  # the protocol trains real's methods
        key = f"{section}.methods.{planned.spec.method}"
        partition = job.resources.get("slurm_partition") or ""
        requests = by_partition.setdefault(partition, {})
        requests[str(job.output[0])] = (job.resources.get("mem_mb"), key)
    return by_partition


def refuse_jobs_no_node_holds(workflow, contract: Contract) -> None:
    """Before a SLURM run submits anything: refuse it (``StartError``) if a training job it
    would submit asks for more memory than any node of its partition has
    (``whcore.pipeline.execution.slurm.check_nodes_fit``)."""
    try:
        for partition, requests in memory_requests(workflow.dag.needrun_jobs(), contract).items():
            slurm.check_nodes_fit(requests, partition)
    except slurm.SlurmStartError as err:
        raise StartError(f"Error: {err}") from None


def settle_slurm_orphans(workflow, say) -> None:
    """Before a SLURM run submits anything: cancel the jobs a killed Snakemake left waiting,
    wait for those it left running and restart to plan from their outputs, record the outputs
    they wrote (``whcore.pipeline.execution.slurm``; ``say`` gets one line for each)."""
    try:
        slurm.check_job_marker(workflow.executor_settings.jobname_prefix)
        _, waited = slurm.settle_orphaned_jobs(log=say)
    except slurm.SlurmStartError as err:
        raise StartError(f"Error: {err}") from None
    if waited:
        say("Restarting, to plan from what they made.")
        slurm.restart(workflow)
    slurm.record_orphan_outputs(workflow, log=say)


def report_missing_raw_files(jobs, fetchers, planned_at: float, mirror, say) -> None:
    """After a failed run: ``say`` one line for every raw file of the run that is missing, with
    the fix, when a download of this run failed (``whcore.data.download.missing_raw_lines``).
    ``jobs``: the run's Snakemake jobs; ``fetchers``: the names of its download rules;
    ``planned_at``: when the run was planned (a download log written after it failed now)."""
    downloads = [
        (job.wildcards.dataset, job.output[0], job.log[0])
        for job in jobs
        if job.rule.name in fetchers
    ]
    for line in missing_raw_lines(downloads, planned_at, mirror or None):
        say(line)


def command_line_targets(argv: list[str]) -> list[str]:
    """The targets of a ``snakemake`` command line (Snakemake's own parser reads it), or none
    where this process is not the snakemake command (a test, a job of a cluster run)."""
    program = Path(argv[0]) if argv else Path()
    if "snakemake" not in (program.name, program.parent.name):
        return []
    from snakemake.cli import get_argument_parser

    args, _ = get_argument_parser().parse_known_args(argv[1:])
    return list(args.targets or [])


def unknown_targets(targets, rule_names, figure_ids, exists=os.path.exists) -> str | None:
    """The error for targets that are neither a rule nor a path, with the names that are:
    Snakemake alone says "No rule to produce fig5a" and nothing of the figures' ids. A target
    with a slash or a dot is a file (every output of the workflow is one), left to Snakemake."""
    rules = set(rule_names)
    unknown = [t for t in targets if not re.search(r"[/.]", t) and t not in rules and not exists(t)]
    if not unknown:
        return None
    figures = list(figure_ids)
    names = figures + sorted(rules - set(figures))
    close = [name for name in names if name.startswith(unknown[0])][:3] or (
        difflib.get_close_matches(unknown[0], names, n=3)
    )
    guess = f" Did you mean {' or '.join(close)}?" if close else ""
    return (
        f"Error: no rule or figure is named {', '.join(map(repr, unknown))}.{guess} The figure "
        f"ids (targets go first: snakemake <id> --cores N): {', '.join(figures)}; every rule: "
        "snakemake --list-rules."
    )
