"""Section 3 and Appendix A (Figures 1-3, A1-A4): the spectrum experiment's claims.

Units are g* draws (a draw's data seeds share its target, so they are averaged within it, as
are training seeds); cells are train sizes (and hash sizes, degrees or methods where the paper's
sentence covers them). SAE and energy ratios are right-skewed and compared on the log scale
(a difference of 0.69 is a factor of 2). The paper's figures show every epoch of a
training without early stopping, so each run is judged at the end of training: the mean over
its last ``FINAL_EPOCHS`` epochs (not at its best-validation epoch). This module gathers
them: the claims on amplitudes and SAE live in ``claims.sae``, those on energy by degree in
``claims.energy``, the curve-shaped ones (overfitting, low degrees first) in
``claims.dynamics``."""

from __future__ import annotations

from .claim import Claim, skipped
from .dynamics import learned_first_claim, overfitting_claim
from .energy import energy_claims
from .levels import SKIPPED
from .power import verdicts_only
from .sae import (
    fullwh_learns_support,
    hashwh_best_tractable,
    learns_degree,
    lower_full_sae,
    regularized_better_any_size,
    sae_improves_with_b,
    standard_comparable_on_support,
    standard_full_above_support,
    standard_high_degree_energy,
)
from .scope import members_scope, spectrum_cells
from .sensitivity import FIXED
from .spectrum_units import (
    FINAL_EPOCHS,
    HIGH,
    WINDOWS,
    final_values,
    hashwh_variants_by_b,
    unit_values,
)

SOURCE = "Section 3"
# What a test on the log scale estimates, said in every test sentence that uses it.
GEOMETRIC = (
    " On the log scale the estimand is the geometric mean over units (a difference of logs is "
    "the log of a ratio of geometric means), not the arithmetic mean."
)


def spectrum_claims(tables, settings=None) -> list[Claim]:
    """Every claim of the spectrum experiment: the comparisons at the end of training, then
    the curve-shaped ones (``claims.dynamics``)."""
    claims = spectrum_comparisons(tables)
    if claims[0].id == "spectrum_claims":  # nothing to compare
        return claims
    selected, epochs = tables["spectrum_selected"], tables["spectrum_epochs"]
    hashed = hashwh_variants_by_b(selected)
    b_of = {v: int(b) for v, b in zip(selected["variant"], selected["b"]) if v in hashed}
    return [*claims, learned_first_claim(epochs), overfitting_claim(epochs, hashed, b_of)]


def spectrum_comparisons(tables, last: int = FINAL_EPOCHS) -> list[Claim]:
    """The spectrum claims that compare runs at the end of training (the mean of their
    ``last`` epochs)."""
    selected = tables["spectrum_selected"]
    hashed = hashwh_variants_by_b(selected)
    variants = set(selected["variant"])
    if not hashed or "standard" not in variants:
        return [skipped("spectrum_claims", "", SOURCE, "no standard or HashWH runs")]
    epochs = tables["spectrum_epochs"]
    final = unit_values(final_values(epochs, last))
    b_of = {v: int(b) for v, b in zip(selected["variant"], selected["b"]) if v in hashed}
    names = {v: f"HashWH (b = {b_of[v]})" for v in hashed} | {"fullwh": "FullWH", "ens": "EN-S"}
    regularized = [v for v in ("fullwh", "ens") if v in variants] + hashed
    claims = [
        *(learns_degree(final, hashed, b_of, d) for d in HIGH),
        lower_full_sae(final, hashed, b_of),
        fullwh_learns_support(final, variants),
        sae_improves_with_b(final, hashed, b_of),
        regularized_better_any_size(final, regularized, names),
        standard_full_above_support(final, regularized, names),
        standard_high_degree_energy(final),
        hashwh_best_tractable(final, hashed[-1], names, variants),
        standard_comparable_on_support(final, hashed, b_of),
        *energy_claims(epochs, final, hashed, b_of, names, regularized),
    ]
    for claim in claims:
        if " log" in claim.test:
            claim.test += GEOMETRIC
    name_the_judged(claims, final, [names[v] for v in regularized])
    return claims


def window_sensitivity(claims: list[Claim], tables) -> None:
    """FINAL_EPOCHS decides every comparison at the end of training: add to each the verdicts
    it gets on half and on twice as many last epochs. Two more evaluations of the comparisons,
    so the report adds it once (the spectrum group's ``then``, ``experiments.EXPERIMENTS``), not
    every caller of the comparisons."""
    if "spectrum_selected" not in tables:
        return
    windows = WINDOWS
    with verdicts_only():  # only the verdicts are read: no units-needed simulations
        other = {w: {c.id: c.verdict for c in spectrum_comparisons(tables, w)} for w in windows}
    for claim in claims:
        if claim.verdict == SKIPPED or claim.id not in other[windows[0]]:
            continue
        verdicts = ", ".join(f"on the last {w}: {other[w].get(claim.id)}" for w in windows)
        line = f"judged on the mean of the last {FINAL_EPOCHS} epochs, {FIXED}; {verdicts}"
        claim.sensitivity = f"{claim.sensitivity}; {line}" if claim.sensitivity else line


# The claims over "every regularized method (FullWH, EN-S, each HashWH b)": each member is an
# assertion of its own, so a set without one is still checked, and its scope names who was.
OVER_REGULARIZED = (
    "spectrum_regularized_better_any_size",
    "spectrum_standard_full_above_support",
    "spectrum_regularized_energy_by_degree",
    "spectrum_regularized_high_energy",
)


def name_the_judged(claims, final, judged) -> None:
    """Say in the scope of each claim over every regularized method which ones it judged,
    where FullWH or EN-S was not trained."""
    missing = [name for name in ("FullWH", "EN-S") if name not in judged]
    if not missing:
        return
    whole = spectrum_cells(final.reset_index())
    for claim in claims:
        if claim.id in OVER_REGULARIZED and claim.test:
            claim.scope = members_scope(claim.scope or whole, judged, missing)


__all__ = ["final_values", "hashwh_variants_by_b", "spectrum_claims", "spectrum_comparisons"]
