"""A claim, and how one is assembled from its tests: the verdict of its cells
(``claims.verdicts``) over the paired tests of its units (``claims.cells``), its effect and
uncertainty as a reader sees them, and a claim made of two parts; power lives in
``claims.power``, the levels every test shares in ``claims.levels``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .cells import CELL_STATS, compare_cells
from .levels import ALPHA, FAILS, HOLDS, MIN_UNITS, SKIPPED, UNSURE
from .power import design_part, needed_line
from .verdicts import cells_verdict, refute

__all__ = [
    "Claim",
    "cells_claim",
    "combine",
    "describe_effect",
    "effect_numbers",
    "joined_design",
    "paired_claim",
    "part_tests",
    "scale",
    "skipped",
]


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
