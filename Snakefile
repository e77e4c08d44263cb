# The workflow is workflow/Snakefile (the workflow catalog's place; plain `snakemake` in this
# folder runs it). This file keeps `--snakefile <checkout>/Snakefile` working for those who
# name it, as the README's own-data command and the run bundles do.
include: "workflow/Snakefile"


# An included file's default target is not the including one's: `all` is it here too.
workflow.default_target = "all"
