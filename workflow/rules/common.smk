# Configuration and the job contract. Every path and every spec comes from
# whcore.pipeline.contract; rules only name a pattern and ask for the job's spec by it.
import json
import os
import re

from whcore.core.methods import METHOD_INFO
from whcore.data.datasets import REGISTRY
from whcore.pipeline.contract import (
    BASELINE_FAMILIES,
    Contract,
    Layout,
    job_environment,
    validate_config,
)
from whcore.pipeline.figures.registry import FIGURES
from whcore.pipeline.guards import hold_run_lock

validate_config(
    config, os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml")
)

ENV = "../../envs/whcore.yaml"
CONTRACT = Contract(config)
LAYOUT = CONTRACT.layout
METHODS = "|".join(METHOD_INFO)
DATASETS = "|".join(REGISTRY)

# Settings that never change a result reach the jobs through the environment, never as rule
# params (a param change would replan every job downstream).
os.environ.update(job_environment(config, os.getpid()))
GPU = 1 if config["device"] == "cuda" else 0


def table(name):
    return LAYOUT.table_path(name)


def raw_file(wildcards):
    return LAYOUT.RAW.format(
        dataset=wildcards.dataset, filename=REGISTRY[wildcards.dataset].file
    )


def table_paths(figure_id):
    """The tables a figure reads ("ablation" expands to one table per ablation dataset)."""
    paths = []
    for name in FIGURES[figure_id].tables:
        if name == "ablation":
            paths += [table(f"ablation_{d}") for d in config["ablation"]["datasets"]]
        else:
            paths.append(table(name))
    return paths


def figure_settings():
    """What figures need to know from the config."""
    spectrum, synthetic = config["spectrum"], config["synthetic"]
    return {
        "figure_train_size": spectrum["figure_train_size"],
        "figure_draw": spectrum["figure_draw"],
        "runtime_n": synthetic["runtime_figure"]["n"],
        "runtime_c": synthetic["runtime_figure"]["c"],
        "runtime_dataset": config["real"]["runtime_dataset"],
        "run_name": config["run_name"],
    }


EXPERIMENT_OF_FIGURE = {
    "spectrum": "spectrum",
    "synthetic": "synthetic",
    "real": "real",
    "ablation": "ablation",
    "entacmaea": "entacmaea_energy",
}

AGGREGATE_TABLES = {
    "spectrum": ["spectrum_selected", "spectrum_epochs", "spectrum_heatmap"],
    "synthetic": ["synthetic_selected", "synthetic_summary", "synthetic_curves"],
    "real": ["real_selected", "real_summary"],
}


def enabled_figures():
    return [
        fid
        for fid, fig in FIGURES.items()
        if config[EXPERIMENT_OF_FIGURE[fig.module]]["enabled"]
    ]


def aggregate_spec(experiment):
    """The aggregation job's spec: its outputs and what it selects on (inputs come as files)."""
    spec = {
        "experiment": experiment,
        "outputs": {name: table(name) for name in AGGREGATE_TABLES[experiment]},
    }
    if experiment == "spectrum":
        spec["figure_train_size"] = config["spectrum"]["figure_train_size"]
    return json.dumps(spec, sort_keys=True)


def claim_tables():
    """The tables of every enabled experiment, which the claims are checked against."""
    names = {
        "spectrum": ["spectrum_selected", "spectrum_epochs"],
        "synthetic": ["synthetic_selected"],
        "real": ["real_selected"],
        "ablation": [f"ablation_{d}" for d in config["ablation"]["datasets"]],
        "entacmaea_energy": ["entacmaea_energy"],
    }
    return [
        table(name)
        for experiment, tables in names.items()
        if config[experiment]["enabled"]
        for name in tables
    ]


def all_tables():
    """Every table of the enabled experiments: targets of `all`, so a lost table is rebuilt."""
    names = [
        name
        for experiment, tables in AGGREGATE_TABLES.items()
        if config[experiment]["enabled"]
        for name in tables
    ]
    return [table(name) for name in names] + claim_tables()


def all_outputs():
    figures = [f"{LAYOUT.figure.format(figure=fid)}.pdf" for fid in enabled_figures()]
    return sorted(set(figures + all_tables())) + [f"{LAYOUT.claims}.md"]


def aggregate_inputs(experiment):
    inputs = {"runs": CONTRACT.outputs("train", experiment=experiment)}
    if experiment == "spectrum":
        inputs["spectra"] = CONTRACT.spectra()
        inputs["targets"] = CONTRACT.outputs("target", experiment="spectrum")
    if experiment == "real":
        inputs["baselines"] = CONTRACT.outputs("baselines")
    return inputs


def aggregate_shell(experiment):
    roles = " ".join(
        f"--{role} {{input.{role}:q}}" for role in aggregate_inputs(experiment)
    )
    return f"whcore aggregate --spec {{params.spec:q}} {roles} > {{log:q}} 2>&1"
