"""The report of a run of only one's own data (whcore.pipeline.analyses.own_data): the best
method per cell and the paired differences to it with their confidence intervals, against
scipy's paired t-test on unit values computed by a slow loop; no paper claim in it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from whcore.pipeline.analyses.own_data import paired_differences, unit_values, write_report

SIZES, DATA_SEEDS, SEEDS = (100, 400), 5, (0, 1)


def selected_table(seed=0) -> pd.DataFrame:
    """real_selected-like rows: HashWH (two hash sizes: validation picks one per run) better
    than the standard network by 0.1 at train size 100, lasso (one fit per unit, seed -1)
    worst; one standard run diverged."""
    rng = np.random.default_rng(seed)
    rows = []
    for size, dseed in [(s, d) for s in SIZES for d in range(DATA_SEEDS)]:
        base = rng.normal(0.5, 0.05)
        for seed_ in SEEDS:
            for b, shift in ((4, 0.0), (6, -0.3)):
                noise = rng.normal(0, 0.02)
                rows.append(
                    (
                        "hashwh",
                        b,
                        seed_,
                        size,
                        dseed,
                        base + 0.1 * (size == 100) + shift + noise,
                        base + shift + noise,
                        False,
                    )
                )
            noise = rng.normal(0, 0.02)
            diverged = size == 400 and dseed == 0 and seed_ == 1
            rows.append(("standard", None, seed_, size, dseed, base + noise, base, diverged))
        rows.append(("lasso", None, -1, size, dseed, base - 0.2, base - 0.2, False))
    frame = pd.DataFrame(
        rows,
        columns=["method", "b", "seed", "train_size", "data_seed", "test_r2", "val_r2", "diverged"],
    )
    frame.loc[frame["diverged"], ["test_r2", "val_r2"]] = np.nan
    return frame.assign(dataset="mine", variant=frame["method"])


def slow_unit_value(table, method, size, dseed):
    values = []
    for seed in sorted(set(table["seed"])):
        runs = table[
            (table["method"] == method)
            & (table["train_size"] == size)
            & (table["data_seed"] == dseed)
            & (table["seed"] == seed)
            & ~table["diverged"]
        ]
        if len(runs):
            values.append(runs.loc[runs["val_r2"].idxmax(), "test_r2"])
    return np.mean(values) if values else np.nan


def test_differences_match_scipy_paired_t_on_slowly_computed_units():
    table = selected_table()
    units = unit_values(table)
    diffs = paired_differences(units).set_index(["train_size", "other"])
    assert set(diffs.reset_index()["best"]) == {"hashwh"}
    for size in SIZES:
        for other in ("standard", "lasso"):
            a = [slow_unit_value(table, "hashwh", size, d) for d in range(DATA_SEEDS)]
            b = [slow_unit_value(table, other, size, d) for d in range(DATA_SEEDS)]
            both = [(x, y) for x, y in zip(a, b) if np.isfinite(x) and np.isfinite(y)]
            x, y = map(np.array, zip(*both))
            test = stats.ttest_rel(x, y)
            interval = test.confidence_interval(0.95)
            row = diffs.loc[(size, other)]
            assert row["units"] == len(both)
            assert row["difference"] == pytest.approx(np.mean(x - y), abs=1e-12)
            assert row["low"] == pytest.approx(interval.low, abs=1e-10)
            assert row["high"] == pytest.approx(interval.high, abs=1e-10)
            assert row["p_value"] == pytest.approx(test.pvalue, rel=1e-9)
    gain = diffs.loc[(100, "standard")]
    assert gain["low"] > 0.05 and gain["high"] < 0.15  # the planted 0.1


def test_the_report_names_the_best_method_and_no_paper_claim(tmp_path):
    md, js = tmp_path / "claims.md", tmp_path / "claims.json"
    write_report({"real_selected": selected_table()}, md, js)
    text = md.read_text()
    assert (
        "not evaluated" not in text
        and "nearly all" not in text
        and "paper's claims are not" in text
    )
    best = [line for line in text.splitlines() if line.startswith("| mine |")]
    assert len(best) == len(SIZES) and all("HashWH" in line for line in best), best
    assert "95% CI" in text and "data seed" in text
    record = json.loads(js.read_text())
    assert record["report"] == "own data" and len(record["differences"]) == 2 * len(SIZES)


@pytest.mark.parametrize(
    "datasets, others, own",
    [
        ("{mine: %s, file: a.csv, format: proteingym}}", False, True),
        ("{gb1: %s}, mine: %s, file: a.csv, format: proteingym}}", False, False),
        ("{mine: %s, file: a.csv, format: proteingym}}", True, False),
    ],
)
def test_only_runs_of_ones_own_data_get_the_report(datasets, others, own):
    """(The claims job's spec of such a run: tests/data/test_own_data.py.)"""
    from test_config import changed, validate
    from test_own_data import OWN

    from whcore.pipeline.contract import own_data_only

    config = changed("real.datasets", datasets.replace("%s", OWN))
    config["real"]["runtime_dataset"] = "mine"
    if not others:
        for experiment in ("spectrum", "synthetic", "ablation", "entacmaea_energy"):
            del config[experiment]
    validate(config)
    assert own_data_only(config) is own
