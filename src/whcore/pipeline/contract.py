"""The job contract: a validated workflow config -> every job, its output paths and its spec.

This is the one module that knows where every output lives and what every job is. Snakemake
asks it for each rule's output patterns and, by output path, for the job's spec; the ``whcore``
subcommands take that spec. A spec holds exactly what determines the job's result, in canonical
form (defaults filled, integral numbers as integers, keys sorted), including its outputs; the
device, threads, data mirror and log frequency are passed beside it, so changing them never
reruns a job.

Runs of different configurations live side by side under ``results/<run name>/`` (config key
``run_name``); downloaded and binarized data are shared under ``resources/``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from dataclasses import dataclass, field

from ..core.methods import METHOD_INFO, PRECISIONS, value_schema

__all__ = [
    "AGGREGATE_TABLES",
    "BASELINE_FAMILIES",
    "ConfigError",
    "Contract",
    "Job",
    "Layout",
    "SUBCOMMANDS",
    "canonical",
    "canonical_json",
    "check_config",
    "job_environment",
    "load_contract",
    "validate_config",
    "dataset_settings",
    "method_grid",
    "param_tag",
    "read_yaml",
    "training_groups",
    "user_datasets",
    "yaml_error_line",
]

BASELINE_FAMILIES = ("lasso", "rf", "xgboost")

# The tables each aggregation writes, and the tables the claims are checked against
# ("ablation" stands for one table per ablation dataset).
AGGREGATE_TABLES = {
    "spectrum": ("spectrum_selected", "spectrum_epochs", "spectrum_heatmap"),
    "synthetic": ("synthetic_selected", "synthetic_summary", "synthetic_curves", "synthetic_runs"),
    "real": ("real_selected", "real_summary"),
}
CLAIM_TABLES = {
    "spectrum": ("spectrum_selected", "spectrum_epochs"),
    "synthetic": ("synthetic_selected", "synthetic_runs"),
    "real": ("real_selected",),
    "ablation": ("ablation",),
    "entacmaea_energy": ("entacmaea_energy",),
}
# The `whcore` subcommand that runs each kind of job (it takes the job's spec with --spec).
SUBCOMMANDS = {
    "target": "synthetic",
    "train": "train",
    "baselines": "baselines",
    "ablation": "ablation",
    "entacmaea_energy": "entacmaea-energy",
    "aggregate": "aggregate",
    "figure": "figure",
    "claims": "claims",
    "download_user": "download-user",
    "user_data": "binarize-user",
    "epistasis": "epistasis",
    "epistasis_figure": "epistasis-figure",
}
# Jobs whose output is a figure stem (written as .pdf and .png).
FIGURE_KINDS = ("figure", "epistasis_figure")
# The experiment whose tables each figure module draws.
EXPERIMENT_OF_FIGURES = {
    "spectrum": "spectrum",
    "synthetic": "synthetic",
    "real": "real",
    "ablation": "ablation",
    "entacmaea": "entacmaea_energy",
}


# --- canonical form -------------------------------------------------------------------------------


def canonical(value):
    """``value`` with integral floats as ints (``4.0`` -> ``4``) and mappings' keys sorted, so
    that equal settings written differently give one spec."""
    if isinstance(value, dict):
        return {str(k): canonical(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)  # (beyond 2^53 a float is no count: 1e300 stays 1e+300)
    return value


def canonical_json(value) -> str:
    return json.dumps(canonical(value), sort_keys=True, separators=(",", ":"))


def param_tag(params: dict) -> str:
    """A path-safe, readable name for a hyperparameter point: b7_lam0.01. ``repr`` of a float
    round-trips, so two different values never share a tag."""
    if not params:
        return "default"
    return "_".join(f"{key}{_tag_value(value)}" for key, value in sorted(params.items()))


def _tag_value(value) -> str:
    return value if isinstance(value, str) else repr(canonical(value))


def training_groups(methods: dict) -> list[tuple[str, str, list[dict]]]:
    """The configurations of ``method_grid`` in groups one job trains together: [(method,
    group tag, [params])], a group holding the configurations that differ only in the weights
    stacked members may differ in (``MethodInfo.per_member``: lam, rho)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for method, params in method_grid(methods):
        shared = {k: v for k, v in params.items() if k not in METHOD_INFO[method].per_member}
        groups.setdefault((method, param_tag(shared)), []).append(params)
    return [(method, tag, grid) for (method, tag), grid in groups.items()]


