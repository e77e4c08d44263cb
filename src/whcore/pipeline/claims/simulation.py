"""Simulated runs of a design (``claims.plan``): per claim, each part's cells drawn from the
moments the run measured at the design's units, the tests and rules the engine applies, and
the correction over claims; the count of claims decided per simulated run."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .levels import ALPHA, FAILS, HOLDS, MIN_UNITS
from .power import needed_cells

__all__ = ["PLAN_DRAWS", "ClaimModel", "Outcome", "Part", "holm_rows", "simulate"]

PLAN_DRAWS = 2_000  # simulated runs behind what the planner states


@dataclass
class Part:
    """One part of a claim: its cells' unit-difference moments and the rule that judges it."""

    test: str
    share: float
    margin: float
    overlap: float
    units: np.ndarray  # finished units per cell in the run
    mean: np.ndarray
    cov: np.ndarray

    @property
    def sd(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.cov), 0, None))

    def boundary(self) -> np.ndarray:
        """Per cell the effect at which the part can be decided neither way."""
        if self.test == "greater":
            return np.zeros_like(self.mean)
        if self.test == "below":
            return np.full_like(self.mean, self.margin)
        return np.where(self.mean >= 0, self.margin, -self.margin)  # equivalence: nearest edge


@dataclass
class ClaimModel:
    """A tested claim as the planner sees it: its parts on one experiment's units, or (no
    design) the p-values and verdict the run measured, kept fixed."""

    id: str
    counted: bool  # not an identity or tautology (the headline's count)
    experiment: str = ""
    parts: list[Part] = field(default_factory=list)
    fixed: tuple = (None, None, "")  # (p_value, p_refute, verdict) of a claim without design


def holm_rows(p: np.ndarray) -> np.ndarray:
    """``verdicts.holm`` applied to each row of ``p`` (NaN: no test, left out, stays NaN)."""
    p = np.atleast_2d(np.asarray(p, float))
    present = np.isfinite(p)
    tests = present.sum(axis=1, keepdims=True)
    order = np.argsort(np.where(present, p, np.inf), axis=1, kind="stable")
    ordered = np.take_along_axis(p, order, axis=1)
    factor = tests - np.arange(p.shape[1])
    scaled = np.where(factor > 0, ordered * factor, np.nan)
    running = np.fmax.accumulate(np.nan_to_num(scaled, nan=-np.inf), axis=1)
    adjusted = np.where(np.isfinite(scaled), np.minimum(running, 1.0), np.nan)
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=1)
    return out


