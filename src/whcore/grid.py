"""The experiment grid: a validated workflow config -> every job, its output paths and spec.

Snakemake asks this module what to run (rules stay thin, the enumeration is testable without
Snakemake). Every training job is one (experiment, dataset or g*, method, hyperparameters,
train size, data seed) with all training seeds inside.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

__all__ = [
    "BASELINE_FAMILIES",
    "NN_METHODS",
    "BaselineJob",
    "ConfigError",
    "TargetJob",
    "TrainJob",
    "baseline_jobs",
    "check_config",
    "dataset_settings",
    "method_grid",
    "param_tag",
    "target_jobs",
    "training_jobs",
]

NN_METHODS = ("standard", "fullwh", "ens", "hashwh")
BASELINE_FAMILIES = ("lasso", "rf", "xgboost")
RUNS = "results/runs"


def param_tag(params: dict) -> str:
    """A path-safe, readable, round-tripping name for a hyperparameter point: b7_lam0.01."""
    if not params:
        return "default"
    return "_".join(f"{key}{format(value, 'g')}" for key, value in sorted(params.items()))


def method_grid(methods: dict) -> list[tuple[str, dict]]:
    """{method: {param: [values]}} -> [(method, {param: value})] over the cartesian product."""
    points = []
    for method, grid in methods.items():
        keys = sorted(grid or {})
        for values in itertools.product(*(grid[k] for k in keys)):
            points.append((method, dict(zip(keys, values))))
    return points


@dataclass(frozen=True)
class TargetJob:
    """One g* draw of a synthetic experiment."""

    experiment: str
    dataset: str  # e.g. draw0, n25_draw1
    family: str
    n: int
    max_degree: int
    k: int | None
    seed: int

    @property
    def path(self) -> str:
        return f"results/synthetic/{self.experiment}/{self.dataset}.json"


@dataclass(frozen=True)
class TrainJob:
    experiment: str
    dataset: str
    method: str
    params: dict = field(hash=False)
    train_size: int
    data_seed: int
    spec: dict = field(hash=False, compare=False)
    data_input: str = ""

    @property
    def stem(self) -> str:
        return (
            f"{self.experiment}/{self.dataset}/{self.method}/{param_tag(self.params)}/"
            f"size{self.train_size}_dseed{self.data_seed}"
        )

    @property
    def records(self) -> str:
        return f"{RUNS}/{self.stem}.parquet"

    @property
    def spectra(self) -> str:
        return f"results/spectra/{self.stem}.parquet"


@dataclass(frozen=True)
class BaselineJob:
    dataset: str
    family: str
    grid: dict = field(hash=False)
    train_size: int
    data_seed: int
    val_size: int | str
    test_size: int | str
    standardize: bool

    @property
    def stem(self) -> str:
        return f"real/{self.dataset}/{self.family}/grid/size{self.train_size}_dseed{self.data_seed}"

    @property
    def records(self) -> str:
        return f"{RUNS}/{self.stem}.parquet"


def _merge(base: dict, override: dict | None) -> dict:
    return {**base, **(override or {})}


def dataset_settings(config: dict, name: str) -> dict:
    """A real dataset's settings with the experiment-level defaults merged in."""
    real = config["real"]
    ds = real["datasets"][name]
    return {
        **ds,
        "training": _merge(real["training"], ds.get("training")),
        "methods": _merge(real["methods"], ds.get("methods")),
        "baselines": _merge(real["baselines"], ds.get("baselines")),
    }


def target_jobs(config: dict) -> list[TargetJob]:
    jobs = []
    spec = config["spectrum"]
    if spec["enabled"]:
        for draw in range(spec["draws"]):
            jobs.append(
                TargetJob(
                    "spectrum",
                    f"draw{draw}",
                    "degree_ladder",
                    spec["n"],
                    spec["max_degree"],
                    None,
                    draw,
                )
            )
    syn = config["synthetic"]
    if syn["enabled"]:
        for n, draw in itertools.product(syn["ns"], range(syn["draws"])):
            jobs.append(
                TargetJob(
                    "synthetic",
                    f"n{n}_draw{draw}",
                    "random_sparse",
                    n,
                    syn["max_degree"],
                    syn["k"],
                    draw,
                )
            )
    return jobs


def _spec(labels, method, params, data, training, seeds, device, spectrum=False) -> dict:
    return {
        "labels": labels,
        "method": method,
        "params": params,
        "data": data,
        "training": {**training, "seeds": list(seeds), "device": device},
        "spectrum": spectrum,
    }


def _spectrum_jobs(config: dict, targets: dict) -> list[TrainJob]:
    exp = config["spectrum"]
    jobs = []
    for (dataset, target), size, dseed, (method, params) in itertools.product(
        targets.items(),
        exp["train_sizes"],
        range(exp["data_seeds"]),
        method_grid(exp["methods"]),
    ):
        data = {
            "source": "synthetic",
            "path": target.path,
            "train_size": size,
            "val_size": "rest",
            "test_size": 0,
            "data_seed": dseed,
            "standardize": False,
        }
        labels = {"experiment": "spectrum", "dataset": dataset, "draw": target.seed}
        spec = _spec(
            labels,
            method,
            params,
            data,
            exp["training"],
            exp["seeds"],
            config["device"],
            spectrum=True,
        )
        jobs.append(TrainJob("spectrum", dataset, method, params, size, dseed, spec, target.path))
    return jobs


