"""Section 3 (Figures 1 and 3): claims about the shape of training curves, per run, over all
epochs: the standard network learns the low degrees first, and it overfits the low degrees
where HashWH does not.

A curve's minimum is never located on the curve whose rise is measured: noise that is
correlated from epoch to epoch (training curves are) would otherwise make a flat curve look as
if it rose after its minimum. The minimum is located on one training seed of a unit and the
rise measured on another seed of the same unit (``cross_seed_rise``), so the overfitting
claim needs at least two training seeds per unit."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cells import compare_cells, paired, unit_means
from .claim import Claim, describe_effect, paired_claim, scale, skipped
from .levels import ALPHA, FAILS, HOLDS, UNSURE
from .power import needed_line
from .sensitivity import FIXED, first_true
from .sheet import wording
from .verdicts import cells_verdict, refute

RUN = ["dataset", "train_size", "data_seed", "seed"]
CURVES = ["dataset", "train_size", "data_seed"]  # the seeds of one dataset: one rise
UNIT = ["dataset", "train_size"]  # dataset: one g* draw (its data seeds averaged)
UNITS = ("g* draw", "g* draws; data and training seeds averaged within each")
MIN_RISE = 0.01  # a rise of the SAE below this is no overfitting
HALF = 0.5  # a frequency is "learned" once its amplitude reaches half the target's (1)
OVERFITTING_DEGREES = (2, 3)  # "looking at the lower degrees 2 and 3"


def cross_seed_rise(curves: np.ndarray, window: int | None = None) -> float:
    """How far the curves of one unit's seeds (rows of ``curves``, one column per epoch) rise
    after their minimum: for every ordered pair of different seeds, the minimum's epoch is
    located on the first (moving average over ``window`` epochs) and the rise is measured on
    the second (the mean of its last ``window`` epochs minus its mean over the window at that
    epoch); the mean over the pairs. A seed never measures the minimum it located, so for
    curves that only fluctuate, however autocorrelated, the expected rise is 0. NaN with
    fewer than two seeds or a curve shorter than two windows."""
    curves = np.asarray(curves, dtype=float)
    if curves.ndim != 2 or curves.shape[0] < 2:
        return np.nan
    length = curves.shape[1]
    window = window or max(3, length // 20)
    if length < 2 * window:
        return np.nan
    kernel = np.ones(window) / window
    starts = [int(np.argmin(np.convolve(curve, kernel, mode="valid"))) for curve in curves]
    rises = [
        curves[j, -window:].mean() - curves[j, start : start + window].mean()
        for i, start in enumerate(starts)
        for j in range(len(curves))
        if j != i
    ]
    return float(np.mean(rises))


def _seed_curves(epochs: pd.DataFrame, variant: str, column: str):
    """(unit key, seeds x epochs matrix) of a variant's ``column``, epochs every seed has."""
    runs = epochs[(epochs["variant"] == variant) & (epochs["epoch"] > 0)]
    wide = runs.set_index([*RUN, "epoch"])[column].unstack("epoch").sort_index()
    values = wide.to_numpy(dtype=float)
    index = wide.index.droplevel("seed")
    starts = np.flatnonzero(~index.duplicated())
    for start, stop in zip(starts, [*starts[1:], len(index)]):
        block = values[start:stop]
        yield index[start], block[:, ~np.isnan(block).any(axis=0)]


def rises(epochs: pd.DataFrame, variant: str, degree: int) -> pd.DataFrame:
    """Per unit (index UNIT): the ``cross_seed_rise`` of the degree's SAE of each of its data
    seeds, averaged (value), and whether none could be measured (diverged: fewer than two
    seeds or too short)."""
    rows = [
        {**dict(zip(CURVES, key)), "value": cross_seed_rise(curves)}
        for key, curves in _seed_curves(epochs, variant, f"sae_deg{degree}")
    ]
    frame = pd.DataFrame(rows, columns=[*CURVES, "value"])
    unit = frame.groupby(UNIT, sort=True)["value"].mean().to_frame()
    unit["diverged"] = unit["value"].isna()
    return unit


def _seeds_per_unit(epochs: pd.DataFrame, variant: str) -> int:
    runs = epochs.loc[epochs["variant"] == variant, RUN].drop_duplicates()
    counts = runs.groupby(CURVES).size()
    return int(counts.min()) if len(counts) else 0


