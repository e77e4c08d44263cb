# Baselines on the real datasets: one job per (dataset, family, train size, data seed),
# the family's whole hyperparameter grid inside, on exactly the networks' splits.


def baseline_args(wildcards, output):
    job = lookup_job(BASELINES, output[0])
    return (
        f"--family {job.family} --train-size {job.train_size} --val-size {job.val_size} "
        f"--test-size {job.test_size} --data-seed {job.data_seed} "
        f"--grid {json.dumps(job.grid)!r}" + (" --standardize" if job.standardize else "")
    )


rule baselines:
    input:
        "resources/data/{dataset}.parquet",
    output:
        "results/runs/real/{dataset}/{family}/grid/size{size}_dseed{dseed}.parquet",
    wildcard_constraints:
        family="lasso|rf|xgboost",
    params:
        args=baseline_args,
    log:
        "logs/baselines/{dataset}/{family}/size{size}_dseed{dseed}.log",
    threads: 2
    resources:
        mem_mb=8000,
        runtime="4h",
    conda:
        ENV
    shell:
        "whcore baselines --data {input} {params.args} --threads {threads} --out {output} "
        "> {log} 2>&1"
