"""Part 1, fwht: our FWHT (radix-2^k Kronecker factors) and the textbook radix-2 butterflies
against the reference implementation's dense product x @ H_b (H_b prebuilt), b = 10..14, one
row; the bytes each allocates (every tensor it creates, counted by a dispatch mode; the dense
matrix included for the reference)."""

from __future__ import annotations

import time

import torch

from whcore.core.wht import butterflies, fwht, hadamard_matrix

from .common import allocated, interleaved, med, met, ratio, sync


def bench_fwht(device: torch.device, bs, reps: int) -> list[dict]:
    rows = []
    for b in bs:
        x = torch.randn(1, 2**b, device=device)
        start = time.perf_counter()
        h = hadamard_matrix(b, dtype=torch.float32, device=device)
        sync(device)
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


def measure(device: torch.device, quick: bool, reps: int) -> dict:
    return {"fwht": bench_fwht(device, range(10, 15), reps)}


def table(result: dict) -> list[str]:
    return [
        f"| 1 FWHT vs dense | b={r['b']} | {r['fwht_s'] * 1e6:.0f} us vs "
        f"{r['dense_s'] * 1e6:.0f} us | {r['dense_over_fwht']:.0f}x | "
        f"{'>= 50x' if r['b'] == 13 else ''} | "
        f"{met(r['dense_over_fwht'] >= 50) if r['b'] == 13 else ''} |"
        for r in result.get("fwht", [])
    ]
