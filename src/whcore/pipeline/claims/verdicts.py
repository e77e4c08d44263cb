"""The rules that turn cells' tests into a verdict: every cell, a share of the cells,
equivalence, no improvement; and the correction of a claim's refuting side.

A claim "in every cell" is an intersection-union test: it holds where each cell's one-sided
test holds at ALPHA, which already bounds the claim's error at ALPHA (no correction over the
cells). Refuting a claim is a union test ("some cell is worse"), so the refuting side is
Holm-corrected over the cells; so is "nearly all", which needs a share of the cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .cells import compare_cells
from .levels import ALPHA, FAILS, HOLDS, MIN_UNITS, NEARLY_ALL, UNSURE
from .power import needed_cells

__all__ = [
    "CellsResult",
    "cells_verdict",
    "correct_refuting",
    "divergence_p",
    "equivalence",
    "holm",
    "not_better",
    "refute",
    "refuting_p",
    "smallest_threshold",
]


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjustment of ``pvalues`` (NaN entries are left out and stay NaN)."""
    p = np.asarray(pvalues, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    finite = np.flatnonzero(~np.isnan(p))
    order = finite[np.argsort(p[finite])]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, (len(order) - rank) * p[index])
        adjusted[index] = min(1.0, running)
    return adjusted


def correct_refuting(pvalues) -> np.ndarray:
    """The correction over a claim's refuting tests (a union test: some cell or some part is
    worse), Holm's. Every refuting side goes through here, so a calibration test can swap it for
    no correction and see the suite fail."""
    return holm(pvalues)


def refute(pvalues) -> tuple[np.ndarray, float | None, list[float]]:
    """A claim's refuting side from the raw p-values of its tests (NaN: no test): the corrected
    p-values (``correct_refuting``), the claim's p_refute (their smallest; None without a test)
    and the raw p-values it was corrected over."""
    raw = np.asarray(pvalues, dtype=float).reshape(-1)
    adjusted = np.asarray(correct_refuting(raw), dtype=float)
    return adjusted, _finite_min(adjusted), [float(p) for p in raw[np.isfinite(raw)]]


@dataclass
class CellsResult:
    verdict: str
    line: str
    p_value: float | None  # the holds side's p
    p_refute: float | None = None  # the refuting side's (Holm over the cells)
    refute_tests: list[float] = field(default_factory=list)  # its raw p-values (``refute``)


def divergence_p(cells: pd.DataFrame) -> np.ndarray:
    """Per cell, the exact one-sided sign test that a diverges more often than b, over the
    units where only one of them diverged (NaN where none did)."""
    a_only, b_only = cells["a_only"].to_numpy(int), cells["b_only"].to_numpy(int)
    discordant = a_only + b_only
    p = stats.binom.sf(a_only - 1, np.maximum(discordant, 1), 0.5)
    return np.where(discordant > 0, p, np.nan)


def refuting_p(cells: pd.DataFrame) -> tuple[np.ndarray, list[float]]:
    """Per cell, the Holm-adjusted p-value that a is worse than b there: its one-sided t-test
    (a < b) or its divergence test, whichever is smaller, Holm over every such test of the
    claim's cells (a union test: some cell is worse); and the raw p-values of those tests."""
    t_side, diverged = cells["p_less"].to_numpy(float), divergence_p(cells)
    adjusted, _, raw = refute(np.concatenate([t_side, diverged]))
    return np.fmin(adjusted[: len(cells)], adjusted[len(cells) :]), raw


def _finite_min(values) -> float | None:
    values = np.asarray(values, dtype=float)
    return float(np.nanmin(values)) if np.isfinite(values).any() else None


def _unreachable(cells: pd.DataFrame) -> str:
    """Where a cell's divergences cannot be told apart from chance at any outcome: its sign test
    over so few units cannot reach ALPHA, so no p-value is claimed for it."""
    discordant = (cells["a_only"] + cells["b_only"]).to_numpy(int)
    few = (discordant > 0) & (0.5**discordant >= ALPHA)
    if not few.any():
        return ""
    return (
        f"; divergences in {int(few.sum())} cell(s) on at most {int(discordant[few].max())} "
        f"units: no sign test on so few can reach {ALPHA:g}, so they count against a win only"
    )


