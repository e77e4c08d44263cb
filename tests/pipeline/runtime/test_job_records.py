"""Snakemake's job records read once for the crate's times and the planner's unit costs."""

from __future__ import annotations

import base64
import json

from whcore.pipeline.claims.costs import job_seconds
from whcore.pipeline.crate.actions import snakemake_times
from whcore.pipeline.runtime.job_records import job_records


def record(folder, output: str, payload, split: int | None = None) -> None:
    name = base64.urlsafe_b64encode(output.encode()).decode()
    parts = [name] if split is None else [name[:split], name[split:]]  # a long name, in folders
    path = folder.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))


def test_records_of_every_output_split_or_not_and_nothing_else(tmp_path):
    folder = tmp_path / ".snakemake" / "metadata"
    long = "results/run/runs/spectrum/draw0/hashwh/b7/size100_dseed0"
    job = {"rule": "train", "job_hash": 7, "starttime": 100.0, "endtime": 160.0}
    record(folder, long, job, split=20)
    record(folder, long + "/spectra", {**job, "endtime": 160.5})  # the same job, another output
    record(folder, "results/run/tables/t.parquet", {"rule": "aggregate", "starttime": 5.0})
    record(folder, "results/run/broken", "{not json")
    (folder / "not-base64!").write_text("{}")
    found = dict(job_records(tmp_path))
    assert set(found) == {long, long + "/spectra", "results/run/tables/t.parquet"}
    assert found[long]["job_hash"] == 7
    # the crate: times of every output with both ends; the planner: one job, counted once
    assert snakemake_times(tmp_path) == {long: (100.0, 160.0), long + "/spectra": (100.0, 160.5)}
    assert job_seconds(tmp_path) == [("train", long, 60.5)]
    assert list(job_records(tmp_path / "elsewhere")) == []