def method_grid(methods: dict) -> list[tuple[str, dict]]:
    """{method: {param: [values]}} -> [(method, {param: value})] over the cartesian product.
    A value equal to the method's default is left out, so writing a default out names the same
    job as leaving it implicit."""
    points = []
    for method, grid in methods.items():
        defaults = canonical(METHOD_INFO[method].defaults)
        keys = sorted(grid or {})
        for values in itertools.product(*(grid[k] for k in keys)):
            params = canonical(dict(zip(keys, values)))
            explicit = {k: v for k, v in params.items() if k not in defaults or defaults[k] != v}
            points.append((method, explicit))
    return points


# --- where outputs live ---------------------------------------------------------------------------


class Layout:
    """Every output path of one run, as patterns with Snakemake wildcards and as paths."""

    RAW = "resources/raw/{dataset}/{filename}"
    DATA = "resources/data/{dataset}.parquet"

    def __init__(self, run: str):
        self.run = run
        self.root = f"results/{run}"
        self.logs = f"logs/{run}"
        self.target = f"{self.root}/synthetic/{{experiment}}/{{dataset}}.json"
        # A training job's outputs are folders holding one file per configuration
        # ({param_tag}.parquet); {group} names what the configurations share (b7, default).
        stem = "{experiment}/{dataset}/{method}/{group}/size{size}_dseed{dseed}"
        self.records = f"{self.root}/runs/{stem}"
        self.spectra = f"{self.root}/spectra/{stem}"
        self.baseline = (
            f"{self.root}/runs/real/{{dataset}}/{{family}}/grid/size{{size}}_dseed{{dseed}}.parquet"
        )
        self.table = f"{self.root}/tables/{{name}}.parquet"
        self.figure = f"{self.root}/figures/{{figure}}"
        self.claims = f"{self.root}/claims"

    def log(self, pattern: str) -> str:
        """The log file of the job writing ``pattern`` (same wildcards, under logs/<run>/)."""
        relative = pattern.removeprefix(f"{self.root}/").removeprefix("resources/")
        return f"{self.logs}/{relative.removesuffix('.parquet').removesuffix('.json')}.log"

    def table_path(self, name: str) -> str:
        return self.table.format(name=name)

    @staticmethod
    def data(dataset: str) -> str:
        return Layout.DATA.format(dataset=dataset)


@dataclass(frozen=True)
class Job:
    """One job: its kind, its spec (with its outputs) and the files it reads."""

    kind: str
    spec: dict = field(hash=False)
    inputs: tuple[str, ...] = ()
    labels: dict = field(default_factory=dict, hash=False)  # what the workflow selects on

    @property
    def spec_json(self) -> str:
        return canonical_json(self.spec)


def _merge(base: dict, override: dict | None) -> dict:
    return {**base, **(override or {})}


def user_datasets(config: dict) -> dict[str, dict]:
    """The real datasets a config gives by file or url: {name: source settings}."""
    from ..data.custom import source_settings

    return {
        name: source_settings(entry)
        for name, entry in config["real"].get("datasets", {}).items()
        if "file" in entry or "url" in entry
    }


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


