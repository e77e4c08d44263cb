"""ProteinGym's supervised protocol (whcore.pipeline.analyses.proteingym): fold columns respected
exactly, folds computed as ProteinGym defines them (against a slow reference), Spearman against scipy, fold means and standard
errors against a slow loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from whcore.data.folds import keep_singles
from whcore.pipeline.analyses.proteingym import (
    compute_folds,
    fold_indices,
    fold_scores,
    spearman,
    summarize_folds,
)


def test_the_held_out_fold_is_the_file_column_exactly():
    folds = np.random.default_rng(1).integers(0, 5, 300)
    for k in range(5):
        train, val, test = fold_indices(folds, k, val_fraction=0.2, seed=k)
        np.testing.assert_array_equal(test, np.flatnonzero(folds == k))
        assert not set(train) & set(val) and not (set(train) | set(val)) & set(test)
        assert set(train) | set(val) | set(test) == set(range(300))
        assert abs(len(val) - 0.2 * (folds != k).sum()) <= 1
    with pytest.raises(ValueError, match="fold 7 has no rows"):
        fold_indices(folds, 7)


def _proteingym_reference(positions, scheme, k=5):
    """ProteinGym's modulo and contiguous folds, written slowly from its definitions: the
    sorted distinct positions numbered i; modulo i % k; contiguous k runs, the first n % k of
    them one longer."""
    distinct = sorted(set(positions))
    if scheme == "fold_modulo_5":
        fold_of = {p: i % k for i, p in enumerate(distinct)}
    else:
        size, longer = divmod(len(distinct), k)
        runs = []
        for fold in range(k):
            runs += [fold] * (size + (1 if fold < longer else 0))
        fold_of = dict(zip(distinct, runs))
    return [fold_of[p] for p in positions]


@pytest.mark.parametrize("scheme", ["fold_modulo_5", "fold_contiguous_5"])
def test_computed_folds_are_proteingyms(scheme):
    rng = np.random.default_rng(4)
    # gaps between positions and several mutants per position, as in a real assay
    positions = rng.choice(np.arange(3, 240, 3), size=400)
    mutants = pd.Series([f"A{p}G" for p in positions])
    expected = _proteingym_reference(list(positions), scheme)
    np.testing.assert_array_equal(compute_folds(mutants, scheme), expected)


def test_computed_folds_follow_the_documented_rules():
    mutants = pd.Series([f"A{p}G" for p in range(1, 101)])
    modulo = compute_folds(mutants, "fold_modulo_5")
    np.testing.assert_array_equal(modulo, (np.arange(1, 101) - 1) % 5)
    contiguous = compute_folds(mutants, "fold_contiguous_5")
    np.testing.assert_array_equal(contiguous, np.repeat(np.arange(5), 20))
    random = compute_folds(mutants, "fold_random_5", seed=3)
    assert set(random) <= set(range(5)) and len(set(np.bincount(random))) > 1  # iid, not dealt
    np.testing.assert_array_equal(random, compute_folds(mutants, "fold_random_5", seed=3))
    with pytest.raises(ValueError, match="needs exactly one. Fix: use fold_random_5"):
        compute_folds(pd.Series(["A1G:C2D"]), "fold_modulo_5")
    with pytest.raises(ValueError, match="3 mutated positions for 5 folds"):
        compute_folds(pd.Series(["A1G", "A2G", "A3G"]), "fold_modulo_5")


def test_keep_singles_keeps_single_substitutions_only():
    mutants = pd.Series(["A1G", "A1G:C2D", "", "WT", None, " C2D "])
    np.testing.assert_array_equal(keep_singles(mutants), [1, 0, 0, 0, 0, 1])


@pytest.mark.parametrize("ties", [False, True])
def test_spearman_matches_scipy(ties):
    rng = np.random.default_rng(0)
    a = rng.normal(size=200)
    b = a + rng.normal(size=200)
    if ties:
        a, b = np.round(a), np.round(b, 1)
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)


def test_fold_means_and_standard_errors_match_a_slow_loop():
    rng = np.random.default_rng(2)
    rows = []
    for method in ("hashwh", "standard"):
        for fold in range(5):
            y = rng.normal(size=50)
            scores = fold_scores(y, y + rng.normal(scale=0.5, size=50))
            rows.append(
                {
                    "dataset": "mine",
                    "scheme": "fold_random_5",
                    "method": method,
                    "fold": fold,
                    **scores,
                }
            )
    frame = pd.DataFrame(rows)
    table = summarize_folds(frame).set_index("method")
    for method, block in frame.groupby("method"):
        values = block["spearman"].to_list()
        mean = sum(values) / len(values)
        se = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 / len(values) ** 0.5
        assert table.loc[method, "spearman_mean"] == pytest.approx(mean)
        assert table.loc[method, "spearman_se"] == pytest.approx(se)
        assert table.loc[method, "folds"] == 5


def fold_frame(spearman: dict[str, list[float]]) -> pd.DataFrame:
    """Scores of fold_random_5 on dataset mine: per method its folds' Spearman (NaN: failed)."""
    return pd.DataFrame(
        [
            {
                "dataset": "mine",
                "scheme": "fold_random_5",
                "method": method,
                "fold": fold,
                "spearman": value,
                "mse": 1.0,
                "r2": 0.5,
            }
            for method, values in spearman.items()
            for fold, value in enumerate(values)
        ]
    )


