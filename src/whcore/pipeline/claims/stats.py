"""The statistics every claim shares: units of replication, paired tests per cell, Holm's
correction, equivalence tests and power.

The unit of replication is the subsample: a g* draw and a data seed (synthetic data), a data
seed (real data). Runs that share a subsample are not independent, so each method's value is
first averaged over its training seeds within a unit; tests then pair units. A cell (one train
size, one (n, c), ...) with fewer than MIN_UNITS finished units gets no verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

HOLDS, FAILS, UNSURE, SKIPPED = "holds", "does not hold", "inconclusive", "not evaluated"
ALPHA = 0.05  # family-wise error level of a claim (and of all claims together)
MIN_UNITS = 3  # fewer finished subsamples in a cell: no verdict for it
POWER = 0.8  # the power the "units needed" estimate aims at
NEARLY_ALL = 0.8  # "nearly all" / "almost always": this share of the cells, none worse
POWER_DRAWS = 20_000  # simulated claims behind a power figure


@dataclass
class Claim:
    """One checked claim. ``quote`` is the paper's sentence, ``test`` how it is checked here;
    ``p_value`` is the claim's decisive p-value (None where nothing is sampled), the one that
    the correction over all claims adjusts."""

    id: str
    quote: str
    test: str
    source: str
    verdict: str
    effect: str = ""
    uncertainty: str = ""
    units: str = ""
    details: str = ""
    p_value: float | None = None
    needed: str = ""
    across: str = field(default="")  # verdict after Holm over every tested claim
    cells: int = 0  # cells tested over units (0: a claim computed exactly)
    short_cells: int = 0  # of them, those with fewer than MIN_UNITS finished units


def skipped(cid: str, quote: str, source: str, why: str) -> Claim:
    return Claim(cid, quote, "", source, SKIPPED, details=why)


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


# --- from runs to units ---------------------------------------------------------------------------


def side(rows: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """One value per run (``keys``) and whether that run diverged."""
    frame = rows[keys + [value, "diverged"]].rename(columns={value: "value"})
    return frame.drop_duplicates(keys).set_index(keys)


def unit_means(runs: pd.DataFrame, units: list[str]) -> pd.DataFrame:
    """``side`` frames averaged over training seeds within each unit (index ``units``): a unit
    with any diverged run counts as diverged (its mean is over the finished runs)."""
    frame = runs.reset_index()
    kept = frame["value"].where(~frame["diverged"])
    grouped = frame.assign(value=kept).groupby(units, sort=True)
    return grouped.agg(value=("value", "mean"), diverged=("diverged", "any"))


def paired(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Units present on both sides: columns a, b, a_diverged, b_diverged."""
    joined = a.add_suffix("_a").join(b.add_suffix("_b"), how="inner").reset_index()
    names = {"value_a": "a", "value_b": "b", "diverged_a": "a_diverged", "diverged_b": "b_diverged"}
    return joined.rename(columns=names)


def claim_power(effect, sd, units: int, cells: int | None = None, alpha: float = ALPHA) -> float:
    """The power of "holds in every cell": the probability that Holm's step-down procedure at
    ``alpha`` rejects every cell's one-sided paired t-test, when a cell's unit differences have
    mean ``effect`` and spread ``sd`` (scalars, or one value per cell), cells independent.
    Computed from the t statistics' noncentral t distributions by a seeded simulation of
    POWER_DRAWS claims (the same number every call)."""
    effect, sd = np.atleast_1d(np.asarray(effect, float)), np.atleast_1d(np.asarray(sd, float))
    count = cells or max(len(effect), len(sd))
    effect, sd = np.broadcast_to(effect, (count,)), np.broadcast_to(sd, (count,))
    if units < 2 or not (sd > 0).all():
        return 0.0
    df = units - 1
    noncentral = effect / (sd / np.sqrt(units))
    rng = np.random.default_rng(0)
    # Noncentral t draws as (Z + noncentrality) / sqrt(chi2(df) / df): numpy's samplers are
    # much faster than scipy's nct.rvs, and this runs many times per "units needed" search.
    normal = rng.standard_normal((POWER_DRAWS, count))
    t = (normal + noncentral) / np.sqrt(rng.chisquare(df, (POWER_DRAWS, count)) / df)
    # Holm: the i-th largest t must clear the critical value at alpha / (count - i).
    critical = stats.t.isf(alpha / (count - np.arange(count)), df)
    return float((-np.sort(-t, axis=1) >= critical).all(axis=1).mean())