class Contract:
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

    # -- lookups used by the rules

    def job(self, path: str) -> Job:
        """The job writing ``path``, or a clear error for a path outside the configured grid."""
        if path not in self.jobs:
            raise ValueError(
                f"{path} is not part of the configured grid; request a figure, an experiment's "
                "tables or `all` instead of an arbitrary run file"
            )
        return self.jobs[path]

    def written_by(self, job: Job) -> list[str]:
        """Every path ``job`` writes: its spec's outputs (a figure's stem as its PDF and PNG)."""
        outputs = job.spec["outputs"].values()
        if job.kind in FIGURE_KINDS:
            return [f"{stem}{suffix}" for stem in outputs for suffix in (".pdf", ".png")]
        return list(outputs)

    def all_outputs(self) -> dict[str, Job]:
        """Every output path of every job -> the job writing it."""
        return {path: job for job in self.jobs.values() for path in self.written_by(job)}

    def job_writing(self, path: str) -> Job | None:
        """The job writing ``path``: any of its outputs, or a file inside an output folder (a
        training job's records or spectra); None for a path no job of this config writes."""
        path = os.path.normpath(path)
        outputs = self.all_outputs()
        if path in outputs:
            return outputs[path]
        folder = os.path.dirname(path)  # a configuration's file in a training job's folder
        job = outputs.get(folder)
        return job if job is not None and job.kind == "train" else None

    def command_inputs(self, job: Job) -> dict[str, list[str]]:
        """The file options its subcommand takes beside the spec: {option: [paths]}."""
        if job.kind == "aggregate":
            inputs = self.aggregate_inputs(job.labels["experiment"])
            return {f"--{role}": paths for role, paths in inputs.items()}
        if job.kind in ("figure", "claims", "epistasis_figure"):
            return {"--tables": list(job.inputs)}
        if job.kind == "epistasis":
            return {"--selected": [job.inputs[1]]}
        return {}

    def spec_of(self, pattern: str):
        """A params function for a rule whose output is ``pattern``: wildcards -> spec JSON.
        (A function of the wildcards only, so that Snakemake tracks the spec as a param.)"""
        return lambda wildcards: self.job(pattern.format(**wildcards)).spec_json

    def inputs_of(self, pattern: str):
        return lambda wildcards: list(self.job(pattern.format(**wildcards)).inputs)

    def outputs(self, kind: str, **labels) -> list[str]:
        return sorted(
            path
            for path, job in self.jobs.items()
            if job.kind == kind and all(job.labels.get(k) == v for k, v in labels.items())
        )

    def enabled(self, experiment: str) -> bool:
        return self.config[experiment]["enabled"]

    def targets(self) -> list[str]:
        """What `all` builds: every final output (each figure's PDF and PNG, every table, the
        claims report, its JSON and the provenance table), so that any of them lost after a
        run is rebuilt, never reported as "Nothing to be done"."""
        outputs = []
        for job in self.jobs.values():
            if job.kind in FIGURE_KINDS:
                stem = job.spec["outputs"]["stem"]
                outputs += [f"{stem}.pdf", f"{stem}.png"]
            elif job.kind in ("aggregate", "ablation", "entacmaea_energy", "claims", "epistasis"):
                outputs += job.spec["outputs"].values()
        return sorted(outputs)

    def figures(self) -> list[str]:
        """The ids of the figures of the enabled experiments."""
        return [job.labels["figure"] for job in self.jobs.values() if job.kind == "figure"]

    def aggregate_inputs(self, experiment: str) -> dict[str, list[str]]:
        """An aggregation's input files by role (the `whcore aggregate` options)."""
        inputs = {"runs": self.outputs("train", experiment=experiment)}
        if experiment == "spectrum":
            inputs["spectra"] = self.spectra()
            inputs["targets"] = self.outputs("target", experiment="spectrum")
        if experiment == "real":
            inputs["baselines"] = self.outputs("baselines")
        return inputs

    def spectra(self) -> list[str]:
        return sorted(
            job.spec["outputs"]["spectra"]
            for job in self.jobs.values()
            if job.kind == "train" and "spectra" in job.spec["outputs"]
        )

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
        self.jobs[path] = Job("target", spec, (), {"experiment": experiment})
        self._targets.setdefault(experiment, {})[dataset] = {**spec, "path": path}

    def _add_targets(self) -> None:
        spec, syn = self.config["spectrum"], self.config["synthetic"]
        if spec["enabled"]:
            for draw in range(spec["draws"]):
                self._add_target(
                    "spectrum", f"draw{draw}", "degree_ladder", spec["n"], spec["max_degree"],
                    None, draw,
                )  # fmt: skip
        if syn["enabled"]:
            for n, draw in itertools.product(syn["ns"], range(syn["draws"])):
                self._add_target(
                    "synthetic", f"n{n}_draw{draw}", "random_sparse", n, syn["max_degree"],
                    syn["k"], draw,
                )  # fmt: skip

    # -- network training

    def _add_train(self, experiment, dataset, group, settings, data, training, labels, runtime):
        """One training job: a group of configurations (method, group tag, [params]) on one
        data split. Runtime cells (those whose times a figure or claim reads) train one model
        at a time, so that their times are per model, as the paper measured them; elsewhere a
        stacked model's epoch time is shared equally by its members (records: stack_size)."""
        method, tag, params_list = group
        wildcards = {
            "experiment": experiment,
            "dataset": dataset,
            "method": method,
            "group": tag,
            "size": data["train_size"],
            "dseed": data["data_seed"],
        }
        outputs = {"records": self.layout.records.format(**wildcards)}
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
        from .spec import validate_spec  # fills the training defaults: one canonical spec

        spec = canonical(validate_spec(spec, f"job {outputs['records']}"))
        job = Job("train", spec, (data["path"],), {"experiment": experiment})
        self.jobs[outputs["records"]] = job

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
                    "spectrum", dataset, group, exp, data, exp["training"], labels, runtime=False
                )
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
                    )  # fmt: skip

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
        from ..data.custom import raw_file_name

        if not self.config["real"]["enabled"]:
            return
        for name, source in user_datasets(self.config).items():
            raw = source.get("file")
            if raw is None:
                raw = Layout.RAW.format(dataset=name, filename=raw_file_name(source))
                spec = {"dataset": name, "url": source["url"], "sha256": source["sha256"],
                        "outputs": {"raw": raw}}  # fmt: skip
                self.jobs[raw] = Job("download_user", canonical(spec), (), {"dataset": name})
            data = Layout.data(name)
            spec = {"dataset": name, "raw": raw, "source": source, "outputs": {"data": data}}
            self.jobs[data] = Job("user_data", canonical(spec), (raw,), {"dataset": name})

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
            }
            from .spec import training_defaults

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
            self.jobs[tables["interactions"]] = Job("epistasis", canonical(spec), inputs)
            stem = self.layout.figure.format(figure=f"epistasis_{name}")
            title = config["real"]["datasets"][name].get("title", name)
            figure = {"dataset": name, "title": title, "outputs": {"stem": stem}}
            self.jobs[f"{stem}.pdf"] = Job(
                "epistasis_figure", canonical(figure), tuple(tables.values()), {"dataset": name}
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
                spec = {
                    "dataset": name,
                    "family": family,
                    "grid": grid,
                    "data": self._real_data(name, ds, size, dseed),
                    "outputs": {"records": path},
                }
                self.jobs[path] = Job("baselines", canonical(spec), (Layout.data(name),))

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
                    "outputs": {"table": path},
                }
                self.jobs[path] = Job("ablation", canonical(spec), (Layout.data(name),))
        if config["entacmaea_energy"]["enabled"]:
            path = self.layout.table_path("entacmaea_energy")
            spec = {
                "data": Layout.data("entacmaea"),
                "top": config["entacmaea_energy"]["top"],
                "outputs": {"table": path},
            }
            self.jobs[path] = Job("entacmaea_energy", spec, (Layout.data("entacmaea"),))

    # -- aggregation, figures, claims

    def _tables(self, names) -> list[str]:
        paths = []
        for name in names:
            if name == "ablation":
                datasets = self.config["ablation"]["datasets"]
                paths += [self.layout.table_path(f"ablation_{d}") for d in datasets]
            else:
                paths.append(self.layout.table_path(name))
        return paths

    def _add_aggregations(self) -> None:
        for experiment, names in AGGREGATE_TABLES.items():
            if not self.enabled(experiment):
                continue
            spec = {
                "experiment": experiment,
                "outputs": dict(zip(names, self._tables(names))),
            }
            if experiment == "spectrum":
                spec["figure_train_size"] = self.config["spectrum"]["figure_train_size"]
            inputs = [p for paths in self.aggregate_inputs(experiment).values() for p in paths]
            job = Job("aggregate", canonical(spec), tuple(inputs), {"experiment": experiment})
            self.jobs[self.layout.table_path(names[0])] = job

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
        from .figures.registry import FIGURES

        for figure_id, figure in FIGURES.items():
            if not self.enabled(EXPERIMENT_OF_FIGURES[figure.module]):
                continue
            stem = self.layout.figure.format(figure=figure_id)
            spec = {
                "figure": figure_id,
                "settings": self.figure_settings(),
                "outputs": {"stem": stem},
            }
            tables = tuple(self._tables(figure.tables))
            self.jobs[f"{stem}.pdf"] = Job("figure", canonical(spec), tables, {"figure": figure_id})
        names = [n for e, names in CLAIM_TABLES.items() if self.enabled(e) for n in names]
        outputs = {
            "md": f"{self.layout.claims}.md",
            "json": f"{self.layout.claims}.json",
            "provenance": f"{self.layout.root}/provenance.tsv",
        }
        settings = self.figure_settings()  # the speed claim's runtime cell
        claims_spec = {"outputs": outputs, "settings": settings}
        claims = Job("claims", canonical(claims_spec), tuple(self._tables(names)))
        self.jobs[outputs["md"]] = claims


