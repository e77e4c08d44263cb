"""The claims on energies, amplitudes, training times and draws, each fed tables with a known
effect: it holds on the paper's effect, does not hold on the reversed one, does not hold on
noise only, and is not evaluated (with its reason) where its table or column is missing.
Tables: tests/calibration/more_claims_tables.py."""

from __future__ import annotations

import numpy as np
import pytest
from more_claims_tables import (
    HASHED,
    REAL_METHODS,
    REGULARIZED,
    paper_levels,
    real_selected,
    spectrum_tables,
    synthetic_selected,
    with_changes,
)

from whcore.pipeline.claims import FAILS, HOLDS, SKIPPED, real_claims, synthetic_claims
from whcore.pipeline.claims.spectrum import spectrum_comparisons

CASES = ("holds", "does not hold", "noise only")


def verdict_of(claims, cid):
    return next(c for c in claims if c.id == cid)


def expect(case: str, verdict: str) -> None:
    if case == "noise only":
        assert verdict != HOLDS
    else:
        assert verdict == case


# --- the spectrum experiment ----------------------------------------------------------------------


def flat_levels() -> dict:
    """Every method alike at every train size and through training: no effect anywhere."""
    same = {
        **{f"amp{d}": 0.5 for d in range(1, 6)},
        **{f"energy{d}": 0.0 for d in range(1, 6)},
        **{f"growth{d}": 0.0 for d in range(1, 6)},
    }
    return {v: dict(same) for v in paper_levels()}


def _each(variants, **columns):
    return {v: columns for v in variants}


# Per claim: the changes to the paper's levels that reverse what it states.
REVERSED = {
    # HashWH piles more erroneous energy on degrees 2-3 than the standard network (whose
    # energy there grows to e^(3 + 3) by the end)
    "spectrum_hashwh_energy_allocation": _each(HASHED, energy2=9.0, energy3=9.0),
    # the standard network has the high-degree energy, the regularized ones none
    "spectrum_regularized_energy_by_degree": {
        "standard": {"amp4": 0.9, "amp5": 0.9},
        **_each(REGULARIZED, amp4=0.0, amp5=0.0),
    },
    "spectrum_regularized_high_energy": {
        "standard": {"amp4": 0.9, "amp5": 0.9},
        **_each(REGULARIZED, amp4=0.0, amp5=0.0),
    },
    # the standard network's low-degree energy falls over the second half
    "spectrum_standard_low_energy_keeps_rising": {"standard": {"growth2": -3.0, "growth3": -3.0}},
    # the largest b learns the high degrees worst
    "spectrum_larger_b_learns_high_degrees": {
        "hashwh_b5": {"amp4": 0.9, "amp5": 0.9},
        "hashwh_b8": {"amp4": 0.5, "amp5": 0.5},
    },
    # the standard network's high-degree energy falls with more data
    "spectrum_standard_energy_shifts_with_data": {
        "standard": {f"energy{d}": {100: -5.0, 200: -8.0} for d in (4, 5)}
    },
    # every method's amplitudes worse with more data
    "spectrum_amplitudes_improve_with_data": _each(
        paper_levels(), **{f"amp{d}": {100: 0.9, 200: 0.6} for d in range(1, 6)}
    ),
}


def spectrum_case(case: str, cid: str, seed: int = 0):
    levels = {
        "holds": paper_levels(),
        "noise only": flat_levels(),
        "does not hold": with_changes(paper_levels(), **REVERSED.get(cid, {})),
    }[case]
    return spectrum_tables(np.random.default_rng(seed), levels)


@pytest.mark.parametrize("cid", REVERSED)
@pytest.mark.parametrize("case", CASES)
def test_spectrum_energy_and_amplitude_claims(case, cid):
    claim = verdict_of(spectrum_comparisons(spectrum_case(case, cid)), cid)
    expect(case, claim.verdict)
    assert claim.quote and claim.test


@pytest.mark.parametrize(
    "cid,dropped,why",
    [
        ("spectrum_hashwh_energy_allocation", "energy_deg3", "no column energy_deg3_off"),
        ("spectrum_regularized_energy_by_degree", "energy_deg3", "no column energy_deg3"),
        ("spectrum_regularized_high_energy", "energy_deg5", "no column energy_deg5"),
        ("spectrum_standard_low_energy_keeps_rising", "energy_deg2", "no column energy_deg2"),
        ("spectrum_larger_b_learns_high_degrees", "amp_deg4", "no column amp_err4"),
    ],
)
def test_spectrum_claims_without_their_column_are_not_evaluated(cid, dropped, why):
    tables = spectrum_case("holds", cid)
    tables["spectrum_epochs"] = tables["spectrum_epochs"].drop(columns=dropped)
    claim = verdict_of(spectrum_comparisons(tables), cid)
    assert claim.verdict == SKIPPED and why in claim.details


