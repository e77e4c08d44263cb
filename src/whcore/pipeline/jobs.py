"""One training job: a validated spec -> data, training of its grid, tidy records (and spectra).

A job trains a group of configurations of one method that share data and architecture (every
lambda of one method and b, say, and every training seed) and returns one table of records per
configuration, so that grouping never changes what a configuration's records say.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.spectrum import dense_target_spectrum, exact_spectrum, spectral_metrics
from ..core.training import train_grid
from ..data.loading import load_job_data, training_seed
from ..data.synthetic import SparseTarget
from .canonical import param_tag
from .jobspec import TrainSpec
from .protocol import spearman

__all__ = ["ConfigurationResult", "configuration_file", "run_job"]


def configuration_file(folder: str | Path, params: dict) -> Path:
    """Where a configuration's file lives inside a job's output folder."""
    return Path(folder) / f"{param_tag(params)}.parquet"


@dataclass
class ConfigurationResult:
    """The records (and spectra, or None) of one configuration of a job."""

    params: dict
    records: pd.DataFrame
    spectra: pd.DataFrame | None


def _spectrum_callback(target: SparseTarget, scale: float):
    """Per-epoch exact spectral metrics; spectra are rescaled by ``scale`` (k in the paper,
    so that unit target amplitudes read 1). Also keeps every member's spectrum per epoch, keyed
    by (configuration, seed, epoch), for the heatmaps."""
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

    def callback(model, epoch, members):
        device = next(model.parameters()).device
        x = torch.as_tensor(x_test, dtype=torch.float32, device=device)
        pred = model.predict(x).reshape(len(members), -1).float().cpu().numpy()
        return {"test_spearman": [spearman(y_test, p) for p in pred]}

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
    data, target, unit = load_job_data(spec.data.to_mapping())
    identity = spec.data.identity(data)
    label_of = {training_seed(unit, s): int(s) for s in spec.training["seeds"]}
    seeds = list(label_of)
    settings = spec.train_config(device, log_every)
    callback, spectra = None, None
    if spec.spectrum:
        if target is None:
            raise ValueError("spectrum: true needs synthetic data (a known target spectrum)")
        callback, spectra = _spectrum_callback(target, scale=float(target.k))
    if spec.data.folds is not None:  # a held-out fold of ProteinGym's protocol
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