def _mean_rise(differences: pd.Series) -> str:
    """The mean rise difference over cells, or why there is none."""
    mean = differences.mean()
    return f"mean rise difference {mean:+.4f}" if np.isfinite(mean) else "no finished units"


def overfitting_claim(epochs: pd.DataFrame, hashed: list[str], b_of: dict) -> Claim:
    cid = "spectrum_standard_overfits_low_degrees"
    quote, test, source = wording(cid, MIN_RISE=MIN_RISE)
    if not {f"sae_deg{d}" for d in OVERFITTING_DEGREES} <= set(epochs.columns):
        return skipped(cid, quote, source, "no per-degree SAE of degrees 2 and 3 recorded")
    if _seeds_per_unit(epochs, "standard") < 2:
        return skipped(
            cid,
            quote,
            source,
            "needs at least two training seeds per unit "
            "(spectrum.seeds): the minimum is located on one, the rise measured on "
            "another",
        )
    rise_pairs, versus_pairs = [], []
    for degree in OVERFITTING_DEGREES:
        standard = rises(epochs, "standard", degree)
        zero = standard.assign(value=0.0, diverged=False)
        rise_pairs.append(paired(standard, zero).assign(degree=degree))
        for variant in hashed:
            versus = paired(standard, rises(epochs, variant, degree))
            versus_pairs.append(versus.assign(degree=degree, hash_size=b_of[variant]))
    rise_cell, versus_cell = ["train_size", "degree"], ["train_size", "degree", "hash_size"]
    rise_all = pd.concat(rise_pairs, ignore_index=True)
    versus_all = pd.concat(versus_pairs, ignore_index=True)
    rise_cells = compare_cells(rise_all, rise_cell)
    versus_cells = compare_cells(versus_all, versus_cell)
    floor, (refute_p, p_refute, refute_tests) = _refuting(
        rise_all, rise_cell, versus_cells, MIN_RISE
    )
    # Holds: every cell of both parts at ALPHA (an intersection-union test). Refuted: the
    # standard network's rise below the floor, or a b rising more, in any cell (Holm over all).
    # (float: an empty cell table's columns have no numeric dtype)
    holds_p = np.concatenate([rise_cells["p_greater"], versus_cells["p_greater"]]).astype(float)
    no_rise = np.nan_to_num(refute_p[: len(floor)], nan=1.0) < ALPHA
    rises_more = np.nan_to_num(refute_p[len(floor) :], nan=1.0) < ALPHA
    rise_holds = rise_cells["p_greater"].to_numpy(float) < ALPHA
    versus_holds = versus_cells["p_greater"].to_numpy(float) < ALPHA
    expected = len(rise_cells) * len(hashed)
    if no_rise.any() or rises_more.any():
        verdict = FAILS
    elif len(rise_cells) and len(versus_cells) == expected and (holds_p < ALPHA).all():
        verdict = HOLDS
    else:
        verdict = UNSURE
    p_value = float(np.nanmax(holds_p)) if np.isfinite(holds_p).any() else None
    effect, uncertainty, units = describe_effect(rise_cells, "the standard network's rise", *UNITS)
    per_b = []
    for variant in hashed:
        mine = (versus_cells["hash_size"] == b_of[variant]).to_numpy()
        per_b.append(
            f"b = {b_of[variant]}: smaller rise in {int(versus_holds[mine].sum())} of "
            f"{int(mine.sum())} cells, significantly larger in {int(rises_more[mine].sum())} "
            f"({_mean_rise(versus_cells.loc[mine, 'mean'])})"
        )
    details = (
        f"part (i), the standard network rises: in {int(rise_holds.sum())} of "
        f"{len(rise_cells)} cells, below the floor {MIN_RISE} in {int(no_rise.sum())}; part (ii), "
        "every b rises less: " + "; ".join(per_b)
    )
    refuted = [
        part
        for part, hit in (
            ("(i): no rise", no_rise.any()),
            ("(ii): a b rises more", rises_more.any()),
        )
        if hit
    ]
    if refuted:
        details = f"refuted by part {' and part '.join(refuted)} alone; " + details
    needed = needed_line(versus_all, versus_cell) if verdict == UNSURE else ""
    both = scale(pd.concat([rise_cells, versus_cells], ignore_index=True))
    return Claim(
        cid,
        quote,
        test,
        source,
        verdict,
        effect,
        uncertainty,
        units,
        details,
        p_value,
        needed,
        p_refute=p_refute,
        refute_tests=refute_tests,
        sensitivity=floor_line(rise_all, rise_cell, versus_cells),
        **both,
    )


