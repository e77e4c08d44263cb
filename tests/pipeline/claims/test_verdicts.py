"""The verdict rules of claims.verdicts and claims.report that decide between the two sides: a claim
made of parts is refuted by Holm over the union of its parts' refuting tests; the report leads
with the verdict after the correction over claims, the uncorrected one and the reading at a
false discovery rate beside it; a claim whose cells have too few units states no p-value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import false_discovery_control

from whcore.pipeline.claims import FAILS, HOLDS, UNSURE, Claim
from whcore.pipeline.claims.cells import compare_cells
from whcore.pipeline.claims.claim import combine
from whcore.pipeline.claims.levels import ALPHA
from whcore.pipeline.claims.report import correct_across, mark_shared_tests, write_claims
from whcore.pipeline.claims.verdicts import cells_verdict, refute


def part(verdict, tests, p_value=0.01):
    adjusted, p_refute, raw = refute(tests)
    return Claim("c", "q", "t", "s", verdict, p_value=p_value, p_refute=p_refute, refute_tests=raw)


def test_a_claim_of_parts_corrects_over_the_union_of_their_refuting_tests():
    """Each part alone refuted at 0.03 < ALPHA; over the union Holm needs 2 x 0.03 < ALPHA: no."""
    first, second = part(FAILS, [0.03]), part(FAILS, [0.04])
    claim = combine(first, second, ("one", "two"))
    assert claim.verdict == UNSURE
    assert claim.p_refute == pytest.approx(0.06)  # Holm: 2 x 0.03, then max(0.06, 0.04)
    assert sorted(claim.refute_tests) == [0.03, 0.04]
    strong = combine(part(FAILS, [0.001, 0.5]), part(HOLDS, [0.9]), ("one", "two"))
    assert strong.verdict == FAILS and strong.p_refute == pytest.approx(0.003)
    assert strong.details.startswith("refuted by the part: one;")


def test_a_claim_of_parts_holds_only_where_both_hold():
    both = combine(part(HOLDS, [0.9], 0.01), part(HOLDS, [0.8], 0.03), ("one", "two"))
    assert both.verdict == HOLDS and both.p_value == 0.03
    one = combine(part(HOLDS, [0.9], 0.01), part(UNSURE, [0.8], 0.3), ("one", "two"))
    assert one.verdict == UNSURE


def test_a_part_refuted_without_a_test_refutes_the_whole():
    exact = Claim("c", "q", "t", "s", FAILS)  # an exact count, no p-value
    assert combine(part(HOLDS, [0.9]), exact, ("one", "two")).verdict == FAILS


def test_a_claim_of_parts_at_the_refuting_null_refutes_at_most_at_alpha():
    """Two parts of three cells each, every cell exactly 0, 5 units: the old rule (the smaller
    of the parts' own Holm p-values) refuted in about 2 x ALPHA of the runs."""
    rng = np.random.default_rng(0)
    refuted = 0
    runs = 1000
    for _ in range(runs):
        parts = []
        for _ in range(2):
            pairs = pd.DataFrame(
                {
                    "cell": np.repeat(range(3), 5),
                    "a": rng.normal(0, 1, 15),
                    "b": 0.0,
                    "a_diverged": False,
                    "b_diverged": False,
                }
            )
            result = cells_verdict(compare_cells(pairs, ["cell"]))
            parts.append(
                Claim(
                    "c",
                    "q",
                    "t",
                    "s",
                    result.verdict,
                    p_value=result.p_value,
                    p_refute=result.p_refute,
                    refute_tests=result.refute_tests,
                )
            )
        refuted += combine(*parts, ("one", "two")).verdict == FAILS
    rate, se = refuted / runs, np.sqrt(ALPHA * (1 - ALPHA) / runs)
    assert rate <= ALPHA + 2 * se, rate


def test_a_claim_without_enough_units_has_no_p_value():
    pairs = pd.DataFrame(
        {"cell": [0, 0], "a": [1.0, 2.0], "b": 0.0, "a_diverged": False, "b_diverged": False}
    )
    result = cells_verdict(compare_cells(pairs, ["cell"]))
    assert result.verdict == UNSURE and result.p_value is None and result.p_refute is None


def _claims():
    def claim(cid, verdict, p_holds, p_refute, cells=2):
        return Claim(cid, "q", "t", "s", verdict, p_value=p_holds, p_refute=p_refute, cells=cells)

    return [
        claim("strong_no", FAILS, 1.0, 1e-4),
        claim("marginal_no", FAILS, 1.0, 0.03),
        claim("marginal_yes", HOLDS, 0.02, 1.0),
        claim("open", UNSURE, 0.2, 0.3),
        claim("too_few_units", UNSURE, None, None),
    ]


def test_the_fdr_reading_is_benjamini_yekutieli_over_both_sides():
    claims = _claims()
    correct_across(claims)
    raw = [1.0, 1.0, 0.02, 0.2, 1e-4, 0.03, 1.0, 0.3]  # p_value side, then p_refute side
    q = false_discovery_control(raw, method="by")
    expected = [
        FAILS if q[4] < ALPHA else UNSURE,
        FAILS if q[5] < ALPHA else UNSURE,
        HOLDS if q[2] < ALPHA else UNSURE,
        UNSURE,
        UNSURE,
    ]
    assert [c.fdr for c in claims] == expected
    assert [c.across for c in claims] == [FAILS, UNSURE, UNSURE, UNSURE, UNSURE]


def test_the_report_leads_each_claim_with_its_verdict_after_the_correction(tmp_path):
    claims = _claims()
    claims[2].post_hoc = "a factor of 2 chosen after the data"
    correct_across(claims)
    write_claims(claims, tmp_path / "c.md", tmp_path / "c.json")
    report = (tmp_path / "c.md").read_text()
    assert (
        "## marginal_no: **inconclusive** (before the correction over claims: does not hold)"
        in (report)
    )
    assert "## strong_no: **does not hold**\n" in report
    row = next(line for line in report.splitlines() if line.startswith("| marginal_no |"))
    assert row.startswith("| marginal_no | inconclusive | does not hold |")
    row = next(line for line in report.splitlines() if line.startswith("| too_few_units |"))
    assert "no test: fewer than 3 finished units" in row and "| 1 / -" not in row
    headline = next(line for line in report.splitlines() if line.startswith("Verdicts of"))
    assert "marginal_yes (inconclusive; a factor of 2 chosen after the data)" in headline


def test_claims_decided_by_the_same_test_are_counted_once(tmp_path):
    """Two claims refuted by one cell of the same runs and measure (the same raw p-value), and a
    third refuted by another test: three 'does not hold', two distinct deciding tests."""

    def refuted(cid, tests):
        _, p_refute, raw = refute(tests)
        return Claim(cid, "q", "t", "s", FAILS, p_value=1.0, p_refute=p_refute, refute_tests=raw)

    claims = [
        refuted("larger_b_better", [1e-4, 0.5]),
        refuted("b_trades_time", [0.9, 1e-4, 0.7]),
        refuted("other", [2e-4]),
    ]
    correct_across(claims)
    mark_shared_tests(claims)
    assert [c.same_test_as for c in claims] == ["", "larger_b_better", ""]
    write_claims(claims, tmp_path / "c.md", tmp_path / "c.json")
    report = (tmp_path / "c.md").read_text()
    headline = next(line for line in report.splitlines() if line.startswith("Verdicts of"))
    assert "does not hold: 3 (2 distinct deciding tests)" in headline
    assert "b_trades_time (as larger_b_better)" in headline
    assert "- decided by the same test as: larger_b_better" in report
