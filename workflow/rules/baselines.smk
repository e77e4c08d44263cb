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
        family="|".join(BASELINES),
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime="4h",
    params:
        spec=CONTRACT.spec_of(LAYOUT.baseline),
    shell:
        "whcore baselines --spec {params.spec:q} --threads {threads} > {log:q} 2>&1"
