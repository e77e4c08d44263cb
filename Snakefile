# Reproduces Gorji, Amrollahi & Krause (UAI 2023), "A Scalable Walsh-Hadamard Regularizer to
# Overcome the Low-degree Spectral Bias of Neural Networks". See README.md.
import os
import sys

from snakemake.utils import min_version

from whcore.pipeline.canonical import read_yaml
from whcore.pipeline.config import ConfigError

min_version("9.0")

DEFAULT_CONFIG = os.path.join(workflow.basedir, "config", "config.yaml")


# The paper's grid is the default; a --configfile replaces it instead of being merged into it,
# so that a small configuration never inherits grid values it did not ask for.
if not workflow.overwrite_configfiles:
    try:  # Snakemake's own message for a YAML error names neither the file nor the line
        read_yaml(DEFAULT_CONFIG, "config file", ConfigError)
    except ConfigError as err:
        sys.exit(f"Error: {err}")

    configfile: DEFAULT_CONFIG


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


# One executing Snakemake per working directory (a lock of our own: Snakemake removes its lock
# folder on exit). Dry runs, linting and reports never take it.
onstart:
    # With no core Snakemake would wait for ever at "Select jobs to execute...".
    if workflow.global_resources["_cores"].value == 0:
        sys.exit(
            "Error: --cores 0 leaves no core to run a job on. Fix: --cores N or all"
        )
    hold_run_lock()
    # SLURM jobs of a killed Snakemake: never run twice (whcore.pipeline.slurm).
    if getattr(workflow.executor_plugin, "cli_prefix", "") == "slurm":
        refuse_jobs_no_node_holds()
        settle_slurm_orphans()
    try:  # one line, no traceback
        claim_run(LAYOUT.root, config, config_source())
    except RunConflictError as err:
        sys.exit(f"Error: {err}")


rule all:
    """Every figure, table and claims report of the configured run (the default target)."""
    default_target: True
    input:
        CONTRACT.targets(),


include: "workflow/rules/data.smk"
include: "workflow/rules/synthetic.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/baselines.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/user.smk"
