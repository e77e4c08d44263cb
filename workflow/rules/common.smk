# Configuration and the job contract. Every path comes from whcore.pipeline.runtime.layout (LAYOUT)
# and every spec from whcore.pipeline.contract: a rule names its output pattern and asks for
# the job's spec and inputs by it (CONTRACT.spec_of, CONTRACT.inputs_of).
import os
import re
import sys
import time

from whcore.core.methods import METHOD_INFO
from whcore.data.datasets import REGISTRY
from whcore.data.download import mirror_warning, missing_raw_lines
from whcore.pipeline.contract.config import (
    ConfigError,
    leaderboard_datasets,
    protocol_datasets,
    user_datasets,
)
from whcore.pipeline.contract import load_contract
from whcore.pipeline.jobs.aggregate import ROLES as AGGREGATE_ROLES
from whcore.pipeline.jobs.aggregate import TABLES as AGGREGATE_TABLES
from whcore.pipeline.analyses.families import BASELINES
from whcore.pipeline.figures.registry import DATASET_FIGURES, FIGURES
from whcore.pipeline.execution.deploy import conda_env_file
from whcore.pipeline.execution.environment import (
    EnvironmentValueError,
    check_environment,
    job_environment,
)
from whcore.pipeline.execution import slurm
from whcore.pipeline.runtime.guards import hold_run_lock
from whcore.pipeline.runtime.runrecord import (
    RunConflictError,
    claim_run,
    run_conflict,
    source_label,
)


def config_source():
    """The config files of this run (for error messages)."""
    files = [str(path) for path in workflow.overwrite_configfiles] or [DEFAULT_CONFIG]
    return source_label(files, bool(workflow.config_settings.config))


# `--sdm conda`: every job's environment installs this checkout (envs/whcore.yaml, rendered
# with the checkout's absolute path, since Snakemake copies the file before creating it).
ENV = conda_env_file(CHECKOUT)
try:
    CONTRACT = load_contract(
        config,
        os.path.join(WORKFLOW_DIR, "schemas", "config.schema.yaml"),
    )
    # A bad WHCORE_* value is refused here, before the config's settings replace the caller's
    # (the jobs take device and log_every from the config).
    check_environment()
    # Settings that never change a result reach the jobs through the environment, never as
    # rule params (a param change would replan every job downstream).
    os.environ.update(job_environment(config, os.getpid()))
# One line and status 1: an exception raised here would add Snakemake's traceback.
except ConfigError as err:
    sys.exit(f"Error in {config_source()}: {err}")
except EnvironmentValueError as err:
    sys.exit(f"Error: {err}")
if warning := mirror_warning(config["data_mirror"] or None, "config key data_mirror"):
    print(warning, file=sys.stderr)
LAYOUT = CONTRACT.layout
# One run name never hides another run: an executing run of another configuration than the one
# that made results/<run>/ is refused at start (onstart), a dry run warned.
RUN_CONFLICT = run_conflict(LAYOUT.root, config, config_source())
if RUN_CONFLICT and not config["replace_run"]:
    print(f"warning: {RUN_CONFLICT}", file=sys.stderr)
METHODS = "|".join(METHOD_INFO)
DATASETS = "|".join(REGISTRY)
GPU = 1 if config["device"] == "cuda" else 0


def refuse_jobs_no_node_holds():
    """Before a SLURM run submits anything: refuse it if a training job it would submit asks for
    more memory than any node of its partition has (whcore.pipeline.execution.slurm.check_nodes_fit).
    """
    by_partition = {}
    for job in workflow.dag.needrun_jobs():
        planned = CONTRACT.job(str(job.output[0])) if job.output else None
        if planned is None or not planned.mem_mb:
            continue
        # the protocol trains the real experiment's methods
        section = {"protocol": "real"}.get(planned.labels["experiment"])
        key = f"{section or planned.labels['experiment']}.methods.{planned.spec.method}"
        partition = job.resources.get("slurm_partition") or ""
        requests = by_partition.setdefault(partition, {})
        requests[str(job.output[0])] = (job.resources.get("mem_mb"), key)
    try:
        for partition, requests in by_partition.items():
            slurm.check_nodes_fit(requests, partition)
    except slurm.SlurmStartError as err:
        sys.exit(f"Error: {err}")


def settle_slurm_orphans():
    """Before a SLURM run submits anything: cancel the jobs a killed Snakemake left waiting, wait
    for those it left running and restart to plan from their outputs, record the outputs they
    wrote (whcore.pipeline.execution.slurm; one line on stderr for each)."""

    def say(line):
        print(line, file=sys.stderr)

    try:
        slurm.check_job_marker(workflow.executor_settings.jobname_prefix)
        _, waited = slurm.settle_orphaned_jobs(log=say)
    except slurm.SlurmStartError as err:
        sys.exit(f"Error: {err}")
    if waited:
        say("Restarting, to plan from what they made.")
        slurm.restart(workflow)
    slurm.record_orphan_outputs(workflow, log=say)


# A download log written after this moment tells a download that failed in this run.
PLANNED_AT = time.time()


