# Run records -> one set of tidy tables per experiment (model selection on validation),
# and the claims report checked against them. The three aggregations share one pattern.


rule aggregate_spectrum:
    """Select models on validation: the spectrum experiment's tables (Figures 1-3, A1-A4)."""
    input:
        **aggregate_inputs("spectrum"),
    output:
        update(aggregate_outputs("spectrum")),
    log:
        f"{LAYOUT.logs}/aggregate/spectrum.log",
    conda:
        ENV
    params:
        spec=spec_of_output(aggregate_outputs("spectrum")[0]),
    shell:
        aggregate_shell("spectrum")


rule aggregate_synthetic:
    """Select models on validation: the synthetic experiment's tables (Figures 4, A5, A6)."""
    input:
        **aggregate_inputs("synthetic"),
    output:
        update(aggregate_outputs("synthetic")),
    log:
        f"{LAYOUT.logs}/aggregate/synthetic.log",
    conda:
        ENV
    params:
        spec=spec_of_output(aggregate_outputs("synthetic")[0]),
    shell:
        aggregate_shell("synthetic")


rule aggregate_real:
    """Select models on validation: real-data tables, networks and baselines (Figures 5a, 5b, A7)."""
    input:
        **aggregate_inputs("real"),
    output:
        update(aggregate_outputs("real")),
    log:
        f"{LAYOUT.logs}/aggregate/real.log",
    conda:
        ENV
    params:
        spec=spec_of_output(aggregate_outputs("real")[0]),
    shell:
        aggregate_shell("real")


rule claims:
    """Check the paper's claims against the tables (claims.md, claims.json) with the provenance."""
    input:
        CONTRACT.job(f"{LAYOUT.claims}.md").inputs,
    output:
        md=report(
            f"{LAYOUT.claims}.md",
            caption="../report/claims.rst",
            category="Claims and provenance",
        ),
        json=f"{LAYOUT.claims}.json",
        provenance=report(
            f"{LAYOUT.root}/provenance.tsv",
            caption="../report/provenance.rst",
            category="Claims and provenance",
        ),
    log:
        f"{LAYOUT.logs}/claims.log",
    conda:
        ENV
    params:
        spec=spec(f"{LAYOUT.claims}.md"),
    shell:
        "whcore claims --spec {params.spec:q} --tables {input:q} > {log:q} 2>&1"
