"""One training job: a validated spec -> data, training, tidy records (and spectra)."""

from __future__ import annotations


import numpy as np
import pandas as pd
import torch

from .spectrum import dense_target_spectrum, exact_spectrum, spectral_metrics
from .splits import split_indices
from .synthetic import SparseTarget, sample_inputs
from .training import Data, TrainConfig, train
from .rng import derive_seed

__all__ = ["load_job_data", "run_job", "standardize", "read_table", "split_data"]


def standardize(y: np.ndarray) -> np.ndarray:
    """(y - mean) / std over the whole dataset, before splitting (as the reference did).

    The reference used ``torch.std``, the sample standard deviation (ddof = 1)."""
    std = y.std(ddof=1) if len(y) > 1 else 0.0
    return (y - y.mean()) / (std if std > 0 else 1.0)


def read_table(path: str) -> tuple[np.ndarray, np.ndarray]:
    df = pd.read_parquet(path)
    if "y" not in df.columns:
        raise ValueError(f"{path}: a table needs a target column 'y'; found {list(df.columns)[:5]}...")
    x = df.drop(columns="y").to_numpy()
    if not np.isin(x, (0, 1)).all():
        raise ValueError(f"{path}: feature columns must be 0/1; binarize the dataset first")
    return x.astype(np.uint8), df["y"].to_numpy(dtype=np.float64)


def _pool_size(data: dict, n: int) -> int:
    sizes = [data["train_size"], data["val_size"], data["test_size"]]
    return 2**n if "rest" in sizes else sum(sizes)


def load_job_data(data: dict) -> tuple[Data, SparseTarget | None]:
    """The splits of a spec's ``data`` section (and the g* of synthetic data)."""
    target = None
    if data["source"] == "synthetic":
        target = SparseTarget.from_json(data["path"])
        pool = _pool_size(data, target.n)
        x = sample_inputs(target.n, pool, derive_seed("inputs", data["data_seed"]))
        y = target(x)
    else:
        x, y = read_table(data["path"])
    sizes = (data["train_size"], data["val_size"], data["test_size"])
    return split_data(x, y, *sizes, data["data_seed"], data["standardize"]), target


def split_data(x, y, train_size, val_size, test_size, data_seed, standardize_y) -> Data:
    """The train / validation / test rows of a data seed, y standardized over the whole table
    first if asked: networks and baselines split every table with this one function."""
    if standardize_y:
        y = standardize(y)
    split = split_indices(len(y), train_size, val_size, test_size, data_seed)
    return Data(x[split.train], y[split.train], x[split.val], y[split.val],
                x[split.test], y[split.test])


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


def run_job(spec: dict, log=print) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Train a validated spec; returns (records, spectra or None).

    Records carry the job's identity (method, its params, train size, data seed) as columns.
    Spectra (only with ``spectrum: true``): one row per (seed, epoch), one column per frequency.
    """
    data, target = load_job_data(spec["data"])
    training = dict(spec["training"])
    seeds = training.pop("seeds")
    config = TrainConfig(**training)
    callback, spectra = None, None
    if spec["spectrum"]:
        if target is None:
            raise ValueError("spectrum: true needs synthetic data (a known target spectrum)")
        callback, spectra = _spectrum_callback(target, scale=float(target.k))
    records = train(data, spec["method"], spec.get("params", {}), seeds, config, callback, log)
    params = {key: float(value) for key, value in spec.get("params", {}).items()}
    ident = {**spec["labels"], "method": spec["method"], **params,
             "train_size": spec["data"]["train_size"], "data_seed": spec["data"]["data_seed"]}
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
    frame = pd.DataFrame(np.stack([r[2] for r in rows]),
                         columns=[f"f{i}" for i in range(len(rows[0][2]))])
    frame.insert(0, "epoch", [r[1] for r in rows])
    frame.insert(0, "seed", [r[0] for r in rows])
    return frame
