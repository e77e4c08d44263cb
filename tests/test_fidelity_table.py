"""docs/fidelity.md's verdict tables state what the faithful and the decisive runs' crates hold
(docs/faithful/claims.json, docs/decisive/claims.json): each row's verdicts, before and after
the correction over claims, are those of its claims, and every claim has its row."""

from __future__ import annotations

import json
import re

import pytest
from conftest import REPO

from whcore.pipeline.claims.macros import write_macros

FIDELITY = REPO / "docs" / "fidelity.md"
# run -> the section of docs/fidelity.md whose table states its docs/<run>/claims.json
SECTIONS = {
    "faithful": "### Its claims (this design: independent units, the calibrated engine)",
    "decisive": "### The decisive run's claims",
}
RUNS = pytest.mark.parametrize("run", sorted(SECTIONS))

# Each row of the table (by the start of its first cell) -> the claims it states, in the order
# its cells list their verdicts.
ROWS = {
    "spectrum: HashWH learns the degree-4 / degree-5": [
        "spectrum_learns_degree4",
        "spectrum_learns_degree5",
    ],
    "spectrum: every b has a lower whole-spectrum SAE": ["spectrum_lower_full_sae"],
    "spectrum: FullWH learns the support": ["spectrum_fullwh_learns_support"],
    "spectrum: HashWH's SAE improves with every step of b": ["spectrum_sae_improves_with_b"],
    "spectrum: regularized methods learn the high degrees": [
        "spectrum_regularized_better_any_size"
    ],
    "spectrum: the standard network's whole-spectrum SAE above": [
        "spectrum_standard_full_above_support"
    ],
    "spectrum: the standard network's high-degree energy": [
        "spectrum_standard_high_degree_energy_zero"
    ],
    "spectrum: HashWH (b = 8) best among tractable methods": ["spectrum_hashwh_best_tractable"],
    "spectrum: the standard network comparable to the regularized": [
        "spectrum_standard_comparable_on_support"
    ],
    "spectrum: low degrees learned first": ["spectrum_low_degrees_learned_first"],
    "spectrum: the standard network overfits degrees 2-3": [
        "spectrum_standard_overfits_low_degrees"
    ],
    "ablation: amplitude order beats degree order": [
        "ablation_amplitude_beats_degree_entacmaea",
        "ablation_amplitude_beats_degree_sgemm",
    ],
    "Entacmaea: degrees 3 and 4 comparable to degree 1": [
        "entacmaea_high_degree_energy",
        "entacmaea_high_degree_non_negligible",
    ],
    "hashing lemma": [
        "hashing_collision_count",
        "hashing_collisions_linear_in_buckets",
        "hashing_collision_bound",
    ],
    "synthetic: every HashWH b beats the standard network": ["synthetic_hashwh_beats_standard"],
    "synthetic: larger b better": ["synthetic_larger_b_better"],
    "Entacmaea: HashWH beats the standard network / Lasso": [
        "real_hashwh_beats_standard",
        "real_hashwh_beats_lasso",
    ],
    "Entacmaea: HashWH beats RF / XGBoost": ["real_hashwh_beats_rf", "real_hashwh_beats_xgboost"],
    "Entacmaea: HashWH's gain largest at the smallest train size": ["real_gain_largest_low_data"],
    "spectrum: energy moves to the high degrees": [
        "spectrum_hashwh_energy_allocation",
        "spectrum_regularized_energy_by_degree",
        "spectrum_regularized_high_energy",
    ],
    "spectrum: the standard network's low-degree energy keeps rising": [
        "spectrum_standard_low_energy_keeps_rising"
    ],
    "spectrum: larger b learns the high degrees": ["spectrum_larger_b_learns_high_degrees"],
    "spectrum: amplitudes closer to 1 with more data": ["spectrum_amplitudes_improve_with_data"],
    "spectrum: more data shifts the standard network's energy": [
        "spectrum_standard_energy_shifts_with_data"
    ],
    "synthetic: larger b trains longer and generalizes better": [
        "synthetic_b_trades_time_for_generalization"
    ],
    "Entacmaea: Lasso fastest but poor": ["real_lasso_fastest_poor_generalization"],
    "synthetic and real claims on EN-S": [
        "synthetic_hashwh_beats_ens",
        "synthetic_ens_no_improvement",
        "synthetic_hashwh_faster_than_ens",
        "real_hashwh_beats_ens",
        "real_hashwh_faster_than_ens",
        "synthetic_hashwh_beats_ens_each_draw",
        "synthetic_hashwh_better_in_less_time_than_ens",
        "synthetic_ens_degrades_with_n",
    ],
    "synthetic: per g* draw, every HashWH b beats the standard network": [
        "synthetic_hashwh_beats_standard_each_draw"
    ],
}


