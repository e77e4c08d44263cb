# One named rule per paper figure (`snakemake fig5a_real_r2`), reading tables only. The digest
# of the plotting code is a param, so editing a figure's code reruns that figure and nothing
# else, and a moved checkout reruns nothing (a path as input would be the checkout's).

for figure_id in CONTRACT.figures():

    rule:
        """Draw one paper figure (PDF and PNG) from its tables."""
        name:
            figure_id
        input:
            tables=CONTRACT.inputs_of(f"{figure_stem(figure_id)}.pdf"),
        output:
            pdf=f"{figure_stem(figure_id)}.pdf",
            png=report(
                f"{figure_stem(figure_id)}.png",
                caption="../report/figure.rst",
                category="Figures",
                labels={"figure": figure_id, "run": config["run_name"]},
            ),
        log:
            LAYOUT.figure_log(figure_id),
        conda:
            ENV
        params:
            spec=CONTRACT.spec_of(f"{figure_stem(figure_id)}.pdf"),
            code=FIGURES[figure_id].code,
            figure=figure_id,
            run=config["run_name"],
            caption=FIGURES[figure_id].caption,
        shell:
            "whcore figure --spec {params.spec:q} --tables {input.tables:q} > {log:q} 2>&1"

    # `snakemake --list-rules` shows each figure's caption.
    describe_rule(rules, figure_id, figure_summary(figure_id))
