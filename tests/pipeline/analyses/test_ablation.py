"""The spectrum-pruning ablation (Figure 5c) on small synthetic data."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import figure_spec
from sklearn.ensemble import RandomForestRegressor

from whcore.core.trees import spectrum
from whcore.pipeline.analyses import ablation
from whcore.pipeline.cli import main
from whcore.pipeline.figures.ablation import ablation_figure


def _data(n=8, rows=600, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, (rows, n))
    signs = 1 - 2 * x
    y = 3 * signs[:, 0] + 2 * signs[:, 1] * signs[:, 2] + signs[:, 3:6].prod(1)
    return x, y + rng.normal(0, 0.2, rows)


@pytest.fixture(scope="module")
def forest_spectrum():
    x, y = _data()
    forest = RandomForestRegressor(n_estimators=5, max_depth=5, random_state=0).fit(x, y)
    return spectrum(forest), x, y


def test_deletion_orders(forest_spectrum):
    spec, _, _ = forest_spectrum
    by_degree = ablation.deletion_order(spec, "degree", seed=1)
    by_amplitude = ablation.deletion_order(spec, "amplitude", seed=1)
    assert sorted(by_degree) == list(range(len(spec)))
    assert np.all(np.diff(spec.degrees[by_degree]) <= 0)  # highest degree first
    assert np.all(np.diff(np.abs(spec.coefficients[by_amplitude])) >= 0)  # smallest first
    assert np.array_equal(by_degree, ablation.deletion_order(spec, "degree", seed=1))
    # Ties are broken at random: another seed reorders frequencies of equal degree.
    assert not np.array_equal(by_degree, ablation.deletion_order(spec, "degree", seed=2))
    with pytest.raises(ValueError, match="unknown deletion order"):
        ablation.deletion_order(spec, "random", 1)


def test_prune_scores_match_explicit_pruning(forest_spectrum):
    spec, x, y = forest_spectrum
    steps = 4
    table = ablation.prune_scores(spec, x, y, steps, seed=7)
    assert len(table) == 2 * (steps + 1)
    for order in ablation.ORDERS:
        sequence = ablation.deletion_order(spec, order, seed=7)
        for step in range(steps + 1):
            removed = step * len(spec) // (steps + 1)
            pred = spec.take(sequence[removed:]).predict(x)
            r2 = 1 - ((y - pred) ** 2).sum() / ((y - y.mean()) ** 2).sum()
            row = table[(table["order"] == order) & (table["step"] == step)].iloc[0]
            assert row["kept"] == len(spec) - removed
            assert row["test_r2"] == pytest.approx(r2, abs=1e-10)
    degree_rows = table[table["order"] == "degree"]
    assert degree_rows["max_degree_kept"].is_monotonic_decreasing


def test_cli_table_and_figure(tmp_path):
    x, y = _data(rows=500)
    data = tmp_path / "entacmaea.parquet"
    pd.DataFrame(x, columns=[f"b{i}" for i in range(x.shape[1])]).assign(y=y).to_parquet(data)
    table_path = tmp_path / "tables" / "ablation_entacmaea.parquet"
    spec = {
        "dataset": "entacmaea",
        "data": str(data),
        "train_size": 300,
        "test_size": 150,
        "max_depth": 5,
        "n_trees": 6,
        "steps": 3,
        "seed": 1,
        "outputs": {"table": str(table_path)},
    }
    assert main(["ablation", "--spec", json.dumps(spec), "--threads", "1"]) == 0
    table = pd.read_parquet(table_path)
    assert set(table["dataset"]) == {"entacmaea"} and len(table) == 8
    full = table[table["step"] == 0]["test_r2"]
    assert np.allclose(full, table["forest_test_r2"].iloc[0]) and full.iloc[0] > 0.8
    out = tmp_path / "figures" / "fig5c_ablation"
    assert (
        main(["figure", "--spec", figure_spec("fig5c_ablation", out), "--tables", str(table_path)])
        == 0
    )
    assert out.with_suffix(".pdf").stat().st_size > 0 and out.with_suffix(".png").exists()
    fig = ablation_figure({"ablation_entacmaea": table}, {})  # the figure registry's entry
    assert len(fig.axes) == 1
    assert (
        main(["figure", "--spec", figure_spec("fig5c_ablation", out), "--tables", str(data)]) == 2
    )
