# Network training: one job per (experiment, dataset or g*, method, hyperparameters,
# train size, data seed); all training seeds inside the job.

TRAIN_SHELL = (
    "whcore train --spec-json {params.spec:q} --threads {threads} --out {output.runs}"
)


def train_input(wildcards, experiment=None):
    return lookup_job(TRAIN, run_path(wildcards, experiment)).data_input


def train_spec(wildcards, experiment=None):
    return json.dumps(lookup_job(TRAIN, run_path(wildcards, experiment)).spec)


rule train:
    input:
        train_input,
    output:
        runs="results/runs/{experiment}/{dataset}/{method}/{config}/size{size}_dseed{dseed}.parquet",
    wildcard_constraints:
        experiment="synthetic|real",
        method="standard|fullwh|ens|hashwh",
    params:
        spec=train_spec,
    log:
        "logs/train/{experiment}/{dataset}/{method}/{config}/size{size}_dseed{dseed}.log",
    threads: config["train_threads"]
    resources:
        gpu=GPU,
        mem_mb=8000,
        runtime="4h",
    conda:
        ENV
    shell:
        TRAIN_SHELL + " > {log} 2>&1"


rule train_spectrum:
    input:
        lambda wc: train_input(wc, "spectrum"),
    output:
        runs="results/runs/spectrum/{dataset}/{method}/{config}/size{size}_dseed{dseed}.parquet",
        spectra="results/spectra/spectrum/{dataset}/{method}/{config}/size{size}_dseed{dseed}.parquet",
    wildcard_constraints:
        method="standard|fullwh|ens|hashwh",
    params:
        spec=lambda wc: train_spec(wc, "spectrum"),
    log:
        "logs/train/spectrum/{dataset}/{method}/{config}/size{size}_dseed{dseed}.log",
    threads: config["train_threads"]
    resources:
        gpu=GPU,
        mem_mb=4000,
        runtime="2h",
    conda:
        ENV
    shell:
        TRAIN_SHELL + " --spectra {output.spectra} > {log} 2>&1"
