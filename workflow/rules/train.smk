# Network training: one job per (experiment, dataset or g*, method, hyperparameters,
# train size, data seed); all training seeds inside the job. The spec (a rule param, so
# Snakemake reruns a job exactly when its spec changes) names the job's outputs.


rule train:
    input:
        CONTRACT.inputs_of(LAYOUT.records),
    output:
        records=LAYOUT.records,
    log:
        LAYOUT.log(LAYOUT.records),
    wildcard_constraints:
        experiment="synthetic|real",
        method=METHODS,
    conda:
        ENV
    threads: config["train_threads"]
    resources:
        gpu=GPU,
        mem_mb=8000,
        runtime="4h",
    params:
        spec=CONTRACT.spec_of(LAYOUT.records),
    shell:
        "whcore train --spec {params.spec:q} --threads {threads} > {log:q} 2>&1"


SPECTRUM_RECORDS = LAYOUT.records.replace("{experiment}", "spectrum")


use rule train as train_spectrum with:
    input:
        CONTRACT.inputs_of(SPECTRUM_RECORDS),
    output:
        records=SPECTRUM_RECORDS,
        spectra=LAYOUT.spectra.replace("{experiment}", "spectrum"),
    log:
        LAYOUT.log(SPECTRUM_RECORDS),
    wildcard_constraints:
        method=METHODS,
    resources:
        gpu=GPU,
        mem_mb=4000,
        runtime="2h",
    params:
        spec=CONTRACT.spec_of(SPECTRUM_RECORDS),
