"""Part 3, EN-S against HashWH and against the hardware.

- ens: EN-S vs HashWH epoch time in the paper's runtime setting (``bench_ens.bench_epoch``).
- ens_throughput (3b, not in the default parts): one EN-S step against plain batched matrix
  products of the network's shapes on SPRIGHT's points (achieved FLOP/s), 1 and 45 members.
"""

from __future__ import annotations

import torch

from whcore.core.models import MLP
from whcore.core.regularizers import make_regularizer

from .common import interleaved, med, met, ratio
from .step import stepper


# --------------------------------------------------------------------- 3. EN-S vs HashWH epoch
def bench_ens_epoch(device: torch.device, quick: bool) -> dict:
    import bench_ens  # the EN-S benchmark (benchmarks/bench_ens.py)

    n, c, epochs, repeats = (50, 1, 1, 2) if quick else (50, 5, 2, 3)
    return bench_ens.bench_epoch(n, c, epochs, repeats, str(device))


# --------------------------------------------------- 3b. EN-S step against plain matrix products
def plain_products(model: MLP, points: torch.Tensor):
    """Forward and backward of the same batched matrix products as the network on ``points``,
    nothing else (no biases, activations, loss or optimizer): the throughput ceiling."""
    weights = [w.detach().clone().requires_grad_(True) for w in model.weights]

    def products():
        h = points
        for w in weights:
            h = torch.bmm(h, w)
        h.sum().backward()

    return products


def bench_ens_throughput(device: torch.device, reps: int, settings=((50, 2, 7, 3),)) -> list[dict]:
    """One EN-S training step (minibatch and penalty over all of SPRIGHT's samples, backward,
    Adam) against plain batched matrix products of the network's shapes on the same points:
    achieved FLOP/s (forward + backward = 3 x the forward's 2 x multiply-adds). A job's EN-S
    group stacks 9 configurations x 5 seeds = 45 members; 1 member is the paper's one model."""
    rows = []
    for n, c, m, d in settings:
        params = {"lam": 0.1, "rho": 0.01, "m": m, "d": d}
        for members in (1, 45):
            seeds = list(range(members))
            built = []  # the stepper's regularizer: its SPRIGHT points feed the plain products

            def ens(ctx, built=built, params=params):
                built.append(make_regularizer("ens", params, ctx))
                return built[-1]

            step_fn = stepper(n, c, ens, device, seeds=seeds, batch=128)
            model = MLP(n, c, seeds=seeds, device=device)
            points = built[0].points
            times = interleaved(
                {"ens": step_fn, "plain": plain_products(model, points)}, device, reps
            )
            macs = (
                points.shape[0]
                * points.shape[1]
                * sum(w.shape[1] * w.shape[2] for w in model.weights)
            )
            flops = 3 * 2 * macs
            row = {
                "n": n,
                "c": c,
                "m": m,
                "d": d,
                "members": members,
                "points": int(points.shape[1]),
                "ens_step_s": med(times["ens"]),
                "plain_s": med(times["plain"]),
                "ens_tflops": flops / med(times["ens"]) / 1e12,
                "plain_tflops": flops / med(times["plain"]) / 1e12,
                "ens_over_plain_throughput": 1 / ratio(times, "ens", "plain"),
            }
            rows.append(row)
            print(
                f"ens step n={n} c={c} m={m} d={d} members={members}: {row['ens_step_s'] * 1e3:.2f}"
                f" ms vs plain products {row['plain_s'] * 1e3:.2f} ms, throughput ratio "
                f"{row['ens_over_plain_throughput']:.2f}",
                flush=True,
            )
    return rows


def measure_epoch(device: torch.device, quick: bool, reps: int) -> dict:
    return {"ens": bench_ens_epoch(device, quick)}


def measure_throughput(device: torch.device, quick: bool, reps: int) -> dict:
    # the paper's runtime setting on a GPU; a smaller one that a CPU steps through in seconds
    setting = (50, 2, 7, 3) if device.type == "cuda" else (25, 2, 5, 3)
    return {"ens_throughput": bench_ens_throughput(device, reps, (setting,))}


def table(result: dict) -> list[str]:
    rows = []
    ens = result.get("ens")
    if ens:
        for key, value in ens["ratios"].items():
            rows.append(
                f"| 3 EN-S / HashWH epoch | n={ens['n']} c={ens['c']} {key} | | {value:.2f} | | |"
            )
    for r in result.get("ens_throughput", []):
        rows.append(
            f"| 3b EN-S step / plain products | n={r['n']} c={r['c']} m={r['m']} "
            f"{r['members']} member(s) | {r['ens_tflops']:.3f} vs {r['plain_tflops']:.3f} TFLOP/s"
            f" | {r['ens_over_plain_throughput']:.2f} | >= 0.5 (GPU) | "
            f"{met(r['ens_over_plain_throughput'] >= 0.5)} |"
        )
    return rows
