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
            pdf=f"{FIGURE_DIR}/{figure_id}.pdf",
            png=report(
                f"{FIGURE_DIR}/{figure_id}.png",
                caption="../report/figure.rst",
                category="Figures",
                labels={"figure": figure_id},
            ),
        log:
            f"logs/figures/{figure_id}.log",
        conda:
            ENV
        params:
            figure=figure_id,
            settings=json.dumps(figure_settings()),
            caption=FIGURES[figure_id].caption,
            stem=lambda wildcards, output: os.path.splitext(output.pdf)[0],
        shell:
            "whcore figure {params.figure} --tables {input.tables} --settings {params.settings:q} "
            "--out {params.stem} > {log} 2>&1"
