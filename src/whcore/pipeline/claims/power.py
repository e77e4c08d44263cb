"""Power and "units needed" of a claim over cells, simulated from the units themselves.

A claim's cells often share units (the standard network's runs are every hash size's rival),
so their differences are correlated. The power of a claim is therefore simulated from the
vector of per-cell unit differences: mean ``mean`` (one value per cell) and covariance ``cov``
(estimated from the units, cells that share no unit uncorrelated), each simulated run applying
the engine's own rule (``holds_rule``): every cell at ALPHA (an intersection-union test), or
Holm over the cells where a share of them must hold."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import brentq

from .levels import ALPHA, INTEREST_SD, MIN_UNITS, POWER

POWER_DRAWS = 2_000  # simulated runs behind a power figure
MAX_UNITS = 500  # the "units needed" search stops here ("more than ...")
_CHUNK = 4_000_000  # normal draws per block of the simulation (memory bound)
_VERDICTS_ONLY = ContextVar("verdicts_only", default=False)  # set by ``verdicts_only``


@contextmanager
def verdicts_only():
    """Claims made inside carry no "units needed" line (``needed_line`` simulates nothing and
    says "") and no planner's moments (``design_part`` gives {}): for a caller that reads only
    their verdicts, such as a sensitivity line or a calibration's replications, where these
    were most of the time and were thrown away."""
    token = _VERDICTS_ONLY.set(True)
    try:
        yield
    finally:
        _VERDICTS_ONLY.reset(token)


def needed_cells(share: float, cells: int) -> int:
    """How many of ``cells`` must hold for a claim over ``share`` of them."""
    return int(np.ceil(share * cells - 1e-9))


def holds_rule(p: np.ndarray, share: float = 1.0, alpha: float = ALPHA) -> np.ndarray:
    """Whether a claim holds, per row of one-sided p-values ``p`` (runs x cells): every cell
    below ``alpha`` when every cell must hold (an intersection-union test needs no correction),
    else the ``needed_cells``-th smallest Holm-adjusted p below ``alpha``."""
    p = np.nan_to_num(np.atleast_2d(p), nan=1.0)
    count = p.shape[1]
    needed = needed_cells(share, count)
    if needed == count:
        return (p < alpha).all(axis=1)
    ordered = np.sort(p, axis=1) * (count - np.arange(count))
    adjusted = np.minimum(np.maximum.accumulate(ordered, axis=1), 1.0)
    return adjusted[:, needed - 1] < alpha


def _root(cov: np.ndarray) -> np.ndarray:
    """A matrix L with L L^T = ``cov`` (negative eigenvalues of an estimate clipped to 0)."""
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    return vectors * np.sqrt(np.clip(values, 0, None))


def simulated_power(
    mean, cov, units: int, share: float = 1.0, alpha: float = ALPHA, draws: int = POWER_DRAWS
) -> float:
    """The probability that a claim holds when each cell's unit differences have mean ``mean``
    and the cells' covariance is ``cov``, with ``units`` units per cell: one-sided paired
    t-tests per cell, ``holds_rule``. A seeded simulation (the same number every call)."""
    mean = np.atleast_1d(np.asarray(mean, float))
    cov = np.atleast_2d(np.asarray(cov, float))
    if units < 2 or not (np.diag(cov) > 0).all():
        return 0.0
    rng, root, held = np.random.default_rng(0), _root(cov), 0
    block = max(1, _CHUNK // (units * len(mean)))
    for start in range(0, draws, block):
        size = min(block, draws - start)
        x = mean + rng.standard_normal((size, units, len(mean))) @ root.T
        t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / np.sqrt(units))
        held += int(holds_rule(stats.t.sf(t, units - 1), share, alpha).sum())
    return held / draws


def claim_power(
    effect,
    sd,
    units: int,
    cells: int | None = None,
    alpha: float = ALPHA,
    share: float = 1.0,
    correlation: float = 0.0,
) -> float:
    """``simulated_power`` for cells with mean difference ``effect`` and unit-difference SD
    ``sd`` (scalars or one value per cell), ``correlation`` between any two cells."""
    effect, sd = np.atleast_1d(np.asarray(effect, float)), np.atleast_1d(np.asarray(sd, float))
    count = cells or max(len(effect), len(sd))
    effect, sd = np.broadcast_to(effect, (count,)), np.broadcast_to(sd, (count,))
    corr = np.full((count, count), correlation) + (1 - correlation) * np.eye(count)
    return simulated_power(effect, corr * np.outer(sd, sd), units, share, alpha)


def fewest_units(mean, cov, share: float = 1.0, alpha: float = ALPHA) -> int | None:
    """The fewest units per cell (at least MIN_UNITS) that give the claim POWER; None above
    MAX_UNITS, or where more cells than the claim may miss have an effect at or below 0 (no
    number of units makes it hold there)."""
    mean = np.atleast_1d(np.asarray(mean, float))
    if (mean <= 0).sum() > len(mean) - needed_cells(share, len(mean)):
        return None
    power = lambda units: simulated_power(mean, cov, units, share, alpha)  # noqa: E731
    high = MIN_UNITS
    while power(high) < POWER:
        if high >= MAX_UNITS:
            return None
        high = min(2 * high, MAX_UNITS)
    low = MIN_UNITS - 1
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if power(middle) >= POWER else (middle, high)
    return high


def units_needed(sd: float, effect: float, cells: int = 1, alpha: float = ALPHA) -> int | None:
    """``fewest_units`` for ``cells`` independent cells of equal ``effect`` and ``sd``; None
    where the spread is unknown, no effect in the claimed direction was measured, or more than
    MAX_UNITS would be needed."""
    if not np.isfinite(sd) or sd <= 0 or not np.isfinite(effect) or effect <= 0:
        return None
    return fewest_units(np.full(cells, effect), np.eye(cells) * sd**2, 1.0, alpha)


# --- from a claim's unit pairs ---------------------------------------------------------------


def unit_differences(
    pairs: pd.DataFrame, cell: list[str], unit: list[str] | None = None
) -> pd.DataFrame:
    """The finished unit differences a - b as a table units x cells. ``unit``: the columns that
    name a unit (real data: a subsample is its dataset, train size and data seed, so the same
    data-seed number at two train sizes names two independent units); by default the key
    columns other than the cell's, so cells that share a rival's units share rows."""
    finished = ~pairs["a_diverged"].astype(bool) & ~pairs["b_diverged"].astype(bool)
    frame = pairs[finished].assign(difference=pairs["a"] - pairs["b"]).dropna(subset=["difference"])
    if unit:  # one key naming the unit, which may hold the cell's own columns
        frame = frame.assign(unit_key=frame[unit].astype(str).agg("|".join, axis=1))
    keys = (
        ["unit_key"]
        if unit
        else [
            c
            for c in frame.columns
            if c not in {"a", "b", "a_diverged", "b_diverged", "difference", *cell}
        ]
    )
    if not keys:  # no unit key: each cell's units are its own
        frame = frame.assign(unit=frame.groupby(cell).cumcount().astype(str) + "@")
        keys = ["unit"]
    # pivot_table's table, by the groupby it wraps (a third of its time: every claim's design
    # and every "units needed" line build it)
    table = frame.groupby([*keys, *cell], sort=True)["difference"].mean().unstack(cell)
    return table.sort_index(axis=1)


def cell_moments(
    pairs: pd.DataFrame, cell: list[str], unit: list[str] | None = None
) -> tuple[pd.Series, np.ndarray, pd.Series]:
    """Per cell the mean unit difference, the cells' covariance from the units they share (0
    between cells with fewer than two units in common) and the finished units per cell."""
    table = unit_differences(pairs, cell, unit)
    cov = table.cov(min_periods=2).to_numpy(dtype=float)
    return table.mean(), np.nan_to_num(cov, nan=0.0), table.count()


def _finite_or_none(values) -> list:
    """``values`` as JSON numbers (NaN, which JSON lacks, as null)."""
    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, float).ravel()]


def design_part(
    pairs: pd.DataFrame,
    cell: list[str],
    test: str = "greater",
    share: float = 1.0,
    unit: list[str] | None = None,
    margin: float = 0.0,
    overlap: float = 0.0,
) -> dict:
    """One part of a claim's ``design``, as a planner simulates it: the moments ``cell_moments``
    gives (per cell the mean unit difference a - b, the cells' covariance, the finished units)
    and the rule the part is judged by: ``test`` "greater" (a beats b, ``cells_verdict``),
    "equivalence" (``verdicts.equivalence``) or "below" (``verdicts.not_better``), at ``margin``, over
    ``share`` of the cells; ``overlap``: n_test / n_train of the corrected resampled t-test
    (0: the plain one)."""
    if _VERDICTS_ONLY.get():
        return {}
    mean, cov, units = cell_moments(pairs, cell, unit)
    return {
        "test": test,
        "share": float(share),
        "margin": float(margin),
        "overlap": float(overlap),
        "cells": [_label(key) for key in mean.index],
        "units": [int(n) for n in units.to_numpy()],
        "mean": _finite_or_none(mean.to_numpy()),
        "cov": [_finite_or_none(row) for row in cov],
    }


INTERVAL = 0.8  # the confidence of the "units needed" interval


def effect_interval(mean, sd, units, level: float = INTERVAL) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the ``level`` confidence interval of the mean difference from ``units`` units
    with mean ``mean`` and SD ``sd``: exact for the standardized effect (its t statistic is
    noncentral t), so the units needed at its two ends bracket the units the true effect needs
    with that confidence (the units needed fall as the standardized effect grows)."""
    mean, sd, units = (np.atleast_1d(np.asarray(x, float)) for x in (mean, sd, units))
    low, high = np.full(mean.shape, np.nan), np.full(mean.shape, np.nan)
    tail = (1 - level) / 2
    for i, (m, s, n) in enumerate(zip(mean, sd, units)):
        if n < 2 or not s > 0:
            continue
        t = m / (s / np.sqrt(n))
        low[i] = _noncentrality(t, n - 1, 1 - tail) / np.sqrt(n) * s
        high[i] = _noncentrality(t, n - 1, tail) / np.sqrt(n) * s
    return low, high


def _noncentrality(t: float, df: float, p: float) -> float:
    """The noncentrality at which a noncentral t with ``df`` degrees of freedom has CDF ``p``
    at ``t`` (the CDF falls as the noncentrality grows)."""
    span = 10 + 2 * abs(t)

    def excess(nc: float) -> float:  # far in a tail the CDF can come out NaN: its limit there
        cdf = stats.nct.cdf(t, df, nc)
        return (cdf if np.isfinite(cdf) else float(nc < t)) - p

    return brentq(excess, t - span, t + span)


def _label(key) -> str:
    return ", ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))


def needed_line(
    pairs: pd.DataFrame, cell: list[str], share: float = 1.0, unit: list[str] | None = None
) -> str:
    """How many units per cell would give the claim POWER: against the effects measured here
    (per cell, correlation kept) with an INTERVAL confidence interval (the units needed at the
    two ends of each cell's effect interval), and against the stated effect of interest
    (INTEREST_SD of each cell's spread in every cell); "no number of units" only where too
    many cells are significantly below 0 (one-sided t-test at ALPHA): a measured effect at or
    below 0 that chance explains leaves the interval open instead. ``unit``: see
    ``unit_differences``."""
    if _VERDICTS_ONLY.get():
        return ""
    mean, cov, units = cell_moments(pairs, cell, unit)
    if mean.empty:
        return ""
    sd = np.sqrt(np.diag(cov))
    needed, count = needed_cells(share, len(mean)), len(mean)
    if not ((sd > 0) & (units.to_numpy() >= 2)).all():
        return (
            "not estimable: a cell has fewer than 2 finished units or no spread (a verdict needs "
            f"{MIN_UNITS} per cell)"
        )
    sem = sd / np.sqrt(units.to_numpy(float))
    below = stats.t.cdf(mean.to_numpy() / sem, units.to_numpy(float) - 1) < ALPHA
    if below.sum() > count - needed:
        worst = mean.idxmin()
        return (
            f"no number of units settles it in favour: the effect in cell ({_label(worst)}) is "
            f"{mean[worst]:+.4f}, significantly below 0, and {needed} of {count} cells must "
            "hold; more units can only make it 'does not hold' or leave it open"
        )
    low, high = effect_interval(mean.to_numpy(), sd, units.to_numpy())
    measured = fewest_units(mean.to_numpy(), cov, share)
    optimistic, pessimistic = fewest_units(high, cov, share), fewest_units(low, cov, share)
    interest = fewest_units(INTEREST_SD * sd, cov, share)
    say = lambda n: f"more than {MAX_UNITS}" if n is None else str(n)  # noqa: E731
    return (
        f"{say(measured)} units per cell would give it {POWER:.0%} power against the effects "
        f"measured here (weakest cell {mean.min():+.4f}; {INTERVAL:.0%} interval "
        f"{say(optimistic)} to {say(pessimistic)}, from each cell's effect interval: a run this "
        f"small measures the effect loosely); {say(interest)} against an effect of "
        f"{INTEREST_SD:g} SD of the unit differences in every cell (the effect of interest, fixed "
        "in advance); simulated from this run's units, cells that share units correlated"
    )
