"""Every claim fed synthetic tables with a known effect, none, and the opposite."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from whcore.core.rng import derive_seed
from whcore.pipeline.claims import (
    FAILS,
    HOLDS,
    UNSURE,
    entacmaea_claims,
    holm,
    real_claims,
    spectrum_claims,
    synthetic_claims,
)

VARIANTS = {"standard": ("standard", np.nan), "ens": ("ens", np.nan),
            "hashwh_b7": ("hashwh", 7.0), "hashwh_b10": ("hashwh", 10.0)}  # fmt: skip


def noise(shape, key, scale=0.01):
    """Deterministic noise for ``key`` (any tuple: Python's hash() varies between runs)."""
    return np.random.default_rng(derive_seed(*key) if isinstance(key, tuple) else key).normal(
        0.0, scale, shape
    )


def synthetic_selected(effect: float, diverged_hashwh: int = 0, speedup: float = 30.0):
    """HashWH (both b) beats standard and EN-S by ``effect`` in every (n, c); 5 pairs per
    cell; EN-S equals standard; EN-S takes ``speedup`` times HashWH's time."""
    rows = []
    cells = list(itertools.product([25, 50], [1, 2]))
    for (n, c), pair in itertools.product(cells, range(5)):
        base = 0.5 + noise(1, (n, c, pair), 0.05)[0]
        for variant, (method, b) in VARIANTS.items():
            jitter = noise(1, (n, c, pair, variant))[0]
            hashed = method == "hashwh"
            rows.append({
                "n": n, "c": c, "draw": 0, "data_seed": pair, "seed": 0, "variant": variant,
                "method": method, "b": b, "test_r2": base + jitter + (effect if hashed else 0),
                "val_r2": base + jitter + (effect if hashed else 0) + (b == 10) * 1e-3,
                "diverged": False, "train_time": (1.0 if hashed else speedup) * (1 + jitter),
            })  # fmt: skip
    frame = pd.DataFrame(rows)
    if diverged_hashwh:  # both hash sizes of the first pairs of one cell diverge
        lost = (frame["method"] == "hashwh") & (frame["n"] == 25) & (frame["c"] == 1)
        lost &= frame["data_seed"] < diverged_hashwh
        frame.loc[lost, ["test_r2", "val_r2"]] = np.nan
        frame.loc[lost, "diverged"] = True
    return {"synthetic_selected": frame}


def verdicts(claims) -> dict[str, str]:
    return {c.id: c.verdict for c in claims}


@pytest.mark.parametrize(
    "effect,expected", [(0.1, HOLDS), (0.0, UNSURE), (-0.1, FAILS)], ids=["better", "none", "worse"]
)
def test_synthetic_beats_claims(effect, expected):
    result = verdicts(synthetic_claims(synthetic_selected(effect)))
    assert result["synthetic_hashwh_beats_standard"] == expected
    assert result["synthetic_hashwh_beats_ens"] == expected
    assert result["synthetic_ens_close_to_standard"] == HOLDS  # EN-S = standard throughout


def test_a_method_that_diverges_more_often_cannot_win_a_cell():
    result = verdicts(synthetic_claims(synthetic_selected(0.1, diverged_hashwh=2)))
    assert result["synthetic_hashwh_beats_standard"] == FAILS


@pytest.mark.parametrize("speedup,expected", [(30.0, {HOLDS}), (10.0, {UNSURE, FAILS}),
                                              (3.0, {FAILS})])  # fmt: skip
def test_speedup_claim_against_ten_times(speedup, expected):
    claims = synthetic_claims(synthetic_selected(0.0, speedup=speedup))
    assert verdicts(claims)["synthetic_hashwh_10x_faster_than_ens"] in expected


def test_speedup_needs_at_least_the_same_r2():
    claims = synthetic_claims(synthetic_selected(-0.1, speedup=30.0))
    assert verdicts(claims)["synthetic_hashwh_10x_faster_than_ens"] == FAILS


def test_ens_far_from_standard_is_not_close():
    tables = synthetic_selected(0.0)
    frame = tables["synthetic_selected"]
    frame.loc[frame["variant"] == "ens", "test_r2"] -= 0.2
    assert verdicts(synthetic_claims(tables))["synthetic_ens_close_to_standard"] == FAILS


def spectrum_tables(gain: float):
    """HashWH (b = 8) closer to the targets than the standard network by ``gain``; the standard
    network's degree-1 SAE rises by 50% after its minimum."""
    selected, epochs = [], []
    variants = {"standard": ("standard", np.nan), "fullwh": ("fullwh", np.nan),
                "hashwh_b5": ("hashwh", 5.0), "hashwh_b8": ("hashwh", 8.0)}  # fmt: skip
    for size, pair, (variant, (method, b)) in itertools.product(
        [100, 200], range(5), variants.items()
    ):
        key = {"dataset": "draw0", "variant": variant, "train_size": size, "data_seed": pair,
               "seed": 0}  # fmt: skip
        selected.append({**key, "method": method, "b": b, "best_epoch": 2, "diverged": False})
        better = {"hashwh_b8": gain, "hashwh_b5": gain / 2, "fullwh": gain}.get(variant, 0.0)
        jitter = noise(1, (size, pair, variant))[0]
        for epoch, sae1 in enumerate([1.0, 0.4, 0.2, 0.3]):
            epochs.append({
                **key, "method": method, "b": b, "epoch": epoch,
                "amp_deg4": 0.5 + better + jitter, "amp_deg5": 0.3 + better + jitter,
                "sae_full": 0.8 - better + jitter, "sae_support": 0.6 - better + jitter,
                "sae_deg1": sae1 + abs(jitter),
            })  # fmt: skip
    return {"spectrum_selected": pd.DataFrame(selected), "spectrum_epochs": pd.DataFrame(epochs)}


@pytest.mark.parametrize(
    "gain,expected", [(0.2, HOLDS), (0.0, UNSURE), (-0.2, FAILS)], ids=["better", "none", "worse"]
)
def test_spectrum_claims(gain, expected):
    result = verdicts(spectrum_claims(spectrum_tables(gain)))
    for cid in ("spectrum_learns_degree4", "spectrum_learns_degree5", "spectrum_lower_full_sae",
                "spectrum_fullwh_learns_support", "spectrum_sae_improves_with_b"):  # fmt: skip
        assert result[cid] == expected, cid
    assert result["spectrum_standard_overfits_low_degrees"] == HOLDS


def test_an_overshoot_is_not_learning_better():
    tables = spectrum_tables(0.0)
    epochs = tables["spectrum_epochs"]
    epochs.loc[epochs["variant"] == "hashwh_b8", "amp_deg4"] = 1.5 + noise(
        int((epochs["variant"] == "hashwh_b8").sum()), 3
    )  # 0.5 above the target: as far off as the standard network's 0.5 below
    assert verdicts(spectrum_claims(tables))["spectrum_learns_degree4"] == UNSURE


def real_selected(effect: float, pairs: int = 5):
    rows = []
    for dataset, size, dseed in itertools.product(["gb1", "sgemm"], [100, 200], range(pairs)):
        base = 0.4 + noise(1, (dataset, size, dseed), 0.05)[0]
        for seed in range(3):
            for variant in ("standard", "ens", "hashwh"):
                jitter = noise(1, (dataset, size, dseed, seed, variant))[0]
                value = base + jitter + (effect if variant == "hashwh" else 0.0)
                rows.append({"dataset": dataset, "train_size": size, "data_seed": dseed,
                             "seed": seed, "variant": variant, "method": variant,
                             "test_r2": value, "val_r2": value, "diverged": False})  # fmt: skip
        for family in ("lasso", "rf", "xgboost"):
            rows.append({"dataset": dataset, "train_size": size, "data_seed": dseed, "seed": -1,
                         "variant": family, "method": family, "test_r2": base + 0.001 * dseed,
                         "val_r2": base, "diverged": False})  # fmt: skip
    return {"real_selected": pd.DataFrame(rows)}


@pytest.mark.parametrize(
    "effect,expected", [(0.1, HOLDS), (0.0, UNSURE), (-0.1, FAILS)], ids=["better", "none", "worse"]
)
def test_real_claims(effect, expected):
    result = verdicts(real_claims(real_selected(effect)))
    for rival in ("standard", "ens", "lasso", "rf", "xgboost"):
        assert result[f"real_hashwh_beats_{rival}"] == expected, rival


def test_too_few_pairs_give_no_verdict():
    # one subsample: 3 training-seed pairs against the networks, one against each baseline
    result = verdicts(real_claims(real_selected(0.3, pairs=1)))
    assert result["real_hashwh_beats_standard"] == HOLDS
    assert {result[f"real_hashwh_beats_{f}"] for f in ("lasso", "rf", "xgboost")} == {UNSURE}


def test_entacmaea_thresholds():
    def table(shares):
        return {"entacmaea_energy": pd.DataFrame({"degree": range(6), "top_fraction": shares})}

    measured = verdicts(entacmaea_claims(table([0, 0.142, 0.762, 0.061, 0.030, 0.005])))
    assert measured == {"entacmaea_high_degree_energy": FAILS,
                        "entacmaea_high_degree_non_negligible": HOLDS}  # fmt: skip
    even = verdicts(entacmaea_claims(table([0, 0.2, 0.4, 0.2, 0.15, 0.05])))
    assert even["entacmaea_high_degree_energy"] == HOLDS
    tiny = verdicts(entacmaea_claims(table([0, 0.5, 0.48, 0.01, 0.01, 0.0])))
    assert tiny["entacmaea_high_degree_non_negligible"] == FAILS


def test_holm_matches_the_step_down_definition():
    p = [0.01, 0.04, np.nan, 0.03]
    # sorted 0.01, 0.03, 0.04 -> x3, x2, x1 with a running maximum
    assert np.allclose(holm(p), [0.03, 0.06, np.nan, 0.06], equal_nan=True)
    assert np.isnan(holm([np.nan])).all() and holm([]).size == 0
