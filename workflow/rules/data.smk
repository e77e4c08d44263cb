# Real datasets: pinned download (mirror first), then binarization to Parquet.


# Compute nodes of many clusters have no network: downloads run where Snakemake runs.
localrules:
    download,


rule download:
    output:
        "resources/raw/{dataset}/{filename}",
    log:
        "logs/download/{dataset}/{filename}.log",
    retries: 2
    conda:
        ENV
    params:
        mirror=MIRROR,
    shell:
        "whcore download {wildcards.dataset} --out {output} --mirror {params.mirror:q} "
        "> {log} 2>&1"


rule binarize:
    input:
        raw_file,
    output:
        "resources/data/{dataset}.parquet",
    log:
        "logs/binarize/{dataset}.log",
    conda:
        ENV
    resources:
        mem_mb=4000,
    shell:
        "whcore binarize {wildcards.dataset} --raw {input} --out {output} > {log} 2>&1"
