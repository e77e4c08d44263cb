"""The jobs of a validated workflow config: each job's typed spec, inputs and labels.

``JobPlan`` builds every job of the enabled experiments, keyed by its first output path (the
paths come from ``layout``, the specs are ``jobspec``'s kinds); ``contract.Contract`` answers the
workflow's and the command line's questions about them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from ..core.footprint import job_memory_mb, step_rows
from ..data.custom import raw_file_name
from ..data.datasets import REGISTRY
from ..data.folds import FOLDS
from .canonical import canonical, training_groups
from .config import dataset_settings, protocol_datasets, user_datasets
from .figures.registry import FIGURES
from .jobspec import (
    AGGREGATE_TABLES,
    AblationSpec,
    AggregateSpec,
    BaselinesSpec,
    ClaimsSpec,
    DownloadUserSpec,
    EntacmaeaEnergySpec,
    EpistasisFigureSpec,
    EpistasisSpec,
    FigureSpec,
    JobSpec,
    TargetSpec,
    TrainSpec,
    UserDataSpec,
    training_defaults,
)
from .layout import Layout

__all__ = ["CLAIM_TABLES", "EXPERIMENT_OF_FIGURES", "Job", "JobPlan", "own_data_only"]

# The tables the claims are checked against ("ablation": one table per ablation dataset).
CLAIM_TABLES = {
    "spectrum": ("spectrum_selected", "spectrum_epochs"),
    "synthetic": ("synthetic_selected", "synthetic_runs"),
    "real": ("real_selected",),
    "protocol": ("protocol",),
    "ablation": ("ablation",),
    "entacmaea_energy": ("entacmaea_energy",),
}
# The experiment whose tables each figure module draws.
EXPERIMENT_OF_FIGURES = {
    "spectrum": "spectrum",
    "synthetic": "synthetic",
    "real": "real",
    "ablation": "ablation",
    "entacmaea": "entacmaea_energy",
    "protocol": "protocol",
}


def own_data_only(config: dict) -> bool:
    """Whether a validated config's datasets are all the user's own (no experiment but the
    real one, every real dataset given by file or url): its report compares the methods on
    them instead of checking the paper's claims."""
    others = ("spectrum", "synthetic", "ablation", "entacmaea_energy")
    datasets = set(config["real"]["datasets"])
    return (
        config["real"]["enabled"]
        and not any(config[e]["enabled"] for e in others)
        and bool(datasets)
        and datasets == set(user_datasets(config))
    )


@dataclass(frozen=True)
class Job:
    """One job: its spec (of its kind, with its outputs) and the files it reads."""

    spec: JobSpec = field(hash=False)
    inputs: tuple[str, ...] = ()
    labels: dict = field(default_factory=dict, hash=False)  # what the workflow selects on
    mem_mb: int | None = None  # what a scheduler is asked for (training jobs)

    @property
    def kind(self) -> str:
        return self.spec.KIND

    @property
    def spec_json(self) -> str:
        return self.spec.to_json()


def _memory_mb(method: str, grid: list[dict], training: dict, rows: int, n: int) -> int:
    """The memory a training job asks a scheduler for (``whcore.core.footprint``), from its
    filled-in training settings and the (rows, n) of its table."""
    members = len(training["seeds"]) * len(grid) if training["vectorize"] else 1
    batch = training["batch_size"]
    return job_memory_mb(
        n, training["width"], members, step_rows(method, grid, n, batch), rows * (n + 1)
    )


