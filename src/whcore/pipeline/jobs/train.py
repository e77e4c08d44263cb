"""The training job: one method's group of configurations on one split, every training seed.

Its spec, as YAML or JSON::

    method: hashwh
    grid: [{lam: 0.01, b: 7}, {lam: 0.1, b: 7}]
    data:
      source: synthetic          # a g* file from `whcore target`, or `table` (a Parquet)
      path: results/quick/synthetic/spectrum/draw0.json
      train_size: 200
      val_size: rest             # a count, or rest
      test_size: 0
      data_seed: 0
      standardize: false
    training: {seeds: [0, 1, 2, 3, 4], epochs: 500, batch_size: 16, lr: 0.01, patience: 10,
               width: 10, vectorize: true, precision: fp32}
    spectrum: false              # exact spectral metrics per epoch (n <= 20 only)
    labels: {experiment: spectrum, dataset: draw0}   # copied into every record
    outputs: {records: runs/, spectra: spectra/}   # folders; spectra: with spectrum only

A job trains a group of configurations that share data and architecture (every lambda of one
method and b, say) as one stacked model, and writes one Parquet of records per configuration
in every output folder, named by its parameters (``b7_lam0.01.parquet``), so that grouping
never changes what a configuration's records say. The configurations of a grid may differ only
in the weights that members of one stacked model can differ in (lam, rho).

The device, threads and the progress-log frequency are not part of a spec (they never change a
result): ``whcore train --device ... --threads ... --log-every ...``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.methods import METHOD_INFO, PRECISIONS, configuration_schema
from ...core.settings import TrainConfig
from ..analyses.grids import param_tag
from .spec import DataSplit, Fields, JobSpec, SpecError, parse_spec, set_up_device

if TYPE_CHECKING:
    from ...data.synthetic import SparseTarget

__all__ = [
    "LOG_EVERY_ENV",
    "ConfigurationResult",
    "TrainSpec",
    "Training",
    "configuration_file",
    "read_cell",
    "run_cell",
    "run_job",
    "spectrum_callback",
    "training_defaults",
]

LOG_EVERY_ENV = "WHCORE_LOG_EVERY"
# Settings of a TrainConfig that never change a result: passed beside the spec, never in it.
_RUNTIME = ("device", "log_every")
_SEEDS = 2**32  # PyTorch's generator takes seeds below this


def training_defaults() -> dict:
    """The training settings a spec (and so a configuration) leaves out: TrainConfig's."""
    return {f.name: f.default for f in dataclasses.fields(TrainConfig) if f.name not in _RUNTIME}


_DEFAULTS = training_defaults()


@dataclass(frozen=True)
class Training(Fields):
    """How every member of a training job trains (``whcore.core.settings.TrainConfig``)."""

    seeds: list
    epochs: int = _DEFAULTS["epochs"]
    batch_size: int = _DEFAULTS["batch_size"]
    lr: float = _DEFAULTS["lr"]
    patience: int | None = _DEFAULTS["patience"]  # None: no early stopping
    width: float = _DEFAULTS["width"]
    vectorize: bool = _DEFAULTS["vectorize"]
    precision: str = _DEFAULTS["precision"]  # fp32; opt-in tf32 (CUDA) or bf16 (autocast)

    def check(self, source: str) -> None:
        if not self.seeds:
            raise SpecError(f"{source}: field training.seeds: give at least one seed")
        for index, seed in enumerate(self.seeds):
            if not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < _SEEDS):
                raise SpecError(
                    f"{source}: field training.seeds.{index}: {seed!r:.30} is not an integer "
                    f"from 0 to {_SEEDS - 1}"
                )
        for key in ("epochs", "batch_size", "patience"):
            if getattr(self, key) is not None and getattr(self, key) < 1:
                raise SpecError(f"{source}: field training.{key}: {getattr(self, key)} is not >= 1")
        for key in ("lr", "width"):
            if not getattr(self, key) > 0:
                raise SpecError(f"{source}: field training.{key}: {getattr(self, key)} is not > 0")
        if self.precision not in PRECISIONS:
            raise SpecError(
                f"{source}: field training.precision: {self.precision!r} is not one of "
                f"{list(PRECISIONS)}"
            )

    def config(self, device: str, log_every: int) -> TrainConfig:
        """The library's settings, with what is passed beside the spec."""
        settings: dict[str, Any] = {k: v for k, v in self.to_dict().items() if k != "seeds"}
        return TrainConfig(**settings, device=device, log_every=log_every)


