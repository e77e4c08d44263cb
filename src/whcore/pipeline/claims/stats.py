"""The statistics every claim shares: units of replication, paired tests per cell, Holm's
correction, equivalence tests and power.

The unit of replication is the subsample: a g* draw and a data seed (synthetic data), a data
seed (real data). Runs that share a subsample are not independent, so each method's value is
first averaged over its training seeds within a unit; tests then pair units. A cell (one train
size, one (n, c), ...) with fewer than MIN_UNITS finished units gets no verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

HOLDS, FAILS, UNSURE, SKIPPED = "holds", "does not hold", "inconclusive", "not evaluated"
ALPHA = 0.05  # family-wise error level of a claim (and of all claims together)
MIN_UNITS = 3  # fewer finished subsamples in a cell: no verdict for it
POWER = 0.8  # the power the "units needed" estimate aims at


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


def units_needed(diffs: pd.Series, effect: float, alpha: float) -> int | None:
    """Units a one-sided paired t-test at level ``alpha`` needs to detect ``effect`` with
    POWER, given the spread of the measured differences ``diffs``; None where the spread is
    unknown or no effect in the claimed direction was measured."""
    sd = float(diffs.std()) if len(diffs) > 1 else np.nan
    if not np.isfinite(sd) or sd == 0 or not np.isfinite(effect) or effect <= 0:
        return None
    # The normal approximation, then the exact (noncentral t) count just around it.
    approx = int(np.ceil(((stats.norm.ppf(1 - alpha) + stats.norm.ppf(POWER)) * sd / effect) ** 2))
    if approx > 10_000:
        return approx
    for n in range(max(2, approx - 2), approx + 50):
        df = n - 1
        critical = stats.t.ppf(1 - alpha, df)
        if stats.nct.sf(critical, df, effect / (sd / np.sqrt(n))) >= POWER:
            return n
    return approx + 50


# --- cells ----------------------------------------------------------------------------------------


def compare_cells(pairs: pd.DataFrame, cell: list[str]) -> pd.DataFrame:
    """Per cell of ``pairs`` (one row per unit; columns ``cell``, a, b, a_diverged, b_diverged):
    finished units, the mean difference a - b and its standard error, one-sided paired t-test
    p-values for a > b and a < b, and the diverged units per side."""
    rows = []
    for key, group in pairs.groupby(cell, sort=True):
        done = group[~group["a_diverged"] & ~group["b_diverged"]].dropna(subset=["a", "b"])
        diff = done["a"] - done["b"]
        enough = len(done) >= MIN_UNITS and diff.std() > 0
        row = dict(zip(cell, key if isinstance(key, tuple) else (key,)))
        row.update(
            units=len(done),
            mean=diff.mean() if len(done) else np.nan,
            sd=diff.std() if len(done) > 1 else np.nan,
            sem=diff.std() / np.sqrt(len(done)) if len(done) > 1 else np.nan,
            p_greater=_ttest(done, "greater") if enough else np.nan,
            p_less=_ttest(done, "less") if enough else np.nan,
            a_diverged=int(group["a_diverged"].sum()),
            b_diverged=int(group["b_diverged"].sum()),
        )
        rows.append(row)
    columns = [*cell, "units", "mean", "sd", "sem", "p_greater", "p_less", "a_diverged",
               "b_diverged"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _ttest(done: pd.DataFrame, alternative: str) -> float:
    return float(stats.ttest_rel(done["a"], done["b"], alternative=alternative).pvalue)


@dataclass
class CellsResult:
    verdict: str
    line: str
    p_value: float | None  # the claim's decisive Holm-adjusted p (holds side)


def cells_verdict(cells: pd.DataFrame, share: float = 1.0) -> CellsResult:
    """The verdict of "a beats b in (at least ``share`` of) the cells", Holm-corrected over the
    cells; a method that diverged in more units than its rival cannot win a cell."""
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
        f"holds in {k_holds} of {total} cells, does not hold in {k_fails}"
        + (f", {undecided} with fewer than {MIN_UNITS} finished units" if undecided else "")
        + f" (one-sided paired t-tests over units, Holm-corrected over {total} cells)"
    )
    needed = int(np.ceil(share * total))
    # The claim's p: the needed-th smallest adjusted p of cells the divergences let win.
    candidates = np.sort(np.where(fewer_divergences, np.nan_to_num(better, nan=1.0), 1.0))
    p_value = float(candidates[needed - 1]) if needed else None
    if k_fails > total - needed:
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
    half = _ci_half_width(finite)
    uncertainty = f"95% CI of the per-cell means: ±{half:.4f} (median over cells)"
    low, high = int(finite["units"].min()), int(finite["units"].max())
    span = f"{low}" if low == high else f"{low}-{high}"
    plural = "" if high == 1 else "s"
    cells_word = "cell" if len(cells) == 1 else "cells"
    units = (
        f"{span} independent unit{plural} (subsample{plural}) per cell, {len(cells)} {cells_word}"
    )
    return effect, uncertainty, units


def _ci_half_width(cells: pd.DataFrame) -> float:
    widths = [
        stats.t.ppf(0.975, u - 1) * s if u > 1 and np.isfinite(s) else np.nan
        for u, s in zip(cells["units"], cells["sem"])
    ]
    return float(np.nanmedian(widths)) if np.isfinite(widths).any() else np.nan


def needed_line(cells: pd.DataFrame, pairs: pd.DataFrame, cell: list[str], effect=None) -> str:
    """How many units each cell would need for POWER against ``effect`` (the paper's size
    where it states one, else the effect measured here), at the per-cell Holm level."""
    finite = cells.dropna(subset=["mean"])
    if finite.empty:
        return ""
    target = float(finite["mean"].mean()) if effect is None else effect
    alpha = ALPHA / max(len(cells), 1)
    counts = []
    for _, group in pairs.groupby(cell, sort=True):
        done = group[~group["a_diverged"] & ~group["b_diverged"]].dropna(subset=["a", "b"])
        counts.append(units_needed(done["a"] - done["b"], target, alpha))
    known = [c for c in counts if c is not None]
    what = "the paper's effect" if effect is not None else "the effect measured here"
    if not known:
        return "no effect in the claimed direction measured: more units would not settle it"
    return (
        f"{max(known)} units per cell would detect {what} ({target:+.4f}) with "
        f"{POWER:.0%} power at level {alpha:.3g}"
    )


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
                 result.p_value, needed)  # fmt: skip
