"""Baseline grids: the validation split picks hyperparameters, on the networks' exact rows."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from whcore.data.loading import load_job_data
from whcore.data.splits import unit_seed, unit_split
from whcore.pipeline.analyses import baselines
from whcore.pipeline.cli import main
from whcore.pipeline.jobs.baselines import BaselinesSpec, baselines_job
from whcore.pipeline.jobs.spec import DataSplit

SIZES = {"train": 60, "val": 60, "test": 60}


def _table(path, seed=0, rows=200, n=6):
    """Validation rows follow y = 2 x0 (like training), test rows y = -2 x0: the validation-best
    Lasso (small alpha) is the test-worst, and an over-regularized constant wins on test."""
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, (rows, n))
    y = 2.0 * x[:, 0] + rng.normal(0, 0.1, rows)
    test = unit_split(
        rows,
        SIZES["train"],
        SIZES["val"],
        SIZES["test"],
        unit_seed(SIZES["train"], seed, Path(path).stem),
    ).test
    y[test] = -2.0 * x[test, 0] + rng.normal(0, 0.1, len(test))
    frame = pd.DataFrame(x, columns=[f"b{i}" for i in range(n)]).assign(y=y)
    frame.to_parquet(path)
    return path


def _records(path, family, train_size, val_size, test_size, data_seed, standardize, grid):
    """A baselines job's records, through the job's own loading and fitting (baselines_job)."""
    split = {"source": "table", "path": str(path), "train_size": train_size, "val_size": val_size}
    split.update(test_size=test_size, data_seed=data_seed, standardize=standardize)
    spec = BaselinesSpec(
        dataset=Path(path).stem,
        family=family,
        grid=grid,
        data=DataSplit.from_dict(split),
        outputs={"records": str(Path(path).with_suffix(".records.parquet"))},
    )
    return baselines_job(spec, threads=1, log=lambda m: None)


def test_validation_not_test_picks_the_hyperparameters(tmp_path):
    path = _table(tmp_path / "tiny.parquet")
    records = _records(path, "lasso", 60, 60, 60, 0, False, {"alpha": [1e-3, 10.0]})
    best = baselines.select_best(records)
    assert len(best) == 1 and best["alpha"].iloc[0] == 1e-3
    assert best["val_r2"].iloc[0] > 0.9
    assert best["test_r2"].iloc[0] < records["test_r2"].max()  # test would have picked 10.0
    assert records.loc[records["test_r2"].idxmax(), "alpha"] == 10.0


def test_rows_and_records_match_the_network_jobs(tmp_path):
    path = _table(tmp_path / "gb1.parquet", seed=3)
    grid = {"n_estimators": [5, 10], "max_depth": [2]}
    records = _records(path, "rf", 60, 60, "rest", 3, True, grid)
    expected = {
        "dataset",
        "method",
        "train_size",
        "data_seed",
        "n_estimators",
        "max_depth",
        "train_r2",
        "val_r2",
        "test_r2",
        "train_mse",
        "val_mse",
        "test_mse",
        "fit_time",
        "model_seed",
        "status",
    }
    assert expected <= set(records.columns) and len(records) == 2
    assert set(records["dataset"]) == {"gb1"} and set(records["status"]) == {"ok"}
    # The networks' loader sees the same rows: the Lasso fitted on its train split predicts the
    # same validation MSE as the baseline job reports.
    data, _, _ = load_job_data(
        DataSplit.from_dict(
            {
                "source": "table",
                "path": str(path),
                "train_size": 60,
                "val_size": 60,
                "test_size": "rest",
                "data_seed": 3,
                "standardize": True,
            }
        )
    )
    lasso = baselines.make_model("lasso", {"alpha": 1e-3}, seed=0).fit(data.x_train, data.y_train)
    mine = _records(path, "lasso", 60, 60, "rest", 3, True, {"alpha": [1e-3]})
    val_mse = np.mean((lasso.predict(data.x_val) - data.y_val) ** 2)
    assert mine["val_mse"].iloc[0] == pytest.approx(val_mse, rel=1e-9)


def test_xgboost_grid(tmp_path):
    path = _table(tmp_path / "t.parquet")
    records = _records(
        path, "xgboost", 60, 60, 60, 0, False, {"n_estimators": [5], "max_depth": [2, 3]}
    )
    assert records["max_depth"].tolist() == [2, 3] and records["val_r2"].notna().all()


def test_bad_grids():
    assert len(baselines.grid_points("rf", {"n_estimators": [1, 2], "max_depth": [3, 4]})) == 4
    with pytest.raises(ValueError, match="exactly the keys"):
        baselines.grid_points("rf", {"alpha": [1]})
    with pytest.raises(ValueError, match="non-empty list"):
        baselines.grid_points("lasso", {"alpha": []})
    with pytest.raises(ValueError, match="unknown baseline family"):
        baselines.grid_points("svm", {"alpha": [1]})


def test_cli(tmp_path, capsys):
    path = _table(tmp_path / "t.parquet")
    out = tmp_path / "runs" / "lasso.parquet"

    def spec(grid):
        return json.dumps(
            {
                "dataset": "toy",
                "family": "lasso",
                "grid": grid,
                "data": {
                    "path": str(path),
                    "train_size": 60,
                    "val_size": 60,
                    "test_size": "rest",
                    "data_seed": 0,
                    "standardize": False,
                },
                "outputs": {"records": str(out)},
            }
        )

    assert main(["baselines", "--spec", spec({"alpha": [0.01, 0.1]})]) == 0
    assert len(pd.read_parquet(out)) == 2
    assert main(["baselines", "--spec", "{alpha: 1"]) == 2
    assert "--spec: not valid JSON" in capsys.readouterr().err
    assert (
        main(["baselines", "--spec", spec({"alpha": [0.01]}).replace("t.parquet", "x.parquet")])
        == 2
    )


def test_ridge_is_the_closed_form_penalized_least_squares():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2, (40, 6)).astype(float)
    y = x @ rng.normal(size=6) + rng.normal(0, 0.1, 40)
    model = baselines.make_model("ridge", {"alpha": 2.0}, seed=0).fit(x, y)
    # unpenalized intercept: solve on centered data, (X'X + alpha I) w = X'y
    xc, yc = x - x.mean(0), y - y.mean()
    w = np.linalg.solve(xc.T @ xc + 2.0 * np.eye(6), xc.T @ yc)
    np.testing.assert_allclose(model.predict(x), xc @ w + y.mean(), atol=1e-10)
