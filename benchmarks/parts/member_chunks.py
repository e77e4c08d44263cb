"""Part 4b, member_chunks (not in the default parts; CPU): a stack's forward and backward pass
over many points in cache-sized chunks of members (``MLP.member_chunks``, the default) against
one pass over all of them (chunking turned off)."""

from __future__ import annotations

import torch

from whcore.core import models
from whcore.core.models import MLP

from .common import interleaved, med, ratio


def bench_member_chunks(reps: int) -> list[dict]:
    """Forward and backward of a stacked network over many points, on the CPU, in cache-sized
    chunks of members (``MLP.member_chunks``, the default) against one pass over all of them
    (chunking turned off): the FullWH / EN-S shape of the spectrum experiment (45 members,
    1,024 points, n = 10, width 10) and HashWH b = 13 on the synthetic one (20 members, 8,192
    points, n = 25, width 2)."""
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
            device,
            reps,
        )
        rows.append(
            {
                "members": members,
                "points": points,
                "n": n,
                "c": c,
                "chunks": chunks,
                "chunked_s": med(times["chunked"]),
                "one_pass_s": med(times["one"]),
                "speedup": 1 / ratio(times, "chunked", "one"),
            }
        )
        print(
            f"member chunks: {members} members x {points} points (n={n}, c={c}), {chunks} chunks:"
            f" {rows[-1]['chunked_s'] * 1e3:.1f} ms vs one pass {rows[-1]['one_pass_s'] * 1e3:.1f}"
            f" ms, {rows[-1]['speedup']:.2f}x",
            flush=True,
        )
    return rows


def measure(device: torch.device, quick: bool, reps: int) -> dict:
    return {"member_chunks": bench_member_chunks(reps)}


def table(result: dict) -> list[str]:
    return [
        f"| 4b member chunks / one pass, forward and backward (CPU) | {r['members']} members "
        f"x {r['points']} points, n={r['n']} c={r['c']}, {r['chunks']} chunks | "
        f"{r['chunked_s'] * 1e3:.1f} ms vs {r['one_pass_s'] * 1e3:.1f} ms | "
        f"{r['speedup']:.2f}x | | |"
        for r in result.get("member_chunks", [])
    ]