def units_needed(sd: float, effect: float, cells: int = 1, alpha: float = ALPHA) -> int | None:
    """The fewest units per cell that give a claim over ``cells`` cells ``POWER``
    (``claim_power``) against ``effect`` with unit-difference spread ``sd``, never fewer than
    MIN_UNITS (a cell with fewer gets no verdict); None where the spread is unknown or no
    effect in the claimed direction was measured."""
    if not np.isfinite(sd) or sd <= 0 or not np.isfinite(effect) or effect <= 0:
        return None
    # The normal approximation at the Bonferroni level (an upper bound for Holm), then the
    # fewest units below it that reach POWER, by bisection.
    z = stats.norm.ppf(1 - alpha / cells) + stats.norm.ppf(POWER ** (1 / cells))
    high = max(MIN_UNITS, int(np.ceil((z * sd / effect) ** 2)) + 3)
    if high > 10_000:
        return high
    while claim_power(effect, sd, high, cells, alpha) < POWER:
        high *= 2
    low = MIN_UNITS - 1  # below MIN_UNITS a cell gets no verdict, whatever the power
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (
            (low, middle)
            if claim_power(effect, sd, middle, cells, alpha) >= POWER
            else (middle, high)
        )
    return high


# --- cells ----------------------------------------------------------------------------------------