def test_claims_that_need_two_hash_sizes_or_train_sizes_say_so():
    tables = spectrum_case("holds", "")
    for name in tables:
        frame = tables[name]
        tables[name] = frame[
            (frame["variant"] != "hashwh_b5")
            & (frame["variant"] != "hashwh_b7")
            & (frame["train_size"] == 200)
        ]
    claims = spectrum_comparisons(tables)
    assert (
        "fewer than two HashWH"
        in verdict_of(claims, "spectrum_larger_b_learns_high_degrees").details
    )
    assert (
        "fewer than two train sizes"
        in verdict_of(claims, "spectrum_amplitudes_improve_with_data").details
    )


def test_the_figure3_caption_is_judged_at_the_figures_train_size():
    """Figure 3 shows train size 200: a reversal at size 100 only leaves its caption's claim
    standing and fails the appendix's claim over every size."""
    levels = with_changes(
        paper_levels(),
        standard={"amp4": {100: 0.9, 200: 0.0}},
        **_each(REGULARIZED, amp4={100: 0.0, 200: 0.9}),
    )
    claims = spectrum_comparisons(spectrum_tables(np.random.default_rng(1), levels))
    assert verdict_of(claims, "spectrum_regularized_energy_by_degree").verdict == HOLDS
    assert verdict_of(claims, "spectrum_regularized_high_energy").verdict == FAILS


def test_the_figure3_captions_scope_is_its_train_size():
    claims = spectrum_comparisons(spectrum_case("holds", ""))
    scope = verdict_of(claims, "spectrum_regularized_energy_by_degree").scope
    assert scope.startswith("train sizes 200 and 6 g* draws")
    assert "methods judged" not in scope


def test_off_target_energy_is_not_the_targets_own():
    """HashWH learning the degree-2 and 3 target frequencies fully (more energy there than the
    standard network, which learns them poorly) while adding no erroneous energy: it allocates
    less to the frequencies not in the data, though its whole-degree energy is higher."""
    levels = with_changes(
        paper_levels(),
        standard={"amp2": 0.2, "amp3": 0.2, "energy2": -4.0, "energy3": -4.0},
        **_each(REGULARIZED, amp2=1.0, amp3=1.0),
    )
    claims = spectrum_comparisons(spectrum_tables(np.random.default_rng(2), levels))
    assert verdict_of(claims, "spectrum_hashwh_energy_allocation").verdict == HOLDS
    assert verdict_of(claims, "spectrum_regularized_energy_by_degree").verdict == FAILS


# --- the synthetic experiment ---------------------------------------------------------------------

B_R2 = {"standard": 0.5, "ens": 0.5, "hashwh_b7": 0.6, "hashwh_b10": 0.7, "hashwh_b13": 0.8}
B_TIME = {"standard": 1.0, "ens": 2.0, "hashwh_b7": 0.0, "hashwh_b10": 0.5, "hashwh_b13": 1.0}
FLAT = dict.fromkeys(B_R2, 0.5)


@pytest.mark.parametrize("case", CASES)
def test_b_trades_time_for_generalization(case):
    # a larger b trains faster, clearly enough to refute over the union of both parts' tests
    faster = {**B_TIME, "hashwh_b10": -1.0, "hashwh_b13": -3.0}
    r2, time = {
        "holds": (B_R2, B_TIME),
        "does not hold": (B_R2, faster),
        "noise only": (FLAT, dict.fromkeys(B_TIME, 1.0)),
    }[case]
    claims = synthetic_claims(synthetic_selected(np.random.default_rng(3), r2, time))
    expect(case, verdict_of(claims, "synthetic_b_trades_time_for_generalization").verdict)


@pytest.mark.parametrize("case", CASES)
def test_hashwh_better_in_less_time_than_ens(case):
    r2, time = {
        "holds": (B_R2, B_TIME),
        "does not hold": (B_R2, {**B_TIME, "ens": -1.0}),  # EN-S trains fastest
        "noise only": (FLAT, dict.fromkeys(B_TIME, 1.0)),
    }[case]
    claims = synthetic_claims(synthetic_selected(np.random.default_rng(3), r2, time))
    claim = verdict_of(claims, "synthetic_hashwh_better_in_less_time_than_ens")
    expect(case, claim.verdict)
    assert "g* draw 0 only" in claim.scope