def job_environment(config: dict, snakemake_pid: int) -> dict[str, str]:
    """What the jobs of ``config`` read from the environment: settings that never change a
    result (device, progress-log frequency, the data mirror) and so are no part of any spec,
    the Snakemake process a training job stops with (``guards.die_with``), and a PATH that
    finds the `whcore` command installed beside this interpreter (`.venv/bin/snakemake` works
    without activating the environment)."""
    import os
    import sys
    from pathlib import Path

    from .guards import PARENT_ENV

    env = {
        "WHCORE_DEVICE": config["device"],
        "WHCORE_LOG_EVERY": str(config["log_every"]),
        PARENT_ENV: str(snakemake_pid),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    if config["data_mirror"]:
        env["WHCORE_DATA_MIRROR"] = config["data_mirror"]
    return env


# --- checks the schema cannot express -------------------------------------------------------------


class ConfigError(ValueError):
    """A configuration that cannot be run; the message names the key, the value and the fix."""


def _validator_filling_defaults():
    """A JSON-schema validator that also fills in the schema's defaults (jsonschema's recipe)."""
    import jsonschema

    base = jsonschema.Draft202012Validator

    def properties(validator, props, instance, schema):
        if isinstance(instance, dict):
            for key, sub in props.items():
                if "default" in sub and key not in instance:
                    instance[key] = json.loads(json.dumps(sub["default"]))
        yield from base.VALIDATORS["properties"](validator, props, instance, schema)

    return jsonschema.validators.extend(base, {"properties": properties})


def _grid_schema(method: str, param: str) -> dict:
    items = value_schema(method, param)
    return {"type": "array", "minItems": 1, "uniqueItems": True, "items": items}


def _methods_schema() -> dict:
    """The schema of a ``methods`` block, from the method registry: one grid per parameter."""
    properties = {}
    for name, info in METHOD_INFO.items():
        grids = {param: _grid_schema(name, param) for param in info.params}
        required = [param for param in info.params if param not in info.defaults]
        properties[name] = (
            {"type": "object", "additionalProperties": False, "required": required,
             "properties": grids}
            if grids
            else {"type": ["object", "null"], "maxProperties": 0}
        )  # fmt: skip
    return {"propertyNames": {"enum": list(METHOD_INFO)}, "properties": properties}


def validate_config(config: dict, schema_path: str) -> None:
    """Validate ``config`` against the workflow schema (the list of methods taken from the
    method registry), fill its defaults in place, then run the cross-field checks. The first
    problem is raised as one line naming the key, the value and what is allowed."""
    import yaml

    with open(schema_path) as f:
        schema = yaml.safe_load(f)
    schema["$defs"]["methods"].update(_methods_schema())
    schema["$defs"]["training"]["properties"]["precision"]["enum"] = list(PRECISIONS)
    errors = sorted(
        _validator_filling_defaults()(schema).iter_errors(config),
        key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))),
    )
    if errors:
        err = errors[0]
        key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        message = err.message if len(err.message) < 300 else err.message[:300] + "..."
        raise ConfigError(f"config key {key}: {message}")
    check_config(config)


