# Synthetic targets g*: one JSON per draw, deterministic from its seed.


rule target:
    """Draw a sparse target function g* (JSON), deterministic from its seed."""
    output:
        LAYOUT.target,
    log:
        LAYOUT.log(LAYOUT.target),
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(LAYOUT.target),
    shell:
        "whcore target --spec {params.spec:q} > {log:q} 2>&1"
