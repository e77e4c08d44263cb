"""The design planner: how many units each experiment should have so that a budget decides as
many claims as it can, after the correction over claims.

A claim's ``design`` in ``claims.json`` (``power.design_part``) holds, per part, its cells' unit
differences (mean, covariance, finished units) and the rule it is judged by. At a candidate
design (units per experiment) each run is simulated from these moments: per cell the mean
difference drawn jointly over cells (their covariance kept: cells that share a rival stay
correlated), each cell's variance from its own scaled chi-square (the dependence between cells'
variance estimates is left out); the cell tests, each part's rule and the claim's verdict as the
engine computes them; then Holm over both sides' p-values of every tested claim
(``report.correct_across``) and the count of claims decided (holds or does not hold after it).

The effects planned on are not the run's point estimates (a small pilot's estimate overstates
power): each cell's effect is moved to the end of its 80% effect interval
(``power.effect_interval``) nearest the test's boundary (0, or the margin), the boundary itself
where the interval covers it. Claims with a test but no design keep the p-values this run
measured (they stay in the family, their verdict fixed)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from .levels import ALPHA, FAILS, HOLDS, MIN_UNITS
from .power import INTERVAL, MAX_UNITS, effect_interval, needed_cells

__all__ = [
    "PLAN_DRAWS",
    "SEARCH_DRAWS",
    "UNIT_KEYS",
    "config_units",
    "ClaimModel",
    "Part",
    "holm_rows",
    "read_models",
    "shrunk",
    "simulate",
]

PLAN_DRAWS = 2_000  # simulated runs behind what the planner states
SEARCH_DRAWS = 500  # per candidate design of the search (common random numbers: few suffice)
# Where the workflow reads each experiment's number of units (workflow/schemas/config.schema.yaml)
UNIT_KEYS = {
    "spectrum": ("spectrum", "draws"),
    "synthetic": ("synthetic", "draws"),
    "real": ("real", "data_seeds"),
    "ablation": ("ablation", "repeats"),
}
FIX = (
    "write it again with this version of whcore: `snakemake --forcerun claims --configfile "
    "<the run's config>` in the run's working folder (or `whcore render <run>.crate.zip`)"
)
TESTS = ("greater", "equivalence", "below")


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


def _fail(path, what: str) -> ValueError:
    return ValueError(f"{path}: {what}; {FIX}")


def _part(path, cid: str, raw) -> Part:
    """A design part of claim ``cid`` read and checked (a clear error naming the field)."""
    where = f"claim {cid!r}, field design.parts"
    try:
        mean = np.array([np.nan if v is None else v for v in raw["mean"]], float)
        cov = np.array([[np.nan if v is None else v for v in row] for row in raw["cov"]], float)
        units = np.asarray(raw["units"], float)
        test, share = str(raw["test"]), float(raw["share"])
        margin, overlap = float(raw.get("margin", 0.0)), float(raw.get("overlap", 0.0))
    except (KeyError, TypeError, ValueError) as err:
        raise _fail(path, f"{where}: unreadable ({type(err).__name__}: {err})") from None
    cells = len(mean)
    if cov.shape != (cells, cells) or units.shape != (cells,) or test not in TESTS:
        raise _fail(
            path,
            f"{where}: {cells} means need {cells} units and a {cells} x {cells} cov "
            f"(got {units.shape[0]} units, cov {cov.shape}) and a test in {TESTS}",
        )
    return Part(test, share, margin, overlap, units, mean, np.nan_to_num(cov, nan=0.0))


def _model(path, raw: dict) -> ClaimModel | None:
    """A claim of ``claims.json`` as a ``ClaimModel``: one with a design (tested at a larger
    design even where this run's units gave it no test yet) or a test; None for neither."""
    cid = str(raw.get("id", "?"))
    try:
        p_value, p_refute, verdict = raw["p_value"], raw["p_refute"], raw["verdict"]
    except KeyError as err:
        raise _fail(path, f"claim {cid!r} lacks the field {err}") from None
    model = ClaimModel(cid, counted=not raw.get("nature"))
    design = raw.get("design") or {}
    if not design:  # kept as measured, in the family where it has a test
        model.fixed = (p_value, p_refute, verdict)
        return None if p_value is None and p_refute is None else model
    if not isinstance(design, dict) or not design.get("experiment") or not design.get("parts"):
        raise _fail(path, f"claim {cid!r}, field design: needs 'experiment' and 'parts'")
    model.experiment = str(design["experiment"])
    model.parts = [_part(path, cid, part) for part in design["parts"]]
    return model


def read_models(path: str | Path) -> list[ClaimModel]:
    """The tested claims of a ``claims.json``; an error naming the file, the field and the fix
    where it is unreadable or was written by a whcore that wrote no designs."""
    path = Path(path)
    try:
        claims = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(
            f"{path}: cannot read it as JSON ({err}); give a run's claims.json"
        ) from None
    if not isinstance(claims, list) or not all(isinstance(c, dict) for c in claims):
        raise _fail(path, "not a list of claims")
    if not any("design" in c for c in claims):
        raise _fail(path, "no claim has the field 'design' (written by an older whcore)")
    models = [m for m in (_model(path, c) for c in claims) if m is not None]
    if not any(m.parts for m in models):
        raise ValueError(
            f"{path}: no claim has a design with units to plan (field design.parts): the run "
            "evaluated no claim over units; plan from a run whose experiments ran"
        )
    return models


# --- the effects planned on ---------------------------------------------------------------------


def shrunk(part: Part, level: float = INTERVAL) -> Part:
    """``part`` with each cell's effect at the end of its ``level`` effect interval nearest the
    test's boundary (the boundary where the interval covers it): power planned on it is the
    power at a conservative end of what this run's units allow."""
    low, high = effect_interval(part.mean, part.sd, part.units, level)
    edge = part.boundary()
    nearest = np.where(high < edge, high, np.where(low > edge, low, edge))
    mean = np.where(np.isfinite(nearest), nearest, edge)  # a cell without interval: no effect
    return Part(part.test, part.share, part.margin, part.overlap, part.units, mean, part.cov)


# --- simulated runs -----------------------------------------------------------------------------


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


# --- the search -----------------------------------------------------------------------------------


def design_cost(units: dict[str, float], costs: dict[str, float], fixed: float) -> float:
    """Seconds of a run with ``units`` per experiment: ``fixed`` plus each unit's cost."""
    return fixed + sum(costs[e] * n for e, n in units.items() if e in costs)


def _candidates(current: int, top: int) -> list[int]:
    """Units to try for one experiment: from ``current`` up to ``top``, three steps of a quarter
    and then doubling (near steps for a gain per unit, far ones for a gain that needs many units
    at once), so that a search over a large budget stays a few dozen simulations a step."""
    values, n = {current, top}, current
    for _ in range(3):
        n = max(n + 1, int(np.ceil(n * 1.25)))
        values.add(min(n, top))
    while n < top:
        n *= 2
        values.add(min(n, top))
    return sorted(v for v in values if v <= top)


def plan_units(
    models: list[ClaimModel],
    run_units: dict[str, int],
    costs: dict[str, float],
    budget: float,
    fixed: float,
    draws: int = PLAN_DRAWS,
) -> dict[str, int]:
    """Units per experiment (never fewer than the run's, at most MAX_UNITS) that maximize the
    expected count of claims decided after the correction over claims within ``budget`` seconds. Greedy by the
    gain per second: each step takes, over every experiment and every affordable increase of
    it (``_candidates``: a jump, since a gain may need several units at once, e.g. to reach
    MIN_UNITS), the one that adds the most expected decided claims per second; it stops where
    no affordable increase adds any."""
    planned = sorted(e for e in run_units if e in costs and any(m.experiment == e for m in models))
    best, seen = dict(run_units), {}

    def score(units: dict[str, int]) -> float:
        key = tuple(sorted(units.items()))
        if key not in seen:
            seen[key] = simulate(models, units, run_units, draws).count.mean()
        return seen[key]

    value = score(best)
    while True:
        spare, step = budget - design_cost(best, costs, fixed), None
        for experiment in planned:
            # at most MAX_UNITS per cell, as "units needed" (beyond it a budget buys nothing the
            # report could promise, and the search would try ever larger jumps for long)
            affordable = best[experiment] + int(spare // costs[experiment])
            top = max(best[experiment], min(affordable, MAX_UNITS))
            for n in _candidates(best[experiment], top)[1:]:
                trial = {**best, experiment: n}
                gain = score(trial) - value
                rate = gain / (costs[experiment] * (n - best[experiment]))
                if gain > 1e-9 and (step is None or rate > step[0]):
                    step = (rate, trial, value + gain)
        if step is None:
            return best
        _, best, value = step


# --- what the planner says ------------------------------------------------------------------------

EFFECTS = (
    f"effects planned on: each cell's at the end of its {INTERVAL:.0%} effect interval nearest "
    "the test's boundary (0, or the margin; the boundary where the interval covers it), not the "
    "point estimates"
)


def overlay(units: dict[str, int], run: str) -> dict:
    """The config overlay of a planned design: each experiment's units under the key the
    workflow reads (``UNIT_KEYS``), in a run folder of its own."""
    layer: dict = {"run_name": f"{run}-planned"}
    for experiment, n in sorted(units.items()):
        if experiment in UNIT_KEYS:
            section, key = UNIT_KEYS[experiment]
            layer.setdefault(section, {})[key] = int(n)
    return layer


def _count_line(label: str, outcome: Outcome) -> str:
    s = outcome.summary()
    return (
        f"{label}: expected {s['expected']:.1f} claims decided (SD {s['sd']:.1f}; 10-90% "
        f"of simulated runs {s['p10']:.0f} to {s['p90']:.0f}) of {int(outcome.counted.sum())}"
    )


def plan_lines(
    models: list[ClaimModel],
    run_units: dict[str, int],
    planned: dict[str, int],
    cost: tuple[dict[str, float], float],
    cores: int,
    draws: int = PLAN_DRAWS,
    hours: str = "core-hours",
) -> list[str]:
    """The planner's report: the design, its cost (in ``hours``: core-hours, or GPU-hours for
    a run measured on one GPU), per claim the probability it is decided, and the expected count
    with its spread, at the shrunk effects (and, for contrast, the run's own units and the
    point estimates)."""
    costs, fixed = cost
    at_plan = forecast(models, planned, run_units, draws)
    at_run = forecast(models, run_units, run_units, draws)
    optimistic = simulate(models, planned, run_units, draws)
    seconds = design_cost(planned, costs, fixed)
    lines = [
        EFFECTS + ".",
        "design: "
        + ", ".join(
            f"{e} {run_units[e]} -> {planned[e]} units ({costs.get(e, 0) / 3600:.3g} {hours} each)"
            for e in sorted(planned)
        ),
        f"cost: {seconds / 3600:.3g} {hours} ({fixed / 3600:.3g} fixed), about "
        f"{seconds / 3600 / cores:.3g} hours on {cores} core(s) if the jobs fill them",
        _count_line("at the planned design", at_plan)
        + " (on shrunk effects: a floor more than a forecast; the run often decides more)",
        _count_line("at the run's own units", at_run),
        _count_line("at the planned design on the point estimates (optimistic)", optimistic),
        "per claim, the probability the planned design decides it (after the correction):",
    ]
    lines[3:3] = [f"{e}: {why}" for e, why in unplannable(models).items()]
    if planned == run_units:
        lines.insert(
            2,
            "no affordable increase of any experiment's units raises the expected count at the "
            "shrunk effects: this run's effect intervals are too wide to plan from (they cover "
            "each test's boundary), so the design is the run's own; a larger pilot narrows them",
        )
    for index, model in enumerate(models):
        what = model.experiment or "not modelled: its p-values kept as measured"
        kept = "" if model.counted else "; not counted: an identity or tautology"
        share = at_plan.decided[:, index].mean()
        lines.append(f"  {model.id}: {share:.2f} ({what}{kept})")
    return lines


def unplannable(models: list[ClaimModel]) -> dict[str, str]:
    """The experiments whose claims have no cell with a spread in the run (one finished unit
    per cell): their effects cannot be simulated, so more units of them gain nothing here."""
    parts = {}
    for model in models:
        for part in model.parts:
            parts.setdefault(model.experiment, []).append(part)
    return {
        e: "no cell has a spread in this run (fewer than 2 finished units): nothing to plan on; "
        f"a pilot of at least 2 units ({MIN_UNITS} for a test) is needed"
        for e, found in parts.items()
        if not any((p.sd > 0).any() for p in found)
    }


def forecast(
    models: list[ClaimModel],
    units: dict[str, int],
    run_units: dict[str, int],
    draws: int = PLAN_DRAWS,
) -> Outcome:
    """The simulated runs at ``units`` on the shrunk effects: what the planner states."""
    return simulate([_shrunk_model(m) for m in models], units, run_units, draws)


def _shrunk_model(model: ClaimModel) -> ClaimModel:
    parts = [shrunk(part) for part in model.parts]
    return ClaimModel(model.id, model.counted, model.experiment, parts, model.fixed)


def plan(
    models: list[ClaimModel],
    run_units: dict[str, int],
    cost: tuple[dict[str, float], float],
    budget: float,
    draws: int = PLAN_DRAWS,
    option: str = "the budget",
) -> dict[str, int]:
    """``plan_units`` at the shrunk effects, after checking the budget (``option`` names it):
    above 0 and at least what the run's own units cost (an error naming the least it needs)."""
    costs, fixed = cost
    if not budget > 0:
        raise ValueError(f"{option} must be above 0 hours (got {budget / 3600:g})")
    least = design_cost(run_units, costs, fixed)
    if budget < least:
        raise ValueError(
            f"{option} {budget / 3600:.3g} is below what the run's own units cost "
            f"({least / 3600:.3g} hours, measured from its jobs); give at least {least / 3600:.3g}:"
            " the planner never plans fewer units than the run has"
        )
    shrunk_models = [_shrunk_model(m) for m in models]
    return plan_units(shrunk_models, run_units, costs, budget, fixed, min(draws, SEARCH_DRAWS))


def config_units(config: dict) -> dict[str, int]:
    """The units of each experiment a configuration sets (``UNIT_KEYS``)."""
    return {
        e: int(config[section][key])
        for e, (section, key) in UNIT_KEYS.items()
        if key in config.get(section, {})
    }


def run_units(config: dict, models: list[ClaimModel]) -> dict[str, int]:
    """The run's units of each experiment some claim's design rests on."""
    used = {m.experiment for m in models if m.parts}
    return {e: n for e, n in config_units(config).items() if e in used}


def merged(config: dict, layer: dict) -> dict:
    """``config`` with ``layer`` over it, section by section (as Snakemake merges the
    configuration files it is given)."""
    out = dict(config)
    for key, value in layer.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if both else value
    return out