def _check_configurations(method: str, grid: list, source: str) -> None:
    """Each configuration against its method's entry in the registry: the same parameter
    names, types and bounds as a configuration file's grids, finite numbers only, none twice."""
    import jsonschema

    if method not in METHOD_INFO:
        raise SpecError(
            f"{source}: field method: unknown method {method!r}; use one of {list(METHOD_INFO)}"
        )
    if not grid:
        raise SpecError(f"{source}: field grid: give at least one configuration")
    validator = jsonschema.Draft202012Validator(configuration_schema(method))
    for index, params in enumerate(grid):
        where = f"grid.{index}"
        for err in validator.iter_errors(params):
            key = ".".join([where, *map(str, err.path)])
            raise SpecError(f"{source}: field {key}: {err.message} ({method})")
        for key, value in params.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise SpecError(f"{source}: field {where}.{key}: {value} is not a finite number")
    tags = [param_tag(p) for p in grid]
    if len(set(tags)) < len(tags):
        raise SpecError(f"{source}: field grid: a configuration appears twice ({tags})")


@dataclass(frozen=True)
class TrainSpec(JobSpec):
    """A training job: one method's group of configurations on one split, every seed."""

    KIND, SUBCOMMAND, OUTPUTS = "train", "train", ("records",)
    OPTIONAL_OUTPUTS = ("spectra",)
    HELP = "train one job (its grid of configurations, all seeds) and write records"
    FOLDERS, DEVICE = True, True

    method: str
    data: DataSplit
    training: Training
    outputs: dict
    grid: list = dataclasses.field(default_factory=lambda: [{}])  # one: the method's defaults
    spectrum: bool = False
    labels: dict = dataclasses.field(default_factory=dict)

    def check(self, source: str) -> None:
        super().check(source)
        _check_configurations(self.method, self.grid, source)
        if "spectra" in self.outputs and not self.spectrum:
            raise SpecError(f"{source}: field outputs.spectra needs spectrum: true")

    def inputs(self) -> tuple[str, ...]:
        return (self.data.path,)

    @classmethod
    def add_arguments(cls, parser) -> None:
        parser.add_argument(
            "--log-every",
            type=int,
            default=int(os.environ.get(LOG_EVERY_ENV, 10)),
            help=f"a progress line every k epochs, 0: none (default: ${LOG_EVERY_ENV} or 10)",
        )

    @classmethod
    def execute(cls, args) -> None:
        """A job, or the jobs of one cell (``--spec`` a list of specs: ``run_cell``): every
        job's outputs checked (the guarded writer) before any work."""
        from .writer import Outputs

        specs = read_cell(args.spec)
        outputs = [Outputs(spec) for spec in specs]
        set_up_device(args)
        _train(specs, outputs, args)


Spec = TrainSpec


def read_cell(text: str | Path) -> list[TrainSpec]:
    """The specs of ``--spec``: one job's (a mapping), or a cell's jobs (a list of them)."""
    source, value = parse_spec(text)
    if not isinstance(value, list):
        return [TrainSpec.from_dict(value, source)]
    if not value:
        raise SpecError(f"{source}: an empty list of specs; give a job's spec or a cell's")
    return [TrainSpec.from_dict(item, f"{source}: job {i}") for i, item in enumerate(value)]


