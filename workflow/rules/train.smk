# Network training: one job per (experiment, dataset or g*, method, group, train size, data
# seed). A group holds the configurations that differ only in their weights (every lam and
# rho of one method and b); the job trains them and all training seeds together and writes a
# folder with one file per configuration. The spec (a rule param, so Snakemake reruns a job
# exactly when its spec changes) names the job's outputs.


rule train:
    """Train one method's group of configurations (every lam and rho, all seeds) on one split."""
    input:
        CONTRACT.inputs_of(LAYOUT.records),
    output:
        records=directory(LAYOUT.records),
    log:
        LAYOUT.log(LAYOUT.records),
    wildcard_constraints:
        experiment="synthetic|real",
        dataset=WILDCARDS.trained_alone,
        method=WILDCARDS.methods,
        group=r"[^/]+",
        size=r"\d+",
        dseed=r"\d+",
    conda:
        ENV
    threads: config["train_threads"]
    resources:
        gpu=GPU,
        mem_mb=CONTRACT.mem_mb_of(LAYOUT.records),  # from the job's size, x attempt
        runtime=minutes_per_attempt(240),
    params:
        spec=CONTRACT.spec_of(LAYOUT.records),
    shell:
        "whcore train --spec {params.spec:q} --threads {threads} > {log:q} 2>&1"


SPECTRUM_RECORDS = LAYOUT.records_of("spectrum")


use rule train as train_spectrum with:
    """Train as `train` does, on a spectrum-experiment target, with exact spectra per epoch."""
    input:
        CONTRACT.inputs_of(SPECTRUM_RECORDS),
    output:
        records=directory(SPECTRUM_RECORDS),
        spectra=directory(LAYOUT.spectra_of("spectrum")),
    log:
        LAYOUT.log(SPECTRUM_RECORDS),
    wildcard_constraints:
        dataset=WILDCARDS.trained_alone,
        method=WILDCARDS.methods,
        group=r"[^/]+",
        size=r"\d+",
        dseed=r"\d+",
    resources:
        gpu=GPU,
        mem_mb=CONTRACT.mem_mb_of(SPECTRUM_RECORDS),
        runtime=minutes_per_attempt(120),
    params:
        spec=CONTRACT.spec_of(SPECTRUM_RECORDS),


use rule train as train_proteingym with:
    """Train as `train` does, on a held-out fold of ProteinGym's protocol (test Spearman per epoch)."""
    input:
        CONTRACT.inputs_of(LAYOUT.proteingym_records),
    output:
        records=directory(LAYOUT.proteingym_records),
    log:
        LAYOUT.log(LAYOUT.proteingym_records),
    wildcard_constraints:
        dataset=WILDCARDS.proteingym_datasets,
        scheme=WILDCARDS.schemes,
        method=WILDCARDS.methods,
        group=r"[^/]+",
        fold=r"\d+",
    resources:
        gpu=GPU,
        mem_mb=CONTRACT.mem_mb_of(LAYOUT.proteingym_records),
        runtime=minutes_per_attempt(240),
    params:
        spec=CONTRACT.spec_of(LAYOUT.proteingym_records),


# With stack_units, the jobs of a cell (its units: the g* draws of one setting, the subsamples of
# one real dataset and train size) train as one job: a rule per experiment whose outputs are
# the folders of a cell's units (a large cell: several rules, cells.MAX_UNITS), its params
# their specs as a list (whcore train takes both).
# The rules above serve the datasets no cell holds (WILDCARDS.trained_alone).
for cells in CONTRACT.cells:

    rule:
        """Train the jobs of one cell (its units) as one stacked model."""
        name:
            cells.rule
        input:
            CONTRACT.cell_inputs_of(cells),
        output:
            **{
                role: [directory(path) for path in paths]
                for role, paths in cells.outputs(LAYOUT).items()
            },
        log:
            cells.logs(LAYOUT),
        wildcard_constraints:
            n=r"\d+",
            dataset=r"[^/]+",
            method=WILDCARDS.methods,
            group=r"[^/]+",
            size=r"\d+",
            dseed=r"\d+",
        conda:
            ENV
        threads: config["train_threads"]
        resources:
            gpu=GPU,
            mem_mb=CONTRACT.cell_mem_mb_of(cells),
            runtime=minutes_per_attempt(240),
        params:
            spec=CONTRACT.cell_spec_of(cells),
        shell:
            "whcore train --spec {params.spec:q} --threads {threads} 2>&1 | tee {log:q} > /dev/null"
