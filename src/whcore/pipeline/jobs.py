"""One training job: a validated spec -> data, training, tidy records (and spectra)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..core.spectrum import dense_target_spectrum, exact_spectrum, spectral_metrics
from ..core.training import TrainConfig, train
from ..data.loading import load_job_data
from ..data.synthetic import SparseTarget

__all__ = ["run_job"]


def _spectrum_callback(target: SparseTarget, scale: float):
    """Per-epoch exact spectral metrics; spectra are rescaled by ``scale`` (k in the paper,
    so that unit target amplitudes read 1). Also keeps every spectrum for the heatmaps."""
    n = target.n
    dense = dense_target_spectrum(target.coefficients(), n) * scale
    spectra: list[tuple[int, int, torch.Tensor]] = []  # (first member index, epoch, values)
    members = {"seen": 0, "offset": 0}

    def callback(model, epoch):
        spectrum = (exact_spectrum(model, n).cpu() * scale).reshape(-1, 2**n)
        if epoch == 0:  # a new (stacked) model starts: its members follow the earlier ones
            members["offset"] = members["seen"]
            members["seen"] += len(spectrum)
        spectra.append((members["offset"], epoch, spectrum.float()))
        return spectral_metrics(spectrum, dense, n)

    return callback, spectra


def run_job(
    spec: dict, device: str = "auto", log_every: int = 0, log=print
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Train a validated spec on ``device``, printing progress every ``log_every`` epochs;
    returns (records, spectra or None).

    Records carry the job's identity (method, its params, train size, data seed) as columns.
    Spectra (only with ``spectrum: true``): one row per (seed, epoch), one column per frequency.
    """
    data, target = load_job_data(spec["data"])
    training = dict(spec["training"])
    seeds = training.pop("seeds")
    config = TrainConfig(**training, device=device, log_every=log_every)
    callback, spectra = None, None
    if spec["spectrum"]:
        if target is None:
            raise ValueError("spectrum: true needs synthetic data (a known target spectrum)")
        callback, spectra = _spectrum_callback(target, scale=float(target.k))
    records = train(data, spec["method"], spec.get("params", {}), seeds, config, callback, log)
    params = {
        key: value if isinstance(value, str) else float(value)
        for key, value in spec.get("params", {}).items()
    }
    ident = {
        **spec["labels"],
        "method": spec["method"],
        **params,
        "train_size": spec["data"]["train_size"],
        "data_seed": spec["data"]["data_seed"],
    }
    records = records.assign(**ident)
    if spectra is None:
        return records, None
    return records, _spectra_frame(spectra, [int(x) for x in seeds], records)


def _spectra_frame(spectra, seeds: list[int], records: pd.DataFrame) -> pd.DataFrame:
    """Wide table of the recorded spectra, restricted to the (seed, epoch) rows recorded."""
    keep = set(zip(records["seed"], records["epoch"]))
    rows = [
        (seeds[offset + s], epoch, values.numpy())
        for offset, epoch, spectrum in spectra
        for s, values in enumerate(spectrum)
        if (seeds[offset + s], epoch) in keep
    ]
    frame = pd.DataFrame(
        np.stack([r[2] for r in rows]), columns=[f"f{i}" for i in range(len(rows[0][2]))]
    )
    frame.insert(0, "epoch", [r[1] for r in rows])
    frame.insert(0, "seed", [r[0] for r in rows])
    return frame
