"""The paper pipeline: the job contract, training jobs, baselines, analyses, aggregation,
claims, figures and the `whcore` command line."""