def report_missing_raw_files():
    """After a failed run: one line on stderr for every raw file of the run that is missing,
    with the fix, when a download of this run failed (whcore.data.download.missing_raw_lines).
    """
    fetchers = {rules.download.rule.name, rules.download_user.rule.name}
    downloads = [
        (job.wildcards.dataset, job.output[0], job.log[0])
        for job in workflow.dag.jobs
        if job.rule.name in fetchers
    ]
    for line in missing_raw_lines(downloads, PLANNED_AT, config["data_mirror"] or None):
        print(line, file=sys.stderr)


def minutes_per_attempt(minutes):
    """A runtime request (SLURM's time limit) that grows with each retry: a job stopped at its
    time limit asks for twice the time on its second attempt, three times on its third.
    """
    return lambda wildcards, attempt: minutes * attempt


def alternatives(names):
    """A wildcard constraint matching exactly ``names`` (none: a pattern matching nothing)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


# Datasets given by file or url (their binarization), those downloaded, and those whose
# learned epistasis is analysed: each its own rules' constraint, disjoint from the registry's.
USER_DATASETS = alternatives(user_datasets(config) if config["real"]["enabled"] else [])
USER_DOWNLOADS = alternatives(
    job.labels["dataset"] for job in CONTRACT.jobs_of("download_user")
)
EPISTASIS_DATASETS = alternatives(
    job.labels["dataset"] for job in CONTRACT.jobs_of("epistasis_figure")
)
# Datasets scored by the leaderboard mode.
LEADERBOARD_DATASETS = alternatives(leaderboard_datasets(config))
# Datasets under ProteinGym's supervised protocol, and its split schemes.
PROTOCOL_DATASETS = alternatives(protocol_datasets(config))
SCHEMES = alternatives(
    sorted({s for v in protocol_datasets(config).values() for s in v})
)


def table(name):
    return LAYOUT.table_path(name)


def raw_file(wildcards):
    return LAYOUT.RAW.format(
        dataset=wildcards.dataset, filename=REGISTRY[wildcards.dataset].file
    )


def aggregate_inputs(experiment):
    """An input function: an aggregation's inputs by role (every role of `whcore aggregate`,
    empty where the experiment has none), and the logs of its training jobs (the protocol's:
    those of the dataset of its wildcard). Snakemake forgives an input newer than the outputs
    whose checksum is the one recorded when the job ran, but it cannot checksum a folder: the
    training folders are `ancient` (new timestamps, as in a copy of the run folder, never
    replan the aggregation) and each training job's log, a small file rewritten whenever the
    job runs, carries the dependency instead."""

    def inputs_of(wildcards):
        inputs = CONTRACT.aggregate_inputs(experiment, wildcards.get("dataset"))
        return {
            **{
                role: (
                    ancient(inputs.get(role, []))
                    if role in ("runs", "spectra")
                    else inputs.get(role, [])
                )
                for role in AGGREGATE_ROLES
            },
            "training_logs": [LAYOUT.log(path) for path in inputs["runs"]],
        }

    return inputs_of


def aggregate_outputs(experiment):
    """The tables of an experiment's aggregation (the protocol's: of one dataset)."""
    if experiment == "protocol":
        return [LAYOUT.protocol_table("{dataset}")]
    return [table(name) for name in AGGREGATE_TABLES[experiment]]


def aggregate_log(experiment):
    return LAYOUT.aggregate_log(
        "protocol_{dataset}" if experiment == "protocol" else experiment
    )


# `whcore aggregate` with one option per input role (an empty role passes no file). One
# command for every experiment: Snakemake evaluates a rule's shell command again when the job
# runs, when a loop variable no longer names the rule's experiment.
AGGREGATE_SHELL = (
    "whcore aggregate --spec {params.spec:q} "
    + " ".join(f"--{role} {{input.{role}:q}}" for role in AGGREGATE_ROLES)
    + " > {log:q} 2>&1"
)


def describe_rule(name, text):
    """Set the `--list-rules` line of the rule defined as ``name`` (a rule's docstring must be
    a plain string: an f-string there does not parse on Python 3.12 and later). `rules` knows
    a rule by the name it was defined with, also where the workflow is used as a module whose
    rules are renamed (`use rule * from whcore as whcore_*`)."""
    getattr(rules, name).rule.docstring = text


def figure_stem(figure_id):
    return LAYOUT.figure_stem(figure_id)


def figure_summary(figure_id, width=80):
    """A figure rule's one-line description: the start of the figure's caption."""
    number = figure_id.split("_")[0].removeprefix("fig")
    number = f" {number}" if figure_id.startswith("fig") else ""
    text = FIGURES[figure_id].caption.split(". ")[0].rstrip(".") + "."
    if len(text) > width:
        text = text[:width].rsplit(" ", 1)[0]
        if text.count("(") > text.count(")"):  # never end inside parentheses
            text = text[: text.rindex("(")]
        text = text.rstrip(",;: ") + " ..."
    return f"Figure{number} (PDF, PNG): {text}"
