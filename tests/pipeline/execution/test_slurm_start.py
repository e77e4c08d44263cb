"""What a SLURM run does before it submits anything (whcore.pipeline.execution.slurm): settle the jobs a
killed Snakemake left behind, refuse a job no node can hold. With stand-in `squeue`, `scancel`
and `sinfo` on PATH and a stand-in of Snakemake's workflow; the real cluster case is the chaos
run of tests/slurm/test_slurm.py."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

from whcore.core.io import write_parquet
from whcore.pipeline.execution import slurm

REPO = Path(__file__).resolve().parents[3]


# `squeue`: prints, in the format asked for (%i id, %T state, %j name, %k comment, %Z folder),
# the jobs of listings.json, one listing a call (the last one again after that).
SQUEUE = """#!{python}
import json, pathlib, re, sys
here = pathlib.Path(__file__).parent.parent
calls = here / "squeue_calls"
with calls.open("a") as log:
    log.write("x\\n")
listings = json.loads((here / "listings.json").read_text())
jobs = listings[min(len(calls.read_text().splitlines()), len(listings)) - 1]
fields = {{"i": "id", "T": "state", "j": "name", "k": "comment", "Z": "folder"}}
form = next(a for a in sys.argv if a.startswith("--format=")).removeprefix("--format=")
for job in jobs:
    sys.stdout.write(re.sub(r"%(\\w)", lambda m: job[fields[m.group(1)]], form) + "\\n")
