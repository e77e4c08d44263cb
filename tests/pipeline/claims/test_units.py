"""Units of replication are independent by construction: in every shipped configuration no
two units (a dataset or g* draw, a train size, a data seed) share inputs, a split or a
training seed, and a unit's networks and baselines see the same rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from whcore.data.loading import load_job_data
from whcore.data.splits import training_seed, unit_seed, unit_split
from whcore.data.synthetic import degree_ladder
from whcore.pipeline.contract import load_contract
from whcore.pipeline.jobs.spec import DataSplit

REPO = Path(__file__).resolve().parents[3]
SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")


def _units_of(contract):
    """Per training job: (unit identity, unit seed, training seeds)."""
    targets = {
        job.spec.outputs["target"]: job.spec.build()
        for job in contract.jobs.values()
        if job.kind == "target"
    }
    for job in contract.jobs.values():
        if job.kind != "train":
            continue
        data = job.spec.data
        target = targets.get(data.path)
        source = target.digest() if target is not None else Path(data.path).stem
        identity = (job.labels["experiment"], data.path, data.train_size, data.data_seed)
        yield (
            identity,
            unit_seed(data.train_size, data.data_seed, source),
            job.spec.training.seeds,
        )


@pytest.mark.parametrize("name", ["config.yaml", "faithful.yaml", "quick.yaml", "workstation.yaml"])
def test_no_two_units_share_a_seed(name):
    contract = load_contract(str(REPO / "config" / name), SCHEMA)
    units, seeds = {}, {}
    for identity, unit, training_seeds in _units_of(contract):
        assert units.setdefault(unit, identity) == identity, f"{identity} shares {units[unit]}"
        for seed in training_seeds:
            mine = (identity, seed)
            derived = training_seed(unit, seed)
            assert seeds.setdefault(derived, mine) == mine, f"{mine} shares {seeds[derived]}"
    assert len(units) > 1 and len(seeds) >= len(units)
    # Draws of g* differ in content, so two draws with the same data seed are two units.
    draws = {identity[1] for identity in units.values() if identity[0] == "spectrum"}
    assert len(draws) == contract.config["spectrum"]["draws"]


def test_units_with_the_same_data_seed_see_different_inputs_and_splits(tmp_path):
    """Two g* draws at data seed 0 (the old design shared x and the split between them)."""
    splits = []
    for draw in (0, 1):
        path = tmp_path / f"draw{draw}.json"
        degree_ladder(10, 5, draw).to_json(path)
        data = {
            "source": "synthetic",
            "path": str(path),
            "train_size": 100,
            "val_size": 200,
            "test_size": 0,
            "data_seed": 0,
            "standardize": False,
        }
        loaded, _, unit = load_job_data(DataSplit.from_dict(data))
        splits.append((loaded.x_train, unit))
    (x0, unit0), (x1, unit1) = splits
    assert unit0 != unit1 and not np.array_equal(x0, x1)
    # One table: train sizes and data seeds give different splits; the same ones, the same.
    a, b = (
        unit_split(500, 100, 100, 100, unit_seed(100, 0, "gb1")),
        unit_split(500, 100, 100, 100, unit_seed(100, 1, "gb1")),
    )
    assert not np.array_equal(np.sort(a.train), np.sort(b.train))
    again = unit_split(500, 100, 100, 100, unit_seed(100, 0, "gb1"))
    assert np.array_equal(a.train, again.train)