def yaml_error_line(source: str, err: Exception) -> str:
    """One line for a YAML syntax error in ``source`` (a file name): where (line and column, as
    an editor counts them) and what, instead of PyYAML's five lines naming "<unicode string>"."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = (getattr(err, "problem", None) or str(err).splitlines()[0]).strip()
    where = f"{source}, line {mark.line + 1}, column {mark.column + 1}" if mark else source
    context, context_mark = getattr(err, "context", None), getattr(err, "context_mark", None)
    if context and context_mark is not None and context_mark is not mark:
        problem += f" ({context.strip()} from line {context_mark.line + 1})"
    return f"{where}: not valid YAML: {problem}"


def read_yaml(path, what: str = "file", error: type[Exception] = ValueError):
    """The YAML (or JSON) document in ``path``; an unreadable file or a syntax error raises
    ``error`` in one line naming the file (and the line)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except OSError as err:
        raise error(f"{path}: cannot read the {what} ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise error(yaml_error_line(str(path), err)) from None


def load_contract(config: dict | str, schema_path: str) -> Contract:
    """The contract of a configuration (a dict, validated and filled in place, or a YAML
    file's path), validated against the workflow schema first."""
    if not isinstance(config, dict):
        path, config = config, read_yaml(config, "config file", ConfigError)
        if not isinstance(config, dict):
            raise ConfigError(f"{path}: a config must be a mapping of keys, got {config!r:.60}")
    validate_config(config, schema_path)
    return Contract(config)


_GRIDS = ("lam", "rho", "alpha")  # the grids of the schema's nonneg_values


def _check_finite(value, key: str) -> None:
    """Refuse NaN and infinity anywhere (YAML's .nan and .inf pass every schema bound)."""
    if isinstance(value, dict):
        for sub, item in value.items():
            _check_finite(item, f"{key}.{sub}" if key else str(sub))
    elif isinstance(value, list):
        for item in value:
            _check_finite(item, key)
    elif isinstance(value, float) and not math.isfinite(value):
        allowed = "finite values >= 0" if key.rsplit(".", 1)[-1] in _GRIDS else "a finite number"
        raise ConfigError(f"config key {key}: {value} is not a finite number; use {allowed}")


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


# The machine that checks a configuration is not always the one that runs its jobs (a SLURM
# login node plans GPU jobs), so a job is refused only when it needs more than both this
# machine and the largest single node in common use have.
NODE_MEMORY_CEILING = 2**40  # 1 TiB


def memory_limit_bytes() -> int:
    """What a training job may need at most: this machine's memory or 1 TiB, the larger."""
    return max(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), NODE_MEMORY_CEILING)