class JobPlan:
    """Every job of a validated config, keyed by its first output path."""

    def __init__(self, config: dict):
        self.config = config
        self.layout = Layout(config["run_name"])
        self.jobs: dict[str, Job] = {}
        self._targets: dict[str, dict[str, dict]] = {}
        self._add_targets()
        self._add_user_data()
        self._add_training()
        self._add_baselines()
        self._add_analyses()
        self._add_aggregations()
        self._add_figures_and_claims()
        self._add_epistasis()

    def outputs(self, kind: str, **labels) -> list[str]:
        return sorted(
            path
            for path, job in self.jobs.items()
            if job.kind == kind and all(job.labels.get(k) == v for k, v in labels.items())
        )

    def enabled(self, experiment: str) -> bool:
        if experiment == "protocol":  # part of the real experiment, for the datasets asking
            return bool(protocol_datasets(self.config))
        return self.config[experiment]["enabled"]

    def own_data_only(self) -> bool:
        return own_data_only(self.config)

    def aggregate_inputs(self, experiment: str, dataset: str | None = None) -> dict[str, list[str]]:
        """An aggregation's input files by role (the `whcore aggregate` options); the
        protocol's are those of one dataset."""
        labels = {"experiment": experiment}
        if experiment == "protocol":
            labels["dataset"] = dataset
        inputs = {"runs": self.outputs("train", **labels)}
        if experiment == "spectrum":
            inputs["spectra"] = self.spectra()
            inputs["targets"] = self.outputs("target", experiment="spectrum")
        if experiment in ("real", "protocol"):
            inputs["baselines"] = self.outputs("baselines", **labels)
        return inputs

    def spectra(self) -> list[str]:
        return sorted(
            job.spec.outputs["spectra"]
            for job in self.jobs.values()
            if job.kind == "train" and "spectra" in job.spec.outputs
        )

    def _add(
        self,
        path: str,
        kind: type[JobSpec],
        spec: dict,
        inputs: tuple[str, ...] | None = None,
        labels: dict | None = None,
    ) -> None:
        """The job of ``kind`` whose first output is ``path``: its spec checked and canonical,
        its inputs those its spec names unless given."""
        spec = kind.from_dict(canonical(spec), f"job {path}")
        inputs = spec.inputs() if inputs is None else inputs
        self.jobs[path] = Job(spec, inputs, labels or {})

    # -- synthetic targets

    def _add_target(self, experiment, dataset, family, n, max_degree, k, seed) -> None:
        path = self.layout.target.format(experiment=experiment, dataset=dataset)
        spec = {
            "family": family,
            "n": n,
            "max_degree": max_degree,
            "k": k,
            "seed": seed,
            "outputs": {"target": path},
        }
        self._add(path, TargetSpec, spec, labels={"experiment": experiment})
        self._targets.setdefault(experiment, {})[dataset] = {**spec, "path": path}

    def _add_targets(self) -> None:
        exp, syn = self.config["spectrum"], self.config["synthetic"]
        if exp["enabled"]:
            for draw in range(exp["draws"]):
                self._add_target(
                    "spectrum", f"draw{draw}", "degree_ladder", exp["n"], exp["max_degree"],
                    None, draw,
                )  # fmt: skip
        if syn["enabled"]:
            for n, draw in itertools.product(syn["ns"], range(syn["draws"])):
                self._add_target(
                    "synthetic", f"n{n}_draw{draw}", "random_sparse", n, syn["max_degree"],
                    syn["k"], draw,
                )  # fmt: skip

    # -- network training

    def _add_train(
        self, experiment, dataset, group, settings, data, training, labels, runtime,
        table=None, fold=None,
    ):  # fmt: skip
        """One training job: a group of configurations (method, group tag, [params]) on one
        data split (for the protocol, a held-out fold: ``fold``, (scheme, fold)). Runtime
        cells (those whose times a figure or claim reads) train one model at a time, so that
        their times are per model, as the paper measured them; elsewhere a stacked model's
        epoch time is shared equally by its members (records: stack_size). ``table``: (rows,
        n) of the data it reads, or None where unknown before it is made."""
        method, tag, params_list = group
        if fold is None:
            wildcards = {
                "experiment": experiment,
                "dataset": dataset,
                "method": method,
                "group": tag,
                "size": data["train_size"],
                "dseed": data["data_seed"],
            }
            outputs = {"records": self.layout.records.format(**wildcards)}
        else:
            scheme, held_out = fold
            records = self.layout.protocol_records.format(
                dataset=dataset, scheme=scheme, method=method, group=tag, fold=held_out
            )
            outputs = {"records": records}
        if experiment == "spectrum":
            outputs["spectra"] = self.layout.spectra.format(**wildcards)
        training = {k: v for k, v in training.items() if k != "log_every"}
        if runtime:
            training["vectorize"] = False
        spec = {
            "labels": labels,
            "method": method,
            "grid": params_list,
            "data": data,
            "training": {**training, "seeds": list(settings["seeds"])},
            "spectrum": experiment == "spectrum",
            "outputs": outputs,
        }
        # TrainSpec fills the training defaults: one canonical spec
        path = outputs["records"]
        self._add(path, TrainSpec, spec, labels={"experiment": experiment, "dataset": dataset})
        if table is not None:
            memory = _memory_mb(method, params_list, self.jobs[path].spec.training, *table)
            self.jobs[path] = replace(self.jobs[path], mem_mb=memory)

    def _add_training(self) -> None:
        config = self.config
        exp = config["spectrum"]
        if exp["enabled"]:
            for (dataset, target), size, dseed, group in itertools.product(
                self._targets["spectrum"].items(),
                exp["train_sizes"],
                range(exp["data_seeds"]),
                training_groups(exp["methods"]),
            ):
                data = {
                    "source": "synthetic", "path": target["path"], "train_size": size,
                    "val_size": "rest", "test_size": 0, "data_seed": dseed, "standardize": False,
                }  # fmt: skip
                labels = {"experiment": "spectrum", "dataset": dataset, "draw": target["seed"]}
                self._add_train(
                    "spectrum", dataset, group, exp, data, exp["training"], labels,
                    runtime=False, table=(2 ** exp["n"], exp["n"]),
                )  # fmt: skip
        exp = config["synthetic"]
        if exp["enabled"]:
            # Figures 4b and A6 and the speed-up claim read the per-model times of one draw.
            timed_draw = config["spectrum"]["figure_draw"]
            for (dataset, target), c, dseed, group in itertools.product(
                self._targets["synthetic"].items(),
                exp["cs"],
                range(exp["data_seeds"]),
                training_groups(exp["methods"]),
            ):
                size = c * exp["samples_per_c"] * target["n"]
                data = {
                    "source": "synthetic",
                    "path": target["path"],
                    "train_size": size,
                    "val_size": int(exp["val_factor"] * size),
                    "test_size": int(exp["test_factor"] * size),
                    "data_seed": dseed,
                    "standardize": exp["standardize"],
                }
                labels = {
                    "experiment": "synthetic", "dataset": dataset, "n": target["n"], "c": c,
                    "draw": target["seed"],
                }  # fmt: skip
                self._add_train(
                    "synthetic", dataset, group, exp, data, exp["training"], labels,
                    runtime=target["seed"] == timed_draw,
                    table=(size + data["val_size"] + data["test_size"], target["n"]),
                )  # fmt: skip
        real = config["real"]
        if real["enabled"]:
            for name in real["datasets"]:
                ds = dataset_settings(config, name)
                for size, dseed, group in itertools.product(
                    ds["train_sizes"], range(real["data_seeds"]), training_groups(ds["methods"])
                ):
                    self._add_train(
                        "real", name, group, real, self._real_data(name, ds, size, dseed),
                        ds["training"], {"experiment": "real", "dataset": name},
                        runtime=name == real["runtime_dataset"],
                        table=(REGISTRY[name].rows, REGISTRY[name].n) if name in REGISTRY else None,
                    )  # fmt: skip
            for name, scheme, fold in self._protocol_folds():
                ds = dataset_settings(config, name)
                for group in training_groups(ds["methods"]):
                    self._add_train(
                        "protocol", name, group, real, self._protocol_data(name, scheme, fold),
                        ds["training"], {"experiment": "protocol", "dataset": name},
                        runtime=False, fold=(scheme, fold),
                    )  # fmt: skip

    def _protocol_folds(self) -> list[tuple[str, str, int]]:
        """(dataset, split scheme, held-out fold) of every unit of ProteinGym's protocol."""
        return [
            (name, scheme, fold)
            for name, schemes in protocol_datasets(self.config).items()
            for scheme in schemes
            for fold in range(FOLDS)
        ]

    def _protocol_data(self, name: str, scheme: str, fold: int) -> dict:
        """A held-out fold of a dataset (validation carved from the other folds): networks
        and baselines read exactly this."""
        return {
            "source": "table",
            "path": Layout.data(name),
            "data_seed": 0,
            "folds": {"scheme": scheme, "fold": fold},
            "standardize": self.config["real"]["standardize"],
        }

    def _real_data(self, name: str, ds: dict, size: int, dseed: int) -> dict:
        """The split of a real dataset: networks and baselines read exactly this."""
        return {
            "source": "table",
            "path": Layout.data(name),
            "train_size": size,
            "val_size": ds["val_size"],
            "test_size": ds["test_size"],
            "data_seed": dseed,
            "standardize": self.config["real"]["standardize"],
        }

    # -- the user's datasets (by configuration)

    def _add_user_data(self) -> None:
        """A dataset given by file (or url and sha256): its download, then its binarization
        to ``resources/data/<name>.parquet`` as every real dataset."""
        if not self.config["real"]["enabled"]:
            return
        for name, source in user_datasets(self.config).items():
            raw = source.get("file")
            if raw is None:
                raw = Layout.RAW.format(dataset=name, filename=raw_file_name(source))
                spec = {"dataset": name, "url": source["url"], "sha256": source["sha256"],
                        "outputs": {"raw": raw}}  # fmt: skip
                self._add(raw, DownloadUserSpec, spec, labels={"dataset": name})
            data = Layout.data(name)
            spec = {"dataset": name, "raw": raw, "source": source, "outputs": {"data": data}}
            self._add(data, UserDataSpec, spec, labels={"dataset": name})

    def _add_epistasis(self) -> None:
        """For each analysed dataset: the spectra of the selected standard and HashWH networks
        (top interactions, energy by degree) and their figure."""
        config, settings = self.config, self.config["epistasis"]
        if not (config["real"]["enabled"] and settings["enabled"]):
            return
        names = settings["datasets"]
        names = list(user_datasets(config)) if names is None else names
        selected = self.layout.table_path("real_selected")
        for name in names:
            ds = dataset_settings(config, name)
            tables = {
                "interactions": self.layout.table_path(f"epistasis_{name}"),
                "energy": self.layout.table_path(f"epistasis_energy_{name}"),
                "sites": self.layout.table_path(f"epistasis_sites_{name}"),
            }
            training = {**training_defaults(), **ds["training"]}
            training.pop("log_every", None)
            spec = {
                "dataset": name,
                "data": self._real_data(name, ds, max(ds["train_sizes"]), 0),
                "methods": [m for m in ("standard", "hashwh") if m in ds["methods"]],
                "training": training,
                "top": settings["top"],
                "spright": {"m": settings["m"], "d": settings["d"]},
                "outputs": tables,
            }
            inputs = (Layout.data(name), selected)
            self._add(tables["interactions"], EpistasisSpec, spec, inputs)
            stem = self.layout.figure_stem(f"epistasis_{name}")
            title = config["real"]["datasets"][name].get("title", name)
            figure = {"dataset": name, "title": title, "outputs": {"stem": stem}}
            self._add(
                f"{stem}.pdf",
                EpistasisFigureSpec,
                figure,
                tuple(tables.values()),
                {"dataset": name},
            )

    # -- baselines, analyses

    def _add_baselines(self) -> None:
        real = self.config["real"]
        if not real["enabled"]:
            return
        for name in real["datasets"]:
            ds = dataset_settings(self.config, name)
            for (family, grid), size, dseed in itertools.product(
                ds["baselines"].items(), ds["train_sizes"], range(real["data_seeds"])
            ):
                path = self.layout.baseline.format(
                    dataset=name, family=family, size=size, dseed=dseed
                )
                data = self._real_data(name, ds, size, dseed)
                self._add_baseline(path, name, family, grid, data, {"experiment": "real"})
        for name, scheme, fold in self._protocol_folds():
            for family, grid in dataset_settings(self.config, name)["baselines"].items():
                path = self.layout.protocol_baseline.format(
                    dataset=name, scheme=scheme, family=family, fold=fold
                )
                data = self._protocol_data(name, scheme, fold)
                labels = {"experiment": "protocol", "dataset": name}
                self._add_baseline(path, name, family, grid, data, labels)

    def _add_baseline(self, path, dataset, family, grid, data, labels) -> None:
        """One baseline job: every setting of one family's ``grid`` fitted on one split."""
        spec = {
            "dataset": dataset,
            "family": family,
            "grid": grid,
            "data": data,
            "outputs": {"records": path},
        }
        self._add(path, BaselinesSpec, spec, labels=labels)

    def _add_analyses(self) -> None:
        config = self.config
        if config["ablation"]["enabled"]:
            for name, forest in config["ablation"]["datasets"].items():
                path = self.layout.table_path(f"ablation_{name}")
                spec = {
                    "dataset": name,
                    "data": Layout.data(name),
                    **forest,
                    "steps": config["ablation"]["steps"],
                    "seed": config["ablation"]["seed"],
                    "repeats": config["ablation"]["repeats"],
                    "outputs": {"table": path},
                }
                self._add(path, AblationSpec, spec)
        if config["entacmaea_energy"]["enabled"]:
            path = self.layout.table_path("entacmaea_energy")
            spec = {
                "data": Layout.data("entacmaea"),
                "top": config["entacmaea_energy"]["top"],
                "outputs": {"table": path},
            }
            self._add(path, EntacmaeaEnergySpec, spec)

    # -- aggregation, figures, claims

    def _tables(self, names) -> list[str]:
        paths = []
        for name in names:
            if name == "ablation":
                datasets = self.config["ablation"]["datasets"]
                paths += [self.layout.table_path(f"ablation_{d}") for d in datasets]
            elif name == "protocol":
                paths += [self.layout.protocol_table(d) for d in protocol_datasets(self.config)]
            else:
                paths.append(self.layout.table_path(name))
        return paths

    def _add_aggregations(self) -> None:
        for name in protocol_datasets(self.config):
            path = self.layout.protocol_table(name)
            spec = {"experiment": "protocol", "dataset": name, "outputs": {"protocol": path}}
            inputs = [
                p for paths in self.aggregate_inputs("protocol", name).values() for p in paths
            ]
            labels = {"experiment": "protocol", "dataset": name}
            self._add(path, AggregateSpec, spec, tuple(inputs), labels)
        for experiment, names in AGGREGATE_TABLES.items():
            if experiment == "protocol" or not self.enabled(experiment):
                continue
            spec = {
                "experiment": experiment,
                "outputs": dict(zip(names, self._tables(names))),
            }
            if experiment == "spectrum":
                spec["figure_train_size"] = self.config["spectrum"]["figure_train_size"]
            inputs = [p for paths in self.aggregate_inputs(experiment).values() for p in paths]
            first = self.layout.table_path(names[0])
            self._add(first, AggregateSpec, spec, tuple(inputs), {"experiment": experiment})

    def figure_settings(self) -> dict:
        """What figures need to know from the config."""
        spectrum, synthetic = self.config["spectrum"], self.config["synthetic"]
        return {
            "figure_train_size": spectrum["figure_train_size"],
            "figure_draw": spectrum["figure_draw"],
            "runtime_n": synthetic["runtime_figure"]["n"],
            "runtime_c": synthetic["runtime_figure"]["c"],
            "runtime_dataset": self.config["real"]["runtime_dataset"],
            "run_name": self.config["run_name"],
        }

    def _add_figures_and_claims(self) -> None:
        for figure_id, figure in FIGURES.items():
            if not self.enabled(EXPERIMENT_OF_FIGURES[figure.module]):
                continue
            stem = self.layout.figure_stem(figure_id)
            spec = {
                "figure": figure_id,
                "settings": self.figure_settings(),
                "outputs": {"stem": stem},
            }
            tables = tuple(self._tables(figure.tables))
            self._add(f"{stem}.pdf", FigureSpec, spec, tables, {"figure": figure_id})
        names = [n for e, names in CLAIM_TABLES.items() if self.enabled(e) for n in names]
        outputs = {
            "md": self.layout.claims_md,
            "json": self.layout.claims_json,
            "provenance": self.layout.provenance,
        }
        settings = self.figure_settings()  # the speed claim's runtime cell
        if self.own_data_only():
            settings["report"] = "own_data"
        claims = {"outputs": outputs, "settings": settings}
        self._add(outputs["md"], ClaimsSpec, claims, tuple(self._tables(names)))
