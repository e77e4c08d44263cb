# Configuration, the experiment grid and path helpers shared by all rules.
import json
import os
import re

from snakemake.utils import validate

from whcore import grid
from whcore.datasets import REGISTRY
from whcore.figures.registry import FIGURES

validate(config, schema="../schemas/config.schema.yaml")
grid.check_config(config)

ENV = "../../envs/whcore.yaml"
TABLES = "results/tables"
FIGURE_DIR = "results/figures"

TARGETS = {job.path: job for job in grid.target_jobs(config)}
TRAIN = {job.records: job for job in grid.training_jobs(config)}
BASELINES = {job.records: job for job in grid.baseline_jobs(config)}
# The data mirror is passed to jobs through the environment, never as a rule param (a param
# change would replan every download and everything downstream).
if config["data_mirror"]:
    os.environ["WHCORE_DATA_MIRROR"] = config["data_mirror"]
GPU = 1 if config["device"] == "cuda" else 0


def lookup_job(jobs, path):
    """The grid's job for an output path, or a clear error for a path outside the grid."""
    if path not in jobs:
        raise ValueError(
            f"{path} is not part of the configured grid; request a figure, an experiment's "
            "tables or `all` instead of an arbitrary run file"
        )
    return jobs[path]


def run_path(wildcards, experiment=None):
    experiment = experiment or wildcards.experiment
    return (
        f"results/runs/{experiment}/{wildcards.dataset}/{wildcards.method}/"
        f"{wildcards.config}/size{wildcards.size}_dseed{wildcards.dseed}.parquet"
    )


def raw_file(wildcards):
    return f"resources/raw/{wildcards.dataset}/{REGISTRY[wildcards.dataset].file}"


def runs_of(experiment):
    return sorted(p for p, job in TRAIN.items() if job.experiment == experiment)


def spectra_of_spectrum_runs():
    return sorted(job.spectra for job in TRAIN.values() if job.experiment == "spectrum")


def table_paths(figure_id):
    """The tables a figure reads ("ablation" expands to one table per ablation dataset)."""
    paths = []
    for name in FIGURES[figure_id].tables:
        if name == "ablation":
            paths += [
                f"{TABLES}/ablation_{d}.parquet" for d in config["ablation"]["datasets"]
            ]
        else:
            paths.append(f"{TABLES}/{name}.parquet")
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
    }


EXPERIMENT_OF_FIGURE = {
    "spectrum": "spectrum",
    "synthetic": "synthetic",
    "real": "real",
    "ablation": "ablation",
    "entacmaea": "entacmaea_energy",
}


def enabled_figures():
    return [
        fid
        for fid, fig in FIGURES.items()
        if config[EXPERIMENT_OF_FIGURE[fig.module]]["enabled"]
    ]


def all_outputs():
    outputs = [f"{FIGURE_DIR}/{fid}.pdf" for fid in enabled_figures()]
    return outputs + ["results/claims.md"]


def target_args(wildcards):
    job = lookup_job(
        TARGETS, f"results/synthetic/{wildcards.experiment}/{wildcards.dataset}.json"
    )
    args = f"--family {job.family} --n {job.n} --max-degree {job.max_degree} --seed {job.seed}"
    return args + (f" --k {job.k}" if job.k is not None else "")


def train_shell(extra=""):
    """The training command shared by the training rules."""
    return (
        "whcore train --spec-json {params.spec:q} --threads {threads} --out {output.runs}"
        f"{extra} > {{log}} 2>&1"
    )


def train_input(wildcards, experiment=None):
    return lookup_job(TRAIN, run_path(wildcards, experiment)).data_input


def train_spec(wildcards, experiment=None):
    return json.dumps(lookup_job(TRAIN, run_path(wildcards, experiment)).spec)


def baseline_args(wildcards, output):
    job = lookup_job(BASELINES, output[0])
    return (
        f"--family {job.family} --train-size {job.train_size} --val-size {job.val_size} "
        f"--test-size {job.test_size} --data-seed {job.data_seed} "
        f"--grid {json.dumps(job.grid)!r}"
        + (" --standardize" if job.standardize else "")
    )


def ablation_args(wildcards):
    forest = config["ablation"]["datasets"][wildcards.dataset]
    return (
        f"--train-size {forest['train_size']} --test-size {forest['test_size']} "
        f"--max-depth {forest['max_depth']} --n-trees {forest['n_trees']} "
        f"--steps {config['ablation']['steps']} --seed {config['ablation']['seed']}"
    )


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
        f"{TABLES}/{name}.parquet"
        for experiment, tables in names.items()
        if config[experiment]["enabled"]
        for name in tables
    ]
