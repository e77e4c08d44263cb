"""The workflow configuration's validation: the schema (its defaults filled in), then the checks
a schema cannot express. A configuration that cannot run is refused before any job starts, in
one line naming the key, the value and the fix (``ConfigError``)."""

from __future__ import annotations

import json
import math
import os

import jsonschema

from ...core.footprint import describe_bytes, step_rows, training_bytes
from ...core.methods import METHOD_INFO
from ...data.datasets import REGISTRY
from ...data.folds import SCHEMES
from ...data.own_data import SOURCE_KEYS
from ..analyses.grids import training_groups
from ..experiments.datasets import curve_datasets, own_datasets
from ..jobs.train import training_defaults
from ..runtime.yaml_files import read_yaml
from . import ConfigError, dataset_settings, epistasis_datasets

__all__ = ["check_config", "load_config", "memory_limit_bytes", "validate_config"]


def _validator_filling_defaults():
    """A JSON-schema validator that also fills in the schema's defaults (jsonschema's recipe)
    and anchors a pattern's ``$`` at the very end of the string, as JSON Schema does."""
    base = jsonschema.Draft202012Validator

    def pattern(validator, regex, instance, schema):
        # A schema's pattern is an ECMA-262 regex, whose $ matches at the end only; Python's
        # (jsonschema's) also matches before a final newline: "quick\n" would pass ^[a-z]+$.
        if isinstance(instance, str) and instance.endswith("\n") and regex.endswith("$"):
            yield jsonschema.ValidationError(f"{instance!r} ends with a newline; remove it")
            return
        yield from base.VALIDATORS["pattern"](validator, regex, instance, schema)

    def properties(validator, props, instance, schema):
        if isinstance(instance, dict):
            for key, sub in props.items():
                if "default" in sub and key not in instance:
                    instance[key] = json.loads(json.dumps(sub["default"]))
        yield from base.VALIDATORS["properties"](validator, props, instance, schema)

    return jsonschema.validators.extend(base, {"properties": properties, "pattern": pattern})


def validate_config(config: dict, schema_path: str) -> None:
    """Validate ``config`` against the workflow schema (the file as it stands: its registry
    part is generated, ``whcore.pipeline.config.schema``), fill its defaults in place, then run the
    cross-field checks. The first problem is raised as one line naming the key, the value and
    what is allowed."""
    schema = read_yaml(schema_path, "config schema", ConfigError)
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


