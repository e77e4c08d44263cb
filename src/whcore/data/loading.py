"""A training job's data: read a binarized table, sample a g*, split, standardize; every
random choice from the unit's seed (``whcore.data.splits.unit_seed``; for a held-out fold of
ProteinGym's protocol ``whcore.data.folds.fold_unit_seed``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.arrays import Data
from ..core.io import read_parquet_metadata
from ..core.rng import derive_seed
from .folds import fold_split, fold_unit_seed
from .splits import Split, training_seed, unit_seed, unit_split
from .synthetic import SparseTarget, sample_inputs

__all__ = [
    "discard_failed",
    "load_job_data",
    "load_table_split",
    "read_table",
    "split_data",
    "standardize",
    "table_dataset",
    "table_folds",
    "training_seed",
    "unit_seed",
]


def standardize(y: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """(y - mean) / std, the mean and std of ``rows`` of y (default: the whole dataset, before
    splitting, as the reference did).

    The reference used ``torch.std``, the sample standard deviation (ddof = 1)."""
    reference = y if rows is None else y[rows]
    std = reference.std(ddof=1) if len(reference) > 1 else 0.0
    return (y - reference.mean()) / (std if std > 0 else 1.0)


def table_dataset(path: str | Path) -> str | None:
    """The dataset a binarized table's metadata names, or None (no file, not Parquet, or a
    table that is no binarization: one written by hand names none)."""
    try:
        meta = read_parquet_metadata(path)
    except Exception:  # missing or not Parquet
        return None
    return meta.get("dataset") if isinstance(meta, dict) and "source_sha256" in meta else None


def discard_failed(out: str | Path, dataset: str) -> None:
    """After a failed binarization of ``dataset``: delete ``out`` only if it is that dataset's
    binarized table (an older one would pass for the binarization of the new raw file); a
    file of anything else there was never this writer's to delete."""
    if table_dataset(out) == dataset:
        Path(out).unlink(missing_ok=True)


def _check_named_dataset(path: str) -> None:
    """Refuse a binarized table named for another dataset than the one its metadata names: a
    job reads a table as the dataset of its file's name."""
    named = table_dataset(path)
    if named is not None and named != Path(path).stem:
        raise ValueError(
            f"{path}: a binarized table of dataset {named}, not of {Path(path).stem} as its name "
            f"says; nothing was trained on it. Fix: delete it and binarize "
            f"{Path(path).stem} again (`whcore binarize {Path(path).stem} --out {path}`, or "
            "rerun the workflow)"
        )


def read_table(path: str) -> tuple[np.ndarray, np.ndarray]:
    _check_named_dataset(path)
    df = pd.read_parquet(path)
    if "y" not in df.columns:
        raise ValueError(
            f"{path}: a table needs a target column 'y'; found {list(df.columns)[:5]}..."
        )
    x = df.drop(columns="y").to_numpy()
    if not np.isin(x, (0, 1)).all():
        raise ValueError(f"{path}: feature columns must be 0/1; binarize the dataset first")
    return x.astype(np.uint8), df["y"].to_numpy(dtype=np.float64)


def _pool_size(data, n: int) -> int:
    sizes = [data.train_size, data.val_size, data.test_size]
    return 2**n if "rest" in sizes else sum(sizes)


def load_job_data(data) -> tuple[Data, SparseTarget | None, int]:
    """The splits of a spec's ``data`` (a ``whcore.pipeline.jobs.spec.DataSplit``), the g* of
    synthetic data (else None) and the unit's seed (``unit_seed``: a table is named by its
    file's stem, the dataset's name)."""
    if data.source == "synthetic":
        target = SparseTarget.from_json(data.path)
        unit = unit_seed(data.train_size, data.data_seed, target.digest())
        pool = _pool_size(data, target.n)
        x = sample_inputs(target.n, pool, derive_seed("inputs", unit))
        y = target(x)
        sizes = (data.train_size, data.val_size, data.test_size)
        return split_data(x, y, *sizes, unit, data.standardize), target, unit
    split, unit = load_table_split(data)
    return split, None, unit


def table_folds(path: str, scheme: str, rows: int) -> np.ndarray:
    """The fold of every row of a binarized table under ``scheme`` (its metadata's)."""
    folds = read_parquet_metadata(path).get("folds", {})
    if scheme not in folds:
        raise ValueError(
            f"{path}: carries no folds of {scheme} (it was binarized without them). Fix: list "
            f"{scheme} in the dataset's folds key, which rebuilds it"
        )
    if len(folds[scheme]) != rows:
        raise ValueError(
            f"{path}: {len(folds[scheme])} folds of {scheme} for {rows} rows. Fix: delete it "
            "and binarize the dataset again"
        )
    return np.asarray(folds[scheme], dtype=np.int64)


def load_table_split(data) -> tuple[Data, int]:
    """The splits of a table's ``data`` (a subsample of ``train_size`` rows, or a held-out
    fold, ``folds``) and the unit's seed: networks and baselines read exactly this."""
    x, y = read_table(data.path)
    source = Path(data.path).stem
    held_out = data.folds
    if held_out is None:
        unit = unit_seed(data.train_size, data.data_seed, source)
        sizes = (data.train_size, data.val_size, data.test_size)
        return split_data(x, y, *sizes, unit, data.standardize), unit
    unit = fold_unit_seed(source, held_out.scheme, held_out.fold, data.data_seed)
    folds = table_folds(data.path, held_out.scheme, len(y))
    split = fold_split(folds, held_out.fold, held_out.val_fraction, unit)
    if data.standardize:  # on the training folds' rows: the held-out fold sets no scale
        y = standardize(y, np.concatenate([split.train, split.val]))
    return _subsets(x, y, split, False), unit


def split_data(x, y, train_size, val_size, test_size, unit, standardize_y) -> Data:
    """The train / validation / test rows of a unit (``unit_seed``), y standardized over the
    whole table first if asked: networks and baselines split every table with this one
    function."""
    split = unit_split(len(y), train_size, val_size, test_size, unit)
    return _subsets(x, y, split, standardize_y)


def _subsets(x, y, split: Split, standardize_y: bool) -> Data:
    if standardize_y:
        y = standardize(y)
    return Data(
        x[split.train], y[split.train], x[split.val], y[split.val], x[split.test], y[split.test]
    )