def _check_memory(
    exp: dict, n: int, where: str, training: dict | None = None, limit: int | None = None
) -> None:
    """Refuse a training job that could never fit in memory (a 2^40-point penalty, a width of
    1e9; ``limit``: ``memory_limit_bytes()``), naming the key that makes it too large."""
    from ..core.footprint import describe_bytes, penalty_points, training_bytes
    from .spec import training_defaults

    limit = memory_limit_bytes() if limit is None else limit
    settings = {**training_defaults(), **(training or exp["training"])}
    batch = settings["batch_size"]
    for method, _, grid in training_groups(exp["methods"]):
        members = len(exp["seeds"]) * len(grid) if settings["vectorize"] else 1
        points = max(penalty_points(method, params, n) for params in grid)
        need = training_bytes(n, settings["width"], members, batch + points)
        if need <= limit:
            continue
        weights_only = training_bytes(n, settings["width"], members, 0)
        if points > batch and need - weights_only > weights_only:
            key = {"hashwh": "b", "ens": "m"}.get(method, "")
            key = f"{where}.methods.{method}{'.' + key if key else ''}"
            why, fix = f"{points:,} penalty points per step", f"a smaller {method} setting"
        elif need - weights_only > weights_only:
            key, why, fix = f"{where}.training.batch_size", f"batches of {batch}", "a smaller one"
        else:
            key = f"{where}.training.width"
            why, fix = f"width {settings['width']} at n = {n}", "a smaller width"
        raise ConfigError(
            f"config key {key}: one {method} training job ({members} member(s), {why}) needs "
            f"at least {describe_bytes(need)}, more than any machine here or in common use "
            f"({describe_bytes(limit)}); use {fix}"
        )