def _table(run: str) -> list[list[str]]:
    """The rows (cells) of the verdict table under the run's section."""
    text, section = FIDELITY.read_text(), SECTIONS[run]
    assert section in text, f"{FIDELITY}: no section {section!r}"
    lines = text.split(section, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| claim |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _verdicts(cell: str, n: int) -> list[str]:
    """A cell's verdicts for ``n`` claims: one for all, or one each (" / " or ", " between)."""
    parts = [p.strip() for p in re.split(r" / |, ", cell)]
    return parts * n if len(parts) == 1 else parts


def _claims(run: str) -> dict[str, dict]:
    path = REPO / "docs" / run / "claims.json"
    return {claim["id"]: claim for claim in json.loads(path.read_text())}


@RUNS
def test_every_claim_of_the_crate_has_one_row(run):
    stated = [cid for ids in ROWS.values() for cid in ids]
    assert sorted(stated) == sorted(_claims(run))
    rows = _table(run)
    assert len(rows) == len(ROWS)
    for label in ROWS:
        assert sum(row[0].startswith(label) for row in rows) == 1, label


@RUNS
def test_the_table_states_the_crates_verdicts(run):
    claims = _claims(run)
    for row in _table(run):
        label = next(label for label in ROWS if row[0].startswith(label))
        ids = ROWS[label]
        verdict, after = row[1], row[2]
        measured = [claims[cid]["verdict"] for cid in ids]
        corrected = [claims[cid]["across"] for cid in ids]
        assert _verdicts(verdict, len(ids)) == measured, (label, verdict, measured)
        if after in ("same", ""):  # "same": as before the correction; empty: not evaluated
            assert corrected == measured, (label, corrected)
        else:
            assert _verdicts(after, len(ids)) == corrected, (label, after, corrected)


@RUNS
def test_the_tally_above_the_table_counts_the_crates_verdicts(run):
    """The tally is the report's headline: verdicts after the correction over claims, the
    identities and the tautology apart."""
    counted = [c for c in _claims(run).values() if not c.get("nature")]
    counts: dict[str, int] = {}
    for claim in counted:
        counts[claim["across"]] = counts.get(claim["across"], 0) + 1
    tally = (
        f"Verdicts after the correction over claims, of the {len(counted)} claims about the "
        f"paper's experiments: {counts.get('holds', 0)} hold, {counts.get('inconclusive', 0)} "
        f"inconclusive, {counts.get('does not hold', 0)} do not hold, "
        f"{counts.get('not evaluated', 0)} not evaluated"
    )
    section = " ".join(FIDELITY.read_text().split(SECTIONS[run], 1)[1].split())
    assert tally in section, tally


@RUNS
def test_the_claims_macros_are_written_from_the_crates_claims(run, tmp_path):
    """docs/<run>/claims.tex is `whcore macros docs/<run>/claims.json` (its README says how to
    remake it)."""
    written = write_macros(REPO / "docs" / run / "claims.json", tmp_path / "claims.tex")
    assert (REPO / "docs" / run / "claims.tex").read_text() == written.read_text()
