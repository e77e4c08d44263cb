# Synthetic targets g*: one JSON per draw, deterministic from its seed.


def target_args(wildcards):
    job = lookup_job(TARGETS, f"results/synthetic/{wildcards.experiment}/{wildcards.dataset}.json")
    args = f"--family {job.family} --n {job.n} --max-degree {job.max_degree} --seed {job.seed}"
    return args + (f" --k {job.k}" if job.k is not None else "")


rule synthetic_target:
    output:
        "results/synthetic/{experiment}/{dataset}.json",
    params:
        args=target_args,
    log:
        "logs/synthetic/{experiment}/{dataset}.log",
    conda:
        ENV
    shell:
        "whcore synthetic {params.args} --out {output} > {log} 2>&1"
