# Real datasets: pinned download (mirror first), then binarization to Parquet.


# Compute nodes of many clusters have no network: downloads run where Snakemake runs.
localrules:
    download,


# The mirror reaches the command through WHCORE_DATA_MIRROR (common.smk), not a param: a raw
# file's identity is its pinned sha256, so moving or dropping the mirror never refetches it.
# `whcore download` retries transient network failures itself.
rule download:
    """Fetch a dataset's raw file: the data mirror first, then its pinned URLs (sha256-checked)."""
    output:
        LAYOUT.RAW,
    log:
        LAYOUT.DOWNLOAD_LOG,
    wildcard_constraints:
        dataset=WILDCARDS.datasets,
        filename=WILDCARDS.raw_files,
    conda:
        ENV
    shell:
        "whcore download {wildcards.dataset:q} --out {output:q} > {log:q} 2>&1"


rule binarize:
    """Turn a dataset's raw file into its binary design matrix (Parquet)."""
    input:
        raw_file,
    output:
        LAYOUT.DATA,
    log:
        LAYOUT.BINARIZE_LOG,
    wildcard_constraints:
        dataset=WILDCARDS.datasets,
    conda:
        ENV
    resources:
        mem_mb=4000,
    shell:
        "whcore binarize {wildcards.dataset:q} --raw {input:q} --out {output:q} > {log:q} 2>&1"