def _train(specs: list[TrainSpec], outputs: list, args) -> None:
    """Train a job or a cell's jobs and write each job's outputs as the job alone would (its
    spec in their metadata; a cell's wall time shared equally by its jobs)."""
    from ..runtime.provenance import provenance

    jobs = f"{len(specs)} jobs of one cell, each " if len(specs) > 1 else ""
    print(
        f"training {jobs}{len(specs[0].grid)} configuration(s) x {len(specs[0].training.seeds)} "
        f"seed(s) on {args.device}",
        flush=True,
    )
    start = time.perf_counter()
    cell = run_cell(specs, args.device, args.log_every, log=lambda m: print(m, flush=True))
    wall_time = time.perf_counter() - start
    meta = {"wall_time": wall_time / len(specs), "provenance": provenance(args.device)}
    for spec, writer, results in zip(specs, outputs, cell):
        _write(results, writer, meta)
        for result in results:
            print(
                f"wrote {configuration_file(spec.outputs['records'], result.params)}: "
                f"{_summary(result.records)}"
            )
    print(f"{wall_time:.1f}s")


def configuration_file(folder: str | Path, params: dict) -> Path:
    """Where a configuration's file lives inside a job's output folder."""
    return Path(folder) / f"{param_tag(params)}.parquet"


def _write(results, outputs, meta: dict) -> None:
    """Every configuration's file in each output folder; spectra first, since a records
    folder marks a finished job."""
    from ...core.io import write_parquet

    for role in sorted(outputs.paths, key=lambda role: role == "records"):
        with outputs.folder(role) as folder:
            for result in results:
                meta_of = {"spec": outputs.spec, **meta, "params": result.params}
                write_parquet(
                    getattr(result, role), configuration_file(folder, result.params), meta_of
                )


def _summary(records: pd.DataFrame) -> str:
    ok = records[records["status"] == "ok"]
    best = ok.loc[ok.groupby("seed")["val_mse"].idxmin()] if len(ok) else ok
    return (
        f"{records['seed'].nunique()} seeds, {len(records)} records, mean best-val test "
        f"R^2 {best.get('test_r2', best['val_r2']).mean():.4f}"
    )


@dataclass
class ConfigurationResult:
    """The records (and spectra, or None) of one configuration of a job."""

    params: dict
    records: pd.DataFrame
    spectra: pd.DataFrame | None


def spectrum_callback(target: SparseTarget | Sequence[SparseTarget], scale: float | Sequence):
    """Per-epoch exact spectral metrics; spectra are rescaled by ``scale`` (k in the paper,
    so that unit target amplitudes read 1). Also keeps every member's spectrum per epoch, keyed
    by (unit, configuration, seed, epoch), for the heatmaps.

    ``target`` may be a list of g* (a cell's units, with a ``scale`` each): each member is
    measured against its unit's; a metric one unit's g* has and another's lacks (a degree or
    frequency of its support) is NaN for the other's members, and ``columns[unit]`` lists the
    metrics of each unit, in the order a job of that unit alone gives them.

    Returns ``(callback, spectra, columns)``: the callback that ``train`` / ``train_grid``
    call after every epoch (``callback(model, epoch, members)`` -> the metrics of each
    member), and the dicts it fills."""
    import torch

    from ...core.spectrum import dense_target_spectrum, exact_spectrum, spectral_metrics

    targets = list(target) if isinstance(target, (list, tuple)) else [target]
    scales = list(scale) if isinstance(scale, (list, tuple)) else [scale] * len(targets)
    n = targets[0].n
    if any(t.n != n for t in targets) or len(scales) != len(targets):
        raise ValueError("the g* of one stacked job must share n, with one scale each")
    dense = [dense_target_spectrum(t.coefficients(), n) * k for t, k in zip(targets, scales)]
    spectra: dict[tuple[int, int, int, int], np.ndarray] = {}
    columns: dict[int, list[str]] = {}

    def callback(model, epoch, members):
        flat = exact_spectrum(model, n).cpu().reshape(-1, 2**n)
        units = np.array([member.unit for member in members])
        merged: dict = {}
        for unit, (values, k) in enumerate(zip(dense, scales)):
            rows = np.flatnonzero(units == unit)
            spectrum = (flat if len(dense) == 1 else flat[torch.as_tensor(rows)]) * k
            for member, row in zip([members[r] for r in rows], spectrum.float().numpy()):
                spectra[member.unit, member.config, member.seed, epoch] = row
            metrics = spectral_metrics(spectrum, values, n)
            columns[unit] = list(metrics)
            if len(dense) == 1:
                return metrics
            for key, value in metrics.items():
                merged.setdefault(key, torch.full((len(members),), torch.nan, dtype=value.dtype))
                merged[key][torch.as_tensor(rows)] = value
        return merged

    return callback, spectra, columns