def compare_cells(pairs: pd.DataFrame, cell: list[str]) -> pd.DataFrame:
    """Per cell of ``pairs`` (one row per unit; columns ``cell``, a, b, a_diverged, b_diverged):
    finished units, the mean difference a - b and its standard error, one-sided paired t-test
    p-values for a > b and a < b, and the diverged units per side."""
    columns = [*cell, "units", "mean", "sd", "sem", "p_greater", "p_less", "a_diverged",
               "b_diverged"]  # fmt: skip
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    finished = ~pairs["a_diverged"].astype(bool) & ~pairs["b_diverged"].astype(bool)
    diff = (pairs["a"] - pairs["b"]).where(finished)
    grouped = pairs.assign(diff=diff).groupby(cell, sort=True)
    out = grouped.agg(
        units=("diff", "count"),
        mean=("diff", "mean"),
        sd=("diff", "std"),
        a_diverged=("a_diverged", "sum"),
        b_diverged=("b_diverged", "sum"),
    ).reset_index()
    units = out["units"].to_numpy(dtype=float)
    out["sem"] = out["sd"] / np.sqrt(units)
    enough = (units >= MIN_UNITS) & (out["sd"].to_numpy(dtype=float) > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (out["mean"] / out["sem"]).to_numpy(dtype=float)
    df = np.maximum(units - 1, 1)
    greater, less = one_sided_p(t, df)
    out["p_greater"] = np.where(enough, greater, np.nan)
    out["p_less"] = np.where(enough, less, np.nan)
    out[["a_diverged", "b_diverged"]] = out[["a_diverged", "b_diverged"]].astype(int)
    return out[columns]


def one_sided_p(t, df) -> tuple[np.ndarray, np.ndarray]:
    """The one-sided p-values (a > b, a < b) of paired t statistics ``t`` with ``df`` degrees
    of freedom: every cell test of the engine goes through here, so a calibration test can
    swap it for a deliberately wrong one and see the suite fail."""
    return stats.t.sf(t, df), stats.t.cdf(t, df)


@dataclass
class CellsResult:
    verdict: str
    line: str
    p_value: float | None  # the claim's decisive Holm-adjusted p (holds side)


def cells_verdict(cells: pd.DataFrame, share: float = 1.0) -> CellsResult:
    """The verdict of "a beats b in (at least ``share`` of) the cells": holds where at least
    ``share`` of the cells hold and none is significantly worse (Holm over the cells for
    each direction); does not hold where any cell is significantly worse, or where too few
    cells are left that could hold. A method that diverged in more units than its rival
    cannot win a cell and counts as worse in it."""
    total = len(cells)
    if total == 0:
        return CellsResult(UNSURE, "no cells", None)
    better = holm(cells["p_greater"])
    worse = holm(cells["p_less"])
    fewer_divergences = (cells["a_diverged"] <= cells["b_diverged"]).to_numpy()
    holds = (better < ALPHA) & fewer_divergences
    fails = (worse < ALPHA) | ~fewer_divergences
    k_holds, k_fails = int(holds.sum()), int(fails.sum())
    undecided = int(cells["p_greater"].isna().sum())
    line = (
        f"holds in {k_holds} of {total} cells, significantly worse in {k_fails}"
        + (f", {undecided} with fewer than {MIN_UNITS} finished units" if undecided else "")
        + f" (one-sided paired t-tests over units, Holm-corrected over {total} cells)"
    )
    needed = int(np.ceil(share * total))
    # The claim's p: the needed-th smallest adjusted p of cells the divergences let win.
    candidates = np.sort(np.where(fewer_divergences, np.nan_to_num(better, nan=1.0), 1.0))
    p_value = float(candidates[needed - 1]) if needed else None
    if k_fails:
        return CellsResult(FAILS, line, p_value)
    if k_holds >= needed:
        return CellsResult(HOLDS, line, p_value)
    return CellsResult(UNSURE, line, p_value)


def describe_effect(cells: pd.DataFrame, what: str) -> tuple[str, str, str]:
    """Effect, uncertainty and units lines of a cell table."""
    finite = cells.dropna(subset=["mean"])
    if finite.empty:
        return f"no finished units for {what}", "", "no finished units"
    mean = finite["mean"].mean()
    effect = f"mean paired difference in {what} {mean:+.4f}"
    if len(finite) > 1:
        effect += f" (per cell from {finite['mean'].min():+.4f} to {finite['mean'].max():+.4f})"
    low, high = int(finite["units"].min()), int(finite["units"].max())
    span = f"{low}" if low == high else f"{low}-{high}"
    plural = "" if high == 1 else "s"
    half = _ci_half_width(finite)
    uncertainty = (
        f"95% CI of the per-cell means: ±{half:.4f} (median over cells)"
        if np.isfinite(half)
        else f"not estimable with {span} unit{plural} per cell (a 95% CI needs at least 2)"
    )
    cells_word = "cell" if len(cells) == 1 else "cells"
    units = (
        f"{span} independent unit{plural} (subsample{plural}) per cell, {len(cells)} {cells_word}"
    )
    return effect, uncertainty, units


# What ``describe_effect`` writes, read back (``effect_numbers``): the numbers as formatted.
_NUMBER = r"[+-]\d+\.\d+"
_EFFECT = re.compile(
    rf"mean paired difference in .+ (?P<mean>{_NUMBER})"
    rf"(?: \(per cell from (?P<low>{_NUMBER}) to (?P<high>{_NUMBER})\))?"
)
_UNCERTAINTY = re.compile(
    r"95% CI of the per-cell means: ±(?P<half>\d+\.\d+) \(median over cells\)"
)


def effect_numbers(effect: str, uncertainty: str) -> dict[str, str]:
    """The numbers of an effect and uncertainty that ``describe_effect`` wrote, as it formatted
    them: ``mean``, the per-cell ``low`` and ``high`` (more than one cell) and the ``half``
    width of the 95% CI; none for any other wording (a claim of two tests, an exact claim)."""
    found = _EFFECT.fullmatch(effect)
    if found is None:
        return {}
    numbers = {key: value for key, value in found.groupdict().items() if value}
    spread = _UNCERTAINTY.fullmatch(uncertainty)
    if spread:
        numbers["half"] = spread["half"]
    return numbers


def _ci_half_width(cells: pd.DataFrame) -> float:
    widths = [
        stats.t.ppf(0.975, u - 1) * s if u > 1 and np.isfinite(s) else np.nan
        for u, s in zip(cells["units"], cells["sem"])
    ]
    return float(np.nanmedian(widths)) if np.isfinite(widths).any() else np.nan


def needed_line(cells: pd.DataFrame, pairs: pd.DataFrame, cell: list[str], effect=None) -> str:
    """How many units per cell would give the claim (every cell) ``POWER`` against ``effect``
    (the paper's size where it states one, else the effect measured here), with the largest
    spread of unit differences measured in any cell (``units_needed``): never fewer than a
    cell's verdict needs, nor fewer than the run has (then it says the run had them)."""
    finite = cells.dropna(subset=["mean"])
    if finite.empty:
        return ""
    target = float(finite["mean"].mean()) if effect is None else effect
    what = "the paper's effect" if effect is not None else "the effect measured here"
    if target <= 0:
        sign = "zero" if target == 0 else "negative"
        return (
            f"{what} is {sign} ({target:+.4f}), not in the claimed direction: more units "
            "would not settle it"
        )
    spread, have = _largest_spread(pairs, cell), int(finite["units"].min())
    needed = units_needed(spread, target, max(len(cells), 1))
    if needed is None:
        why = "their differences do not vary" if spread == 0 else "a spread needs 2 per cell"
        return (
            f"{what} ({target:+.4f}) is in the claimed direction; the units it would need are "
            f"not estimable with {have} unit{'' if have == 1 else 's'} per cell ({why}, a "
            f"verdict {MIN_UNITS})"
        )
    against = f"{POWER:.0%} power against {what} ({target:+.4f}) over its {len(cells)} cells"
    if needed <= have:
        return (
            f"this run's {have} units per cell already give this claim {against}: it stays "
            "undecided where a cell's own effect is smaller than that mean, or by chance"
        )
    return f"{needed} units per cell would give this claim {against}"


def _largest_spread(pairs: pd.DataFrame, cell: list[str]) -> float:
    """The largest standard deviation of the unit differences a - b in any cell (NaN where
    no cell has two finished units)."""
    spreads = []
    for _, group in pairs.groupby(cell, sort=True):
        done = group[~group["a_diverged"] & ~group["b_diverged"]].dropna(subset=["a", "b"])
        if len(done) > 1:
            spreads.append(float((done["a"] - done["b"]).std()))
    return max(spreads, default=np.nan)


def equivalence(pairs: pd.DataFrame, cell: list[str], margin: float) -> CellsResult:
    """Two one-sided paired tests per cell: |a - b| < ``margin`` (equivalent) in every cell,
    Holm-corrected; outside the margin significantly in any cell: does not hold."""
    above = compare_cells(pairs.assign(b=pairs["b"] - margin), cell)  # a > b - margin
    below = compare_cells(pairs.assign(b=pairs["b"] + margin), cell)  # a < b + margin
    tost = holm(np.fmax(above["p_greater"], below["p_less"]))
    outside = (holm(above["p_less"]) < ALPHA) | (holm(below["p_greater"]) < ALPHA)
    equivalent = tost < ALPHA
    line = (
        f"equivalent in {int(equivalent.sum())} of {len(tost)} cells, outside the margin in "
        f"{int(outside.sum())} (TOST, margin ±{margin:.4f}, Holm-corrected over the cells)"
    )
    p_value = float(np.nanmax(tost)) if len(tost) and np.isfinite(tost).any() else None
    if outside.any():
        return CellsResult(FAILS, line, p_value)
    if len(tost) and equivalent.all():
        return CellsResult(HOLDS, line, p_value)
    return CellsResult(UNSURE, line, p_value)


def not_better(pairs: pd.DataFrame, cell: list[str], margin: float) -> CellsResult:
    """ "a shows no significant improvement over b": in every cell a - b is significantly
    below ``margin`` (one-sided paired tests, Holm over the cells); a significantly better
    than b in any cell: does not hold. A much worse a satisfies it."""
    below = compare_cells(pairs.assign(b=pairs["b"] + margin), cell)  # a < b + margin
    plain = compare_cells(pairs, cell)
    inside = holm(below["p_less"]) < ALPHA
    improves = holm(plain["p_greater"]) < ALPHA
    line = (
        f"improvement below the margin in {int(inside.sum())} of {len(below)} cells, "
        f"significant improvement in {int(improves.sum())} (one-sided paired tests, margin "
        f"{margin:+.4f}, Holm-corrected over the cells)"
    )
    adjusted = holm(below["p_less"])
    p_value = float(np.nanmax(adjusted)) if np.isfinite(adjusted).any() else None
    if improves.any():
        return CellsResult(FAILS, line, p_value)
    if len(below) and inside.all():
        return CellsResult(HOLDS, line, p_value)
    return CellsResult(UNSURE, line, p_value)


def below_threshold(units: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Pairs (one row per unit) that test "the value is below ``threshold``" as "a beats b":
    a is the threshold, b the unit's value."""
    frame = units.reset_index()
    return frame.assign(a=threshold, a_diverged=False).rename(
        columns={"value": "b", "diverged": "b_diverged"}
    )


def scale(cells: pd.DataFrame) -> dict[str, int]:
    """What a claim's cells (``compare_cells``) let it decide: its ``cells`` and its
    ``short_cells``, those with fewer than MIN_UNITS finished units (no verdict there)."""
    return {"cells": len(cells), "short_cells": int((cells["units"] < MIN_UNITS).sum())}


def paired_claim(cid, quote, test, source, pairs, cell, what, names, share=1.0, paper_effect=None):
    """The claim that side a beats side b (``names``) in (``share`` of) the cells of ``pairs``
    (one row per unit), with its effect, uncertainty, units and, where undecided, the units
    it would need."""
    cells = compare_cells(pairs, cell)
    result = cells_verdict(cells, share)
    effect, uncertainty, units = describe_effect(cells, what)
    a, b = names
    details = result.line
    if len(cells):
        details += (
            f"; units with a diverged run: {a} {int(cells['a_diverged'].sum())}, "
            f"{b} {int(cells['b_diverged'].sum())}"
        )
    needed = needed_line(cells, pairs, cell, paper_effect) if result.verdict == UNSURE else ""
    return Claim(cid, quote, test, source, result.verdict, effect, uncertainty, units, details,
                 result.p_value, needed, **scale(cells))  # fmt: skip


def combine(first: Claim, second: Claim, parts: tuple[str, str]) -> Claim:
    """One claim made of two tests (``parts`` name them): holds where both hold, does not
    hold where either does not, else inconclusive; its p-value is the larger one."""
    verdicts = {first.verdict, second.verdict}
    verdict = FAILS if FAILS in verdicts else HOLDS if verdicts == {HOLDS} else UNSURE
    p_values = [c.p_value for c in (first, second) if c.p_value is not None]
    both = list(zip(parts, (first, second)))
    return Claim(
        first.id, first.quote, first.test, first.source, verdict,
        "; ".join(f"{name}: {c.effect}" for name, c in both),
        "; ".join(f"{name}: {c.uncertainty}" for name, c in both if c.uncertainty),
        first.units,
        "; ".join(f"{name}: {c.verdict}, {c.details}" for name, c in both),
        max(p_values) if len(p_values) == 2 else None,
        "; ".join(f"{name}: {c.needed}" for name, c in both if c.needed),
        cells=first.cells + second.cells,
        short_cells=first.short_cells + second.short_cells,
    )  # fmt: skip
