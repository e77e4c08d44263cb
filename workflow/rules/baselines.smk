# Baselines on the real datasets: one job per (dataset, family, train size, data seed),
# the family's whole hyperparameter grid inside, on exactly the networks' splits.


rule baselines:
    """Fit a baseline family's grid (Lasso, random forest, XGBoost) on one split of a dataset."""
    input:
        CONTRACT.inputs_of(LAYOUT.baseline),
    output:
        LAYOUT.baseline,
    log:
        LAYOUT.log(LAYOUT.baseline),
    wildcard_constraints:
        family=WILDCARDS.families,
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime=minutes_per_attempt(240),
    params:
        spec=CONTRACT.spec_of(LAYOUT.baseline),
    shell:
        "whcore baselines --spec {params.spec:q} --threads {threads} > {log:q} 2>&1"


use rule baselines as baselines_proteingym with:
    """Fit a baseline family's grid on a held-out fold of ProteinGym's protocol."""
    input:
        CONTRACT.inputs_of(LAYOUT.proteingym_baseline),
    output:
        LAYOUT.proteingym_baseline,
    log:
        LAYOUT.log(LAYOUT.proteingym_baseline),
    wildcard_constraints:
        dataset=WILDCARDS.proteingym_datasets,
        scheme=WILDCARDS.schemes,
        family=WILDCARDS.families,
        fold=r"\d+",
    params:
        spec=CONTRACT.spec_of(LAYOUT.proteingym_baseline),
