"""Section 5.1 (Figure 4): the high-dimensional synthetic experiment's claims.

Units are g* draws within each (n, c): a draw's data seeds share its target, so each method's
value is averaged over its data seeds and training seeds within the draw. HashWH is compared
hash size by hash size, as the paper reports it ("We did not tune b for HashWH as we reported each
individually")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cells import compare_cells, paired
from .claim import Claim, cells_claim, combine, paired_claim, skipped
from .levels import HOLDS, NEARLY_ALL
from .power import design_part
from .scope import synthetic_cells
from .sensitivity import FIXED, first_true, nearly_all_line, share_line
from .sheet import wording
from .spectrum_units import hashwh_variants_by_b
from .speed import SPEED_ID, speed_claim, speed_wording
from .synthetic_units import TIMED_UNIT, TIMED_UNITS, UNIT, UNITS, timed_scope, variant_units
from .verdicts import holm, not_better

NO_GAIN_MARGIN = 0.05  # "no significant improvement": EN-S gains less than this test R^2


def _b_label(selected, variant) -> int:
    return int(selected.loc[selected["variant"] == variant, "b"].iloc[0])


def synthetic_claims(tables, settings=None) -> list[Claim]:
    selected = tables["synthetic_selected"]
    variants = set(selected["variant"])
    hashed = hashwh_variants_by_b(selected)
    claims = [_beats(selected, hashed, rival) for rival in ("standard", "ens")]
    claims += [beats_each_draw(selected, hashed, rival) for rival in ("standard", "ens")]
    claims.append(ens_no_improvement(selected))
    claims.append(ens_degrades_with_n(selected))
    claims.append(larger_b_better(selected, hashed))
    claims.append(b_trades_time_for_generalization(selected, hashed))
    claims.append(better_in_less_time(selected, hashed))
    runs = tables.get("synthetic_runs")
    if runs is None or "ens" not in variants:
        quote, _, source = speed_wording()
        claims.append(skipped(SPEED_ID, quote, source, "no EN-S runs timed one at a time"))
    else:
        claims.append(speed_claim(runs, settings or {}))
    return claims


def _beats(selected, hashed, rival) -> Claim:
    name = {"standard": "the standard network", "ens": "EN-S"}[rival]
    cid = f"synthetic_hashwh_beats_{rival}"
    quote, test, source = wording(cid, name=name)
    if rival not in set(selected["variant"]) or not hashed:
        return skipped(cid, quote, source, f"no {name} or HashWH runs")
    pairs = _hashwh_pairs(selected, hashed, rival)
    return paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        ["n", "c", "hash_size"],
        f"test R^2 (HashWH - {rival})",
        ("HashWH", rival),
        units=UNITS,
    )


def _hashwh_pairs(selected, hashed, rival, unit=UNIT) -> pd.DataFrame:
    """Unit pairs (``unit``) of every HashWH hash size (column hash_size) against ``rival``'s
    test R^2."""
    other = variant_units(selected, rival, unit=unit)
    return pd.concat(
        [
            paired(variant_units(selected, v, unit=unit), other).assign(
                hash_size=_b_label(selected, v)
            )
            for v in hashed
        ],
        ignore_index=True,
    )


def beats_each_draw(selected, hashed, rival) -> Claim:
    name = {"standard": "the standard network", "ens": "EN-S"}[rival]
    cid = f"synthetic_hashwh_beats_{rival}_each_draw"
    quote, test, source = wording(cid, name=name, rival=rival)
    if rival not in set(selected["variant"]) or not hashed:
        return skipped(cid, quote, source, f"no {name} or HashWH runs")
    seeds = selected.groupby(["n", "c", "draw"])["data_seed"].nunique()
    if seeds.max() < 2:
        return skipped(
            cid,
            quote,
            source,
            "one data seed per g* draw: a draw has a single "
            "unit, so this design cannot check the claim draw by draw",
        )
    pairs = _hashwh_pairs(selected, hashed, rival, unit=[*UNIT, "data_seed"])
    return paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        ["n", "c", "draw", "hash_size"],
        f"test R^2 (HashWH - {rival})",
        ("HashWH", rival),
        units=("data seed", "data seeds of one g* draw"),
    )


def ens_no_improvement(selected) -> Claim:
    cid = "synthetic_ens_no_improvement"
    quote, test, source = wording(cid, NEARLY_ALL=NEARLY_ALL, NO_GAIN_MARGIN=NO_GAIN_MARGIN)
    if not {"ens", "standard"} <= set(selected["variant"]):
        return skipped(cid, quote, source, "no EN-S or standard runs")
    pairs = paired(variant_units(selected, "ens"), variant_units(selected, "standard"))
    result = not_better(pairs, ["n", "c"], NO_GAIN_MARGIN, NEARLY_ALL)
    cells = compare_cells(pairs, ["n", "c"])
    what = "test R^2 (EN-S - standard)"
    claim = cells_claim(cid, quote, test, source, result, cells, what, UNITS)
    claim.sensitivity = no_gain_sensitivity(pairs)
    part = design_part(pairs, ["n", "c"], "below", NEARLY_ALL, margin=NO_GAIN_MARGIN)
    claim.design = {"unit": UNITS[0], "parts": [part]}
    return claim


def no_gain_sensitivity(pairs) -> str:
    """Where "no significant improvement" turns: the smallest margin it holds for (at
    NEARLY_ALL) and the largest share of the cells it holds for (at NO_GAIN_MARGIN)."""
    smallest = first_true(
        lambda m: not_better(pairs, ["n", "c"], m, NEARLY_ALL).verdict == HOLDS, 0.0, 1.0
    )
    margin = f"from {smallest:.3g} on" if smallest is not None else "for no margin up to 1 (R^2)"
    below = compare_cells(pairs.assign(b=pairs["b"] + NO_GAIN_MARGIN), ["n", "c"])
    return (
        f"at the margin {NO_GAIN_MARGIN:g}, {FIXED}; it would hold for margins {margin}; "
        + share_line(NEARLY_ALL, holm(below["p_less"]))
    )


def ens_degrades_with_n(selected) -> Claim:
    cid = "synthetic_ens_degrades_with_n"
    quote, test, source = wording(cid)
    ns = sorted(set(selected["n"]))
    if not {"ens", "standard"} <= set(selected["variant"]) or len(ns) < 2:
        return skipped(cid, quote, source, "no EN-S or standard runs at two n")
    both = paired(variant_units(selected, "ens"), variant_units(selected, "standard"))
    gain = both.assign(
        value=both["a"] - both["b"], diverged=both["a_diverged"] | both["b_diverged"]
    )
    at_n = {n: gain[gain["n"] == n].set_index(["c", "draw"])[["value", "diverged"]] for n in ns}
    pairs = pd.concat(
        [
            paired(at_n[small], at_n[large]).assign(step=f"n {small} -> {large}")
            for small, large in zip(ns, ns[1:])
        ],
        ignore_index=True,
    )
    return paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        ["c", "step"],
        "EN-S's test R^2 gain over the standard network (smaller n - larger n)",
        ("smaller n", "larger n"),
        units=UNITS,
    )


def larger_b_better(selected, hashed) -> Claim:
    cid = "synthetic_larger_b_better"
    quote, test, source = wording(cid, NEARLY_ALL=NEARLY_ALL)
    if len(hashed) < 2:
        return skipped(cid, quote, source, "fewer than two HashWH hash sizes")
    steps = [
        paired(variant_units(selected, big), variant_units(selected, small)).assign(
            step=f"b {_b_label(selected, small)} -> {_b_label(selected, big)}"
        )
        for small, big in zip(hashed, hashed[1:])
    ]
    pairs = pd.concat(steps, ignore_index=True)
    cell = ["n", "c", "step"]
    claim = paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        cell,
        "test R^2 (larger b - smaller b)",
        ("larger b", "smaller b"),
        NEARLY_ALL,
        units=UNITS,
    )
    claim.sensitivity = nearly_all_line(NEARLY_ALL, compare_cells(pairs, cell))
    return claim


def _steps_of_b(selected, hashed, value: str, unit=UNIT) -> pd.DataFrame:
    """Unit pairs (``unit``) of each HashWH b (a) against the next smaller one (b), column
    ``step``."""
    return pd.concat(
        [
            paired(
                variant_units(selected, big, value, unit),
                variant_units(selected, small, value, unit),
            ).assign(step=f"b {_b_label(selected, small)} -> {_b_label(selected, big)}")
            for small, big in zip(hashed, hashed[1:])
        ],
        ignore_index=True,
    )


def b_trades_time_for_generalization(selected, hashed) -> Claim:
    cid = "synthetic_b_trades_time_for_generalization"
    quote, test, source = wording(cid)
    if len(hashed) < 2:
        return skipped(cid, quote, source, "fewer than two HashWH hash sizes")
    timed = timed_runs(selected)
    if not timed["variant"].isin(hashed).any():
        return skipped(cid, quote, source, "no HashWH runs timed one at a time")
    cell = ["n", "c", "step"]
    longer = paired_claim(
        cid,
        quote,
        test,
        source,
        _steps_of_b(timed, hashed, "log_time", TIMED_UNIT),
        ["n", "c", "draw", "step"],
        "log10 training time (larger b - smaller b)",
        ("larger b", "smaller b"),
        units=TIMED_UNITS,
    )
    better = paired_claim(
        cid,
        quote,
        test,
        source,
        _steps_of_b(selected, hashed, "test_r2"),
        cell,
        "test R^2 (larger b - smaller b)",
        ("larger b", "smaller b"),
        units=UNITS,
    )
    parts = ("larger b trains longer", "larger b generalizes better")
    return time_and_accuracy(longer, better, parts, selected, timed)


def timed_runs(selected) -> pd.DataFrame:
    """The runs timed one model at a time, with ``log_time`` (log10 of the training time)."""
    if "train_time" not in selected:
        return selected.iloc[:0].assign(log_time=np.nan)
    alone = selected.get("timed_alone", pd.Series(False, index=selected.index))
    timed = selected[alone.fillna(False).astype(bool)]
    return timed.assign(log_time=np.log10(timed["train_time"].clip(lower=1e-9)))


def time_and_accuracy(time_part, r2_part, parts, selected, timed) -> Claim:
    """One claim of a time part (units: the timed draw's data seeds) and a test R^2 part
    (units: g* draws), each part's units named and the times' scope stated."""
    claim = combine(time_part, r2_part, parts)
    claim.units = f"times: {time_part.units}; test R^2: {r2_part.units}"
    claim.scope = f"{synthetic_cells(selected)}; {timed_scope(timed['draw'])}"
    return claim


def better_in_less_time(selected, hashed) -> Claim:
    cid = "synthetic_hashwh_better_in_less_time_than_ens"
    quote, test, source = wording(cid)
    timed = timed_runs(selected)
    if not hashed or not timed["variant"].isin(hashed).any() or "ens" not in set(timed["variant"]):
        return skipped(cid, quote, source, "no HashWH and EN-S runs timed one at a time")
    ens = variant_units(timed, "ens", "log_time", TIMED_UNIT)
    slower = pd.concat(
        [
            paired(ens, variant_units(timed, v, "log_time", TIMED_UNIT)).assign(
                hash_size=_b_label(selected, v)
            )
            for v in hashed
        ],
        ignore_index=True,
    )
    faster = paired_claim(
        cid,
        quote,
        test,
        source,
        slower,
        ["n", "c", "draw", "hash_size"],
        "log10 training time (EN-S - HashWH)",
        ("EN-S", "HashWH"),
        units=TIMED_UNITS,
    )
    better = _beats(selected, hashed, "ens")
    return time_and_accuracy(faster, better, ("less time", "better R^2"), selected, timed)