"""
RUN = "0c6b2ab5-9a3e-4b8e-8f1e-3d5a2b7c9e01"  # the plugin's run id of a killed Snakemake
OTHER_RUN = "7f1d3c2e-5b4a-4c6d-9e8f-1a2b3c4d5e6f"


def job(id, state, folder, name=f"whcore_{RUN}", comment="rule_train_wildcards_x=1"):
    """A SLURM job as squeue shows it; by default one this workflow submitted."""
    return {"id": id, "state": state, "folder": str(folder), "name": name, "comment": comment}


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """Installs the stand-in `squeue` above, showing the given listings (lists of ``job``), and
    `scancel`, recording its arguments, first on PATH."""

    def install(listings: list[list[dict]]) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (tmp_path / "listings.json").write_text(json.dumps(listings))
        (bin_dir / "squeue").write_text(SQUEUE.format(python=sys.executable))
        (bin_dir / "scancel").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "cancelled"}\n')
        for tool in ("squeue", "scancel"):
            (bin_dir / tool).chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")

    return install


def test_only_this_workflows_jobs_from_this_folder_are_settled(tmp_path, fake_slurm):
    here, elsewhere = tmp_path / "run", tmp_path / "other"
    here.mkdir(), elsewhere.mkdir()
    fake_slurm(
        [
            [
                job("101", "PENDING", here),
                job("102", "PENDING", here, name=f"whcore_{OTHER_RUN}"),  # an earlier kill's
                job("103", "PENDING", elsewhere),  # a run in another folder
                job("104", "PENDING", here / "sub"),
                job("105", "PENDING", here, name=OTHER_RUN),  # another workflow's Snakemake
                job("106", "PENDING", here, name="whcore_test", comment="my own job"),
                job("107", "RUNNING", here, name="bash", comment=""),  # an interactive job
            ]
        ]
    )
    lines = []
    assert slurm.settle_orphaned_jobs(here, log=lines.append) == (["101", "102"], [])
    assert (tmp_path / "cancelled").read_text() == "101 102\n"
    assert len(lines) == 1 and "Cancelled 2 SLURM job(s)" in lines[0] and "101 102" in lines[0]


@pytest.mark.parametrize("name", ["a|b", "a\nb", "a b|RUNNING|x"])
def test_no_character_of_the_folders_name_hides_its_jobs(tmp_path, fake_slurm, name):
    here = tmp_path / name
    here.mkdir()
    (tmp_path / "a").mkdir()
    fake_slurm([[job("301", "PENDING", here), job("302", "PENDING", tmp_path / "a")]])
    assert slurm.queued_jobs(here) == {"301": ("PENDING", "rule_train_wildcards_x=1")}
    assert slurm.settle_orphaned_jobs(here, log=lambda line: None) == (["301"], [])
    assert (tmp_path / "cancelled").read_text() == "301\n"


def test_a_job_from_a_folder_ending_in_a_bar_and_this_folder_is_not_this_folders(
    tmp_path, fake_slurm
):
    here = tmp_path / "run"
    here.mkdir()
    fake_slurm([[job("401", "PENDING", f"/home/x|{here}"), job("402", "PENDING", here)]])
    assert slurm.queued_jobs(here) == {"402": ("PENDING", "rule_train_wildcards_x=1")}
    assert slurm.settle_orphaned_jobs(here, log=lambda line: None) == (["402"], [])
    assert (tmp_path / "cancelled").read_text() == "402\n"


def test_running_jobs_are_waited_for_never_cancelled(tmp_path, fake_slurm):
    here = tmp_path / "run"
    here.mkdir()
    running, waiting = job("201", "RUNNING", here), job("202", "PENDING", here)
    # The first listing has both; the next two still show 201 running, then it is gone.
    fake_slurm([[running, waiting], [running], [running], []])
    lines = []
    settled = slurm.settle_orphaned_jobs(here, poll_seconds=0.01, log=lines.append)
    assert settled == (["202"], ["201"])
    assert (tmp_path / "cancelled").read_text() == "202\n"  # never 201
    assert "Waiting for 1 SLURM job(s)" in lines[1] and "(201)" in lines[1]
    assert len((tmp_path / "squeue_calls").read_text().splitlines()) == 4  # polled until gone


def test_no_orphan_means_no_scancel_and_no_slurm_means_nothing(tmp_path, fake_slurm, monkeypatch):
    here = tmp_path / "run"
    here.mkdir()
    fake_slurm([[]])
    assert slurm.settle_orphaned_jobs(here) == ([], [])
    assert not (tmp_path / "cancelled").exists()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert slurm.settle_orphaned_jobs(here) == ([], [])


def test_the_profile_marks_the_jobs_and_a_run_without_the_mark_is_refused():
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "profile.yaml").read_text())
    assert profile["slurm-jobname-prefix"] == slurm.MARKER
    slurm.check_job_marker(slurm.MARKER)
    for prefix in ("", None, "myproject"):
        with pytest.raises(slurm.JobMarkerError) as refused:
            slurm.check_job_marker(prefix)
        assert str(refused.value).startswith(f"slurm-jobname-prefix is {prefix or ''!r}, not ")
        assert "Fix: --workflow-profile profiles/slurm, or slurm-jobname-prefix: whcore" in str(
            refused.value
        )


def _stand_ins(tmp_path: Path, monkeypatch, **bodies: str) -> None:
    """Shell scripts named after the SLURM commands, alone on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in bodies.items():
        (bin_dir / tool).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))


def test_a_failing_squeue_stops_the_run_with_the_fix(tmp_path, monkeypatch):
    _stand_ins(tmp_path, monkeypatch, squeue="echo 'cannot connect' >&2; exit 1", scancel="")
    with pytest.raises(slurm.SlurmQueryError, match="cannot connect.*Fix: rerun when"):
        slurm.settle_orphaned_jobs(tmp_path)


def test_a_squeue_or_sinfo_that_never_answers_stops_the_run_in_one_line(tmp_path, monkeypatch):
    hang = f"exec {shutil.which('sleep')} 5"
    _stand_ins(tmp_path, monkeypatch, squeue=hang, scancel="", sinfo=hang)
    monkeypatch.setattr(slurm, "QUERY_SECONDS", 0.5, raising=False)
    with pytest.raises(slurm.SlurmQueryError) as stopped:
        slurm.settle_orphaned_jobs(tmp_path)
    assert str(stopped.value) == (
        "squeue gave no answer in 0.5 s: cannot tell whether a killed Snakemake left SLURM jobs "
        "here. Fix: rerun when the SLURM controller answers (`squeue` returns)"
    )
    with pytest.raises(slurm.SlurmQueryError, match="^sinfo gave no answer in 0.5 s: cannot tell"):
        slurm.check_nodes_fit({"a": (2000, "spectrum.methods.standard")})


