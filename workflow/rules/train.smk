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
