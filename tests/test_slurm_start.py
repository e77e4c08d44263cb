"""What a SLURM run does before it submits anything (whcore.pipeline.slurm): settle the jobs a
killed Snakemake left behind, refuse a job no node can hold. With stand-in `squeue`, `scancel`
and `sinfo` on PATH and a stand-in of Snakemake's workflow; the real cluster case is the chaos
run of tests/test_slurm.py."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from whcore.core.io import write_parquet
from whcore.pipeline import slurm


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """Installs `squeue`, printing the given listings one per call (the last one again after
    that), and `scancel`, recording its arguments, first on PATH."""

    def install(listings: list[str]) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for i, listing in enumerate(listings):
            (tmp_path / f"listing{i}").write_text(listing)
        calls, last = tmp_path / "squeue_calls", len(listings) - 1
        (bin_dir / "squeue").write_text(
            f"#!/bin/sh\necho x >> {calls}\nn=$(($(wc -l < {calls}) - 1))\n"
            f"[ $n -gt {last} ] && n={last}\ncat {tmp_path}/listing$n\n"
        )
        (bin_dir / "scancel").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "cancelled"}\n')
        for tool in ("squeue", "scancel"):
            (bin_dir / tool).chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")

    return install


def test_only_snakemakes_jobs_from_this_folder_are_settled(tmp_path, fake_slurm):
    here, elsewhere = tmp_path / "run", tmp_path / "other"
    here.mkdir(), elsewhere.mkdir()
    listing = (
        f"101|{here}|rule_train_wildcards_experiment=real|PENDING\n"
        f"102|{here}/|rule_train_spectrum_wildcards_x|PENDING\n"  # the same folder, written otherwise
        f"103|{elsewhere}|rule_train_wildcards_experiment=real|PENDING\n"  # another run's
        f"104|{here}|my own interactive job|RUNNING\n"  # not Snakemake's
    )
    fake_slurm([listing])
    lines = []
    assert slurm.settle_orphaned_jobs(here, log=lines.append) == (["101", "102"], [])
    assert (tmp_path / "cancelled").read_text() == "101 102\n"
    assert len(lines) == 1 and "Cancelled 2 SLURM job(s)" in lines[0] and "101 102" in lines[0]


def test_running_jobs_are_waited_for_never_cancelled(tmp_path, fake_slurm):
    here = tmp_path / "run"
    here.mkdir()
    running = f"201|{here}|rule_train_spectrum_wildcards_a|RUNNING\n"
    waiting = f"202|{here}|rule_train_spectrum_wildcards_b|PENDING\n"
    # The first listing has both; the next two still show 201 running, then it is gone.
    fake_slurm([running + waiting, running, running, ""])
    lines = []
    settled = slurm.settle_orphaned_jobs(here, poll_seconds=0.01, log=lines.append)
    assert settled == (["202"], ["201"])
    assert (tmp_path / "cancelled").read_text() == "202\n"  # never 201
    assert "Waiting for 1 SLURM job(s)" in lines[1] and "(201)" in lines[1]
    assert len((tmp_path / "squeue_calls").read_text().splitlines()) == 4  # polled until gone


def test_no_orphan_means_no_scancel_and_no_slurm_means_nothing(tmp_path, fake_slurm, monkeypatch):
    here = tmp_path / "run"
    here.mkdir()
    fake_slurm([""])
    assert slurm.settle_orphaned_jobs(here) == ([], [])
    assert not (tmp_path / "cancelled").exists()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert slurm.settle_orphaned_jobs(here) == ([], [])


def test_a_failing_squeue_stops_the_run_with_the_fix(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in (("squeue", "echo 'cannot connect' >&2; exit 1"), ("scancel", "exit 0")):
        (bin_dir / tool).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(slurm.SlurmQueryError, match="cannot connect.*Fix: rerun when"):
        slurm.settle_orphaned_jobs(tmp_path)


class _Workflow:
    """What record_orphan_outputs uses of Snakemake's workflow: the jobs of its plan (which need
    to run, which have Snakemake's record), each job's spec and outputs, and recording a job as
    finished."""

    def __init__(self, jobs: list[SimpleNamespace]):
        self.finished: list[str] = []
        self.dag = SimpleNamespace(jobs=jobs, needrun=lambda job: job.needrun)
        self.persistence = SimpleNamespace(
            has_metadata=lambda job: job.recorded, finished=self._finished
        )

    async def _finished(self, job):
        self.finished.append(job.name)

    def async_run(self, coroutine):
        return asyncio.run(coroutine)


def _job(name, outputs, spec, needrun=False, recorded=False):
    params = SimpleNamespace(spec=json.dumps(spec)) if spec is not None else SimpleNamespace()
    return SimpleNamespace(
        name=name, output=[str(p) for p in outputs], params=params, needrun=needrun,
        recorded=recorded,
    )  # fmt: skip


def _records(folder: Path, spec: dict) -> Path:
    """A training job's output: a folder of Parquet files with its spec inside."""
    folder.mkdir(parents=True)
    write_parquet(pd.DataFrame({"x": [1.0]}), folder / "default.parquet", {"spec": spec})
    return folder


