"""`claims.spectrum_reads`: the values of the per-epoch spectrum table that the claims read. A
slim crate keeps those only (`crate.slim.cut`), so the claims on the cut table must be those on
the whole table, on a table where every value of every epoch differs."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pandas as pd
import pytest
from calibration_tables import spectrum_levels, spectrum_tables

from whcore.pipeline.claims import CLAIM_READS, evaluate_claims
from whcore.pipeline.claims.energy import first_half
from whcore.pipeline.claims.spectrum_reads import TABLE, read_values
from whcore.pipeline.claims.spectrum_units import FINAL_EPOCHS, WINDOWS, final_values
from whcore.pipeline.crate.slim import cut
from whcore.pipeline.experiments import claim_groups

EPOCHS = 60  # the last 20 epochs, the 10 up to the middle and the curves before: all apart
COLUMNS = [
    *(f"sae_deg{d}" for d in range(1, 6)),
    "sae_full",
    "sae_support",
    *(f"energy_deg{d}" for d in range(1, 6)),
    *(f"amp_deg{d}" for d in range(1, 6)),
    "val_mse",
]


def _noisy(rng, variant, runs, epochs):
    """Every column of every run a different value at every epoch (a level times noise)."""
    level = {"standard": 0.6, "fullwh": 0.3}.get(variant, 0.4)
    return {c: level * np.exp(rng.normal(0, 0.3, (runs, epochs))) for c in COLUMNS}


@pytest.fixture(scope="module")
def tables():
    return spectrum_tables(np.random.default_rng(3), spectrum_levels(), EPOCHS, _noisy)


@pytest.fixture(scope="module")
def cut_epochs(tables, tmp_path_factory) -> pd.DataFrame:
    folder = tmp_path_factory.mktemp("cut")
    tables[TABLE].to_parquet(folder / "whole.parquet")
    cut(folder / "whole.parquet", folder / "cut.parquet", read_values)
    return pd.read_parquet(folder / "cut.parquet")


def _claims(tables) -> list[str]:
    return [
        json.dumps(asdict(claim), default=str, sort_keys=True)
        for claim in evaluate_claims(tables, None, claim_groups())
    ]


def test_the_claims_read_their_table_through_the_registry():
    assert CLAIM_READS[TABLE] is read_values


def test_the_claims_on_the_cut_table_are_those_on_the_whole_table(tables, cut_epochs):
    assert _claims({**tables, TABLE: cut_epochs}) == _claims(tables)


def test_what_no_claim_reads_is_cut(tables, cut_epochs):
    # rows no claim reads are gone: epoch 0, and the curves of FullWH and EN-S before the middle
    # window (every trained epoch of the 4 other variants, 30 of 60 of these two)
    runs = tables["spectrum_selected"].groupby("variant").size()
    others = runs[["fullwh", "ens"]].sum()
    assert len(cut_epochs) == EPOCHS * (runs.sum() - others) + 30 * others
    assert cut_epochs["val_mse"].isna().all()  # a column no claim reads is null
    assert cut_epochs["energy_deg4"].isna().mean() > 0.3  # curves keep the columns they read


def _final(epochs, last, half=False):
    epochs = first_half(epochs) if half else epochs
    return final_values(epochs, last).sort_values(["variant", "dataset", "train_size", "seed"])


@pytest.mark.parametrize("last", sorted({*WINDOWS, FINAL_EPOCHS}))
def test_every_window_the_claims_read_is_whole(tables, cut_epochs, last):
    """The values at the end of training at each window, and at the middle: the same numbers
    (the claims above could agree on verdicts with numbers that moved)."""
    whole = tables[TABLE]
    for half in (False, True) if last == FINAL_EPOCHS else (False,):
        got = _final(cut_epochs, last, half).reset_index(drop=True)
        expected = _final(whole, last, half).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, expected, check_dtype=False)


def test_the_curves_the_claims_read_are_whole_and_nothing_else(tables, cut_epochs):
    whole = (
        tables[TABLE].set_index(["variant", "dataset", "train_size", "seed", "epoch"]).sort_index()
    )
    kept = cut_epochs.set_index(whole.index.names).sort_index()
    trained = whole[whole.index.get_level_values("epoch") > 0]
    for variant in ("standard", "hashwh_b5", "hashwh_b8"):
        for column in ("sae_deg2", "sae_deg3"):
            assert kept.loc[variant, column].equals(trained.loc[variant, column]), (variant, column)
    for column in ("amp_deg1", "amp_deg5"):
        assert kept.loc["standard", column].equals(trained.loc["standard", column])
    early = kept[kept.index.get_level_values("epoch") <= EPOCHS // 2 - FINAL_EPOCHS]
    assert set(early.index.get_level_values("variant")) == {
        "standard",
        "hashwh_b5",
        "hashwh_b7",
        "hashwh_b8",
    }  # no other curve is read
    assert early.loc["hashwh_b5", "amp_deg1"].isna().all()
    assert early.loc["standard", "energy_deg2"].isna().all()
    assert 0 not in kept.index.get_level_values("epoch")