def _root(cov: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    return vectors * np.sqrt(np.clip(values, 0, None))


def _cell_stats(part: Part, units: np.ndarray, rng, draws: int):
    """Simulated per-cell (mean, standard error) of ``draws`` runs with ``units`` per cell."""
    n = np.maximum(units, 2)
    scale = 1 / np.sqrt(n)
    means = part.mean + (rng.standard_normal((draws, len(n))) @ _root(part.cov).T) * scale
    variance = np.diag(part.cov) * rng.chisquare(n - 1, (draws, len(n))) / (n - 1)
    sem = np.sqrt(variance * (1 / n + part.overlap))
    return means, sem, n - 1


def _sides(t: np.ndarray, df: np.ndarray, testable: np.ndarray):
    """One-sided p-values (a > b, a < b) of ``t``; NaN in cells without a test."""
    greater = np.where(testable, stats.t.sf(t, df), np.nan)
    return greater, np.where(testable, stats.t.cdf(t, df), np.nan)


def _ordered(p: np.ndarray, needed: int) -> np.ndarray:
    """The ``needed``-th smallest p per row (NaN counted as 1)."""
    return np.sort(np.nan_to_num(p, nan=1.0), axis=1)[:, needed - 1]


def _part_run(part: Part, units: np.ndarray, rng, draws: int):
    """Per simulated run: the part's p that it holds (NaN: none), whether it holds, and the raw
    p-values of its refuting tests, as ``verdicts.cells_verdict``, ``equivalence`` and
    ``not_better`` compute them (no divergences: every unit finishes)."""
    means, sem, df = _cell_stats(part, units, rng, draws)
    # A cell without a spread in the run (one finished unit) cannot be simulated: no test.
    testable = np.broadcast_to((units >= MIN_UNITS) & (part.sd > 0), means.shape)
    sem = np.where(testable, sem, 1.0)  # its t is never read
    cells = means.shape[1]
    needed = needed_cells(part.share, cells)
    can = testable.sum(axis=1) >= needed
    if part.test == "equivalence":
        above_g, above_l = _sides((means + part.margin) / sem, df, testable)
        below_g, below_l = _sides((means - part.margin) / sem, df, testable)
        tost = np.fmax(above_g, below_l)
        p_value = np.where(testable.any(axis=1), np.nanmax(np.where(testable, tost, -1), 1), np.nan)
        holds = (np.nan_to_num(tost, nan=1.0) < ALPHA).all(axis=1)
        return p_value, holds, np.concatenate([above_l, below_g], axis=1)
    shift = part.margin if part.test == "below" else 0.0
    greater, less = _sides((means - shift) / sem, df, testable)
    if part.test == "below":  # "a - b below the margin in a share of the cells"
        inside = holm_rows(less)
        p_value = np.where(needed > 0, _ordered(inside, max(needed, 1)), np.nan)
        return p_value, (np.nan_to_num(inside, nan=1.0) < ALPHA).sum(1) >= needed, greater
    decisive = greater if needed == cells else holm_rows(greater)
    p_value = np.where(can, _ordered(decisive, needed), np.nan)
    holds = (np.nan_to_num(decisive, nan=1.0) < ALPHA).sum(axis=1) >= needed
    return p_value, holds, less


def _claim_run(model: ClaimModel, units: float, run_units: float, rng, draws: int):
    """Per simulated run the claim's (p_value, p_refute, verdict is HOLDS, verdict is FAILS)
    with ``units`` units of its experiment where the run had ``run_units``."""
    if not model.parts:
        p_value, p_refute, verdict = model.fixed
        full = lambda v: np.full(draws, np.nan if v is None else float(v))  # noqa: E731
        same = lambda v: np.full(draws, verdict == v)  # noqa: E731
        return full(p_value), full(p_refute), same(HOLDS), same(FAILS)
    values, holds, refuting = [], np.ones(draws, bool), []
    for part in model.parts:
        cells = np.floor(part.units * units / run_units + 1e-9)
        p_value, held, raw = _part_run(part, cells, rng, draws)
        values.append(p_value)
        # A part holds only where none of its own refuting tests is significant (its verdict).
        holds &= held & ~(np.nan_to_num(holm_rows(raw), nan=1.0) < ALPHA).any(axis=1)
        refuting.append(raw)
    adjusted = holm_rows(np.concatenate(refuting, axis=1))
    finite = np.isfinite(adjusted).any(axis=1)
    p_refute = np.where(finite, np.nanmin(np.where(finite[:, None], adjusted, 1.0), 1), np.nan)
    fails = np.nan_to_num(p_refute, nan=1.0) < ALPHA
    p_value = np.max(np.stack(values), axis=0)  # NaN where a part has none: no p that it holds
    return p_value, p_refute, holds & ~fails, fails


@dataclass
class Outcome:
    """A design's simulated runs: per claim whether it was decided, and the count decided."""

    ids: list[str]
    decided: np.ndarray  # runs x claims
    counted: np.ndarray  # claims the headline counts

    @property
    def count(self) -> np.ndarray:
        return self.decided[:, self.counted].sum(axis=1)

    def summary(self) -> dict:
        count = self.count
        # On a count: at least 90% of the runs decide p10 or more, and p90 or fewer.
        low, high = np.quantile(count, [0.1, 0.9], method="inverted_cdf")
        return {"expected": count.mean(), "sd": count.std(), "p10": int(low), "p90": int(high)}


def simulate(
    models: list[ClaimModel],
    units: dict[str, float],
    run_units: dict[str, float],
    draws: int = PLAN_DRAWS,
    seed: int = 0,
) -> Outcome:
    """``draws`` runs at ``units`` per experiment (the run had ``run_units``): each claim's
    sides, Holm over both sides of every tested claim (``report.correct_across``), decided
    where "holds" keeps p_value_across < ALPHA or "does not hold" p_refute_across < ALPHA."""
    rng = np.random.default_rng(seed)  # the same seed for every design: common random numbers
    runs = [
        _claim_run(m, units.get(m.experiment, 1), run_units.get(m.experiment, 1), rng, draws)
        for m in models
    ]
    p_value = np.stack([r[0] for r in runs], axis=1)
    p_refute = np.stack([r[1] for r in runs], axis=1)
    across = holm_rows(np.concatenate([p_value, p_refute], axis=1))
    value_across, refute_across = across[:, : len(models)], across[:, len(models) :]
    holds = np.stack([r[2] for r in runs], axis=1) & (np.nan_to_num(value_across, nan=1) < ALPHA)
    fails = np.stack([r[3] for r in runs], axis=1) & (np.nan_to_num(refute_across, nan=1) < ALPHA)
    counted = np.array([m.counted for m in models], bool)
    return Outcome([m.id for m in models], holds | fails, counted)
