"""The jobs of one cell (its units: g* draws, subsamples) trained as one stacked model
(``run_cell``, ``whcore train --spec`` with a list): each job's records, spectra and outputs
are those of the job alone, up to float rounding."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from whcore.core.io import read_parquet_metadata
from whcore.pipeline.cli import main
from whcore.pipeline.jobs import SpecError
from whcore.pipeline.jobs.train import TrainSpec, read_cell, run_cell, run_job

# What a cell changes by design: the stack's size, and so each member's share of its time.
SHARED = ["epoch_time", "reg_time", "stack_size"]


@pytest.fixture
def targets(tmp_path):
    paths = []
    for draw in range(3):
        path = tmp_path / f"draw{draw}.json"
        spec = {
            "family": "degree_ladder",
            "n": 7,
            "max_degree": 3,
            "seed": draw,
            "outputs": {"target": str(path)},
        }
        assert main(["target", "--spec", json.dumps(spec)]) == 0
        paths.append(path)
    return paths


def unit_spec(target, tmp_path, **changes) -> dict:
    name = target.stem
    spec = {
        "method": "hashwh",
        "grid": [{"lam": 0.01, "b": 4}, {"lam": 0.1, "b": 4}],
        "data": {"source": "synthetic", "path": str(target), "train_size": 40, "data_seed": 1},
        "training": {"seeds": [0, 1], "epochs": 4, "batch_size": 8, "width": 2},
        "spectrum": True,
        "labels": {"experiment": "spectrum", "dataset": name},
        "outputs": {
            "records": str(tmp_path / "runs" / name),
            "spectra": str(tmp_path / "spectra" / name),
        },
    }
    spec.update(changes)
    return spec


def specs_of(targets, tmp_path, **changes) -> list[TrainSpec]:
    return [TrainSpec.from_dict(unit_spec(t, tmp_path, **changes)) for t in targets]


def assert_same(cell: pd.DataFrame, alone: pd.DataFrame) -> None:
    """The same columns in the same order, the same keys, values equal up to rounding."""
    assert list(cell.columns) == list(alone.columns)
    numbers = [c for c in alone.columns if c not in SHARED and alone[c].dtype.kind == "f"]
    others = [c for c in alone.columns if c not in SHARED and c not in numbers]
    pd.testing.assert_frame_equal(cell[others], alone[others])
    np.testing.assert_allclose(cell[numbers], alone[numbers], rtol=1e-5, atol=1e-7)


def test_a_cells_jobs_train_as_each_alone(targets, tmp_path):
    specs = specs_of(targets, tmp_path)
    cell = run_cell(specs, "cpu")
    assert len(cell) == len(specs)
    columns = []
    for spec, results in zip(specs, cell):
        alone = run_job(spec, "cpu")
        assert [r.params for r in results] == [r.params for r in alone] == spec.grid
        for mine, own in zip(results, alone):
            assert_same(mine.records, own.records)
            assert_same(mine.spectra, own.spectra)
            assert (mine.records["stack_size"] == 3 * 2 * 2).all()
            assert (own.records["stack_size"] == 2 * 2).all()
            assert "unit" not in mine.records and "unit" not in own.records
        columns.append([c for c in results[0].records.columns if c.startswith("coef_")])
    # the draws' supports differ, so each job keeps its own metrics, none of another's
    assert len({tuple(c) for c in columns}) == len(columns)


@pytest.mark.parametrize(
    "field,value",
    [
        ("method", "standard"),
        ("grid", [{"lam": 0.01, "b": 4}]),
        ("training", {"seeds": [0, 2], "epochs": 4, "batch_size": 8, "width": 2}),
        ("spectrum", False),
    ],
)
def test_jobs_that_differ_beyond_their_data_are_not_one_cell(targets, tmp_path, field, value):
    first, second = targets[:2]
    specs = [TrainSpec.from_dict(unit_spec(first, tmp_path))]
    other = unit_spec(second, tmp_path, **{field: value})
    if field == "method":
        other["grid"] = [{}]
    if field == "spectrum":
        other["outputs"].pop("spectra")
    specs.append(TrainSpec.from_dict(other))
    with pytest.raises(ValueError, match=f"differ in {field}"):
        run_cell(specs, "cpu")


def test_a_cell_refuses_an_output_twice_and_units_of_other_shapes(targets, tmp_path):
    twice = [TrainSpec.from_dict(unit_spec(targets[0], tmp_path))] * 2
    with pytest.raises(ValueError, match="same output twice"):
        run_cell(twice, "cpu")
    with pytest.raises(ValueError, match="at least one"):
        run_cell([], "cpu")
    data = unit_spec(targets[1], tmp_path)["data"] | {"train_size": 50}
    other = [
        specs_of(targets[:1], tmp_path)[0],
        TrainSpec.from_dict(unit_spec(targets[1], tmp_path, data=data)),
    ]
    with pytest.raises(ValueError, match="same splits of the same sizes"):
        run_cell(other, "cpu")


def test_a_cell_spec_is_read_job_by_job(targets, tmp_path):
    specs = [unit_spec(t, tmp_path) for t in targets]
    assert [s.to_dict() for s in read_cell(json.dumps(specs))] == [
        TrainSpec.from_dict(s).to_dict() for s in specs
    ]
    with pytest.raises(SpecError, match="empty list"):
        read_cell("[]")
    specs[1]["data"]["train_size"] = "forty"
    with pytest.raises(SpecError, match=r"--spec: job 1: field data.train_size"):
        read_cell(json.dumps(specs))
    with pytest.raises(SpecError, match="job 0: field .* not a mapping"):
        read_cell("[3]")


def test_train_cli_writes_each_job_of_a_cell_as_alone(targets, tmp_path, capsys):
    specs = [unit_spec(t, tmp_path) for t in targets]
    assert main(["train", "--spec", json.dumps(specs), "--device", "cpu"]) == 0
    assert "training 3 jobs of one cell" in capsys.readouterr().out
    for spec in specs:
        alone = unit_spec(Path(spec["data"]["path"]), tmp_path / "alone")
        assert main(["train", "--spec", json.dumps(alone), "--device", "cpu"]) == 0
        for role in ("records", "spectra"):
            mine = f"{spec['outputs'][role]}/b4_lam0.1.parquet"
            own = f"{alone['outputs'][role]}/b4_lam0.1.parquet"
            assert_same(pd.read_parquet(mine), pd.read_parquet(own))
            # each file names its own job's spec, as the job alone writes it
            meta = read_parquet_metadata(mine)
            assert meta["spec"] == TrainSpec.from_dict(spec).to_dict()
