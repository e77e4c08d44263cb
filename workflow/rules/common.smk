# What the rules need, from one tested module (whcore.pipeline.snakefile): every path
# from LAYOUT, every spec and input from CONTRACT (a rule names its output pattern and asks for
# the job's spec and inputs by it: CONTRACT.spec_of, CONTRACT.inputs_of), every wildcard
# constraint from WILDCARDS.
import sys
import time

from snakemake.utils import validate
from whcore.pipeline.snakefile import (
    AGGREGATE_SHELL,
    StartError,
    aggregate_inputs,
    aggregate_log,
    aggregate_outputs,
    aggregations,
    command_line_targets,
    config_source,
    describe_rule,
    figure_summary,
    minutes_per_attempt,
    raw_file,
    refuse_jobs_no_node_holds,
    report_missing_raw_files,
    settle_slurm_orphans,
    start,
    unknown_targets,
)
from whcore.pipeline.figures.registry import DATASET_FIGURES, FIGURES
from whcore.pipeline.runtime.processes import hold_run_lock
from whcore.pipeline.runtime.runrecord import RunConflictError, claim_run

SOURCE = config_source(
    workflow.overwrite_configfiles,
    bool(workflow.config_settings.config),
    DEFAULT_CONFIG,
)
try:
    START = start(config, WORKFLOW_DIR, CHECKOUT, SOURCE)
# One line and status 1: an exception raised here would add Snakemake's traceback.
except StartError as err:
    sys.exit(str(err))
# The catalog's check, after the project's stricter one (which names the file, the key and the
# fix): it passes any config that passed, and fills no default (the contract has them).
validate(config, "../schemas/config.schema.yaml", set_default=False)
CONTRACT, LAYOUT, ENV = START.contract, START.layout, START.env
WILDCARDS, GPU = START.wildcards, START.gpu
# A download log written after this moment tells a download that failed in this run.
PLANNED_AT = time.time()
table, figure_stem = LAYOUT.table_path, LAYOUT.figure_stem


def say(line):
    print(line, file=sys.stderr)


def on_start():
    """Refuse a SLURM job no node holds; settle a killed Snakemake's jobs; claim the run."""
    try:
        if getattr(workflow.executor_plugin, "cli_prefix", "") == "slurm":
            refuse_jobs_no_node_holds(workflow, CONTRACT)
            settle_slurm_orphans(workflow, say)
        claim_run(LAYOUT.root, config, SOURCE)
    except StartError as err:
        sys.exit(str(err))
    except RunConflictError as err:
        sys.exit(f"Error: {err}")


def on_error():
    """Offline, the first failed download stops the run: name every raw file it lacks."""
    fetchers = {rules.download.rule.name, rules.download_own.rule.name}
    mirror = config["data_mirror"]
    report_missing_raw_files(workflow.dag.jobs, fetchers, PLANNED_AT, mirror, say)
