"""Speed and memory of the exact forest Fourier transform at the SGEMM ablation settings.

    python benchmarks/bench_trees.py [--rows 100000] [--trees 100] [--depth 10] [--subset 3]

Fits RandomForestRegressor(100 trees, max_depth 10) on 100000 SGEMM rows (the binarized data
via ``whcore.data.datasets.load``, from the mirror folder ``WHCORE_DATA_MIRROR`` or
``../shared/datasets/raw``; without it a synthetic stand-in of the same shape: 40 one-hot
columns in 14 groups), then times ``whcore.core.trees.spectrum`` on the whole forest (wall time and
tracemalloc peak) and, on the first ``--subset`` trees, against a straightforward per-node
dict implementation of the paper's recursion (Appendix D.1) in the same run. Prints a table and
writes ``benchmarks/results/trees.json``. Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
import tracemalloc
from copy import copy
from pathlib import Path

import numpy as np

from whcore.core.trees import spectrum

ROOT = Path(__file__).resolve().parents[1]
GROUP_SIZES = [4, 4, 2, 3, 3, 3, 3, 2, 4, 4, 2, 2, 2, 2]  # SGEMM's 14 parameters, one-hot


def load_sgemm(rows: int, seed: int = 0):
    """(x, y, source): the real binarized SGEMM if reachable, else a same-shape stand-in."""
    from whcore.data import datasets
    from whcore.data.loading import standardize

    mirror = os.environ.get("WHCORE_DATA_MIRROR") or ROOT.parent / "shared" / "datasets" / "raw"
    try:
        frame = datasets.load("sgemm", ROOT / "resources", mirror=mirror)
        x, y, source = frame.drop(columns="y").to_numpy(np.uint8), frame["y"].to_numpy(), "sgemm"
    except (OSError, ValueError) as err:
        print(f"real SGEMM unavailable ({err}); using a synthetic stand-in")
        x = _stand_in(241_600, seed)
        y, source = _stand_in_target(x, seed), "synthetic stand-in"
    pick = np.random.default_rng(seed).permutation(len(x))[:rows]
    return x[pick], standardize(y)[pick], source


def _stand_in(rows: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    blocks = [np.eye(k, dtype=np.uint8)[rng.integers(0, k, rows)] for k in GROUP_SIZES]
    return np.concatenate(blocks, axis=1)


def _stand_in_target(x: np.ndarray, seed: int) -> np.ndarray:
    """A skewed target with interactions, like a runtime: exp of a random sparse polynomial."""
    rng = np.random.default_rng(seed + 1)
    signs = 1.0 - 2.0 * x
    terms = [
        signs[:, rng.choice(x.shape[1], d, replace=False)].prod(1) * rng.normal()
        for d in rng.integers(1, 5, 30)
    ]
    return np.exp(0.3 * np.sum(terms, axis=0))


def dict_transform(tree, n: int) -> dict[int, float]:
    """The paper's recursion with one dict per node: F[S] += (F_L[S] + F_R[S]) / 2 and
    F[S ^ {i}] += (F_L[S] - F_R[S]) / 2 (float64, not the reference's Decimal)."""
    t = tree.tree_

    def walk(node):
        if t.children_left[node] < 0:
            return {0: float(t.value[node, 0, 0])}
        left, right = walk(t.children_left[node]), walk(t.children_right[node])
        bit = 1 << (n - 1 - int(t.feature[node]))
        out: dict[int, float] = {}
        for f in left.keys() | right.keys():
            a, b = left.get(f, 0.0), right.get(f, 0.0)
            out[f] = out.get(f, 0.0) + (a + b) / 2
            out[f ^ bit] = out.get(f ^ bit, 0.0) + (a - b) / 2
        return out

    return walk(0)


def dict_forest(forest, n: int) -> dict[int, float]:
    total: dict[int, float] = {}
    for tree in forest.estimators_:
        for f, c in dict_transform(tree, n).items():
            total[f] = total.get(f, 0.0) + c / len(forest.estimators_)
    return {f: c for f, c in total.items() if c != 0.0}


def _measure(fn):
    """(result, seconds, tracemalloc peak in MB)."""
    tracemalloc.start()
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, seconds, peak


def main(argv=None) -> dict:
    from sklearn.ensemble import RandomForestRegressor

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--trees", type=int, default=100)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--subset", type=int, default=3, help="trees for the dict baseline")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "trees.json"))
    args = p.parse_args(argv)

    x, y, source = load_sgemm(args.rows)
    n = x.shape[1]
    forest = RandomForestRegressor(
        n_estimators=args.trees, max_depth=args.depth, random_state=1, n_jobs=args.threads
    )
    fit_start = time.perf_counter()
    forest.fit(x, y)
    fit_time = time.perf_counter() - fit_start
    spec, seconds, peak = _measure(lambda: spectrum(forest))

    small = copy(forest)  # the first trees only, as one forest
    small.estimators_ = forest.estimators_[: args.subset]
    fast, fast_s, _ = _measure(lambda: spectrum(small))
    slow, slow_s, slow_peak = _measure(lambda: dict_forest(small, n))
    slow_f = np.array(sorted(slow), dtype=np.int64)
    slow_c = np.array([slow[f] for f in slow_f])
    keep = np.abs(slow_c) > 1e-12 * np.abs(slow_c).max()
    agree = bool(
        np.array_equal(slow_f[keep], fast.frequencies)
        and np.allclose(slow_c[keep], fast.coefficients, rtol=0, atol=1e-12)
    )

    result = {
        "data": source,
        "rows": len(x),
        "n": int(n),
        "trees": args.trees,
        "max_depth": args.depth,
        "threads": args.threads,
        "fit_time_s": fit_time,
        "leaves": int(sum(e.tree_.n_leaves for e in forest.estimators_)),
        "coefficients": len(spec),
        "transform_s": seconds,
        "transform_s_per_tree": seconds / args.trees,
        "transform_peak_mb": peak,
        "process_max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "subset_trees": args.subset,
        "subset_vectorized_s": fast_s,
        "subset_dict_s": slow_s,
        "subset_dict_peak_mb": slow_peak,
        "speedup_vs_dict": slow_s / fast_s,
        "subset_results_agree": agree,
    }
    print(f"{'quantity':<28}{'value':>16}")
    for key, value in result.items():
        print(f"{key:<28}{value:>16.4g}" if isinstance(value, float) else f"{key:<28}{value!s:>16}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