def _check_degree(max_degree: int, n: int, where: str) -> None:
    if max_degree > n:
        raise ConfigError(f"config key {where}.max_degree: {max_degree} > n = {n}; use 1..{n}")


def _check_sparsity(syn: dict, n: int) -> None:
    """k distinct frequencies must exist among the degrees 1..max_degree in n variables."""
    available = sum(math.comb(n, d) for d in range(1, syn["max_degree"] + 1))
    if syn["k"] > available:
        raise ConfigError(
            f"config key synthetic.k: {syn['k']} > {available} frequencies of degree "
            f"1..{syn['max_degree']} in n = {n} variables; use k <= {available}"
        )


def _check_factors(syn: dict) -> None:
    """Validation and test sets must be non-empty for the smallest train size."""
    size = min(syn["cs"]) * syn["samples_per_c"] * min(syn["ns"])
    for key in ("val_factor", "test_factor"):
        if int(syn[key] * size) == 0:
            raise ConfigError(
                f"config key synthetic.{key}: {syn[key]} x the smallest train size {size} "
                f"leaves an empty set; use {key} >= 1/{size}"
            )


def _check_pool(syn: dict, n: int) -> None:
    """Train, validation and test points are distinct inputs: they must fit in 2^n."""
    size = max(syn["cs"]) * syn["samples_per_c"] * n
    pool = size + int(syn["val_factor"] * size) + int(syn["test_factor"] * size)
    if pool > 2**n:
        raise ConfigError(
            f"config key synthetic.cs: c = {max(syn['cs'])} at n = {n} needs {pool} distinct "
            f"inputs (train + validation + test) but only 2^n = {2**n} exist; use smaller c "
            "or samples_per_c, or larger n"
        )


def _check_rows(key: str, name: str, train: int, others: dict) -> None:
    """``train`` plus the ``others`` parts ({label: count or 'rest'}) must fit in the rows of
    dataset ``name``; a 'rest' part needs at least one row."""
    from ..data.datasets import REGISTRY

    rows = REGISTRY[name].rows
    need = sum(1 if size == "rest" else size for size in others.values())
    if train + need > rows:
        terms = "".join(f" + {label} {size}" for label, size in others.items())
        raise ConfigError(
            f"config key {key}: {train}{terms} > {rows} rows of {name}; use "
            f"{key.rsplit('.', 1)[-1]} <= {rows - need} or smaller {'/'.join(others)} sizes"
        )


def _check_source(name: str, entry: dict) -> None:
    """A real dataset is the registry's (no source keys) or the user's (file or url + sha256,
    and a format); a key that does not apply to the format is refused."""
    from ..data.custom import SOURCE_KEYS
    from ..data.datasets import REGISTRY

    key = f"config key real.datasets.{name}"
    given = [k for k in SOURCE_KEYS if k in entry]
    if name in REGISTRY:
        if given:
            raise ConfigError(
                f"{key}.{given[0]}: {name} is one of the paper's datasets, which take no "
                "file, url or format; give your own data another name"
            )
        return
    if "file" not in entry and "url" not in entry:
        raise ConfigError(
            f"{key}: {name!r} is none of the paper's datasets ({', '.join(REGISTRY)}); to use "
            "your own data give file (or url and sha256) and format (see config/README.md)"
        )
    if "file" in entry and "url" in entry:
        raise ConfigError(f"{key}: give file or url, not both")
    if "url" in entry and "sha256" not in entry:
        raise ConfigError(f"{key}.sha256: a url needs the sha256 of the file it serves")
    if "format" not in entry:
        raise ConfigError(f"{key}.format: missing; use proteingym, sequences or binary")
    fmt = entry["format"]
    if fmt != "proteingym" and "target_column" not in entry:
        raise ConfigError(f"{key}.target_column: missing; a {fmt} table needs its target column")
    only = {
        "mutant_column": ("proteingym",),
        "sequence_column": ("sequences",),
        "feature_columns": ("binary",),
        "wild_type": ("proteingym", "sequences"),
        "binarization": ("proteingym", "sequences"),
    }
    for option, formats in only.items():
        if option in entry and fmt not in formats:
            raise ConfigError(
                f"{key}.{option}: applies to format {' or '.join(formats)}, not {fmt}; remove it"
            )