def cells_verdict(cells: pd.DataFrame, share: float = 1.0) -> CellsResult:
    """The verdict of "a beats b in (at least ``share`` of) the cells": holds where enough cells
    hold (every cell: each at ALPHA, an intersection-union test; a share: Holm over the cells)
    and none is significantly worse; does not hold where a cell is significantly worse (its
    t-test or, for divergences, its sign test; Holm over the cells). A method that diverged in
    more units than its rival cannot win a cell."""
    total = len(cells)
    if total == 0:
        return CellsResult(UNSURE, "no cells", None)
    needed = needed_cells(share, total)
    every = needed == total
    better = cells["p_greater"].to_numpy(float) if every else holm(cells["p_greater"])
    can_win = (cells["a_diverged"] <= cells["b_diverged"]).to_numpy()
    decisive = np.where(can_win, np.nan_to_num(better, nan=1.0), 1.0)
    holds = decisive < ALPHA
    worse, raw = refuting_p(cells)
    fails = np.nan_to_num(worse, nan=1.0) < ALPHA
    undecided = int(cells["p_greater"].isna().sum())
    rule = (
        "each cell's one-sided paired t-test at "
        f"{ALPHA:g}: an intersection-union test, no correction over the cells"
        if every
        else f"at least {needed} of {total} cells, Holm over the cells"
    )
    line = (
        f"holds in {int(holds.sum())} of {total} cells, significantly worse in {int(fails.sum())}"
        + (f", {undecided} with fewer than {MIN_UNITS} finished units" if undecided else "")
        + f" ({rule}; worse: Holm over the cells' t-tests and divergence sign tests)"
        + _unreachable(cells)
    )
    # Fewer cells with a test (enough units) than the claim needs: no p-value that it holds.
    testable = int(np.isfinite(np.asarray(better, dtype=float)).sum()) >= needed
    p_value = float(np.sort(decisive)[needed - 1]) if testable else None  # every cell: the largest
    p_refute = _finite_min(worse)
    verdict = FAILS if fails.any() else HOLDS if holds.sum() >= needed else UNSURE
    return CellsResult(verdict, line, p_value, p_refute, raw)


def equivalence(pairs: pd.DataFrame, cell: list[str], margin: float) -> CellsResult:
    """Two one-sided paired tests per cell (TOST): |a - b| < ``margin`` in every cell, each
    cell at ALPHA (intersection-union); outside the margin significantly in any cell (Holm
    over the cells): does not hold."""
    above = compare_cells(pairs.assign(b=pairs["b"] - margin), cell)  # a > b - margin
    below = compare_cells(pairs.assign(b=pairs["b"] + margin), cell)  # a < b + margin
    tost = np.fmax(above["p_greater"], below["p_less"]).to_numpy(float)
    outside, p_refute, raw = refute(np.concatenate([above["p_less"], below["p_greater"]]))
    outside = np.fmin(outside[: len(above)], outside[len(above) :])
    equivalent, out = tost < ALPHA, np.nan_to_num(outside, nan=1.0) < ALPHA
    line = (
        f"equivalent in {int(equivalent.sum())} of {len(tost)} cells, outside the margin in "
        f"{int(out.sum())} (TOST at {ALPHA:g} per cell, margin ±{margin:.4g}; outside: Holm over "
        "the cells)"
    )
    p_value = float(np.nanmax(tost)) if len(tost) and np.isfinite(tost).any() else None
    result = FAILS if out.any() else HOLDS if len(tost) and equivalent.all() else UNSURE
    return CellsResult(result, line, p_value, p_refute, raw)


def not_better(
    pairs: pd.DataFrame, cell: list[str], margin: float, share: float = NEARLY_ALL
) -> CellsResult:
    """ "a shows no significant improvement over b": in at least ``share`` of the cells a - b
    is significantly below ``margin`` (one-sided paired tests, Holm over the cells) and in no
    cell significantly above it; a better than b by more than the margin in any cell: does not
    hold. A much worse a satisfies it."""
    below = compare_cells(pairs.assign(b=pairs["b"] + margin), cell)  # a < b + margin
    inside = holm(below["p_less"])
    beyond, p_refute, raw = refute(below["p_greater"])
    needed = needed_cells(share, len(below))
    k_inside = int((inside < ALPHA).sum())
    k_beyond = int((np.nan_to_num(beyond, nan=1.0) < ALPHA).sum())
    line = (
        f"improvement below the margin in {k_inside} of {len(below)} cells, above it in "
        f"{k_beyond} (one-sided paired tests, margin {margin:+.4g}, Holm over the cells; at "
        f"least {needed} must be below)"
    )
    ordered = np.sort(np.nan_to_num(inside, nan=1.0))
    p_value = float(ordered[needed - 1]) if len(ordered) and needed else None
    result = FAILS if k_beyond else HOLDS if len(below) and k_inside >= needed else UNSURE
    return CellsResult(result, line, p_value, p_refute, raw)


def smallest_threshold(cells: pd.DataFrame, threshold: float) -> float:
    """For a claim "below ``threshold`` in every cell" (cells of ``below_threshold`` pairs),
    the smallest threshold it would hold at: the largest one-sided 95% upper bound of a cell's
    mean value (NaN where no cell has a spread)."""
    finite = cells.dropna(subset=["sem"])
    if finite.empty:
        return np.nan
    quantile = stats.t.ppf(1 - ALPHA, finite["units"] - 1)
    return float((threshold - finite["mean"] + quantile * finite["sem"]).max())
