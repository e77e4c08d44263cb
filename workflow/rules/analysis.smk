# Analyses that need no network training: the tree-spectrum ablation and Entacmaea's energy.


rule ablation:
    """Prune a random forest's exact spectrum by degree and by amplitude (Figure 5c)."""
    input:
        LAYOUT.DATA,
    output:
        table("ablation_{dataset}"),
    log:
        LAYOUT.log(table("ablation_{dataset}")),
    wildcard_constraints:
        dataset=WILDCARDS.datasets,
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime=minutes_per_attempt(120),
    params:
        spec=CONTRACT.spec_of(table("ablation_{dataset}")),
    shell:
        "whcore ablation --spec {params.spec:q} --threads {threads} > {log:q} 2>&1"


rule entacmaea_energy:
    """Exact spectrum of Entacmaea: energy per degree of the top coefficients (Figure 5d)."""
    input:
        LAYOUT.data("entacmaea"),
    output:
        table("entacmaea_energy"),
    log:
        LAYOUT.log(table("entacmaea_energy")),
    conda:
        ENV
    params:
        spec=CONTRACT.spec_of(table("entacmaea_energy")),
    shell:
        "whcore entacmaea-energy --spec {params.spec:q} > {log:q} 2>&1"
