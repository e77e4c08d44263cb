"""The statistics every claim shares: units of replication, paired tests per cell, the rule
that turns cells into a verdict, equivalence tests; power lives in ``claims.power``.

The unit of replication is the g* draw (synthetic data: its data seeds share the target, so
they are averaged within it), the subsample (real data: a data seed), a forest (the ablation).
Runs that share a unit are not independent, so each method's value is first averaged over its
training seeds (and data seeds) within a unit; tests then pair units. A cell (one train size,
one (n, c), ...) with fewer than MIN_UNITS finished units gets no verdict.

A claim "in every cell" is an intersection-union test: it holds where each cell's one-sided
test holds at ALPHA, which already bounds the claim's error at ALPHA (no correction over the
cells). Refuting a claim is a union test ("some cell is worse"), so the refuting side is
Holm-corrected over the cells; so is "nearly all", which needs a share of the cells.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .levels import ALPHA, FAILS, HOLDS, MIN_UNITS, NEARLY_ALL, POWER, SKIPPED, UNSURE
from .power import design_part, needed_cells, needed_line

__all__ = ["ALPHA", "FAILS", "HOLDS", "MIN_UNITS", "NEARLY_ALL", "POWER", "SKIPPED", "UNSURE"]


@dataclass
class Claim:
    """One checked claim. ``quote`` is the paper's sentence, ``test`` how it is checked here;
    ``p_value`` is the p-value of the test that would make it hold, ``p_refute`` that of the
    test that would refute it (None where nothing is sampled): the correction over all claims
    adjusts both. ``scope`` says what of the paper's grid it covers; ``nature`` marks a claim
    that is a mathematical identity or can hardly fail by construction (kept out of the
    headline counts)."""

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
    p_refute: float | None = None
    p_value_across: float | None = None  # p_value after Holm over every tested claim's p-values
    p_refute_across: float | None = None
    scope: str = ""
    nature: str = ""  # "", "identity" or "tautology"
    sensitivity: str = ""  # where a threshold decides: the thresholds it holds for
    # The raw p-values of every test that could refute it (its cells, its parts): p_refute is
    # their correction (``refute``), so a claim made of parts corrects over their union.
    refute_tests: list[float] = field(default_factory=list)
    fdr: str = ""  # the verdict at a false discovery rate of ALPHA (Benjamini-Yekutieli)
    post_hoc: str = ""  # a deciding constant chosen after the data was seen: which, and why
    same_test_as: str = ""  # the claim decided by the very same test as this one (counted once)
    # What a planner needs to simulate the claim at another number of units (``power.design``):
    # the experiment and unit it rests on and, per part, its cells' unit-difference moments.
    design: dict = field(default_factory=dict)


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


# --- cells ----------------------------------------------------------------------------------------

# The columns ``compare_cells`` gives each cell, beside the cell's own.
CELL_STATS = (
    "units",
    "mean",
    "sd",
    "sem",
    "p_greater",
    "p_less",
    "a_diverged",
    "b_diverged",
    "a_only",
    "b_only",
)


def compare_cells(pairs: pd.DataFrame, cell: list[str]) -> pd.DataFrame:
    """Per cell of ``pairs`` (one row per unit; columns ``cell``, a, b, a_diverged, b_diverged):
    finished units, the mean difference a - b and its standard error, one-sided paired t-test
    p-values for a > b and a < b, the diverged units per side and the units where only a (only
    b) diverged."""
    if pairs.empty:
        return pd.DataFrame(columns=[*cell, *CELL_STATS])
    # Every claim and every replication of the calibration suite runs through here: the frame is
    # built once from arrays (adding columns one by one cost three times as much).
    a_div = pairs["a_diverged"].to_numpy(dtype=bool)
    b_div = pairs["b_diverged"].to_numpy(dtype=bool)
    a, b = pairs["a"].to_numpy(dtype=float), pairs["b"].to_numpy(dtype=float)
    counts = {
        "a_diverged": a_div,
        "b_diverged": b_div,
        "a_only": a_div & ~b_div,
        "b_only": b_div & ~a_div,
    }
    diff = np.where(a_div | b_div, np.nan, a - b)
    frame = pd.DataFrame({**{c: pairs[c] for c in cell}, "diff": diff, **counts})
    grouped = frame.groupby(cell, sort=True)
    moments = grouped["diff"].agg(["count", "mean", "std"])
    sums = grouped[list(counts)].sum()
    units = moments["count"].to_numpy(dtype=float)
    mean, sd = moments["mean"].to_numpy(dtype=float), moments["std"].to_numpy(dtype=float)
    sem = sd / np.sqrt(units)
    enough = (units >= MIN_UNITS) & (sd > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / sem
    greater, less = one_sided_p(t, np.maximum(units - 1, 1))
    stats_of_cells = {
        "units": moments["count"].to_numpy(),
        "mean": mean,
        "sd": sd,
        "sem": sem,
        "p_greater": np.where(enough, greater, np.nan),
        "p_less": np.where(enough, less, np.nan),
        **{c: sums[c].to_numpy(dtype=int) for c in counts},
    }
    cells = moments.index.to_frame(index=False)
    return pd.concat([cells, pd.DataFrame(stats_of_cells)[list(CELL_STATS)]], axis=1)


def one_sided_p(t, df) -> tuple[np.ndarray, np.ndarray]:
    """The one-sided p-values (a > b, a < b) of paired t statistics ``t`` with ``df`` degrees
    of freedom: every cell test of the engine goes through here, so a calibration test can
    swap it for a deliberately wrong one and see the suite fail."""
    return stats.t.sf(t, df), stats.t.cdf(t, df)


def corrected_resampled(cells: pd.DataFrame, test_over_train: float) -> pd.DataFrame:
    """``compare_cells``'s cells whose units are resamples of one dataset with overlapping
    splits (forests on their own splits of one table): Nadeau and Bengio's corrected resampled
    t-test, the variance of a cell's mean s^2 (1/J + n_test / n_train) instead of s^2 / J over
    its J units (Machine Learning 52, 2003), since units that share rows are positively
    correlated and the plain test would be anti-conservative."""
    units = cells["units"].to_numpy(dtype=float)
    sd = cells["sd"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        sem = sd * np.sqrt(1 / units + test_over_train)
        t = cells["mean"].to_numpy(dtype=float) / sem
    greater, less = one_sided_p(t, np.maximum(units - 1, 1))
    enough = (units >= MIN_UNITS) & (sd > 0)
    return cells.assign(
        sem=sem, p_greater=np.where(enough, greater, np.nan), p_less=np.where(enough, less, np.nan)
    )


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


def _cell_name(row: pd.Series, cell: list[str]) -> str:
    def show(value):
        return int(value) if isinstance(value, float) and value.is_integer() else value

    return ", ".join(f"{c} {show(row[c])}" for c in cell)


def describe_effect(
    cells: pd.DataFrame, what: str, unit: str = "subsample", units_word: str = "subsamples"
) -> tuple[str, str, str]:
    """Effect, uncertainty and units lines of a cell table: the mean over cells with the
    per-cell range, and the 95% CI of the weakest cell's mean (the cell an every-cell claim
    stands or falls on)."""
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
    weakest = finite.loc[finite["mean"].idxmin()]
    cell = [c for c in cells.columns if c not in CELL_STATS]
    half = _ci_half(weakest)
    name = f" ({_cell_name(weakest, cell)})" if cell and len(finite) > 1 else ""
    uncertainty = (
        f"95% CI of the weakest cell's mean{name}: "
        f"[{weakest['mean'] - half:+.4f}, {weakest['mean'] + half:+.4f}]"
        if np.isfinite(half)
        else f"not estimable with {span} unit{plural} per cell (a 95% CI needs at least 2)"
    )
    cells_word = "cell" if len(cells) == 1 else "cells"
    unit_name = unit if high == 1 else units_word
    units = f"{span} independent unit{plural} ({unit_name}) per cell, {len(cells)} {cells_word}"
    return effect, uncertainty, units


def _ci_half(row: pd.Series) -> float:
    units, sem = row["units"], row["sem"]
    return float(stats.t.ppf(0.975, units - 1) * sem) if units > 1 and np.isfinite(sem) else np.nan


# What ``describe_effect`` writes, read back (``effect_numbers``): the numbers as formatted.
_NUMBER = r"[+-]\d+\.\d+"
_EFFECT = re.compile(
    rf"mean paired difference in .+ (?P<mean>{_NUMBER})"
    rf"(?: \(per cell from (?P<low>{_NUMBER}) to (?P<high>{_NUMBER})\))?"
)
_UNCERTAINTY = re.compile(
    rf"95% CI of the weakest cell's mean(?: \(.+\))?: \[(?P<ci_low>{_NUMBER}), "
    rf"(?P<ci_high>{_NUMBER})\]"
)


def effect_numbers(effect: str, uncertainty: str) -> dict[str, str]:
    """The numbers of an effect and uncertainty that ``describe_effect`` wrote, as it formatted
    them: ``mean``, the per-cell ``low`` and ``high`` (more than one cell) and the weakest
    cell's 95% CI ``ci_low`` and ``ci_high``; none for any other wording (a claim of two
    tests, an exact claim)."""
    found = _EFFECT.fullmatch(effect)
    if found is None:
        return {}
    numbers = {key: value for key, value in found.groupdict().items() if value}
    spread = _UNCERTAINTY.fullmatch(uncertainty)
    if spread:
        numbers |= spread.groupdict()
    return numbers


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


def below_threshold(units: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Pairs (one row per unit) that test "the value is below ``threshold``" as "a beats b":
    a is the threshold, b the unit's value."""
    frame = units.reset_index()
    return frame.assign(a=threshold, a_diverged=False).rename(
        columns={"value": "b", "diverged": "b_diverged"}
    )


