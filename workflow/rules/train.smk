# Network training: one job per (experiment, dataset or g*, method, hyperparameters,
# train size, data seed); all training seeds inside the job.


rule train:
    input:
        train_input,
    output:
        runs="results/runs/{experiment}/{dataset}/{method}/{config}/size{size}_dseed{dseed}.parquet",
    log:
        "logs/train/{experiment}/{dataset}/{method}/{config}/size{size}_dseed{dseed}.log",
    wildcard_constraints:
        experiment="synthetic|real",
        method="standard|fullwh|ens|hashwh",
    conda:
        ENV
    threads: config["train_threads"]
    resources:
        gpu=GPU,
        mem_mb=8000,
        runtime="4h",
    params:
        spec=train_spec,
    shell:
        train_shell()


rule train_spectrum:
    input:
        lambda wc: train_input(wc, "spectrum"),
    output:
        runs="results/runs/spectrum/{dataset}/{method}/{config}/size{size}_dseed{dseed}.parquet",
        spectra="results/spectra/spectrum/{dataset}/{method}/{config}/size{size}_dseed{dseed}.parquet",
    log:
        "logs/train/spectrum/{dataset}/{method}/{config}/size{size}_dseed{dseed}.log",
    wildcard_constraints:
        method="standard|fullwh|ens|hashwh",
    conda:
        ENV
    threads: config["train_threads"]
    resources:
        gpu=GPU,
        mem_mb=4000,
        runtime="2h",
    params:
        spec=lambda wc: train_spec(wc, "spectrum"),
    shell:
        train_shell(" --spectra {output.spectra}")