def test_b_trade_off_times_the_data_seeds_of_the_timed_draw():
    claims = synthetic_claims(synthetic_selected(np.random.default_rng(3), B_R2, B_TIME))
    claim = verdict_of(claims, "synthetic_b_trades_time_for_generalization")
    assert claim.units.startswith("times: 3 independent units (data seeds of the timed g* draw")
    assert "test R^2: 3 independent units (g* draws" in claim.units
    assert claim.scope.startswith("n = 25, c = 1, 2, 3") and "g* draw 0 only" in claim.scope


def test_b_trade_off_needs_models_timed_one_at_a_time():
    tables = synthetic_selected(np.random.default_rng(3), B_R2, B_TIME, timed=False)
    claim = verdict_of(synthetic_claims(tables), "synthetic_b_trades_time_for_generalization")
    assert claim.verdict == SKIPPED and "timed one at a time" in claim.details
    tables["synthetic_selected"] = tables["synthetic_selected"].drop(columns="train_time")
    claim = verdict_of(synthetic_claims(tables), "synthetic_b_trades_time_for_generalization")
    assert claim.verdict == SKIPPED


def _lost_in_draw(draw: int) -> dict:
    """HashWH 0.3 above its rivals, except in one g* draw where it is 0.3 below."""
    up = {(c, d): 0.8 if d != draw else 0.2 for c in (1, 2, 3) for d in range(3)}
    return {
        "standard": 0.5,
        "ens": 0.5,
        **dict.fromkeys(["hashwh_b7", "hashwh_b10", "hashwh_b13"], up),
    }


@pytest.mark.parametrize("rival", ["standard", "ens"])
@pytest.mark.parametrize("case", CASES)
def test_hashwh_beats_its_rivals_in_each_draw(case, rival):
    r2 = {
        "holds": {**FLAT, **dict.fromkeys(["hashwh_b7", "hashwh_b10", "hashwh_b13"], 0.8)},
        "does not hold": _lost_in_draw(1),
        "noise only": FLAT,
    }[case]
    claims = synthetic_claims(synthetic_selected(np.random.default_rng(4), r2, B_TIME))
    expect(case, verdict_of(claims, f"synthetic_hashwh_beats_{rival}_each_draw").verdict)


def test_a_draw_that_loses_is_seen_per_draw_not_pooled():
    claims = synthetic_claims(
        synthetic_selected(np.random.default_rng(4), _lost_in_draw(1), B_TIME)
    )
    assert verdict_of(claims, "synthetic_hashwh_beats_standard").verdict != FAILS
    assert verdict_of(claims, "synthetic_hashwh_beats_standard_each_draw").verdict == FAILS


def test_one_data_seed_per_draw_cannot_be_checked_per_draw():
    tables = synthetic_selected(np.random.default_rng(5), B_R2, B_TIME, draws=6, data_seeds=1)
    claim = verdict_of(synthetic_claims(tables), "synthetic_hashwh_beats_standard_each_draw")
    assert claim.verdict == SKIPPED and "one data seed per g* draw" in claim.details


# --- the real data --------------------------------------------------------------------------------

REAL_R2 = {**dict.fromkeys(REAL_METHODS, 0.5), "hashwh": 0.7, "lasso": 0.3}
REAL_TIME = {**dict.fromkeys(REAL_METHODS, 1.0), "lasso": -1.0}


@pytest.mark.parametrize("case", CASES)
def test_lasso_fastest_poor_generalization(case):
    r2, time = {
        "holds": (REAL_R2, REAL_TIME),
        "does not hold": (REAL_R2, {**REAL_TIME, "rf": -2.0}),  # a faster forest
        "noise only": (dict.fromkeys(REAL_METHODS, 0.5), dict.fromkeys(REAL_METHODS, 1.0)),
    }[case]
    claims = real_claims(real_selected(np.random.default_rng(6), r2, time))
    expect(case, verdict_of(claims, "real_lasso_fastest_poor_generalization").verdict)


def test_lasso_generalizing_as_well_as_hashwh_fails_the_second_part():
    r2 = {**REAL_R2, "lasso": 0.9}
    claim = verdict_of(
        real_claims(real_selected(np.random.default_rng(7), r2, REAL_TIME)),
        "real_lasso_fastest_poor_generalization",
    )
    assert claim.verdict == FAILS and "fastest: holds" in claim.details


def test_lasso_claim_without_times_or_lasso_is_not_evaluated():
    tables = real_selected(np.random.default_rng(8), REAL_R2, REAL_TIME)
    frame = tables["real_selected"]
    untimed = frame.drop(columns=["train_time", "timed_alone"])
    for changed in (untimed, frame[frame["variant"] != "lasso"]):
        claim = verdict_of(
            real_claims({"real_selected": changed}), "real_lasso_fastest_poor_generalization"
        )
        assert claim.verdict == SKIPPED and "Lasso" in claim.details