def test_a_fold_without_a_finite_spearman_is_counted_as_failed_never_dropped():
    nan = float("nan")
    table = summarize_folds(fold_frame({"hashwh": [0.9, nan, nan, nan, nan]}))
    row = table.iloc[0]
    assert (row["folds"], row["failed_folds"]) == (1, 4)
    assert row["spearman_mean"] == 0.9 and np.isnan(row["spearman_se"])
    assert row["mse_mean"] == 1.0  # over the same finished fold


def test_a_method_with_fewer_finished_folds_is_not_ranked_best():
    from whcore.pipeline.analyses.own_data import proteingym_lines

    nan = float("nan")
    frame = fold_frame({"hashwh": [0.9, nan, nan, nan, nan], "standard": [0.5, 0.4] * 2 + [0.5]})
    lines = proteingym_lines(summarize_folds(frame), frame)
    (best,) = [line for line in lines if "(top)" in line]
    assert best.startswith("| mine | random | Standard |") and "| 5 | (top) |" in best, best
    (unranked,) = [line for line in lines if "not ranked" in line]
    assert unranked.startswith("- mine, random: HashWH is not ranked: its mean is over 1 ")
    assert "(4 failed), fewer than the 5 of the top method" in unranked
    (cell,) = [line for line in lines if line.startswith("| HashWH |")]
    assert "(1 of 5 folds finished)" in cell
    (other,) = [line for line in lines if line.startswith("| mine | random | HashWH |")]
    assert "-0.4000 (fewer than 2 paired folds: no interval)" in other, other


def test_every_method_is_shown_with_its_paired_difference_to_the_top():
    from whcore.pipeline.analyses.own_data import proteingym_lines

    top, other = [0.8, 0.7, 0.9, 0.6, 0.8], [0.5, 0.6, 0.4, 0.5, 0.7]
    frame = fold_frame({"hashwh": top, "lasso": other})
    lines = proteingym_lines(summarize_folds(frame), frame)
    (row,) = [line for line in lines if line.startswith("| mine | random | Lasso |")]
    diff = np.subtract(top, other)
    test = stats.ttest_1samp(diff, 0.0)
    low, high = test.confidence_interval(0.95)
    assert f"{diff.mean():+.4f} [{low:+.4f}, {high:+.4f}], 5 paired | {test.pvalue:.3g}" in row
    assert "| 1 | 0.5000 | 5 |" in row  # every method's MSE and R^2, not the top's alone


def test_fold_scores_against_direct_formulas():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    p = np.array([1.5, 1.5, 3.5, 3.0])
    scores = fold_scores(y, p)
    assert scores["mse"] == pytest.approx(np.mean((y - p) ** 2))
    assert scores["r2"] == pytest.approx(1 - ((y - p) ** 2).sum() / ((y - y.mean()) ** 2).sum())
    assert scores["spearman"] == pytest.approx(stats.spearmanr(y, p).statistic)
