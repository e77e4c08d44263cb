# Analyses that need no network training: the tree-spectrum ablation and Entacmaea's energy.


def ablation_args(wildcards):
    forest = config["ablation"]["datasets"][wildcards.dataset]
    return (
        f"--train-size {forest['train_size']} --test-size {forest['test_size']} "
        f"--max-depth {forest['max_depth']} --n-trees {forest['n_trees']} "
        f"--steps {config['ablation']['steps']} --seed {config['ablation']['seed']}"
    )


rule ablation:
    input:
        "resources/data/{dataset}.parquet",
    output:
        f"{TABLES}/ablation_{{dataset}}.parquet",
    params:
        args=ablation_args,
    log:
        "logs/ablation/{dataset}.log",
    threads: 2
    resources:
        mem_mb=8000,
        runtime="2h",
    conda:
        ENV
    shell:
        "whcore ablation --data {input} {params.args} --threads {threads} --out {output} "
        "> {log} 2>&1"


rule entacmaea_energy:
    input:
        "resources/data/entacmaea.parquet",
    output:
        f"{TABLES}/entacmaea_energy.parquet",
    params:
        top=config["entacmaea_energy"]["top"],
    log:
        "logs/analysis/entacmaea_energy.log",
    conda:
        ENV
    shell:
        "whcore entacmaea-energy --data {input} --top {params.top} --out {output} > {log} 2>&1"
