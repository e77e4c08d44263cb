"""The sensitivity lines of the claims a fixed constant decides: the helpers against hand
computations, and every such claim carrying its line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_claims import (
    _spectrum,
    real_selected,
    spectrum_tables,
    synthetic_runs,
    synthetic_selected,
)
from test_real_and_ablation_claims import _ablation

from whcore.pipeline.claims import (
    ablation_claims,
    evaluate_claims,
    real_claims,
    spectrum_claims,
    synthetic_claims,
)
from whcore.pipeline.claims.sensitivity import factor_line, first_true, margin_line, share_line
from whcore.pipeline.experiments import claim_groups

T4 = 2.131847  # the one-sided 95% quantile of t with 4 degrees of freedom


def _cells(means, sems, units=5):
    return pd.DataFrame({"mean": means, "sem": sems, "units": units})


def test_margin_line_is_the_largest_abs_mean_plus_its_bound():
    line = margin_line(0.1, _cells([0.02, -0.05], [0.01, 0.01]))
    assert f"from ±{0.05 + T4 * 0.01:.3g} on" in line  # 0.0713


def test_factor_line_is_the_smallest_lower_bound_of_a_cell():
    # cells of (log10 ratio - log10 10): means 0.5 and 0.2, so log10 ratios 1.5 and 1.2
    line = factor_line(10.0, _cells([0.5, 0.2], [0.1, 0.1]))
    assert f"up to {10 ** (1.2 - T4 * 0.1):.3g}x" in line  # 9.7x


def test_share_line_counts_the_cells_that_hold_after_holm():
    line = share_line(0.8, [0.01, 0.2, 0.04, 0.5, np.nan])
    assert "2 of 5 hold after Holm" in line and "shares up to 40%" in line


def test_first_true_bisects_to_the_turning_point():
    assert first_true(lambda x: x >= 0.3, 0.0, 1.0) == pytest.approx(0.3, abs=1e-4)
    assert first_true(lambda x: True, 0.0, 1.0) == 0.0
    assert first_true(lambda x: False, 0.0, 1.0) is None


def _line(claims, cid) -> str:
    return next(c.sensitivity for c in claims if c.id == cid)


def test_spectrum_constants_have_their_lines():
    claims = spectrum_claims(_spectrum("holds", 0.01))
    assert "at the margin ±0.1, fixed in advance" in _line(
        claims, "spectrum_standard_comparable_on_support"
    )
    assert "a rise below 0.01 is no overfitting, fixed in advance" in _line(
        claims, "spectrum_standard_overfits_low_degrees"
    )


def test_half_has_its_line():
    from calibration_tables import spectrum_levels
    from calibration_tables import spectrum_tables as calibration_spectrum
    from test_calibration import amplitude_curves

    curves = amplitude_curves(15.0, jitter=2.0)
    tables = calibration_spectrum(np.random.default_rng(5), spectrum_levels(), 120, curves)
    line = _line(spectrum_claims(tables), "spectrum_low_degrees_learned_first")
    assert line.startswith("learned at amplitude 0.5, fixed in advance; at 0.25: ")
    assert ", at 0.75: " in line


def test_final_epochs_has_its_line_in_the_report():
    line = _line(
        evaluate_claims(spectrum_tables(0.2), None, claim_groups()), "spectrum_lower_full_sae"
    )
    assert line == (
        "judged on the mean of the last 10 epochs, fixed in advance; on the last 5: holds, on "
        "the last 20: holds"
    )


def test_synthetic_constants_have_their_lines():
    tables = {**synthetic_selected(0.1, units=8), "synthetic_runs": synthetic_runs(40.0)}
    claims = synthetic_claims(tables, {"runtime_n": 50, "runtime_c": 5})
    no_gain = _line(claims, "synthetic_ens_no_improvement")
    assert no_gain.startswith("at the margin 0.05, fixed in advance; it would hold for margins")
    assert "at 80% of the cells, fixed in advance" in no_gain
    assert "at 80% of the cells" in _line(claims, "synthetic_larger_b_better")
    assert _line(claims, "synthetic_hashwh_faster_than_ens").startswith(
        "at 10x, fixed in advance; every cell would hold for factors up to "
    )


def test_real_and_ablation_constants_have_their_lines():
    line = _line(real_claims(real_selected(0.1)), "real_hashwh_beats_standard")
    assert line.startswith("at 80% of the cells, fixed in advance; 4 of 4 hold after Holm")
    (ablation,) = ablation_claims({"ablation_x": _ablation([0.9, 0.88, 0.8])})
    assert ablation.sensitivity == (
        "a gap below 0.001 is a tie, fixed in advance; no step refutes it at any tie, 0 included"
    )
    (worse,) = ablation_claims({"ablation_x": _ablation([0.9, 0.5, 0.1])})
    # Each of the 2 steps: gap -0.2 plus the forests' offsets (mean 0.005); Holm over 2 steps
    # refutes while the gap + tie is below -t(0.975, 4) x its standard error.
    sem = np.std([0.0, 0.01, -0.01, 0.02, 0.005], ddof=1) / np.sqrt(5)
    assert f"no step refutes it for ties from {0.195 - 2.776445 * sem:.3g} on" in worse.sensitivity
