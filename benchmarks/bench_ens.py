"""SPRIGHT recovery rates and speed, and EN-S epoch time against HashWH, in one run.

    python benchmarks/bench_ens.py [--sections recovery,spright,epoch] [--repeats 3]
                                   [--n 50] [--c 5] [--epochs 2] [--device auto] [--threads 0]

- recovery: exact-recovery rate of random K-sparse spectra (uniform frequencies, |coefficient|
  in [0.5, 1]) per (n, m, K), d = 3, over ``--trials`` designs.
- spright: design build time and decode time (median of ``--repeats``) vs n and m, K = 2^m / 2,
  values synthesized exactly on the design's points (the decoder is what is timed).
- epoch: the paper's runtime setting (synthetic g* with 25 frequencies of degree <= 5, n = 50,
  train size c * 25 * n with c = 5, width 2 n, batch 128): per-epoch training time of standard,
  ens (m = 7, d = 3) and hashwh (b = 7, 10, 13), each trained ``--epochs`` epochs ``--repeats``
  times, interleaved, on the same data; median epoch times, and ratios ens / hashwh taken
  within each repeat, median over repeats.

Prints tables and writes ``benchmarks/results/ens.json``. Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

from whcore.core import spright
from whcore.core.arrays import Data
from whcore.core.devices import pick_device
from whcore.core.io import atomic_path
from whcore.core.training import TrainConfig, train
from whcore.data.synthetic import random_sparse, sample_inputs

ROOT = Path(__file__).resolve().parents[1]
RECOVERY_GRID = [(13, 6), (40, 6), (100, 6), (236, 6), (40, 7)]
RECOVERY_LOADS = (0.25, 0.5, 1.0, 1.5)  # K / 2^m
TIMING_N = (25, 50, 100, 236)
TIMING_M = (5, 7, 9)


def random_spectrum(n: int, k: int, rng: np.random.Generator):
    bits = np.unique(rng.integers(0, 2, (2 * k, n), dtype=np.uint8), axis=0)
    bits = bits[rng.permutation(len(bits))[:k]]
    return bits, rng.uniform(0.5, 1.0, k) * rng.choice([-1.0, 1.0], k)


def recovered(found: dict, bits, amps) -> bool:
    expected = spright.Recovery(bits, amps).as_dict()
    return set(found) == set(expected) and all(
        abs(found[k] - v) <= 1e-8 for k, v in expected.items()
    )


def bench_recovery(trials: int) -> list[dict]:
    rows = []
    for n, m in RECOVERY_GRID:
        sizes = [max(1, int(load * 2**m)) for load in RECOVERY_LOADS]
        hits = dict.fromkeys(sizes, 0)
        for t in range(trials):
            des = spright.SprightDesign(n, m, 3, seed=t)
            x = torch.as_tensor(des.points, dtype=torch.float32)
            rng = np.random.default_rng([n, m, t])
            for k in sizes:
                bits, amps = random_spectrum(n, k, rng)  # evaluated directly, not synthesized
                parity = torch.remainder(x @ torch.as_tensor(bits, dtype=torch.float32).T, 2)
                values = (1 - 2 * parity.double()) @ torch.as_tensor(amps)
                hits[k] += recovered(spright.decode(des, values.numpy()).as_dict(), bits, amps)
        for k in sizes:
            rows.append(
                {
                    "n": n,
                    "m": m,
                    "K": k,
                    "K_over_bins": k / 2**m,
                    "trials": trials,
                    "success_rate": hits[k] / trials,
                }
            )
            print(
                f"recovery n={n:4d} m={m} K={k:4d} (K/2^m={k / 2**m:.2f}): "
                f"{hits[k]}/{trials} exact",
                flush=True,
            )
    return rows


def _median_time(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def bench_spright(repeats: int) -> list[dict]:
    rows = []
    for m in TIMING_M:
        for n in TIMING_N:
            if m > n or (n, m) == (236, 9):  # 2.2M samples of 236 bits: skipped (memory)
                continue
            build, des = _median_time(partial(spright.SprightDesign, n, m, 3, seed=0), repeats)
            bits, amps = random_spectrum(n, 2**m // 2, np.random.default_rng([n, m]))
            decode, rec = _median_time(
                partial(spright.decode, des, des.synthesize(bits, amps)), repeats
            )
            ok = recovered(rec.as_dict(), bits, amps)
            rows.append(
                {
                    "n": n,
                    "m": m,
                    "K": len(amps),
                    "samples": des.n_samples,
                    "unique_samples": len(des.points),
                    "design_s": build,
                    "decode_s": decode,
                    "exact": ok,
                }
            )
            print(
                f"spright n={n:4d} m={m} samples={des.n_samples:8d} unique="
                f"{len(des.points):8d} design {build:7.3f}s decode {decode:7.3f}s exact={ok}",
                flush=True,
            )
    return rows


def synthetic_data(n: int, c: int, seed: int = 0) -> Data:
    """The paper's high-dimensional synthetic setting: train c 25 n, validation and test 5x."""
    target = random_sparse(n, 25, 5, seed)
    train_size = c * 25 * n
    x = sample_inputs(n, 11 * train_size, seed + 1)
    y = target(x)
    y = (y - y.mean()) / y.std()
    cut1, cut2 = train_size, 6 * train_size
    return Data(x[:cut1], y[:cut1], x[cut1:cut2], y[cut1:cut2], x[cut2:], y[cut2:])


