# One named rule per paper figure (`snakemake fig5a_real_r2`), reading tables only. The
# plotting module is an input, so editing a figure's code reruns that figure and nothing else.

for figure_id in enabled_figures():

    rule:
        name:
            figure_id
        input:
            tables=table_paths(figure_id),
            code=[
                str(FIGURES[figure_id].source),
                str(FIGURES[figure_id].source.with_name("style.py")),
            ],
        output:
            pdf=f"{LAYOUT.figure.format(figure=figure_id)}.pdf",
            png=report(
                f"{LAYOUT.figure.format(figure=figure_id)}.png",
                caption="../report/figure.rst",
                category="Figures",
                labels={"figure": figure_id, "run": config["run_name"]},
            ),
        log:
            f"{LAYOUT.logs}/figures/{figure_id}.log",
        conda:
            ENV
        params:
            spec=json.dumps(
                {
                    "figure": figure_id,
                    "settings": figure_settings(),
                    "outputs": {"stem": LAYOUT.figure.format(figure=figure_id)},
                },
                sort_keys=True,
            ),
            caption=FIGURES[figure_id].caption,
        shell:
            "whcore figure --spec {params.spec:q} --tables {input.tables:q} > {log:q} 2>&1"
