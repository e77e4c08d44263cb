# Run records -> one set of tidy tables per experiment (model selection on validation),
# and the claims report checked against them. The three aggregations share one pattern.


rule aggregate_spectrum:
    input:
        **aggregate_inputs("spectrum"),
    output:
        [table(name) for name in AGGREGATE_TABLES["spectrum"]],
    log:
        f"{LAYOUT.logs}/aggregate/spectrum.log",
    conda:
        ENV
    params:
        spec=aggregate_spec("spectrum"),
    shell:
        aggregate_shell("spectrum")


rule aggregate_synthetic:
    input:
        **aggregate_inputs("synthetic"),
    output:
        [table(name) for name in AGGREGATE_TABLES["synthetic"]],
    log:
        f"{LAYOUT.logs}/aggregate/synthetic.log",
    conda:
        ENV
    params:
        spec=aggregate_spec("synthetic"),
    shell:
        aggregate_shell("synthetic")


rule aggregate_real:
    input:
        **aggregate_inputs("real"),
    output:
        [table(name) for name in AGGREGATE_TABLES["real"]],
    log:
        f"{LAYOUT.logs}/aggregate/real.log",
    conda:
        ENV
    params:
        spec=aggregate_spec("real"),
    shell:
        aggregate_shell("real")


rule claims:
    input:
        claim_tables(),
    output:
        md=f"{LAYOUT.claims}.md",
        json=f"{LAYOUT.claims}.json",
    log:
        f"{LAYOUT.logs}/claims.log",
    conda:
        ENV
    params:
        spec=json.dumps(
            {"outputs": {"md": f"{LAYOUT.claims}.md", "json": f"{LAYOUT.claims}.json"}}
        ),
    shell:
        "whcore claims --spec {params.spec:q} --tables {input:q} > {log:q} 2>&1"