def _refuting(rise_all, rise_cell, versus_cells, floor: float):
    """The floor cells (the standard network's rise against ``floor``) and the refuting side
    of both parts (``refute``: the adjusted p-values, the floor cells' first, then the b cells',
    the claim's p_refute and the raw p-values)."""
    floor_cells = compare_cells(rise_all.assign(b=floor), rise_cell)
    pvalues = np.concatenate([floor_cells["p_less"], versus_cells["p_less"]]).astype(float)
    return floor_cells, refute(pvalues)


def floor_line(rise_all, rise_cell, versus_cells) -> str:
    """MIN_RISE only refutes (part (i): no rise): the smallest floor from which part (i)
    would refute the claim."""

    def no_rise(floor):
        cells, (refute_p, _, _) = _refuting(rise_all, rise_cell, versus_cells, floor)
        return bool((np.nan_to_num(refute_p[: len(cells)], nan=1.0) < ALPHA).any())

    smallest = first_true(no_rise, 0.0, 1.0)
    where = "no floor up to 1" if smallest is None else f"floors from {smallest:.3g} on"
    return (
        f"a rise below {MIN_RISE:g} is no overfitting, {FIXED}; it decides only the refutation: "
        f"part (i) would refute the claim for {where}"
    )


def time_to_learn(curve: pd.DataFrame, column: str, level: float = HALF) -> float:
    """The first epoch (>= 1) at which ``column`` reaches ``level``; the last epoch + 1 if
    never."""
    curve = curve[curve["epoch"] > 0]
    reached = curve.loc[curve[column] >= level, "epoch"]
    return float(reached.min()) if len(reached) else float(curve["epoch"].max() + 1)


def learned_first_claim(epochs: pd.DataFrame) -> Claim:
    cid = "spectrum_low_degrees_learned_first"
    quote, test, source = wording(cid, HALF=HALF)
    degrees = sorted(int(c.removeprefix("amp_deg")) for c in epochs if c.startswith("amp_deg"))
    if 1 not in degrees or len(degrees) < 2:
        return skipped(cid, quote, source, "no learned amplitudes per degree recorded")
    cell = ["train_size", "degree"]
    claim = paired_claim(
        cid,
        quote,
        test,
        source,
        learning_pairs(epochs, degrees, HALF),
        cell,
        "epochs to learn (degree d - degree 1)",
        ("degree d", "degree 1"),
        units=UNITS,
    )

    def verdict_at(level):
        return cells_verdict(compare_cells(learning_pairs(epochs, degrees, level), cell)).verdict

    others = ", ".join(f"at {x:g}: {verdict_at(x)}" for x in (HALF / 2, (1 + HALF) / 2))
    claim.sensitivity = f"learned at amplitude {HALF:g}, {FIXED}; {others}"
    return claim


def learning_pairs(epochs: pd.DataFrame, degrees: list[int], level: float) -> pd.DataFrame:
    """Unit pairs (column degree) of the epochs the standard network takes to reach ``level``
    on degree d (a) and on degree 1 (b)."""
    runs = epochs[epochs["variant"] == "standard"]
    rows = [
        {**dict(zip(RUN, key)), **{d: time_to_learn(run, f"amp_deg{d}", level) for d in degrees}}
        for key, run in runs.groupby(RUN, sort=True)
    ]
    times = pd.DataFrame(rows, columns=[*RUN, *degrees]).assign(diverged=False)

    def unit_times(degree):
        frame = times.rename(columns={degree: "value"})[[*RUN, "value", "diverged"]]
        return unit_means(frame.set_index(RUN), UNIT)

    first = unit_times(1)
    return pd.concat(
        [paired(unit_times(d), first).assign(degree=d) for d in degrees if d > 1],
        ignore_index=True,
    )
