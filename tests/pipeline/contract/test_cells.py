"""A cell's jobs run as one (config key stack_units): which rules the plan gives the workflow,
which jobs each runs, and that the jobs themselves do not change."""

from __future__ import annotations

import dataclasses

import pytest
from test_contract import contract, paper_contract

from whcore.pipeline.contract.base import memory_mb
from whcore.pipeline.contract.cells import MAX_UNITS, Cells
from whcore.pipeline.jobs.train import read_cell
from whcore.pipeline.runtime.layout import Layout, matches, wildcards_of

# The tiny config with a cell of several units in each experiment: 3 spectrum draws, 3
# synthetic draws of each n (draw 0 timed, alone), 2 subsamples of each real dataset.
STACKED = {
    "stack_units": True,
    "spectrum.draws": 3,
    "synthetic.draws": 3,
    "real.data_seeds": 2,
}


def training_jobs(plan) -> dict:
    """The training jobs with records under runs/<experiment>/<dataset>/ (not the protocol's)."""
    return {
        path: job
        for path, job in plan.jobs.items()
        if job.kind == "train" and matches(plan.layout.records, path)
    }


def test_without_stack_units_every_job_runs_alone():
    plan = contract()
    assert plan.cells == []
    datasets = {job.labels["dataset"] for job in training_jobs(plan).values()}
    assert plan.trained_alone() == sorted(datasets)


def test_stack_units_changes_no_job():
    alone, stacked = contract(**{**STACKED, "stack_units": False}), contract(**STACKED)
    assert {p: j.spec_json for p, j in stacked.jobs.items()} == {
        p: j.spec_json for p, j in alone.jobs.items()
    }


def test_every_training_job_runs_in_one_rule():
    """Each job is served by exactly one rule: a cell's (one of its outputs) or, its dataset
    trained alone, the rules of one job each."""
    plan = contract(**STACKED)
    assert sorted(cells.rule for cells in plan.cells) == [
        "train_real_cell",
        "train_spectrum_cell",
        "train_synthetic_cell",
    ]
    alone = set(plan.trained_alone())
    # the timed draw of each n trains one model at a time, alone; no spectrum draw is alone
    assert alone == {"n8_draw0", "n10_draw0"}
    for path, job in training_jobs(plan).items():
        rules = [
            c.rule
            for c in plan.cells
            for p in c.outputs(plan.layout)["records"]
            if matches(p, path)
        ]
        rules += ["train"] if job.labels["dataset"] in alone else []
        assert len(rules) == 1, (path, rules)


@pytest.mark.parametrize("experiment", ["spectrum", "synthetic", "real"])
def test_a_cells_rule_runs_its_units_jobs(experiment):
    plan = contract(**STACKED)
    (cells,) = [c for c in plan.cells if c.experiment == experiment]
    outputs = cells.outputs(plan.layout)
    first = next(p for p in training_jobs(plan) if matches(outputs["records"][0], p))
    wildcards = wildcards_of(outputs["records"][0], first)
    jobs = plan.cell_jobs(cells, wildcards)
    assert [job.spec.outputs["records"] for job in jobs] == [
        pattern.format(**wildcards) for pattern in outputs["records"]
    ]
    assert len(jobs) == {"spectrum": 3, "synthetic": 2, "real": 2}[experiment]
    # the params: the jobs' own specs, which `whcore train` reads back as they are
    specs = read_cell(plan.cell_spec_of(cells)(wildcards))
    assert [spec.to_json() for spec in specs] == [job.spec_json for job in jobs]
    assert plan.cell_inputs_of(cells)(wildcards) == sorted({p for j in jobs for p in j.inputs})
    # each unit's log where its job alone writes it; the spectra beside the records
    assert cells.logs(plan.layout) == [plan.layout.log(p) for p in outputs["records"]]
    if experiment == "spectrum":
        assert [job.spec.outputs["spectra"] for job in jobs] == [
            pattern.format(**wildcards) for pattern in outputs["spectra"]
        ]
    else:
        assert set(outputs) == {"records"}


def test_a_cell_asks_for_its_networks_memory():
    plan = contract(**{**STACKED, "real.data_seeds": 5})
    (cells,) = [c for c in plan.cells if c.experiment == "real"]
    pattern = cells.outputs(plan.layout)["records"][0]
    path = next(p for p in training_jobs(plan) if matches(pattern, p) and "gb1/hashwh" in p)
    wildcards = wildcards_of(pattern, path)
    spec, table = plan.job(path).spec, plan.footprints[path]
    cell = memory_mb(spec.method, spec.grid, spec.training, *table, units=5)
    assert plan.cell_mem_mb_of(cells)(wildcards, 1) == cell
    assert plan.cell_mem_mb_of(cells)(wildcards, 2) == 2 * cell
    # above the floor, a cell's networks and tables ask for more than one job's
    large = dataclasses.replace(spec.training, width=40)
    assert memory_mb("hashwh", [{"b": 13}], large, 10**5, 50, units=5) > memory_mb(
        "hashwh", [{"b": 13}], large, 10**5, 50
    )


def test_a_cell_of_one_unit_is_no_cell():
    plan = contract(**{**STACKED, "spectrum.draws": 1, "synthetic.draws": 2, "real.data_seeds": 1})
    assert plan.cells == []  # synthetic: draw 0 is timed, draw 1 alone in its cell


def test_a_large_cell_runs_as_several_jobs():
    units = tuple(f"draw{i}" for i in range(2 * MAX_UNITS + 1))
    parts = Cells("spectrum", "dataset", units).split()
    assert [len(p.units) for p in parts] == [MAX_UNITS, MAX_UNITS, 1]
    assert [u for p in parts for u in p.units] == list(units)
    assert len({p.rule for p in parts}) == 3
    layout = Layout("run")
    logs = [log for p in parts for log in p.logs(layout)]
    assert len(set(logs)) == len(units)
    # a cell's specs travel as one argument (Linux: 128 KiB): the paper grid's largest
    # training spec, MAX_UNITS times, stays below it
    largest = max(len(job.spec_json) for job in training_jobs(paper_contract()).values())
    assert MAX_UNITS * (largest + 1) < 128 * 1024