EPOCH_METHODS = [
    ("standard", "standard", {}),
    ("ens m=7", "ens", {"lam": 0.1, "rho": 0.01, "m": 7, "d": 3}),
    ("hashwh b=7", "hashwh", {"lam": 0.01, "b": 7}),
    ("hashwh b=10", "hashwh", {"lam": 0.01, "b": 10}),
    ("hashwh b=13", "hashwh", {"lam": 0.01, "b": 13}),
]


def _by_repeat(values: list, repeats: int) -> list[list]:
    per = len(values) // repeats
    return [values[i * per : (i + 1) * per] for i in range(repeats)]


def bench_epoch(n: int, c: int, epochs: int, repeats: int, device: str) -> dict:
    data = synthetic_data(n, c)
    config = TrainConfig(epochs=epochs, batch_size=128, width=2, patience=epochs + 1, device=device)
    times = {
        label: {"epoch_time": [], "reg_time": [], "fourier_time": []}
        for label, _, _ in EPOCH_METHODS
    }
    for r in range(repeats):  # interleaved, so that load changes hit every method alike
        for label, method, params in EPOCH_METHODS:
            records = train(data, method, params, [r], config, log=lambda msg: None)
            trained = records[records["epoch"] > 0]
            for key in times[label]:
                if key in trained:
                    times[label][key] += trained[key].tolist()
            print(
                f"epoch repeat {r} {label:12s} {np.median(trained['epoch_time']):8.3f}s/epoch",
                flush=True,
            )
    medians = {
        label: {key: float(np.median(v)) for key, v in cols.items() if v}
        for label, cols in times.items()
    }
    # Ratio of the medians within each repeat (run back to back), then the median over repeats:
    # robust to the load of a shared machine drifting between repeats.
    ratios = {}
    for label, _, _ in EPOCH_METHODS[2:]:
        per_repeat = [
            np.median(e) / np.median(h)
            for e, h in zip(
                _by_repeat(times["ens m=7"]["epoch_time"], repeats),
                _by_repeat(times[label]["epoch_time"], repeats),
            )
        ]
        ratios[f"ens / {label}"] = float(np.median(per_repeat))
    ens = medians["ens m=7"]
    ratios["ens fourier share"] = ens["fourier_time"] / ens["epoch_time"]
    return {
        "n": n,
        "c": c,
        "train_size": len(data.y_train),
        "epochs": epochs,
        "repeats": repeats,
        "device": str(pick_device(device)),
        "medians": medians,
        "ratios": ratios,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", default="recovery,spright,epoch")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--c", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--device", default="auto")
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch CPU threads (0: torch's default); 1 avoids idle-spinning "
        "threads on a machine shared with other jobs",
    )
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ens.json"))
    args = parser.parse_args(argv)
    sections = args.sections.split(",")
    if args.threads:
        torch.set_num_threads(args.threads)
    result = {
        "machine": {
            "platform": platform.platform(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
        }
    }
    if "recovery" in sections:
        result["recovery"] = bench_recovery(args.trials)
    if "spright" in sections:
        result["spright"] = bench_spright(args.repeats)
    if "epoch" in sections:
        result["epoch"] = bench_epoch(args.n, args.c, args.epochs, args.repeats, args.device)
        print("\nper-epoch medians (s):")
        for label, cols in result["epoch"]["medians"].items():
            print(f"  {label:12s} " + "  ".join(f"{k} {v:8.3f}" for k, v in cols.items()))
        for label, ratio in result["epoch"]["ratios"].items():
            print(f"  {label:22s} {ratio:6.2f}")
    with atomic_path(args.out) as tmp:
        tmp.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