def test_a_failing_scancel_stops_the_run_in_one_line(tmp_path, fake_slurm, monkeypatch):
    here = tmp_path / "run"
    here.mkdir()
    fake_slurm([[job("401", "PENDING", here)]])
    (tmp_path / "bin" / "scancel").write_text(
        "#!/bin/sh\nprintf 'Access\\ndenied\\n' >&2; exit 1\n"
    )
    with pytest.raises(slurm.SlurmQueryError) as stopped:
        slurm.settle_orphaned_jobs(here)
    assert str(stopped.value) == (
        "scancel failed (Access denied): cannot cancel the SLURM jobs a killed Snakemake left "
        "waiting here (401). Fix: rerun when `scancel` works"
    )


def test_waiting_for_a_job_that_never_ends_stops_at_the_limit_naming_it(tmp_path, fake_slurm):
    here = tmp_path / "run"
    here.mkdir()
    fake_slurm([[job("501", "RUNNING", here)], [job("501", "SUSPENDED", here)]])
    lines = []
    with pytest.raises(slurm.OrphanWaitError) as stopped:
        slurm.settle_orphaned_jobs(here, poll_seconds=0.01, log=lines.append, minutes=0.005)
    assert "at most 0.005 min (WHCORE_SLURM_WAIT_MINUTES)" in lines[0]
    assert str(stopped.value) == (
        "gave up after 0.005 min waiting for 1 SLURM job(s) that a killed Snakemake left running "
        "here: 501 (SUSPENDED). Fix: rerun when `squeue --me` no longer lists them, `scancel "
        "501` (this run then makes their outputs again), or a longer WHCORE_SLURM_WAIT_MINUTES"
    )
    assert not (tmp_path / "cancelled").exists()


def test_the_wait_limit_comes_from_the_environment():
    assert slurm.wait_minutes({}) == slurm.wait_minutes({"WHCORE_SLURM_WAIT_MINUTES": ""}) == 720
    assert slurm.wait_minutes({"WHCORE_SLURM_WAIT_MINUTES": "30"}) == 30


# A workflow that restarts once, at its start, as a run that waited for orphans does.
RESTARTING = """
import os
from whcore.pipeline.execution import slurm

onstart:
    print("started in", os.getcwd())
    if not os.environ.get("RESTARTED"):
        os.environ["RESTARTED"] = "1"
        slurm.restart(workflow)

rule made:
    output: "made.txt"
    shell: "echo {config[value]} > {output}"
"""


@pytest.mark.workflow
@pytest.mark.parametrize("absolute", [False, True])
def test_a_restart_keeps_the_folder_and_relative_paths_it_was_started_with(tmp_path, absolute):
    """``-d ud2 --configfile config.yaml``, relative to the folder Snakemake started in, mean the
    same after the restart: not ud2/config.yaml; with the other paths absolute, not ud2/ud2."""
    (tmp_path / "Snakefile").write_text(RESTARTING)
    (tmp_path / "config.yaml").write_text("value: 7\n")
    where = tmp_path if absolute else Path()
    command = [
        "-s",
        str(where / "Snakefile"),
        "-d",
        "ud2",
        "--configfile",
        str(where / "config.yaml"),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", *command, "--cores", "1"],
        cwd=tmp_path,
        env={**os.environ, "RESTARTED": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count(f"started in {tmp_path / 'ud2'}\n") == 2, done.stdout
    assert (tmp_path / "ud2" / "made.txt").read_text() == "7\n"
    assert not (tmp_path / "ud2" / "ud2").exists()


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
        name=name,
        output=[str(p) for p in outputs],
        params=params,
        needrun=needrun,
        recorded=recorded,
    )


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
