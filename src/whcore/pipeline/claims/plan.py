"""The design planner: how many units each experiment should have so that a budget decides as
many claims as it can, after the correction over claims.

A claim's ``design`` in ``claims.json`` (``power.design_part``) holds, per part, its cells' unit
differences (mean, covariance, finished units) and the rule it is judged by. At a candidate
design (units per experiment) each run is simulated from these moments (``claims.simulation``):
per cell the mean difference drawn jointly over cells (their covariance kept: cells that share a rival stay
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
from pathlib import Path

import numpy as np

from .levels import MIN_UNITS
from .power import INTERVAL, MAX_UNITS, effect_interval
from .simulation import PLAN_DRAWS, ClaimModel, Outcome, Part, holm_rows, simulate

__all__ = [
    "PLAN_DRAWS",
    "SEARCH_DRAWS",
    "config_units",
    "ClaimModel",
    "Part",
    "holm_rows",
    "read_models",
    "shrunk",
    "simulate",
]

SEARCH_DRAWS = 500  # per candidate design of the search (common random numbers: few suffice)
FIX = (
    "write it again with this version of whcore: `snakemake --forcerun claims --configfile "
    "<the run's config>` in the run's working folder (or `whcore render <run>.crate.zip`)"
)
TESTS = ("greater", "equivalence", "below")


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


def overlay(units: dict[str, int], run: str, keys: dict[str, tuple[str, str]]) -> dict:
    """The config overlay of a planned design: each experiment's units under the key the
    workflow reads (``keys``: {experiment: (section, key)}, ``experiments.unit_keys()``), in a
    run folder of its own."""
    layer: dict = {"run_name": f"{run}-planned"}
    for experiment, n in sorted(units.items()):
        if experiment in keys:
            section, key = keys[experiment]
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


def config_units(config: dict, keys: dict[str, tuple[str, str]]) -> dict[str, int]:
    """The units of each experiment a configuration sets under ``keys`` ({experiment:
    (section, key)}, ``experiments.unit_keys()``)."""
    return {
        e: int(config[section][key])
        for e, (section, key) in keys.items()
        if key in config.get(section, {})
    }


def run_units(
    config: dict, models: list[ClaimModel], keys: dict[str, tuple[str, str]]
) -> dict[str, int]:
    """The run's units of each experiment some claim's design rests on (``keys``: as
    ``config_units`` reads them)."""
    used = {m.experiment for m in models if m.parts}
    return {e: n for e, n in config_units(config, keys).items() if e in used}


def merged(config: dict, layer: dict) -> dict:
    """``config`` with ``layer`` over it, section by section (as Snakemake merges the
    configuration files it is given)."""
    out = dict(config)
    for key, value in layer.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if both else value
    return out
