# Datasets by configuration (a real.datasets entry with file, or url and sha256, and format)
# and the epistasis the selected networks learned. Paths and specs come from the contract.


localrules:
    download_own,


rule download_own:
    """Fetch your dataset's file from its url (mirror first, sha256-checked)."""
    output:
        LAYOUT.RAW,
    log:
        LAYOUT.DOWNLOAD_LOG,
    wildcard_constraints:
        dataset=WILDCARDS.own_downloads,
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(LAYOUT.RAW),
    shell:
        "whcore download-own --spec {params.spec:q} > {log:q} 2>&1"


rule binarize_own:
    """Binarize your dataset (ProteinGym, sequences or 0/1 table) into its design matrix."""
    input:
        CONTRACT.inputs_of(LAYOUT.DATA),
    output:
        LAYOUT.DATA,
    log:
        LAYOUT.BINARIZE_LOG,
    wildcard_constraints:
        dataset=WILDCARDS.own_datasets,
    conda:
        ENV
    resources:
        mem_mb=4000,
    params:
        spec=CONTRACT.spec_of(LAYOUT.DATA),
    shell:
        "whcore binarize-own --spec {params.spec:q} > {log:q} 2>&1"


rule leaderboard:
    """Score your ProteinGym file as ProteinGym's supervised leaderboard scores an assay."""
    input:
        CONTRACT.inputs_of(table("leaderboard_{dataset}")),
    output:
        table("leaderboard_{dataset}"),
    log:
        LAYOUT.log(table("leaderboard_{dataset}")),
    wildcard_constraints:
        dataset=WILDCARDS.leaderboard_datasets,
    conda:
        ENV
    threads: config["train_threads"]
    params:
        spec=CONTRACT.spec_of(table("leaderboard_{dataset}")),
    shell:
        "whcore leaderboard --spec {params.spec:q} > {log:q} 2>&1"


rule epistasis:
    """Selected networks' spectra: top interactions, energy by number of sites and site set."""
    input:
        data=LAYOUT.DATA,
        selected=table("real_selected"),
    output:
        interactions=table("epistasis_{dataset}"),
        energy=table("epistasis_energy_{dataset}"),
        sites=table("epistasis_sites_{dataset}"),
    log:
        LAYOUT.log(table("epistasis_{dataset}")),
    wildcard_constraints:
        dataset=WILDCARDS.epistasis_datasets,
    conda:
        ENV
    threads: config["train_threads"]
    resources:
        gpu=GPU,
        mem_mb=8000,
        runtime=minutes_per_attempt(240),
    params:
        spec=CONTRACT.spec_of(table("epistasis_{dataset}")),
    shell:
        "whcore epistasis --spec {params.spec:q} --selected {input.selected:q} "
        "--threads {threads} > {log:q} 2>&1"


rule epistasis_figure:
    """Learned energy by number of sites and the site-by-site heatmap, per network (PDF, PNG)."""
    input:
        tables=[
            table("epistasis_{dataset}"),
            table("epistasis_energy_{dataset}"),
            table("epistasis_sites_{dataset}"),
        ],
    output:
        pdf=f"{figure_stem('epistasis_{dataset}')}.pdf",
        png=report(
            f"{figure_stem('epistasis_{dataset}')}.png",
            caption="../report/epistasis.rst",
            category="Learned epistasis",
            labels={"dataset": "{dataset}", "run": config["run_name"]},
        ),
    log:
        LAYOUT.figure_log("epistasis_{dataset}"),
    wildcard_constraints:
        dataset=WILDCARDS.epistasis_datasets,
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(f"{figure_stem('epistasis_{dataset}')}.pdf"),
        code=DATASET_FIGURES["epistasis"].code,
        run=config["run_name"],
    shell:
        "whcore epistasis-figure --spec {params.spec:q} --tables {input.tables:q} > {log:q} 2>&1"
