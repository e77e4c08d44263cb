"""Baselines on the real datasets: Lasso, random forest and XGBoost over a hyperparameter grid.

One job = one (dataset, model family, train size, data seed) and the family's whole grid, on
exactly the rows the networks see for that unit (``whcore.data.loading.split_data``). Every grid
point becomes one record with the columns network runs use where they mean the same thing
(``method``, ``train_size``, ``data_seed``, ``{train,val,test}_{r2,mse}``, ``status``) plus its
hyperparameters, ``fit_time`` (seconds) and ``model_seed``. Selection on the validation split
happens later, in aggregation (``select_best`` here is the same rule for one job's records).
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd

from ...core.rng import derive_seed
from .families import BASELINES
from .proteingym import spearman

__all__ = [
    "FAMILIES",
    "grid_points",
    "make_model",
    "fit_grid",
    "select_best",
]

# Each family's grid parameters (the registry's, in its order).
FAMILIES = {name: tuple(info.params) for name, info in BASELINES.items()}


def _check_family(family: str) -> None:
    if family not in FAMILIES:
        raise ValueError(f"unknown baseline family {family!r}; choose one of {sorted(FAMILIES)}")


def grid_points(family: str, grid: dict) -> list[dict]:
    """Every combination of a grid {hyperparameter: [values]}, checked against the family."""
    _check_family(family)
    expected = set(FAMILIES[family])
    if set(grid) != expected:
        raise ValueError(
            f"grid for {family} must have exactly the keys {sorted(expected)}, got {sorted(grid)}"
        )
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid {family}.{key} must be a non-empty list, got {values!r}")
    keys = list(FAMILIES[family])
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def make_model(family: str, params: dict, seed: int, threads: int = 1):
    """An unfitted model of a family; ``threads`` goes to its own parallelism."""
    _check_family(family)
    if family == "lasso":
        from sklearn.linear_model import Lasso

        return Lasso(alpha=float(params["alpha"]), max_iter=10_000, random_state=seed)
    if family == "ridge":  # the field's linear default (ProteinGym's leaderboard, One-Hot)
        from sklearn.linear_model import Ridge

        return Ridge(alpha=float(params["alpha"]))
    depth, trees = int(params["max_depth"]), int(params["n_estimators"])
    if family == "rf":
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(
            n_estimators=trees, max_depth=depth, random_state=seed, n_jobs=threads
        )
    from xgboost import XGBRegressor

    # On 0/1 features every split lies between 0 and 1, so histogram bins lose nothing.
    return XGBRegressor(
        n_estimators=trees, max_depth=depth, random_state=seed, n_jobs=threads, tree_method="hist"
    )


def _scores(y: np.ndarray, pred: np.ndarray) -> tuple[float, float]:
    """(MSE, R^2) with the split's own mean, as for the networks (R^2 NaN if y is constant)."""
    mse = float(np.mean((pred - y) ** 2)) if len(y) else float("nan")
    variance = float(np.var(y)) if len(y) else 0.0
    return mse, (1.0 - mse / variance if variance > 0 else float("nan"))


def fit_grid(
    data, family: str, grid: dict, unit: int, threads: int = 1, log=print, ranks=False
) -> pd.DataFrame:
    """Fit every grid point on ``data`` (a ``whcore.core.arrays.Data``); one record per point
    (with ``ranks``, also the test split's Spearman correlation, ``test_spearman``).

    BLAS and OpenMP pools are capped at ``threads`` too, so a job never uses more cores than
    it was given. The models' random state derives from the ``unit``
    (``whcore.data.loading.unit_seed``)."""
    from threadpoolctl import threadpool_limits

    seed = derive_seed("baseline", family, unit) % 2**32  # NumPy seeds are 32-bit
    records = []
    with threadpool_limits(limits=threads):
        for params in grid_points(family, grid):
            model = make_model(family, params, seed, threads)
            start = time.perf_counter()
            model.fit(data.x_train, data.y_train)
            record = {"method": family, **params, "fit_time": time.perf_counter() - start}
            for name, x, y in data.splits():
                prediction = model.predict(x)
                record[f"{name}_mse"], record[f"{name}_r2"] = _scores(y, prediction)
                if ranks and name == "test":
                    record["test_spearman"] = spearman(y, prediction)
            records.append({**record, "model_seed": seed, "status": "ok"})
            log(f"{family} {params}: val R^2 {record['val_r2']:.4f}, fit {record['fit_time']:.2f}s")
    return pd.DataFrame.from_records(records)


def select_best(records: pd.DataFrame) -> pd.DataFrame:
    """The validation-best record per (method, train_size, data_seed) (never the test split)."""
    keys = ["method", "train_size", "data_seed"]
    best = records.loc[records.groupby(keys, sort=True)["val_r2"].idxmax()]
    return best.reset_index(drop=True)
