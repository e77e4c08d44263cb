"""The real-data and ablation claims over units: verdicts per cell, the forests' corrected
resampled t-test."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from whcore.pipeline.claims import FAILS, HOLDS, UNSURE, ablation_claims, real_claims
from whcore.pipeline.claims.cells import compare_cells, corrected_resampled


def pairs_table(diffs_by_cell):
    rows = []
    for (dataset, size), diffs in diffs_by_cell.items():
        for unit, diff in enumerate(diffs):  # one subsample each
            for variant, value in (("standard", 0.5), ("ens", 0.5), ("hashwh", 0.5 + diff)):
                rows.append(
                    {
                        "dataset": dataset,
                        "train_size": size,
                        "data_seed": unit,
                        "seed": 0,
                        "variant": variant,
                        "method": variant,
                        "test_r2": value,
                        "val_r2": value,
                        "diverged": False,
                    }
                )
    return {"real_selected": pd.DataFrame(rows)}


@pytest.mark.parametrize(
    "cells,verdict",
    [
        ({("a", 10): [0.1, 0.12, 0.11], ("b", 10): [0.2, 0.21, 0.19]}, HOLDS),
        ({("a", 10): [0.1, 0.12, 0.11], ("b", 10): [-0.2, -0.21, -0.19]}, FAILS),
        ({("a", 10): [0.1, -0.1, 0.05], ("b", 10): [0.2, 0.21, 0.19]}, UNSURE),
        ({("a", 10): [0.3]}, UNSURE),  # one unit: no uncertainty estimate, no verdict
    ],
)
def test_real_claim_verdicts(cells, verdict):
    claim = real_claims(pairs_table(cells))[0]
    assert claim.id == "real_hashwh_beats_standard" and claim.verdict == verdict


def _ablation(amplitude_curve, forests=5):
    """Five forests (units), each with its own small offset; steps 0 (nothing removed) to 2."""
    rows = []
    for seed, offset in enumerate([0.0, 0.01, -0.01, 0.02, 0.005][:forests]):
        for step, kept in enumerate([100, 50, 10]):
            for order, value in (
                ("degree", [0.9, 0.7, 0.3][step]),
                ("amplitude", amplitude_curve[step] + offset * (step > 0)),
            ):
                rows.append(
                    {
                        "seed": seed,
                        "step": step,
                        "removed": 100 - kept,
                        "kept": kept,
                        "order": order,
                        "test_r2": value,
                        "forest_test_r2": 0.9,
                    }
                )
    return pd.DataFrame(rows)


def test_ablation_claim_over_forests():
    (claim,) = ablation_claims({"ablation_x": _ablation([0.9, 0.88, 0.8])})
    assert claim.verdict == HOLDS and "+0.34" in claim.effect and "5 independent" in claim.units
    assert ablation_claims({"ablation_x": _ablation([0.9, 0.5, 0.1])})[0].verdict == FAILS
    # two forests are too few units for a verdict
    assert ablation_claims({"ablation_x": _ablation([0.9, 0.88, 0.8], 2)})[0].verdict == UNSURE
    entacmaea = ablation_claims({"ablation_entacmaea": _ablation([0.9, 0.88, 0.8])})[0]
    assert "can hardly fail" in entacmaea.details


def test_corrected_resampled_t_test_by_hand():
    """Nadeau and Bengio: 5 resamples with differences 0.1 ... 0.5, n_test / n_train = 0.4."""
    pairs = pd.DataFrame({"cell": "x", "a": [0.1, 0.2, 0.3, 0.4, 0.5], "b": 0.0}).assign(
        a_diverged=False, b_diverged=False
    )
    (cell,) = corrected_resampled(compare_cells(pairs, ["cell"]), 0.4).itertuples()
    sd = np.sqrt(sum((d - 0.3) ** 2 for d in (0.1, 0.2, 0.3, 0.4, 0.5)) / 4)  # 0.158
    t = 0.3 / (sd * np.sqrt(1 / 5 + 0.4))  # 2.449, against 4.243 uncorrected
    assert cell.sem == pytest.approx(sd * np.sqrt(0.6))
    assert cell.p_greater == pytest.approx(stats.t.sf(t, 4))  # 0.0352
    assert cell.p_greater == pytest.approx(0.035242, abs=1e-6)


def test_ablation_forests_on_overlapping_splits_use_the_corrected_test():
    table = _ablation([0.9, 0.88, 0.8]).assign(train_size=5000, test_size=2000)
    (claim,) = ablation_claims({"ablation_x": table})
    gaps = 0.34 + np.array([0.0, 0.01, -0.01, 0.02, 0.005])  # per forest: its 2 steps' mean
    t = gaps.mean() / (gaps.std(ddof=1) * np.sqrt(1 / 5 + 0.4))
    assert claim.p_value == pytest.approx(stats.t.sf(t, 4))
    (plain,) = ablation_claims({"ablation_x": _ablation([0.9, 0.88, 0.8])})
    assert "not corrected" in plain.details and plain.p_value < claim.p_value


def test_an_undecided_ablation_says_what_more_forests_can_do():
    # forest 1 loses 0.6 and forest 2 gains 0.1: the mean gap 0.245 with an SD of 0.28
    flat = _ablation([0.9, 0.88, 0.8]).assign(train_size=5000, test_size=2000)
    flat.loc[
        (flat["seed"] == 1) & (flat["order"] == "amplitude") & (flat["step"] > 0), "test_r2"
    ] -= 0.6
    flat.loc[
        (flat["seed"] == 2) & (flat["order"] == "amplitude") & (flat["step"] > 0), "test_r2"
    ] += 0.1
    (claim,) = ablation_claims({"ablation_x": flat})
    assert claim.verdict == UNSURE
    gaps = 0.34 + np.array([0.0, -0.59, 0.09, 0.02, 0.005])
    limit = gaps.mean() / (gaps.std(ddof=1) * np.sqrt(0.4))
    assert f"the t statistic tends to {limit:.2f}, below 1.64: no number of forests" in claim.needed
    (plain,) = ablation_claims({"ablation_x": flat.drop(columns=["train_size", "test_size"])})
    assert "t statistic" not in plain.needed
