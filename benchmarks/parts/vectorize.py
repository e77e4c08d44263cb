"""Part 4, vectorize: 5 training seeds as one stacked model vs one by one, for the
spectrum-evolution job (n = 10, width 10, batch 16, train 200, with its per-epoch exact
spectrum) and the Entacmaea job (n = 13, width 10, batch 16, train 200), standard and HashWH;
and the largest difference between the two runs' records."""

from __future__ import annotations

import time

import numpy as np
import torch

from whcore.core.arrays import Data
from whcore.core.training import TrainConfig, train
from whcore.data import datasets

from .common import MIRROR, ROOT, med, met, ratio, sync


def spectrum_job():
    """The spectrum-evolution job: g* on n = 10 (degree <= 5), train 200, validation the rest,
    and its per-epoch exact-spectrum callback."""
    from whcore.data.synthetic import random_sparse, sample_inputs
    from whcore.pipeline.jobs.train import spectrum_callback

    target = random_sparse(10, 10, 5, seed=0)
    x = sample_inputs(10, 2**10, 0)
    y = target(x)
    data = Data(x[:200], y[:200], x[200:], y[200:])
    return data, lambda: spectrum_callback(target, float(target.k))[0]


def entacmaea_job():
    """Entacmaea (n = 13): train 200, validation and test the rest, y standardized; a
    synthetic stand-in of the same shape if the data cannot be read."""
    from whcore.data.loading import split_data

    try:
        frame = datasets.load("entacmaea", ROOT / "resources", mirror=MIRROR)
        x, y, source = frame.drop(columns="y").to_numpy(np.uint8), frame["y"].to_numpy(), "real"
    except (OSError, ValueError) as err:
        from whcore.data.synthetic import random_sparse, sample_inputs

        print(f"entacmaea unavailable ({err}); using a synthetic stand-in")
        x = sample_inputs(13, 2**13, 0)
        y, source = random_sparse(13, 50, 5, seed=0)(x), "synthetic stand-in"
    half = (len(y) - 200) // 2
    return split_data(x, y, 200, half, len(y) - 200 - half, 0, True), None, source


def bench_vectorize(device: torch.device, quick: bool) -> list[dict]:
    seeds = [0, 1, 2, 3, 4]
    epochs, reps = (4, 1) if quick else (8, 3)
    data_s, callback_s = spectrum_job()
    data_e, _, source = entacmaea_job()
    settings = [
        ("spectrum n=10", data_s, callback_s, 10, [("standard", {}), ("hashwh", {"b": 8})]),
        (
            f"entacmaea n=13 ({source})",
            data_e,
            None,
            10,
            [("standard", {}), ("hashwh", {"b": 7})],
        ),
    ]
    rows = []
    for label, data, make_callback, width, methods in settings:
        for method, params in methods:
            params = {**params, "lam": 0.01} if method == "hashwh" else params
            runs = {}
            job = (data, method, params, width, make_callback, runs)

            def run(vectorize, job=job):
                data, method, params, width, make_callback, runs = job
                cfg = TrainConfig(
                    epochs=epochs,
                    batch_size=16,
                    width=width,
                    patience=epochs + 1,
                    device=str(device),
                    vectorize=vectorize,
                )
                cb = make_callback() if make_callback else None
                start = time.perf_counter()
                records = train(data, method, params, seeds, cfg, cb, log=lambda m: None)
                sync(device)
                runs[vectorize] = records
                return time.perf_counter() - start

            times = {"stacked": [], "one_by_one": []}
            run(True)  # warm-up (first calls, caches)
            for _ in range(reps):
                times["stacked"].append(run(True))
                times["one_by_one"].append(run(False))
            diffs, first = {}, {}
            for col in ("train_mse", "val_mse", "test_mse"):
                if col in runs[True]:
                    a, b = runs[True][col].to_numpy(), runs[False][col].to_numpy()
                    rel = np.abs(a - b) / np.maximum(np.abs(b), 1e-12)
                    diffs[col] = float(np.max(rel))
                    first[col] = float(np.max(rel[runs[True]["epoch"].to_numpy() <= 1]))
            same_rows = runs[True][["seed", "epoch"]].equals(runs[False][["seed", "epoch"]])
            row = {
                "setting": label,
                "method": method,
                **params,
                "seeds": len(seeds),
                "epochs": epochs,
                "stacked_s": med(times["stacked"]),
                "one_by_one_s": med(times["one_by_one"]),
                "speedup": ratio(times, "one_by_one", "stacked"),
                "max_rel_diff": max(diffs.values()),
                "max_rel_diff_epoch1": max(first.values()),
                "same_rows": bool(same_rows),
            }
            rows.append(row)
            name = method + (f" b={params['b']}" if "b" in params else "")
            print(
                f"vectorize {label:30s} {name:12s}: stacked {row['stacked_s']:7.2f}s  "
                f"one by one {row['one_by_one_s']:7.2f}s  speedup {row['speedup']:5.2f}x  "
                f"max rel diff {row['max_rel_diff']:.1e} (epoch 1: {row['max_rel_diff_epoch1']:.1e})",
                flush=True,
            )
    return rows


def measure(device: torch.device, quick: bool, reps: int) -> dict:
    return {"vectorize": bench_vectorize(device, quick)}


def table(result: dict) -> list[str]:
    rows = []
    for r in result.get("vectorize", []):
        name = r["method"] + (f" b={r['b']}" if "b" in r else "")
        target = ">= 3x" if r["setting"].startswith("spectrum") else ""
        verdict = met(r["speedup"] >= 3) if target else ""
        rows.append(
            f"| 4 5 seeds stacked vs one by one | {r['setting']} {name} | "
            f"{r['stacked_s']:.2f} s vs {r['one_by_one_s']:.2f} s (rel diff of MSEs "
            f"{r['max_rel_diff_epoch1']:.0e} after epoch 1, {r['max_rel_diff']:.0e} "
            f"after {r['epochs']}) | {r['speedup']:.2f}x | {target} | {verdict} |"
        )
    return rows