def _spearman_callback(x_test: np.ndarray, y_test: np.ndarray):
    """Per-epoch Spearman correlation of every member's test predictions (ProteinGym's score
    of a held-out fold), so that it can be read at the epoch validation selects."""
    import torch

    from ..analyses.proteingym import spearman

    # Each distinct row once: identical rows in one batch differ in the last bits, which would
    # rank a fold whose rows are all alike (the leaderboard mode's networks do the same).
    distinct, inverse = np.unique(x_test, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)

    def callback(model, epoch, members):
        device = next(model.parameters()).device
        x = torch.as_tensor(distinct, dtype=torch.float32, device=device)
        pred = model.predict(x).reshape(len(members), -1).float().cpu().numpy()
        return {"test_spearman": [spearman(y_test, p[inverse]) for p in pred]}

    return callback


def run_job(
    spec: TrainSpec, device: str = "auto", log_every: int = 0, log=print
) -> list[ConfigurationResult]:
    """Train a spec's grid on ``device``, printing progress every ``log_every``
    epochs; one result per configuration, in the grid's order.

    Records carry the job's identity (method, the configuration's params, train size, data
    seed) as columns. Spectra (only with ``spectrum: true``): one row per (seed, epoch), one
    column per frequency. A record's ``seed`` is the spec's training seed; the network started
    from ``model_seed``, that seed derived for the job's unit (``training_seed``).
    """
    return run_cell([spec], device, log_every, log)[0]


def run_cell(
    specs: Sequence[TrainSpec], device: str = "auto", log_every: int = 0, log=print
) -> list[list[ConfigurationResult]]:
    """Train the jobs of one cell (``specs`` that differ only in their data, labels and
    outputs: a cell's units, g* draws or subsamples of one shape) as one stacked model; per
    spec, what ``run_job`` gives for it alone: its networks start from its unit's seeds and
    are measured against its own g*. Its numbers equal the job's alone up to float rounding;
    its records' ``stack_size`` and per-member times are the cell's (docs/cost.md)."""
    from ...core.training import train_grid
    from ...data.loading import load_job_data, training_seed

    first = _check_cell(specs)
    loaded = [load_job_data(spec.data) for spec in specs]
    data = [split for split, _, _ in loaded]
    labels_of = [
        {training_seed(unit, s): int(s) for s in first.training.seeds} for *_, unit in loaded
    ]
    settings = first.training.config(device, log_every)
    callback, spectra, columns = None, None, {}
    if first.spectrum:
        targets = [target for _, target, _ in loaded]
        if any(target is None for target in targets):
            raise ValueError("spectrum: true needs synthetic data (a known target spectrum)")
        scales = [float(target.k) for target in targets]
        callback, spectra, columns = spectrum_callback(targets, scales)
    if first.data.folds is not None:  # a held-out fold of ProteinGym's protocol
        # The held-out fold's rows carry substitutions no training row has: the networks fit
        # on the columns that vary over their training rows, as the leaderboard mode's do.
        data = [_on_varying_columns(data[0], first)]
        callback = _spearman_callback(data[0].x_test, data[0].y_test)
    seeds = [list(label_of) for label_of in labels_of]
    if len(specs) == 1:  # one data set: records as a job's alone, without a unit column
        records = train_grid(data[0], first.method, first.grid, seeds[0], settings, callback, log)
        records = records.assign(unit=0)
    else:
        records = train_grid(data, first.method, first.grid, seeds, settings, callback, log)
    return [
        _job_results(spec, data[unit], records, unit, labels_of[unit], spectra, columns)
        for unit, spec in enumerate(specs)
    ]


