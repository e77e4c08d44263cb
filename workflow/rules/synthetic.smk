# Synthetic targets g*: one JSON per draw, deterministic from its seed.


rule synthetic_target:
    output:
        LAYOUT.target,
    log:
        LAYOUT.log(LAYOUT.target),
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(LAYOUT.target),
    shell:
        "whcore synthetic --spec {params.spec:q} > {log:q} 2>&1"