def _synthetic_jobs(config: dict, targets: dict) -> list[TrainJob]:
    exp = config["synthetic"]
    jobs = []
    for (dataset, target), c, dseed, (method, params) in itertools.product(
        targets.items(),
        exp["cs"],
        range(exp["data_seeds"]),
        method_grid(exp["methods"]),
    ):
        size = c * exp["samples_per_c"] * target.n
        data = {
            "source": "synthetic",
            "path": target.path,
            "train_size": size,
            "val_size": int(exp["val_factor"] * size),
            "test_size": int(exp["test_factor"] * size),
            "data_seed": dseed,
            "standardize": exp["standardize"],
        }
        labels = {
            "experiment": "synthetic",
            "dataset": dataset,
            "n": target.n,
            "c": c,
            "draw": target.seed,
        }
        spec = _spec(labels, method, params, data, exp["training"], exp["seeds"], config["device"])
        jobs.append(TrainJob("synthetic", dataset, method, params, size, dseed, spec, target.path))
    return jobs


def real_data_path(name: str) -> str:
    return f"resources/data/{name}.parquet"


def _real_jobs(config: dict) -> list[TrainJob]:
    real = config["real"]
    jobs = []
    for name in real["datasets"]:
        ds = dataset_settings(config, name)
        for size, dseed, (method, params) in itertools.product(
            ds["train_sizes"], range(real["data_seeds"]), method_grid(ds["methods"])
        ):
            data = {
                "source": "table",
                "path": real_data_path(name),
                "train_size": size,
                "val_size": ds["val_size"],
                "test_size": ds["test_size"],
                "data_seed": dseed,
                "standardize": real["standardize"],
            }
            spec = _spec(
                {"experiment": "real", "dataset": name},
                method,
                params,
                data,
                ds["training"],
                real["seeds"],
                config["device"],
            )
            jobs.append(
                TrainJob("real", name, method, params, size, dseed, spec, real_data_path(name))
            )
    return jobs


def training_jobs(config: dict) -> list[TrainJob]:
    """Every network training job of the enabled experiments."""
    targets = {}
    for t in target_jobs(config):
        targets.setdefault(t.experiment, {})[t.dataset] = t
    jobs = []
    if config["spectrum"]["enabled"]:
        jobs += _spectrum_jobs(config, targets["spectrum"])
    if config["synthetic"]["enabled"]:
        jobs += _synthetic_jobs(config, targets["synthetic"])
    if config["real"]["enabled"]:
        jobs += _real_jobs(config)
    return jobs


def baseline_jobs(config: dict) -> list[BaselineJob]:
    """One job per (dataset, family, train size, data seed), the family's grid inside."""
    real = config["real"]
    if not real["enabled"]:
        return []
    jobs = []
    for name in real["datasets"]:
        ds = dataset_settings(config, name)
        for (family, grid), size, dseed in itertools.product(
            ds["baselines"].items(), ds["train_sizes"], range(real["data_seeds"])
        ):
            jobs.append(
                BaselineJob(
                    name,
                    family,
                    grid,
                    size,
                    dseed,
                    ds["val_size"],
                    ds["test_size"],
                    real["standardize"],
                )
            )
    return jobs


class ConfigError(ValueError):
    """A configuration that validates against the schema but cannot be run."""


def _check_methods(methods: dict, n: int, where: str) -> None:
    for method, grid in methods.items():
        for key in ("b", "m"):
            for value in (grid or {}).get(key, []):
                if value > n:
                    raise ConfigError(
                        f"config key {where}.methods.{method}.{key}: {key} = {value} exceeds "
                        f"the input dimension n = {n}; use values <= {n}"
                    )
        if method == "fullwh" and n > 20:
            raise ConfigError(
                f"config key {where}.methods.fullwh: FullWH needs all 2^n inputs and n = {n} "
                "is too large (at most 20); remove fullwh there"
            )


def check_config(config: dict) -> None:
    """Cross-field checks the schema cannot express; messages name the key and the fix."""
    from .datasets import REGISTRY

    spec = config["spectrum"]
    if spec["enabled"]:
        _check_methods(spec["methods"], spec["n"], "spectrum")
        if spec["max_degree"] > spec["n"]:
            raise ConfigError(f"config key spectrum.max_degree: {spec['max_degree']} > n")
        if spec["figure_train_size"] not in spec["train_sizes"]:
            raise ConfigError(
                "config key spectrum.figure_train_size: "
                f"{spec['figure_train_size']} is not one of spectrum.train_sizes"
            )
        if spec["figure_draw"] >= spec["draws"]:
            raise ConfigError("config key spectrum.figure_draw: must be < spectrum.draws")
        if max(spec["train_sizes"]) >= 2 ** spec["n"]:
            raise ConfigError(
                "config key spectrum.train_sizes: leave points for validation "
                f"(sizes must be < 2^n = {2 ** spec['n']})"
            )
    syn = config["synthetic"]
    if syn["enabled"]:
        for n in syn["ns"]:
            _check_methods(syn["methods"], n, "synthetic")
        runtime = syn["runtime_figure"]
        if runtime["n"] not in syn["ns"] or runtime["c"] not in syn["cs"]:
            raise ConfigError(
                "config key synthetic.runtime_figure: n and c must be among "
                "synthetic.ns and synthetic.cs"
            )
    real = config["real"]
    if real["enabled"]:
        for name in real["datasets"]:
            ds = dataset_settings(config, name)
            _check_methods(ds["methods"], REGISTRY[name].n, f"real.datasets.{name}")
        if real["runtime_dataset"] not in real["datasets"]:
            raise ConfigError(
                "config key real.runtime_dataset: "
                f"{real['runtime_dataset']!r} is not one of real.datasets"
            )