def _check_cell(specs: Sequence[TrainSpec]) -> TrainSpec:
    """The first of ``specs``, once they are one cell: the same method, grid, training and
    spectral metrics, other outputs; a held-out fold trains alone."""
    if not specs:
        raise ValueError("a cell needs at least one training job")
    first = specs[0]
    shared = ("method", "grid", "training", "spectrum")
    for spec in specs[1:]:
        for name in shared:
            if getattr(spec, name) != getattr(first, name):
                raise ValueError(
                    f"the jobs of one cell differ in {name} ({spec.outputs['records']} and "
                    f"{first.outputs['records']}): train them as separate jobs"
                )
    if len(specs) > 1 and any(spec.data.folds is not None for spec in specs):
        raise ValueError("a held-out fold of ProteinGym's protocol trains as a job of its own")
    written = [path for spec in specs for path in spec.written()]
    if len(set(written)) < len(written):
        raise ValueError(f"the jobs of one cell write the same output twice: {sorted(written)}")
    return first


def _job_results(spec, data, records, unit, label_of, spectra, columns):
    """One job's results from its cell's records: its unit's rows and metrics, one result
    per configuration."""
    identity = spec.data.identity(data)
    mine = records[records["unit"] == unit].drop(columns="unit")
    if len(columns) > 1:  # a cell's: its own metrics only, in the order it alone has them
        measured = {column for unit_columns in columns.values() for column in unit_columns}
        kept = [c for c in mine.columns if c not in measured]
        at = kept.index("status")
        mine = mine[kept[:at] + columns[unit] + kept[at:]]
    results = []
    for index, params in enumerate(spec.grid):
        frame = mine[mine["config"] == index].drop(columns="config")
        frame = frame.reset_index(drop=True).assign(**_identity(spec, params, identity))
        spectra_frame = None if spectra is None else _spectra_frame(spectra, unit, index, frame)
        frame = frame.assign(model_seed=frame["seed"], seed=frame["seed"].map(label_of))
        if spectra_frame is not None:
            spectra_frame["seed"] = spectra_frame["seed"].map(label_of)
        results.append(ConfigurationResult(params, frame, spectra_frame))
    return results


def _on_varying_columns(data, spec: TrainSpec):
    """``data`` on the columns that vary over its training rows; refused where a hash size of
    the grid exceeds their number."""
    kept = data.on_varying_columns()
    largest = max((int(params["b"]) for params in spec.grid if "b" in params), default=0)
    if largest > kept.n:
        folds = spec.data.folds
        raise ValueError(
            f"{spec.data.path}: {kept.n} of its {data.n} columns vary over the training rows of "
            f"{folds.scheme} fold {folds.fold}, fewer than the hash size b = {largest} of "
            f"{spec.method}. Fix: choose b <= {kept.n} in the dataset's methods"
        )
    return kept


def _identity(spec: TrainSpec, params: dict, split: dict) -> dict:
    typed = {k: v if isinstance(v, str) else float(v) for k, v in params.items()}
    return {**spec.labels, "method": spec.method, **typed, **split}


def _spectra_frame(spectra: dict, unit: int, index: int, records: pd.DataFrame) -> pd.DataFrame:
    """Wide table of one configuration's spectra at the (seed, epoch) rows it recorded."""
    keys = list(zip(records["seed"], records["epoch"]))
    values = np.stack([spectra[unit, index, seed, epoch] for seed, epoch in keys])
    frame = pd.DataFrame(values, columns=[f"f{i}" for i in range(values.shape[1])])
    frame.insert(0, "epoch", [epoch for _, epoch in keys])
    frame.insert(0, "seed", [seed for seed, _ in keys])
    return frame
