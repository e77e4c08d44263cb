"""`claims.sheet`: the claims' wording in one sheet keyed by claim id. Every claim the engine
writes takes its words from it and every entry is some claim's; a sentence's placeholders are
exactly the values the code gives; a malformed sheet or an unknown id is refused naming the file
and the fix."""

from __future__ import annotations

import pandas as pd
import pytest
from test_claims import real_selected, spectrum_tables, synthetic_runs, synthetic_selected
from test_real_and_ablation_claims import _ablation

from whcore.pipeline.claims import SKIPPED, evaluate_claims
from whcore.pipeline.claims import sheet as sheet_module
from whcore.pipeline.claims.sheet import entries, entry_of, wording
from whcore.pipeline.experiments import claim_groups


def _every_experiment() -> dict:
    shares = [0, 0.142, 0.762, 0.061, 0.030, 0.005]
    return {
        **spectrum_tables(0.2),
        **synthetic_selected(0.1, 0.02),
        "synthetic_runs": synthetic_runs(40.0),
        **real_selected(0.1),
        "entacmaea_energy": pd.DataFrame({"degree": range(6), "top_fraction": shares}),
        "ablation_entacmaea": _ablation([0.9, 0.88, 0.8]),
        "ablation_sgemm": _ablation([0.9, 0.5, 0.1]),
    }


def test_every_claim_says_what_its_entry_says_and_every_entry_is_a_claim():
    claims = evaluate_claims(_every_experiment(), {"runtime_n": 50, "runtime_c": 5}, claim_groups())
    used = set()
    for claim in claims:
        key, entry = entry_of(claim.id)
        used.add(key)
        assert (claim.quote, claim.source) == (entry["quote"], entry["source"]), claim.id
        if claim.verdict != SKIPPED:  # a skipped claim states no test
            assert claim.test and "{" not in claim.test, claim.id  # every placeholder filled
    assert used == set(entries())


def test_an_id_with_a_placeholder_stands_for_its_claims_only():
    assert entry_of("real_hashwh_beats_xgboost")[0] == "real_hashwh_beats_{rival}"
    assert entry_of("synthetic_hashwh_beats_ens_each_draw")[0] == (
        "synthetic_hashwh_beats_{rival}_each_draw"
    )
    assert entry_of("spectrum_learns_degree5")[0] == "spectrum_learns_degree{degree}"
    with pytest.raises(KeyError, match="sheet.toml: no entry for the claim 'spectrum_new'"):
        entry_of("spectrum_new")


def test_a_sentence_takes_exactly_the_values_it_reads():
    said = wording("real_hashwh_beats_lasso", NEARLY_ALL=0.8, name="lasso")
    assert "higher test R^2 than lasso in at least 80% of the" in said.test
    assert said.source == "Section 5.2, Figure 5a"
    with pytest.raises(TypeError, match=r"reads \['NEARLY_ALL', 'name'\], the code gives"):
        wording("real_hashwh_beats_lasso", name="lasso")
    with pytest.raises(TypeError, match="the code gives \\['PERFECT', 'extra'\\]"):
        wording("spectrum_fullwh_learns_support", PERFECT=0.01, extra=1)


@pytest.mark.parametrize(
    "text, error",
    [
        ('[a]\nsource = "s"\nquote = "q"\n', r"\[a\] must have exactly source, quote, test"),
        ('[a]\nsource = "s"\nquote = "q"\ntest = 1\n', r"\[a\]: source, quote, test must be"),
        ('[a]\nsource = ""\nquote = "q"\ntest = "t"\n', r"\[a\]: source, quote, test must be"),
    ],
)
def test_a_malformed_sheet_is_refused_naming_the_entry(tmp_path, monkeypatch, text, error):
    bad = tmp_path / "sheet.toml"
    bad.write_text(text)
    monkeypatch.setattr(sheet_module, "SHEET", bad)
    entries.cache_clear()
    try:
        with pytest.raises(ValueError, match=f"{bad}: {error}"):
            entries()
    finally:
        entries.cache_clear()
