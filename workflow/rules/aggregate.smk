# Run records -> one set of tidy tables per experiment (model selection on validation),
# and the claims report checked against them.


rule aggregate_spectrum:
    input:
        runs=runs_of("spectrum"),
        spectra=spectra_of_spectrum_runs(),
        targets=sorted(p for p, t in TARGETS.items() if t.experiment == "spectrum"),
    output:
        expand(
            "{tables}/{name}.parquet",
            tables=TABLES,
            name=["spectrum_selected", "spectrum_epochs", "spectrum_heatmap"],
        ),
    log:
        "logs/aggregate/spectrum.log",
    conda:
        ENV
    params:
        size=config["spectrum"]["figure_train_size"],
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
    shell:
        "whcore aggregate spectrum --runs {input.runs} --spectra {input.spectra} "
        "--targets {input.targets} --figure-train-size {params.size} --out-dir {params.out_dir} "
        "> {log} 2>&1"


rule aggregate_synthetic:
    input:
        runs=runs_of("synthetic"),
    output:
        expand(
            "{tables}/{name}.parquet",
            tables=TABLES,
            name=["synthetic_selected", "synthetic_summary", "synthetic_curves"],
        ),
    log:
        "logs/aggregate/synthetic.log",
    conda:
        ENV
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
    shell:
        "whcore aggregate synthetic --runs {input.runs} --out-dir {params.out_dir} > {log} 2>&1"


rule aggregate_real:
    input:
        runs=runs_of("real"),
        baselines=sorted(BASELINES),
    output:
        expand(
            "{tables}/{name}.parquet",
            tables=TABLES,
            name=["real_selected", "real_summary"],
        ),
    log:
        "logs/aggregate/real.log",
    conda:
        ENV
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
    shell:
        "whcore aggregate real --runs {input.runs} --baselines {input.baselines} "
        "--out-dir {params.out_dir} > {log} 2>&1"


rule claims:
    input:
        claim_tables(),
    output:
        md="results/claims.md",
        json="results/claims.json",
    log:
        "logs/aggregate/claims.log",
    conda:
        ENV
    shell:
        "whcore claims --tables {input} --out-md {output.md} --out-json {output.json} "
        "> {log} 2>&1"
