"""Section 5.1 (Figure 4b): HashWH reaches every R^2 level orders of magnitude sooner than
EN-S, read from the training curves of the draw timed one model at a time."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cells import compare_cells
from .claim import Claim, cells_claim, skipped
from .levels import ALPHA, HOLDS, UNSURE
from .power import needed_line
from .sensitivity import factor_line
from .sheet import wording
from .synthetic_units import RUN, TIMED_UNIT, TIMED_UNITS, timed_scope
from .verdicts import cells_verdict, holm

__all__ = ["LEVELS", "SPEEDUP", "SPEED_ID", "speed_claim", "speed_wording", "time_to_reach"]

SPEEDUP = 10.0  # "orders of magnitude": at least one
LEVELS = (0.25, 0.5, 0.75, 0.95)  # R^2 levels as shares of the lowest R^2 every EN-S run reached
SPEED_ID = "synthetic_hashwh_faster_than_ens"


def speed_wording():
    levels = ", ".join(f"{x:.0%}" for x in LEVELS)
    return wording(SPEED_ID, SPEEDUP=SPEEDUP, levels=levels)


def time_to_reach(curve: pd.DataFrame, level: float) -> float:
    """The training time (``cum_time``) at which a run's best test R^2 so far first reaches
    ``level``; inf if it never does."""
    reached = curve.loc[curve["max_test_r2"] >= level, "cum_time"]
    return float(reached.min()) if len(reached) else np.inf


def speed_claim(runs: pd.DataFrame, settings: dict) -> Claim:
    quote, test, source = speed_wording()
    n, c = settings.get("runtime_n"), settings.get("runtime_c")
    cell_runs = runs if n is None else runs[(runs["n"] == n) & (runs["c"] == c)]
    if not {"ens"} <= set(cell_runs["variant"]) or cell_runs.empty:
        return skipped(SPEED_ID, quote, source, f"no EN-S runs at n = {n}, c = {c}")
    by_run = {key: curve for key, curve in cell_runs.groupby(["variant", *RUN], sort=True)}
    ens_best = [curve["max_test_r2"].max() for key, curve in by_run.items() if key[0] == "ens"]
    top = float(np.nanmin(ens_best))
    if not np.isfinite(top) or top <= 0:
        return skipped(SPEED_ID, quote, source, "EN-S reached no positive test R^2")
    rows, never = [], []
    for (variant, *key), curve in by_run.items():
        if variant == "ens":
            continue
        ens_curve = by_run.get(("ens", *key))
        if ens_curve is None:
            continue
        for share in LEVELS:
            level = share * top
            hash_time = time_to_reach(curve, level)
            if not np.isfinite(hash_time):
                never.append((variant, share))
                continue
            ratio = np.log10(time_to_reach(ens_curve, level) / max(hash_time, 1e-9))
            rows.append({**dict(zip(RUN, key)), "variant": variant, "level": share, "a": ratio})
    frame = pd.DataFrame(rows, columns=[*RUN, "variant", "level", "a"])
    units = (
        frame.groupby(["variant", "level", *TIMED_UNIT], sort=True)["a"]
        .mean()
        .reset_index()
        .assign(b=np.log10(SPEEDUP), a_diverged=False, b_diverged=False)
    )
    cell = ["draw", "variant", "level"]
    cells = compare_cells(units, cell)
    result = cells_verdict(cells)
    faster = cells["p_greater"].to_numpy(float) < ALPHA
    slower = np.nan_to_num(holm(cells["p_less"]), nan=1.0) < ALPHA
    # A level never reached gives no ratio and so no p-value: it keeps the claim from holding,
    # it does not refute it (a refutation is a test at ALPHA).
    verdict = UNSURE if never and result.verdict == HOLDS else result.verdict
    ratios = units.groupby("variant")["a"].mean()
    effect = "; ".join(
        f"{v}: {10**r:.1f}x (geometric mean over levels and units)" for v, r in ratios.items()
    )
    details = (
        f"{int(faster.sum())} of {len(cells)} (draw, b, level) cells significantly >= "
        f"{SPEEDUP:g}x, "
        f"{int(slower.sum())} significantly below; levels are shares of R^2 {top:.3f}"
    )
    if never:
        details += "; never reached by HashWH: " + ", ".join(
            sorted({f"{v} at {s:.0%}" for v, s in never})
        )
    needed = needed_line(units, cell) if verdict == UNSURE else ""
    return cells_claim(
        SPEED_ID,
        quote,
        test,
        source,
        result,
        cells,
        "log10 time ratio - 1",
        TIMED_UNITS,
        verdict=verdict,
        effect=effect,
        details=details,
        needed=needed,
        sensitivity=factor_line(SPEEDUP, cells),
        scope=(
            f"n = {n}, c = {c} only (the paper's runtime cell: n = 50, c = 5); "
            f"{timed_scope(units['draw'])}"
        ),
    )
