# Baselines on the real datasets: one job per (dataset, family, train size, data seed),
# the family's whole hyperparameter grid inside, on exactly the networks' splits.


rule baselines:
    input:
        "resources/data/{dataset}.parquet",
    output:
        "results/runs/real/{dataset}/{family}/grid/size{size}_dseed{dseed}.parquet",
    log:
        "logs/baselines/{dataset}/{family}/size{size}_dseed{dseed}.log",
    wildcard_constraints:
        family="lasso|rf|xgboost",
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime="4h",
    params:
        args=baseline_args,
    shell:
        "whcore baselines --data {input} {params.args} --threads {threads} --out {output} "
        "> {log} 2>&1"