def smallest_threshold(cells: pd.DataFrame, threshold: float) -> float:
    """For a claim "below ``threshold`` in every cell" (cells of ``below_threshold`` pairs),
    the smallest threshold it would hold at: the largest one-sided 95% upper bound of a cell's
    mean value (NaN where no cell has a spread)."""
    finite = cells.dropna(subset=["sem"])
    if finite.empty:
        return np.nan
    quantile = stats.t.ppf(1 - ALPHA, finite["units"] - 1)
    return float((threshold - finite["mean"] + quantile * finite["sem"]).max())


def scale(cells: pd.DataFrame) -> dict[str, int]:
    """What a claim's cells (``compare_cells``) let it decide: its ``cells`` and its
    ``short_cells``, those with fewer than MIN_UNITS finished units (no verdict there)."""
    return {"cells": len(cells), "short_cells": int((cells["units"] < MIN_UNITS).sum())}


def paired_claim(
    cid,
    quote,
    test,
    source,
    pairs,
    cell,
    what,
    names,
    share=1.0,
    units=("subsample", "subsamples"),
    unit=None,
) -> Claim:
    """The claim that side a beats side b (``names``; None for a side that is no method, e.g.
    a threshold) in (``share`` of) the cells of ``pairs`` (one row per unit), with its effect,
    uncertainty, units (``units``: what a unit is, one and several) and, where undecided, the
    units it would need (``unit``: the columns that name a unit, ``power.unit_differences``)."""
    cells = compare_cells(pairs, cell)
    result = cells_verdict(cells, share)
    details = result.line
    counts = [
        f"{name} {int(cells[f'{side}_diverged'].sum())}"
        for name, side in zip(names, "ab")
        if name is not None
    ]
    if len(cells) and counts:
        details += f"; units with a diverged run: {', '.join(counts)}"
    needed = needed_line(pairs, cell, share, unit) if result.verdict == UNSURE else ""
    design = {"unit": units[0], "parts": [design_part(pairs, cell, "greater", share, unit)]}
    return cells_claim(
        cid,
        quote,
        test,
        source,
        result,
        cells,
        what,
        units,
        details=details,
        needed=needed,
        design=design,
    )


