# Run records -> one set of tidy tables per experiment (model selection on validation),
# and the claims report checked against them. The three aggregations share one pattern.


rule aggregate_spectrum:
    """Select models on validation: the spectrum experiment's tables (Figures 1-3, A1-A4)."""
    input:
        **aggregate_inputs("spectrum"),
    output:
        update(aggregate_outputs("spectrum")),
    log:
        LAYOUT.aggregate_log("spectrum"),
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(aggregate_outputs("spectrum")[0]),
    shell:
        aggregate_shell("spectrum")


rule aggregate_synthetic:
    """Select models on validation: the synthetic experiment's tables (Figures 4, A5, A6)."""
    input:
        **aggregate_inputs("synthetic"),
    output:
        update(aggregate_outputs("synthetic")),
    log:
        LAYOUT.aggregate_log("synthetic"),
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(aggregate_outputs("synthetic")[0]),
    shell:
        aggregate_shell("synthetic")


rule aggregate_real:
    """Select models on validation: real-data tables, networks and baselines (Figures 5a, 5b, A7)."""
    input:
        **aggregate_inputs("real"),
    output:
        update(aggregate_outputs("real")),
    log:
        LAYOUT.aggregate_log("real"),
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(aggregate_outputs("real")[0]),
    shell:
        aggregate_shell("real")


rule aggregate_protocol:
    """ProteinGym's protocol on one dataset: Spearman, MSE, R^2 per held-out fold, mean and s.e."""
    input:
        unpack(protocol_aggregate_inputs),
    output:
        update(LAYOUT.protocol_table("{dataset}")),
    log:
        LAYOUT.aggregate_log("protocol_{dataset}"),
    wildcard_constraints:
        dataset=PROTOCOL_DATASETS,
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(LAYOUT.protocol_table("{dataset}")),
    shell:
        aggregate_shell("protocol")


rule bundle:
    """The finished run as one validated Workflow Run RO-Crate (not part of `all`)."""

    # `snakemake bundle` after a run: whcore bundle, from the configuration the run recorded.
    input:
        CONTRACT.targets(),
    output:
        LAYOUT.crate,
    log:
        LAYOUT.bundle_log,
    conda:
        ENV
    params:
        run=lambda wildcards, output: os.path.dirname(output[0]),
    shell:
        "whcore bundle {params.run:q} --out {output:q} > {log:q} 2>&1"


rule claims:
    """Check the paper's claims against the tables (claims.md, claims.json) with the provenance."""
    input:
        CONTRACT.inputs_of(LAYOUT.claims_md),
    output:
        md=report(
            LAYOUT.claims_md,
            caption="../report/claims.rst",
            category="Claims and provenance",
        ),
        json=LAYOUT.claims_json,
        provenance=report(
            LAYOUT.provenance,
            caption="../report/provenance.rst",
            category="Claims and provenance",
        ),
    log:
        LAYOUT.claims_log,
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(LAYOUT.claims_md),
    shell:
        "whcore claims --spec {params.spec:q} --tables {input:q} > {log:q} 2>&1"
