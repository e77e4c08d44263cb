# Analyses that need no network training: the tree-spectrum ablation and Entacmaea's energy.


rule ablation:
    input:
        "resources/data/{dataset}.parquet",
    output:
        f"{TABLES}/ablation_{{dataset}}.parquet",
    log:
        "logs/ablation/{dataset}.log",
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime="2h",
    params:
        args=ablation_args,
    shell:
        "whcore ablation --data {input} {params.args} --threads {threads} --out {output} "
        "> {log} 2>&1"


rule entacmaea_energy:
    input:
        "resources/data/entacmaea.parquet",
    output:
        f"{TABLES}/entacmaea_energy.parquet",
    log:
        "logs/analysis/entacmaea_energy.log",
    conda:
        ENV
    params:
        top=config["entacmaea_energy"]["top"],
    shell:
        "whcore entacmaea-energy --data {input} --top {params.top} --out {output} > {log} 2>&1"
