"""Part 2, step: one training step (``whcore.core.training.step``: minibatch MSE, penalty,
backward, fused Adam) with HashWH against the same step whose penalty evaluates the network on
2^b fixed inputs with a trivial penalty (lam * mean of the outputs): the ratio isolates sigma
sampling, XOR doubling and the FWHT. Real-data network sizes (n, c) = (13, 10), (40, 10),
(80, 10), (236, 1), batch 16, b in 7, 10, 13 (b <= n) and b = 16 on avGFP (n = 236, c = 1, the
only network the paper hashes with b = 16); plus the peak memory of a b = 16 step on avGFP
(on a CPU measured in a fresh process: ``run.py --memory-probe``)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import torch

from whcore.core.models import MLP
from whcore.core.regularizers import Context, Regularizer, make_regularizer
from whcore.core.training import make_optimizer, step
from whcore.data import datasets

from .common import RUN_SCRIPT, interleaved, med, met, ratio

# (n, width) of each real dataset's network (the registry's n; avgfp's network is 1 wide).
NETWORKS = [(spec.n, 1 if name == "avgfp" else 10) for name, spec in datasets.REGISTRY.items()]


class FixedPoints(Regularizer):
    """The yardstick: the network on 2^b fixed 0/1 inputs per member, penalty lam * mean."""

    name = "fixed-points"

    def __init__(self, ctx: Context, lam: float, b: int):
        super().__init__(ctx)
        gen = torch.Generator().manual_seed(0)
        points = torch.randint(0, 2, (len(ctx.seeds), 2**b, ctx.n), generator=gen)
        self.points = points.to(dtype=ctx.dtype, device=ctx.device)
        self.lam = lam

    def penalty(self, model):
        return self.lam * model(self.points).mean(-1)


def stepper(n: int, c: float, reg_factory, device: torch.device, seeds=(0,), batch: int = 16):
    """One training step of a fresh network (n, width c, one member per seed) on a fixed
    minibatch, with the regularizer ``reg_factory(ctx)``, as a function of no arguments."""
    model = MLP(n, c, seeds=list(seeds), device=device)
    ctx = Context(n=n, seeds=list(seeds), device=device)
    reg = reg_factory(ctx)
    opt = make_optimizer(model, 0.01, device)
    gen = torch.Generator().manual_seed(1)
    x = torch.randint(0, 2, (len(seeds), batch, n), generator=gen).float().to(device)
    y = torch.randn(len(seeds), batch, generator=gen).to(device)
    return lambda: step(model, opt, reg, x, y)


def step_functions(n: int, c: float, b: int, device: torch.device, seeds=(0,)) -> dict:
    return {
        "hashwh": stepper(
            n, c, lambda ctx: make_regularizer("hashwh", {"lam": 0.01, "b": b}, ctx), device, seeds
        ),
        "plain": stepper(n, c, lambda ctx: FixedPoints(ctx, 0.01, b), device, seeds),
        "minibatch": stepper(n, c, lambda ctx: Regularizer(ctx), device, seeds),
    }


def bench_step(device: torch.device, bs, reps: int, big_reps: int, networks=NETWORKS) -> list[dict]:
    rows = []
    for n, c in networks:
        for b in bs:
            if b > n or (b >= 16 and (n, c) != (236, 1)):  # b = 16: avGFP only, as the paper
                continue
            fns = step_functions(n, c, b, device)
            times = interleaved(fns, device, big_reps if b >= 16 else reps)
            row = {
                "n": n,
                "c": c,
                "b": b,
                "hashwh_s": med(times["hashwh"]),
                "plain_s": med(times["plain"]),
                "minibatch_s": med(times["minibatch"]),
                "hashwh_over_plain": ratio(times, "hashwh", "plain"),
                "hashwh_over_minibatch": ratio(times, "hashwh", "minibatch"),
                "reps": len(times["hashwh"]),
            }
            rows.append(row)
            print(
                f"step n={n:3d} c={c:2d} b={b:2d}: hashwh {row['hashwh_s'] * 1e3:9.2f} ms  "
                f"plain(2^b evals) {row['plain_s'] * 1e3:9.2f} ms  minibatch only "
                f"{row['minibatch_s'] * 1e3:7.2f} ms  hashwh/plain "
                f"{row['hashwh_over_plain']:5.3f}",
                flush=True,
            )
    return rows


def memory_probe(kind: str, n: int, c: float, b: int, members: int, device: str) -> dict:
    """Peak memory of two training steps (run in a fresh process on CPU)."""
    dev = torch.device(device)
    fn = step_functions(n, c, b, dev, seeds=range(members))[kind]
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        base = torch.cuda.memory_allocated(dev)
        fn(), fn()
        torch.cuda.synchronize(dev)
        return {
            "peak_bytes": torch.cuda.max_memory_allocated(dev) - base,
            "measure": "torch.cuda.max_memory_allocated",
        }
    with open("/proc/self/statm") as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    fn(), fn()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"peak_bytes": peak - rss, "measure": "peak RSS - RSS before the steps"}


def bench_memory(device: torch.device, members_list=(1,), b: int = 16) -> list[dict]:
    rows = []
    for members in members_list:
        for kind in ("hashwh", "plain"):
            if device.type == "cuda":
                res = memory_probe(kind, 236, 1, b, members, str(device))
            else:
                cmd = [
                    sys.executable,
                    str(RUN_SCRIPT),
                    "--memory-probe",
                    json.dumps([kind, 236, 1, b, members, "cpu"]),
                ]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                res = json.loads(out.strip().splitlines()[-1])
            row = {"network": "avgfp n=236 c=1", "b": b, "members": members, "kind": kind, **res}
            rows.append(row)
            print(
                f"memory b={b} avgfp members={members} {kind:7s}: peak "
                f"{row['peak_bytes'] / 2**20:8.1f} MiB ({row['measure']})",
                flush=True,
            )
    return rows


def measure(device: torch.device, quick: bool, reps: int) -> dict:
    return {
        "step": bench_step(device, (7, 10, 13, 16), reps, 2 if quick else 3),
        "memory": bench_memory(device, (1,) if quick else (1, 5)),
    }


def table(result: dict) -> list[str]:
    rows = [
        f"| 2 step HashWH / plain | n={r['n']} c={r['c']} b={r['b']} | "
        f"{r['hashwh_s'] * 1e3:.2f} ms vs {r['plain_s'] * 1e3:.2f} ms | "
        f"{r['hashwh_over_plain']:.3f} | <= 1.15 | "
        f"{met(r['hashwh_over_plain'] <= 1.15)} |"
        for r in result.get("step", [])
    ]
    rows += [
        f"| 2 memory b={r['b']} | {r['network']}, {r['members']} member(s), "
        f"{r['kind']} | {r['peak_bytes'] / 2**20:.0f} MiB | | | |"
        for r in result.get("memory", [])
    ]
    return rows
