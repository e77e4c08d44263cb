"""The ablation of Figure 5c: prune a random forest's exact Fourier spectrum two ways.

A random forest fit to a real dataset (test R^2 near 1) is turned into its exact sparse Fourier
transform (``whcore.core.trees``). Coefficients are then deleted in ``steps + 1`` equal fractions
(step i removes floor(i K / (steps + 1)) of the K coefficients, i = 0..steps) in two orders:

- ``degree``: highest degree first, ties in random (seeded) order;
- ``amplitude``: smallest |coefficient| first, ties in random (seeded) order;

and the pruned function's R^2 is measured on held-out test rows. One pass over the test
rows' character matrix serves every step of both orders (``SparseSpectrum.predict_groups``).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ...core.rng import derive_seed, stable_permutation

__all__ = ["ORDERS", "deletion_order", "prune_scores", "run_ablation"]

ORDERS = ("degree", "amplitude")


def deletion_order(tree_spectrum, order: str, seed: int) -> np.ndarray:
    """Indices of ``tree_spectrum``'s coefficients in the order they are deleted."""
    if order not in ORDERS:
        raise ValueError(f"unknown deletion order {order!r}; choose one of {ORDERS}")
    key = -tree_spectrum.degrees if order == "degree" else np.abs(tree_spectrum.coefficients)
    # A random permutation first, then a stable sort: equal keys keep a random order.
    shuffled = stable_permutation(len(tree_spectrum), derive_seed("ablation ties", order, seed))
    return shuffled[np.argsort(key[shuffled], kind="stable")]


def _r2(y: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """R^2 of each prediction column (pred has rows along axis 0)."""
    residual = ((pred - y.reshape(-1, *[1] * (pred.ndim - 1))) ** 2).sum(axis=0)
    return 1.0 - residual / ((y - y.mean()) ** 2).sum()


def prune_scores(
    tree_spectrum, x: np.ndarray, y: np.ndarray, steps: int, seed: int
) -> pd.DataFrame:
    """Test R^2 of ``tree_spectrum`` after each deletion step of each order (a tidy table)."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    k = len(tree_spectrum)
    removed = np.arange(steps + 1) * k // (steps + 1)
    labels = np.empty((k, len(ORDERS)), dtype=np.int64)
    for o, order in enumerate(ORDERS):
        position = np.empty(k, dtype=np.int64)
        position[deletion_order(tree_spectrum, order, seed)] = np.arange(k)
        # Group s = the coefficients removed between step s and s + 1 (the last: never).
        labels[:, o] = np.searchsorted(removed, position, side="right") - 1
    groups = tree_spectrum.predict_groups(x, labels, steps + 1)  # (N, orders, steps + 1)
    kept = np.cumsum(groups[..., ::-1], axis=-1)[..., ::-1]  # step i keeps groups >= i
    r2 = _r2(y, kept)
    degrees = tree_spectrum.degrees
    rows = []
    for o, order in enumerate(ORDERS):
        for step in range(steps + 1):
            max_degree = int(degrees[labels[:, o] >= step].max(initial=0))
            rows.append(
                {
                    "order": order,
                    "step": step,
                    "removed": int(removed[step]),
                    "kept": int(k - removed[step]),
                    "fraction_removed": removed[step] / k,
                    "max_degree_kept": max_degree,
                    "test_r2": float(r2[o, step]),
                }
            )
    return pd.DataFrame(rows).assign(n_coefficients=k)


def run_ablation(
    x,
    y,
    train_size: int,
    test_size: int,
    max_depth: int,
    n_trees: int,
    steps: int,
    seed: int,
    standardize: bool = True,
    threads: int = 1,
    log=print,
) -> tuple[pd.DataFrame, dict]:
    """Fit the forest, transform it, prune it; returns (table, summary numbers)."""
    from sklearn.ensemble import RandomForestRegressor
    from threadpoolctl import threadpool_limits

    from ...core.trees import spectrum
    from ...data.loading import split_data

    data = split_data(x, y, train_size, 0, test_size, seed, standardize)
    forest = RandomForestRegressor(
        n_estimators=n_trees,
        max_depth=max_depth,
        n_jobs=threads,
        random_state=derive_seed("ablation forest", seed) % 2**32,
    )
    info = {
        "train_size": train_size,
        "test_size": test_size,
        "max_depth": max_depth,
        "n_trees": n_trees,
        "seed": seed,
        "n": int(data.n),
    }
    with threadpool_limits(limits=threads):
        _, info["fit_time"] = _timed(forest.fit, data.x_train, data.y_train)
        forest_pred = forest.predict(data.x_test)
        info["forest_test_r2"] = float(_r2(data.y_test, forest_pred))
        info["forest_train_r2"] = float(_r2(data.y_train, forest.predict(data.x_train)))
        log(
            f"forest: fit {info['fit_time']:.1f}s, train R^2 {info['forest_train_r2']:.4f}, "
            f"test R^2 {info['forest_test_r2']:.4f}"
        )
        tree_spectrum, info["transform_time"] = _timed(spectrum, forest)
        log(
            f"spectrum: {len(tree_spectrum)} coefficients, max degree {tree_spectrum.degrees.max()}, "
            f"{info['transform_time']:.1f}s"
        )
        table, info["prune_time"] = _timed(
            prune_scores, tree_spectrum, data.x_test, data.y_test, steps, seed
        )
    full = table.loc[table["step"] == 0, "test_r2"].iloc[0]
    if not np.isclose(full, info["forest_test_r2"], rtol=0, atol=1e-9):
        raise RuntimeError(
            f"the full spectrum's test R^2 {full} differs from the forest's "
            f"{info['forest_test_r2']}: the transform is wrong"
        )
    log(
        f"pruning: {info['prune_time']:.1f}s; "
        + "; ".join(
            f"{o}: R^2 {table[(table.order == o)].test_r2.iloc[-1]:.4f} at {steps}/{steps + 1} "
            "removed"
            for o in ORDERS
        )
    )
    return table.assign(**info), info


def _timed(fn, *args):
    """(fn(*args), seconds taken)."""
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start