def load_config(config: dict | str, schema_path: str) -> dict:
    """A configuration (a dict, validated and filled in place, or a YAML file's path),
    validated against the workflow schema and checked."""
    if not isinstance(config, dict):
        path, config = config, read_yaml(config, "config file", ConfigError)
        if not isinstance(config, dict):
            raise ConfigError(f"{path}: a config must be a mapping of keys, got {config!r:.60}")
    validate_config(config, schema_path)
    return config


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
        info = METHOD_INFO[method]
        if info.max_n is not None and n > info.max_n:
            raise ConfigError(
                f"config key {where}.methods.{method}: {info.label} trains on n <= {info.max_n} "
                f"only and n = {n} is too large; remove {method} there"
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
    limit = memory_limit_bytes() if limit is None else limit
    settings = {**training_defaults(), **(training or exp["training"])}
    batch = settings["batch_size"]
    for method, _, grid in training_groups(exp["methods"]):
        members = len(exp["seeds"]) * len(grid) if settings["vectorize"] else 1
        rows = step_rows(method, grid, n, batch)
        points = rows - batch
        need = training_bytes(n, settings["width"], members, rows)
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
    rows = REGISTRY[name].rows
    need = sum(1 if size == "rest" else size for size in others.values())
    if train + need > rows:
        terms = "".join(f" + {label} {size}" for label, size in others.items())
        raise ConfigError(
            f"config key {key}: {train}{terms} > {rows} rows of {name}; use "
            f"{key.rsplit('.', 1)[-1]} <= {rows - need} or smaller {'/'.join(others)} sizes"
        )


def _check_leaderboard(config: dict) -> None:
    """A dataset's ``leaderboard`` key (the mode's networks) needs ``protocol: leaderboard``,
    and grids only for the mode's networks that the dataset's ``methods`` run."""
    from ..analyses.leaderboard import NETWORKS

    for name, entry in config["real"].get("datasets", {}).items():
        if "leaderboard" not in entry:
            continue
        key = f"config key real.datasets.{name}.leaderboard"
        if entry.get("protocol") != "leaderboard":
            raise ConfigError(
                f"{key}: the leaderboard mode's networks, which this dataset does not run; add "
                "protocol: leaderboard, or remove the key"
            )
        runs = dataset_settings(config, name)["methods"]
        for method in entry["leaderboard"].get("methods") or {}:
            if method not in NETWORKS or method not in runs:
                raise ConfigError(
                    f"{key}.methods.{method}: the mode's networks are those of {list(NETWORKS)} "
                    f"that the dataset's methods run ({[m for m in NETWORKS if m in runs]}); "
                    f"remove {method}, or add it to the dataset's methods"
                )


def _check_source(name: str, entry: dict) -> None:
    """A real dataset is the registry's (no source keys) or the user's (file or url + sha256,
    and a format); a key that does not apply to the format is refused."""
    key = f"config key real.datasets.{name}"
    given = [k for k in SOURCE_KEYS if k in entry]
    if name in REGISTRY and "protocol" in entry:
        raise ConfigError(
            f"{key}.protocol: {name} is one of the paper's datasets, which run the paper's "
            "train-size curve only; ProteinGym's protocol applies to your own datasets (file "
            "or url, and format)"
        )
    if "folds" in entry and "protocol" not in entry:
        raise ConfigError(
            f"{key}.folds: the split schemes of ProteinGym's protocol, which this dataset does "
            "not run; add protocol: proteingym, or remove folds"
        )
    if "protocol" in entry:  # ProteinGym's three split schemes unless a subset is asked for
        entry.setdefault("folds", list(SCHEMES))
    if entry.get("protocol") == "leaderboard" and entry.get("format") != "proteingym":
        raise ConfigError(
            f"{key}.protocol: leaderboard scores a ProteinGym file (mutant, mutated_sequence), "
            f"not format {entry.get('format')!r}; use protocol: proteingym"
        )
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
    for name in epistasis_datasets(config):
        if name not in curve_datasets(config):
            raise ConfigError(
                f"config key epistasis.datasets: {name!r} runs ProteinGym's protocol only, and "
                "the analysis reads the networks of its largest train size; give it "
                "train_sizes, or leave it out of epistasis.datasets"
            )
        methods = dataset_settings(config, name)["methods"]
        if "standard" not in methods and "hashwh" not in methods:
            raise ConfigError(
                f"config key real.datasets.{name}.methods: the epistasis analysis compares the "
                "standard and HashWH networks, and neither is trained; add one, or set "
                "epistasis.datasets without it"
            )


def check_config(config: dict) -> None:
    """Cross-field checks the schema cannot express; messages name the key and the fix."""
    _check_finite(config, "")
    exp = config["spectrum"]
    if exp["enabled"]:
        _check_methods(exp["methods"], exp["n"], "spectrum")
        _check_memory(exp, exp["n"], "spectrum")
        _check_degree(exp["max_degree"], exp["n"], "spectrum")
        if exp["figure_train_size"] not in exp["train_sizes"]:
            raise ConfigError(
                "config key spectrum.figure_train_size: "
                f"{exp['figure_train_size']} is not one of spectrum.train_sizes"
            )
        if exp["figure_draw"] >= exp["draws"]:
            raise ConfigError("config key spectrum.figure_draw: must be < spectrum.draws")
        if max(exp["train_sizes"]) > 2 ** exp["n"] - 2:
            raise ConfigError(
                f"config key spectrum.train_sizes: {max(exp['train_sizes'])} leaves fewer than "
                f"2 of the 2^n = {2 ** exp['n']} points for validation; use sizes <= "
                f"{2 ** exp['n'] - 2}"
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
        own = own_datasets(config)
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
        curves = curve_datasets(config)
        if curves and real["runtime_dataset"] not in curves:
            raise ConfigError(
                f"config key real.runtime_dataset: {real['runtime_dataset']!r} has no "
                f"train_sizes, so no runtimes; name one that has ({', '.join(curves)})"
            )
    _check_epistasis(config)
    _check_leaderboard(config)
    ablation = config["ablation"]
    if ablation["enabled"]:
        for name, forest in ablation.get("datasets", {}).items():
            key = f"ablation.datasets.{name}.train_size"
            _check_rows(key, name, forest["train_size"], {"test": forest["test_size"]})
