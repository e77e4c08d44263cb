"""The speed benchmarks, in one run: ratios against baselines measured side by side.

    python benchmarks/run.py [--quick] [--device cuda] [--out benchmarks/results/bench.json]
                             [--parts fwht,step,ens,vectorize,workflow] [--skip-workflow]
                             [--threads 1]

1. fwht: our FWHT (radix-2^k Kronecker factors) and the textbook radix-2 butterflies against the
   reference implementation's dense product x @ H_b (H_b prebuilt), b = 10..14, one row;
   the bytes each allocates (every tensor it creates, counted by a dispatch mode; the dense
   matrix included for the reference).
2. step: one training step (``whcore.core.training.step``: minibatch MSE, penalty, backward, fused
   Adam) with HashWH against the same step whose penalty evaluates the network on 2^b fixed
   inputs with a trivial penalty (lam * mean of the outputs): the ratio isolates sigma sampling,
   XOR doubling and the FWHT. Real-data network sizes (n, c) = (13, 10), (40, 10), (80, 10),
   (236, 1), batch 16, b in 7, 10, 13 (b <= n) and b = 16 on avGFP (n = 236, c = 1, the only
   network the paper hashes with b = 16); plus the peak memory of a b = 16 step on avGFP.
3. ens: EN-S vs HashWH epoch time in the paper's runtime setting (``bench_ens.bench_epoch``).
   ens_throughput (not in the default parts): one EN-S step against plain batched matrix
   products of the network's shapes on SPRIGHT's points (achieved FLOP/s), 1 and 45 members.
   member_chunks (not in the default parts; CPU): a stack's forward and backward pass over
   many points in cache-sized chunks of members against one pass over all of them.
4. vectorize: 5 training seeds as one stacked model vs one by one, for the spectrum-evolution
   job (n = 10, width 10, batch 16, train 200, with its per-epoch exact spectrum) and the
   Entacmaea job (n = 13, width 10, batch 16, train 200), standard and HashWH; and the largest
   difference between the two runs' records.
5. workflow: wall time of ``snakemake --cores 2 --configfile config/quick.yaml`` in a fresh
   directory (data from WHCORE_DATA_MIRROR, default ../shared/datasets/raw).

Timings: A and B alternate, each repetition times both back to back, ratios are the median of the
per-repetition ratios (robust on a shared machine). CPU runs use ``--threads`` torch threads
(default 1, as the workflow's training jobs). On a GPU: ``--device cuda`` (times synchronize
the device; memory is ``torch.cuda.max_memory_allocated``). Prints a table, writes JSON.
Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from whcore.core.arrays import Data
from whcore.core.devices import pick_device
from whcore.core.io import atomic_path
from whcore.core.models import MLP
from whcore.core.regularizers import Context, Regularizer, make_regularizer
from whcore.core.training import TrainConfig, make_optimizer, step, train
from whcore.core.wht import butterflies, fwht, hadamard_matrix
from whcore.data import datasets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
MIRROR = os.environ.get("WHCORE_DATA_MIRROR") or str(ROOT.parent / "shared" / "datasets" / "raw")
# (n, width) of each real dataset's network (the registry's n; avgfp's network is 1 wide).
NETWORKS = [(spec.n, 1 if name == "avgfp" else 10) for name, spec in datasets.REGISTRY.items()]


# ---------------------------------------------------------------------------- timing helpers
def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _time(fn, calls: int, device: torch.device) -> float:
    _sync(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    _sync(device)
    return (time.perf_counter() - start) / calls


def interleaved(fns: dict, device: torch.device, reps: int, budget: float = 0.2) -> dict:
    """Per-call seconds of each function: each repetition times every function back to back
    (``calls`` calls each, sized so that the slowest takes about ``budget`` seconds).
    Returns {name: list of per-call seconds, one per repetition}."""
    for fn in fns.values():  # warm-up (and one call to size the loops)
        fn()
    probe = max(_time(fn, 1, device) for fn in fns.values())
    calls = max(1, int(budget / max(probe, 1e-6)))
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            times[name].append(_time(fn, calls, device))
    return times


def ratio(times: dict, a: str, b: str) -> float:
    """Median over repetitions of time(a) / time(b)."""
    return float(np.median(np.array(times[a]) / np.array(times[b])))


def med(values) -> float:
    return float(np.median(values))


class AllocationCounter(TorchDispatchMode):
    """Bytes of every tensor created by operations inside the block (an upper bound on the
    extra memory the block needs, device independent)."""

    def __enter__(self):
        self.bytes = 0
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            # func.name(): "aten::view.default" -> "aten::view", the operator's schema name
            if torch.is_tensor(t) and func.name().partition(".")[0] not in _VIEWS:
                self.bytes += t.numel() * t.element_size()
        return out


_VIEWS = {
    "aten::view",
    "aten::_unsafe_view",
    "aten::reshape",
    "aten::expand",
    "aten::t",
    "aten::transpose",
    "aten::slice",
    "aten::select",
    "aten::unsqueeze",
    "aten::alias",
    "aten::detach",
    "aten::squeeze",
    "aten::as_strided",
}


def allocated(fn) -> int:
    with AllocationCounter() as counter:
        fn()
    return counter.bytes


# --------------------------------------------------------------------------- 1. FWHT vs dense
def bench_fwht(device: torch.device, bs, reps: int) -> list[dict]:
    rows = []
    for b in bs:
        x = torch.randn(1, 2**b, device=device)
        start = time.perf_counter()
        h = hadamard_matrix(b, dtype=torch.float32, device=device)
        _sync(device)
        build = time.perf_counter() - start
        fns = {
            "fwht": lambda x=x: fwht(x),
            "radix2": lambda x=x: butterflies(x),
            "dense": lambda x=x, h=h: x @ h,
        }
        times = interleaved(fns, device, reps)
        exact = torch.allclose(fwht(x), x @ h, rtol=1e-4, atol=1e-3 * 2 ** (b / 2))
        row = {
            "b": b,
            "fwht_s": med(times["fwht"]),
            "radix2_s": med(times["radix2"]),
            "dense_s": med(times["dense"]),
            "dense_build_s": build,
            "dense_over_fwht": ratio(times, "dense", "fwht"),
            "radix2_over_fwht": ratio(times, "radix2", "fwht"),
            "fwht_bytes": allocated(fns["fwht"]),
            "radix2_bytes": allocated(fns["radix2"]),
            "dense_bytes": h.numel() * h.element_size() + allocated(fns["dense"]),
            "agree": bool(exact),
        }
        rows.append(row)
        print(
            f"fwht b={b:2d}: fwht {row['fwht_s'] * 1e6:9.1f} us  radix-2 "
            f"{row['radix2_s'] * 1e6:9.1f} us  dense {row['dense_s'] * 1e6:10.1f} us  "
            f"dense/fwht {row['dense_over_fwht']:8.1f}x  bytes fwht {row['fwht_bytes']:,} "
            f"dense {row['dense_bytes']:,}",
            flush=True,
        )
    return rows


# ------------------------------------------------------------------------ 2. HashWH step time
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


def _stepper(n: int, c: float, reg_factory, device: torch.device, seeds=(0,), batch: int = 16):
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
        "hashwh": _stepper(
            n, c, lambda ctx: make_regularizer("hashwh", {"lam": 0.01, "b": b}, ctx), device, seeds
        ),
        "plain": _stepper(n, c, lambda ctx: FixedPoints(ctx, 0.01, b), device, seeds),
        "minibatch": _stepper(n, c, lambda ctx: Regularizer(ctx), device, seeds),
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


def _memory_probe(kind: str, n: int, c: float, b: int, members: int, device: str) -> dict:
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
                res = _memory_probe(kind, 236, 1, b, members, str(device))
            else:
                cmd = [
                    sys.executable,
                    __file__,
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


# --------------------------------------------------------------------- 3. EN-S vs HashWH epoch
def bench_ens_epoch(device: torch.device, quick: bool) -> dict:
    import bench_ens  # the EN-S benchmark (benchmarks/bench_ens.py)

    n, c, epochs, repeats = (50, 1, 1, 2) if quick else (50, 5, 2, 3)
    return bench_ens.bench_epoch(n, c, epochs, repeats, str(device))


# --------------------------------------------------- 3b. EN-S step against plain matrix products
def _plain_products(model: MLP, points: torch.Tensor):
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

            step_fn = _stepper(n, c, ens, device, seeds=seeds, batch=128)
            model = MLP(n, c, seeds=seeds, device=device)
            points = built[0].points
            times = interleaved(
                {"ens": step_fn, "plain": _plain_products(model, points)}, device, reps
            )
            macs = (
                points.shape[0]
                * points.shape[1]
                * sum(w.shape[1] * w.shape[2] for w in model.weights)
            )
            flops = 3 * 2 * macs
            row = {
                "n": n, "c": c, "m": m, "d": d, "members": members,
                "points": int(points.shape[1]),
                "ens_step_s": med(times["ens"]),
                "plain_s": med(times["plain"]),
                "ens_tflops": flops / med(times["ens"]) / 1e12,
                "plain_tflops": flops / med(times["plain"]) / 1e12,
                "ens_over_plain_throughput": 1 / ratio(times, "ens", "plain"),
            }  # fmt: skip
            rows.append(row)
            print(
                f"ens step n={n} c={c} m={m} d={d} members={members}: {row['ens_step_s'] * 1e3:.2f}"
                f" ms vs plain products {row['plain_s'] * 1e3:.2f} ms, throughput ratio "
                f"{row['ens_over_plain_throughput']:.2f}",
                flush=True,
            )
    return rows


# ---------------------------------------------- 4b. member chunks of a stack's forward pass
def bench_member_chunks(reps: int) -> list[dict]:
    """Forward and backward of a stacked network over many points, on the CPU, in cache-sized
    chunks of members (``MLP.member_chunks``, the default) against one pass over all of them
    (chunking turned off): the FullWH / EN-S shape of the spectrum experiment (45 members,
    1,024 points, n = 10, width 10) and HashWH b = 13 on the synthetic one (20 members, 8,192
    points, n = 25, width 2)."""
    from whcore.core import models

    device, rows = torch.device("cpu"), []
    for members, points, n, c in ((45, 1024, 10, 10), (20, 8192, 25, 2)):
        model = MLP(n, c, seeds=list(range(members)))
        x = torch.randint(0, 2, (members, points, n), generator=torch.Generator().manual_seed(0))
        x = x.float()

        def pass_with(limit, model=model, x=x):
            def run():
                saved, models.CPU_CHUNK_ELEMENTS = models.CPU_CHUNK_ELEMENTS, limit
                try:
                    model.zero_grad()
                    model(x).abs().sum().backward()
                finally:
                    models.CPU_CHUNK_ELEMENTS = saved

            return run

        chunks = len(model.member_chunks(x))
        times = interleaved(
            {"chunked": pass_with(models.CPU_CHUNK_ELEMENTS), "one": pass_with(2**62)},
            device, reps,
        )  # fmt: skip
        rows.append({
            "members": members, "points": points, "n": n, "c": c, "chunks": chunks,
            "chunked_s": med(times["chunked"]), "one_pass_s": med(times["one"]),
            "speedup": 1 / ratio(times, "chunked", "one"),
        })  # fmt: skip
        print(
            f"member chunks: {members} members x {points} points (n={n}, c={c}), {chunks} chunks:"
            f" {rows[-1]['chunked_s'] * 1e3:.1f} ms vs one pass {rows[-1]['one_pass_s'] * 1e3:.1f}"
            f" ms, {rows[-1]['speedup']:.2f}x",
            flush=True,
        )
    return rows


# ------------------------------------------------------------- 4. vectorized vs one by one
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
                _sync(device)
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


# ---------------------------------------------------------------------------- 5. the workflow
def bench_workflow(cores: int = 2) -> dict:
    with tempfile.TemporaryDirectory(prefix="whcore-quick-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            str(cores),
            "--configfile",
            str(ROOT / "config" / "quick.yaml"),
            "-d",
            tmp,
            "-s",
            str(ROOT / "Snakefile"),
            "--quiet",
        ]
        env = {
            **os.environ,
            "WHCORE_DATA_MIRROR": MIRROR,  # the rules call `whcore`
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        }
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
    result = {
        "command": " ".join(cmd[1:]),
        "cores": cores,
        "wall_s": wall,
        "returncode": proc.returncode,
    }
    if proc.returncode:
        result["stderr_tail"] = proc.stderr[-3000:]
    print(f"workflow (quick, {cores} cores): {wall:.0f}s, exit {proc.returncode}", flush=True)
    return result


# ------------------------------------------------------------------------------------- main
def summary(result: dict) -> str:
    lines = [
        "",
        "| part | setting | measured | ratio | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for r in result.get("fwht", []):
        lines.append(
            f"| 1 FWHT vs dense | b={r['b']} | {r['fwht_s'] * 1e6:.0f} us vs "
            f"{r['dense_s'] * 1e6:.0f} us | {r['dense_over_fwht']:.0f}x | "
            f"{'>= 50x' if r['b'] == 13 else ''} | "
            f"{('yes' if r['dense_over_fwht'] >= 50 else 'no') if r['b'] == 13 else ''} |"
        )
    for r in result.get("step", []):
        lines.append(
            f"| 2 step HashWH / plain | n={r['n']} c={r['c']} b={r['b']} | "
            f"{r['hashwh_s'] * 1e3:.2f} ms vs {r['plain_s'] * 1e3:.2f} ms | "
            f"{r['hashwh_over_plain']:.3f} | <= 1.15 | "
            f"{'yes' if r['hashwh_over_plain'] <= 1.15 else 'no'} |"
        )
    for r in result.get("memory", []):
        lines.append(
            f"| 2 memory b={r['b']} | {r['network']}, {r['members']} member(s), "
            f"{r['kind']} | {r['peak_bytes'] / 2**20:.0f} MiB | | | |"
        )
    ens = result.get("ens")
    if ens:
        for key, value in ens["ratios"].items():
            lines.append(
                f"| 3 EN-S / HashWH epoch | n={ens['n']} c={ens['c']} {key} | | {value:.2f} | | |"
            )
    for r in result.get("ens_throughput", []):
        lines.append(
            f"| 3b EN-S step / plain products | n={r['n']} c={r['c']} m={r['m']} "
            f"{r['members']} member(s) | {r['ens_tflops']:.3f} vs {r['plain_tflops']:.3f} TFLOP/s"
            f" | {r['ens_over_plain_throughput']:.2f} | >= 0.5 (GPU) | "
            f"{'yes' if r['ens_over_plain_throughput'] >= 0.5 else 'no'} |"
        )
    for r in result.get("member_chunks", []):
        lines.append(
            f"| 4b member chunks / one pass, forward and backward (CPU) | {r['members']} members "
            f"x {r['points']} points, n={r['n']} c={r['c']}, {r['chunks']} chunks | "
            f"{r['chunked_s'] * 1e3:.1f} ms vs {r['one_pass_s'] * 1e3:.1f} ms | "
            f"{r['speedup']:.2f}x | | |"
        )
    for r in result.get("vectorize", []):
        name = r["method"] + (f" b={r['b']}" if "b" in r else "")
        target = ">= 3x" if r["setting"].startswith("spectrum") else ""
        met = ("yes" if r["speedup"] >= 3 else "no") if target else ""
        lines.append(
            f"| 4 5 seeds stacked vs one by one | {r['setting']} {name} | "
            f"{r['stacked_s']:.2f} s vs {r['one_by_one_s']:.2f} s (rel diff of MSEs "
            f"{r['max_rel_diff_epoch1']:.0e} after epoch 1, {r['max_rel_diff']:.0e} "
            f"after {r['epochs']}) | {r['speedup']:.2f}x | {target} | {met} |"
        )
    wf = result.get("workflow")
    if wf:
        lines.append(
            f"| 5 quick workflow | --cores {wf['cores']} | {wf['wall_s']:.0f} s "
            f"(exit {wf['returncode']}) | | <= 600 s | "
            f"{'yes' if wf['wall_s'] <= 600 and not wf['returncode'] else 'no'} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and sizes")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench.json"))
    parser.add_argument("--parts", default="fwht,step,ens,vectorize,workflow")
    parser.add_argument("--skip-workflow", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: default)")
    parser.add_argument("--memory-probe", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.memory_probe:
        print(json.dumps(_memory_probe(*json.loads(args.memory_probe))))
        return
    device = pick_device(args.device)
    parts = set(args.parts.split(","))
    if args.skip_workflow:
        parts.discard("workflow")
    result = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "device": str(device),
            "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
            "load_avg": os.getloadavg(),
        },
        "quick": args.quick,
    }
    reps = 3 if args.quick else 7
    if "fwht" in parts:
        result["fwht"] = bench_fwht(device, range(10, 15), reps)
    if "step" in parts:
        result["step"] = bench_step(device, (7, 10, 13, 16), reps, 2 if args.quick else 3)
        result["memory"] = bench_memory(device, (1,) if args.quick else (1, 5))
    if "ens" in parts:
        result["ens"] = bench_ens_epoch(device, args.quick)
    if "ens_throughput" in parts:
        # the paper's runtime setting on a GPU; a smaller one that a CPU steps through in seconds
        setting = (50, 2, 7, 3) if device.type == "cuda" else (25, 2, 5, 3)
        result["ens_throughput"] = bench_ens_throughput(device, reps, (setting,))
    if "member_chunks" in parts:
        result["member_chunks"] = bench_member_chunks(reps)
    if "vectorize" in parts:
        result["vectorize"] = bench_vectorize(device, args.quick)
    if "workflow" in parts:
        result["workflow"] = bench_workflow()
    table = summary(result)
    print(table)
    result["table"] = table
    with atomic_path(args.out) as tmp:
        tmp.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