def test_outputs_of_a_killed_snakemakes_jobs_are_recorded_when_their_spec_is_todays(tmp_path):
    spec, old_spec = {"method": "hashwh", "b": 3}, {"method": "hashwh", "b": 3, "epochs": 9}
    figure = tmp_path / "figure.pdf"
    figure.write_text("%PDF")
    jobs = [
        _job("orphan", [_records(tmp_path / "a", spec)], spec),
        _job("orphan with a figure", [_records(tmp_path / "b", spec), figure], spec),
        _job("written for another spec", [_records(tmp_path / "c", old_spec)], spec),
        _job("recorded already", [_records(tmp_path / "d", spec)], spec, recorded=True),
        _job("to run", [_records(tmp_path / "e", spec)], spec, needrun=True),
        _job("an output missing", [_records(tmp_path / "f", spec), tmp_path / "gone"], spec),
        _job("no spec inside", [figure], spec),
        _job("no spec passed", [_records(tmp_path / "g", spec)], None),
    ]
    workflow, lines = _Workflow(jobs), []
    assert slurm.record_orphan_outputs(workflow, log=lines.append) == [
        str(tmp_path / "a"),
        str(tmp_path / "b"),
    ]
    assert workflow.finished == ["orphan", "orphan with a figure"]
    assert lines[0].startswith("Recorded 2 output(s) that SLURM jobs of a killed Snakemake")
    assert (
        lines[1].startswith("warning: 1 output(s) without Snakemake's record")
        and str(tmp_path / "c") in lines[1]
        and "Fix: delete them" in lines[1]
    )


def test_nothing_to_record_says_nothing(tmp_path):
    spec = {"method": "standard"}
    workflow, lines = (
        _Workflow([_job("done", [_records(tmp_path / "a", spec)], spec, recorded=True)]),
        [],
    )
    assert slurm.record_orphan_outputs(workflow, log=lines.append) == []
    assert lines == [] and workflow.finished == []


def _fake_sinfo(tmp_path: Path, monkeypatch, nodes: dict[str, list[int]]) -> None:
    """`sinfo --noheader --Node --format=%m [--partition=P]`: the memory of each node of P (all
    partitions' nodes without one)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    everything = [mb for sizes in nodes.values() for mb in sizes]
    cases = "".join(
        f"  --partition={name}) printf '%s\\n' {' '.join(map(str, sizes))} ;;\n"
        for name, sizes in nodes.items()
    )
    (bin_dir / "sinfo").write_text(
        f"#!/bin/sh\ncase \"$4\" in\n{cases}  '') printf '%s\\n' "
        f"{' '.join(map(str, everything))} ;;\n  *) echo 'invalid partition' >&2; exit 1 ;;\nesac\n"
    )
    (bin_dir / "sinfo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_a_job_no_node_can_hold_is_refused_naming_its_key(tmp_path, monkeypatch):
    _fake_sinfo(tmp_path, monkeypatch, {"gpu": [64000, 128000], "small": [16000]})
    assert slurm.largest_node_mb("gpu") == 128000 and slurm.largest_node_mb() == 128000
    requests = {
        "results/paper/runs/synthetic/n100/ens/m7/c1": (200_000, "synthetic.methods.ens"),
        "results/paper/runs/synthetic/n100/ens/m5/c1": (150_000, "synthetic.methods.ens"),
        "results/paper/runs/spectrum/standard": (2000, "spectrum.methods.standard"),
    }
    with pytest.raises(slurm.NodeFitError) as refused:
        slurm.check_nodes_fit(requests, "gpu")
    message = str(refused.value)
    assert message.startswith("config key synthetic.methods.ens: the training job of ")
    assert "ens/m7/c1 asks SLURM for 200,000 MiB" in message  # the largest request is named
    assert "partition gpu has (128,000 MiB" in message and "2 job(s) in all" in message
    assert "Fix: a smaller setting of that key, or a partition with larger nodes" in message


def test_jobs_that_fit_pass_and_an_unknown_cluster_is_not_judged(tmp_path, monkeypatch):
    _fake_sinfo(tmp_path, monkeypatch, {"gpu": [64000]})
    slurm.check_nodes_fit({"a": (64000, "spectrum.methods.fullwh")}, "gpu")  # exactly fits
    # a partition sinfo does not know, or no sinfo at all: SLURM will say it, not us
    slurm.check_nodes_fit({"a": (10**9, "spectrum.methods.fullwh")}, "nowhere")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    slurm.check_nodes_fit({"a": (10**9, "spectrum.methods.fullwh")}, "gpu")
