"""A training job's data: read a binarized table, sample a g*, split, standardize; every
random choice from the unit's seed (``whcore.data.splits.unit_seed``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.rng import derive_seed
from ..core.training import Data
from .splits import training_seed, unit_seed, unit_split
from .synthetic import SparseTarget, sample_inputs

__all__ = ["load_job_data", "read_table", "split_data", "standardize", "training_seed", "unit_seed"]


def standardize(y: np.ndarray) -> np.ndarray:
    """(y - mean) / std over the whole dataset, before splitting (as the reference did).

    The reference used ``torch.std``, the sample standard deviation (ddof = 1)."""
    std = y.std(ddof=1) if len(y) > 1 else 0.0
    return (y - y.mean()) / (std if std > 0 else 1.0)


def read_table(path: str) -> tuple[np.ndarray, np.ndarray]:
    df = pd.read_parquet(path)
    if "y" not in df.columns:
        raise ValueError(
            f"{path}: a table needs a target column 'y'; found {list(df.columns)[:5]}..."
        )
    x = df.drop(columns="y").to_numpy()
    if not np.isin(x, (0, 1)).all():
        raise ValueError(f"{path}: feature columns must be 0/1; binarize the dataset first")
    return x.astype(np.uint8), df["y"].to_numpy(dtype=np.float64)


def _pool_size(data: dict, n: int) -> int:
    sizes = [data["train_size"], data["val_size"], data["test_size"]]
    return 2**n if "rest" in sizes else sum(sizes)


def load_job_data(data: dict) -> tuple[Data, SparseTarget | None, int]:
    """The splits of a spec's ``data`` section, the g* of synthetic data (else None) and the
    unit's seed (``unit_seed``: a table is named by its file's stem, the dataset's name)."""
    target = None
    if data["source"] == "synthetic":
        target = SparseTarget.from_json(data["path"])
        unit = unit_seed(data["train_size"], data["data_seed"], target.digest())
        pool = _pool_size(data, target.n)
        x = sample_inputs(target.n, pool, derive_seed("inputs", unit))
        y = target(x)
    else:
        unit = unit_seed(data["train_size"], data["data_seed"], Path(data["path"]).stem)
        x, y = read_table(data["path"])
    sizes = (data["train_size"], data["val_size"], data["test_size"])
    return split_data(x, y, *sizes, unit, data["standardize"]), target, unit


def split_data(x, y, train_size, val_size, test_size, unit, standardize_y) -> Data:
    """The train / validation / test rows of a unit (``unit_seed``), y standardized over the
    whole table first if asked: networks and baselines split every table with this one
    function."""
    if standardize_y:
        y = standardize(y)
    split = unit_split(len(y), train_size, val_size, test_size, unit)
    return Data(
        x[split.train], y[split.train], x[split.val], y[split.val], x[split.test], y[split.test]
    )
