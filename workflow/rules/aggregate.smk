# Run records -> one set of tidy tables per experiment (model selection on validation),
# and the claims report checked against them. One rule definition serves every experiment:
# their aggregations write different numbers of tables, which a single rule with an
# experiment wildcard cannot declare, so it is instantiated once per experiment (the
# protocol's, once per dataset, by its wildcard). The experiments and their lines come from the
# registry (whcore.pipeline.experiments).
for experiment, summary in aggregations().items():

    rule:
        name:
            f"aggregate_{experiment}"
        input:
            unpack(aggregate_inputs(CONTRACT, experiment, ancient)),
        output:
            update(aggregate_outputs(LAYOUT, experiment)),
        log:
            aggregate_log(LAYOUT, experiment),
        wildcard_constraints:
            dataset=WILDCARDS.proteingym_datasets,
        conda:
            ENV
        params:
            spec=CONTRACT.spec_of(aggregate_outputs(LAYOUT, experiment)[0]),
        shell:
            AGGREGATE_SHELL

    describe_rule(rules, f"aggregate_{experiment}", summary)


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


rule bundle_slim:
    """The finished run as a slim crate, the same claims in a few MB (not part of `all`)."""

    # `snakemake bundle_slim` after a run: whcore bundle --slim (docs/workflow.md).
    input:
        CONTRACT.targets(),
    output:
        LAYOUT.slim_crate,
    log:
        LAYOUT.bundle_slim_log,
    conda:
        ENV
    params:
        run=lambda wildcards, output: os.path.dirname(output[0]),
    shell:
        "whcore bundle --slim {params.run:q} --out {output:q} > {log:q} 2>&1"


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
