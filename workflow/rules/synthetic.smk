# Synthetic targets g*: one JSON per draw, deterministic from its seed.


rule synthetic_target:
    output:
        "results/synthetic/{experiment}/{dataset}.json",
    log:
        "logs/synthetic/{experiment}/{dataset}.log",
    conda:
        ENV
    params:
        args=target_args,
    shell:
        "whcore synthetic {params.args} --out {output} > {log} 2>&1"