def _check_epistasis(config: dict) -> None:
    settings, real = config["epistasis"], config["real"]
    if not (settings["enabled"] and real["enabled"]):
        return
    for name in settings["datasets"] or []:
        if name not in real["datasets"]:
            raise ConfigError(
                f"config key epistasis.datasets: {name!r} is not one of real.datasets "
                f"({', '.join(real['datasets'])})"
            )
    names = settings["datasets"]
    for name in user_datasets(config) if names is None else names:
        methods = dataset_settings(config, name)["methods"]
        if "standard" not in methods and "hashwh" not in methods:
            raise ConfigError(
                f"config key real.datasets.{name}.methods: the epistasis analysis compares the "
                "standard and HashWH networks, and neither is trained; add one, or set "
                "epistasis.datasets without it"
            )


def check_config(config: dict) -> None:
    """Cross-field checks the schema cannot express; messages name the key and the fix."""
    from ..data.datasets import REGISTRY

    _check_finite(config, "")
    spec = config["spectrum"]
    if spec["enabled"]:
        _check_methods(spec["methods"], spec["n"], "spectrum")
        _check_memory(spec, spec["n"], "spectrum")
        _check_degree(spec["max_degree"], spec["n"], "spectrum")
        if spec["figure_train_size"] not in spec["train_sizes"]:
            raise ConfigError(
                "config key spectrum.figure_train_size: "
                f"{spec['figure_train_size']} is not one of spectrum.train_sizes"
            )
        if spec["figure_draw"] >= spec["draws"]:
            raise ConfigError("config key spectrum.figure_draw: must be < spectrum.draws")
        if max(spec["train_sizes"]) > 2 ** spec["n"] - 2:
            raise ConfigError(
                f"config key spectrum.train_sizes: {max(spec['train_sizes'])} leaves fewer than "
                f"2 of the 2^n = {2 ** spec['n']} points for validation; use sizes <= "
                f"{2 ** spec['n'] - 2}"
            )
    syn = config["synthetic"]
    if syn["enabled"]:
        for n in syn["ns"]:
            _check_methods(syn["methods"], n, "synthetic")
            _check_memory(syn, n, "synthetic")
            _check_degree(syn["max_degree"], n, "synthetic")
            _check_sparsity(syn, n)
            _check_pool(syn, n)
        _check_factors(syn)
        runtime = syn["runtime_figure"]
        if runtime["n"] not in syn["ns"] or runtime["c"] not in syn["cs"]:
            raise ConfigError(
                "config key synthetic.runtime_figure: n and c must be among "
                "synthetic.ns and synthetic.cs"
            )
    real = config["real"]
    for name, entry in real.get("datasets", {}).items():
        _check_source(name, entry)
    if real["enabled"]:
        own = user_datasets(config)
        for name in real["datasets"]:
            ds = dataset_settings(config, name)
            if name in own:  # n and the rows are known once the file is binarized
                continue
            _check_methods(ds["methods"], REGISTRY[name].n, f"real.datasets.{name}")
            ds = {**ds, "seeds": real["seeds"]}
            _check_memory(ds, REGISTRY[name].n, f"real.datasets.{name}")
            others = {"val": ds["val_size"], "test": ds["test_size"]}
            _check_rows(f"real.datasets.{name}.train_sizes", name, max(ds["train_sizes"]), others)
        if real["runtime_dataset"] not in real["datasets"]:
            raise ConfigError(
                "config key real.runtime_dataset: "
                f"{real['runtime_dataset']!r} is not one of real.datasets"
            )
    _check_epistasis(config)
    ablation = config["ablation"]
    if ablation["enabled"]:
        for name, forest in ablation.get("datasets", {}).items():
            key = f"ablation.datasets.{name}.train_size"
            _check_rows(key, name, forest["train_size"], {"test": forest["test_size"]})