def cells_claim(cid, quote, test, source, result, cells, what, units, **fields) -> Claim:
    """A claim judged over ``cells`` (``compare_cells``) by a test's ``result`` (its verdict, its
    p-values and its line as the details): the effect of ``what`` with its uncertainty and the
    ``units`` line (``describe_effect``, ``units`` its (unit, units) words); ``fields`` set or
    replace any other field of the claim."""
    effect, uncertainty, unit_line = describe_effect(cells, what, *units)
    judged = {
        "verdict": result.verdict,
        "effect": effect,
        "uncertainty": uncertainty,
        "units": unit_line,
        "details": result.line,
        "p_value": result.p_value,
        "p_refute": result.p_refute,
        "refute_tests": result.refute_tests,
    }
    return Claim(cid, quote, test, source, **{**judged, **fields}, **scale(cells))


def part_tests(claim: Claim) -> list[float]:
    """The raw p-values of a claim's refuting tests; a claim that kept only its corrected
    p_refute counts as one test (a valid p-value of its own union)."""
    if claim.refute_tests:
        return list(claim.refute_tests)
    return [] if claim.p_refute is None else [claim.p_refute]


def combine(first: Claim, second: Claim, parts: tuple[str, str]) -> Claim:
    """One claim made of two tests (``parts`` name them): holds where both hold (its p the
    larger: an intersection-union test), does not hold where some test of either part is
    significantly against it after the correction over the union of both parts' refuting tests
    (``refute``: a part alone at ALPHA would refute at about twice ALPHA), else inconclusive."""
    tests = [part_tests(first), part_tests(second)]
    adjusted, p_refute, raw = refute(tests[0] + tests[1])
    hit = np.nan_to_num(adjusted, nan=1.0) < ALPHA
    refuted_by = [
        name for name, own in zip(parts, (hit[: len(tests[0])], hit[len(tests[0]) :])) if own.any()
    ]
    # A part refuted with no p-value at all (an exact count) refutes the whole.
    exact = [
        name for name, c in zip(parts, (first, second)) if c.verdict == FAILS and not part_tests(c)
    ]
    refuted_by += exact
    both = list(zip(parts, (first, second)))
    verdict = (
        FAILS if refuted_by else HOLDS if {first.verdict, second.verdict} == {HOLDS} else UNSURE
    )
    p_values = [c.p_value for c in (first, second) if c.p_value is not None]
    details = "; ".join(f"{name}: {c.verdict}, {c.details}" for name, c in both)
    if refuted_by:
        details = f"refuted by the part: {' and '.join(refuted_by)}; " + details
    details += "; refuted: Holm over the union of both parts' refuting tests"
    return Claim(
        first.id,
        first.quote,
        first.test,
        first.source,
        verdict,
        "; ".join(f"{name}: {c.effect}" for name, c in both),
        "; ".join(f"{name}: {c.uncertainty}" for name, c in both if c.uncertainty),
        first.units,
        details,
        max(p_values) if len(p_values) == 2 else None,
        "; ".join(f"{name}: {c.needed}" for name, c in both if c.needed),
        cells=first.cells + second.cells,
        short_cells=first.short_cells + second.short_cells,
        p_refute=p_refute,
        refute_tests=raw,
        design=joined_design(first, second),
    )


def joined_design(*claims: Claim) -> dict:
    """The design of a claim made of ``claims``: their parts together (it holds where every
    part holds); none where a part has none or the parts rest on different units."""
    designs = [c.design for c in claims]
    if not all(designs) or len({d.get("unit") for d in designs}) > 1:
        return {}
    return {**designs[0], "parts": [part for d in designs for part in d["parts"]]}
