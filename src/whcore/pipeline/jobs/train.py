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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.methods import METHOD_INFO, PRECISIONS, configuration_schema
from ...core.settings import TrainConfig
from ..analyses.grids import param_tag
from .spec import DataSplit, Fields, JobSpec, SpecError

if TYPE_CHECKING:
    from ...data.synthetic import SparseTarget

__all__ = [
    "LOG_EVERY_ENV",
    "ConfigurationResult",
    "TrainSpec",
    "Training",
    "configuration_file",
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

    def run(self, args, outputs) -> None:
        from ..runtime.provenance import provenance

        print(
            f"training {len(self.grid)} configuration(s) x {len(self.training.seeds)} "
            f"seed(s) on {args.device}",
            flush=True,
        )
        start = time.perf_counter()
        results = run_job(self, args.device, args.log_every, log=lambda m: print(m, flush=True))
        meta = {"wall_time": time.perf_counter() - start, "provenance": provenance(args.device)}
        _write(results, outputs, meta)
        for result in results:
            print(
                f"wrote {configuration_file(self.outputs['records'], result.params)}: "
                f"{_summary(result.records)}"
            )
        print(f"{meta['wall_time']:.1f}s")


Spec = TrainSpec


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


def spectrum_callback(target: SparseTarget, scale: float):
    """Per-epoch exact spectral metrics; spectra are rescaled by ``scale`` (k in the paper,
    so that unit target amplitudes read 1). Also keeps every member's spectrum per epoch, keyed
    by (configuration, seed, epoch), for the heatmaps.

    Returns ``(callback, spectra)``: the callback that ``train`` / ``train_grid`` call after
    every epoch (``callback(model, epoch, members)`` -> the metrics of each member), and the
    dict it fills."""
    from ...core.spectrum import dense_target_spectrum, exact_spectrum, spectral_metrics

    n = target.n
    dense = dense_target_spectrum(target.coefficients(), n) * scale
    spectra: dict[tuple[int, int, int], np.ndarray] = {}

    def callback(model, epoch, members):
        spectrum = (exact_spectrum(model, n).cpu() * scale).reshape(-1, 2**n)
        for member, values in zip(members, spectrum.float().numpy()):
            spectra[member.config, member.seed, epoch] = values
        return spectral_metrics(spectrum, dense, n)

    return callback, spectra


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
    from ...core.training import train_grid
    from ...data.loading import load_job_data, training_seed

    data, target, unit = load_job_data(spec.data)
    identity = spec.data.identity(data)
    label_of = {training_seed(unit, s): int(s) for s in spec.training.seeds}
    seeds = list(label_of)
    settings = spec.training.config(device, log_every)
    callback, spectra = None, None
    if spec.spectrum:
        if target is None:
            raise ValueError("spectrum: true needs synthetic data (a known target spectrum)")
        callback, spectra = spectrum_callback(target, scale=float(target.k))
    if spec.data.folds is not None:  # a held-out fold of ProteinGym's protocol
        # The held-out fold's rows carry substitutions no training row has: the networks fit
        # on the columns that vary over their training rows, as the leaderboard mode's do.
        data = _on_varying_columns(data, spec)
        callback = _spearman_callback(data.x_test, data.y_test)
    grid = spec.grid
    records = train_grid(data, spec.method, grid, seeds, settings, callback, log)
    results = []
    for index, params in enumerate(grid):
        mine = records[records["config"] == index].drop(columns="config")
        mine = mine.reset_index(drop=True).assign(**_identity(spec, params, identity))
        frame = None if spectra is None else _spectra_frame(spectra, index, mine)
        mine = mine.assign(model_seed=mine["seed"], seed=mine["seed"].map(label_of))
        if frame is not None:
            frame["seed"] = frame["seed"].map(label_of)
        results.append(ConfigurationResult(params, mine, frame))
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


def _spectra_frame(spectra: dict, index: int, records: pd.DataFrame) -> pd.DataFrame:
    """Wide table of one configuration's spectra at the (seed, epoch) rows it recorded."""
    keys = list(zip(records["seed"], records["epoch"]))
    values = np.stack([spectra[index, seed, epoch] for seed, epoch in keys])
    frame = pd.DataFrame(values, columns=[f"f{i}" for i in range(values.shape[1])])
    frame.insert(0, "epoch", [epoch for _, epoch in keys])
    frame.insert(0, "seed", [seed for seed, _ in keys])
    return frame
