"""Fault handling: killed jobs, diverged training, raw files that change, concurrent runs.

Real mechanisms only: SIGKILL to a real `whcore train` process (alone and under Snakemake), an
overflowing loss, a raw file edited after binarization, two Snakemake processes in one directory.
Snakemake runs use a temporary working directory, 2 cores and the local data mirror.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import TINY, figure_spec, snakemake_env
from conftest import run_snakemake as shared_run
from conftest import snakemake_cmd as shared_cmd

from whcore.core.io import read_parquet_metadata
from whcore.data.datasets import REGISTRY
from whcore.data.download import sha256_of
from whcore.pipeline.cli import main as whcore

BIN = Path(sys.executable).parent

pytestmark = pytest.mark.workflow


def _env(**extra) -> dict:
    return snakemake_env(**extra)


def snakemake_cmd(workdir: Path, config: Path, *args) -> list[str]:
    """Snakemake on ``args`` (targets and flags) with 2 cores and ``config``."""
    return shared_cmd(workdir, *args, "--cores", "2", "--configfile", str(config))


def run_snakemake(workdir, config, *args, env=None) -> subprocess.CompletedProcess:
    return shared_run(
        *args,
        "--cores",
        "2",
        "--configfile",
        str(config),
        workdir=workdir,
        env=env,
        check=False,
        timeout=600,
    )


def spectrum_config(tmp_path: Path, methods: dict, **training) -> Path:
    """.test/config.yaml cut to the spectrum experiment: one g*, one train size."""
    config = yaml.safe_load(TINY.read_text())
    for experiment in ("synthetic", "real", "ablation", "entacmaea_energy"):
        config[experiment]["enabled"] = False
    spectrum = config["spectrum"]
    spectrum.update(draws=1, train_sizes=[spectrum["figure_train_size"]], methods=methods)
    config["log_every"] = training.pop("log_every", config.get("log_every", 10))
    spectrum["training"].update(training)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run_file(method: str, tag: str, kind: str = "runs") -> str:
    """A training job's output folder (one file per configuration inside)."""
    return f"results/tiny/{kind}/spectrum/draw0/{method}/{tag}/size30_dseed0"


def wait_for(predicate, timeout: float, what: str, proc=None):
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(
                f"process ended (rc {proc.returncode}) before {what}:\n{out[-3000:]}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


def whcore_train_pids(workdir: Path, out: str) -> list[int]:
    """The `whcore train` processes (Python, not their shells) writing ``out`` in ``workdir``."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv if a]
        if (
            any(Path(a).name == "whcore" for a in args[:2])
            and "train" in args
            and any(out in a for a in args)  # the output path is in the spec
            and Path(cwd) == workdir
        ):
            pids.append(int(proc.name))
    return pids


def start_and_find_trainer(work: Path, config: Path, log: Path, target: str, *args):
    """Start Snakemake on ``target``; once its training job logged epoch 1, return
    (the Snakemake process, the pid of that job's `whcore train`)."""
    proc = subprocess.Popen(
        snakemake_cmd(work, config, *args),
        env=_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(
            lambda: log.is_file() and "epoch 1/" in log.read_text(),
            300,
            f"the training job of {target}",
            proc,
        )
        pids = whcore_train_pids(work, target)
        assert len(pids) == 1, pids
    except BaseException:
        proc.kill()
        raise
    return proc, pids[0]


def target_spec(path: Path) -> str:
    return json.dumps(
        {
            "family": "degree_ladder",
            "n": 6,
            "max_degree": 3,
            "seed": 0,
            "outputs": {"target": str(path)},
        }
    )


def leftovers(path: Path) -> list[Path]:
    """Temporary files of atomic writes to ``path`` (.<name>.*.tmp beside it)."""
    return sorted(path.parent.glob(f".{path.name}.*.tmp")) if path.parent.is_dir() else []


# --- a killed training job -----------------------------------------------------------------------


def test_sigkill_mid_training_leaves_no_output(tmp_path):
    """`whcore train` killed with SIGKILL while training (what `scancel` or an OOM kill does):
    neither the output nor a half-written temporary file is left."""
    assert whcore(["target", "--spec", target_spec(tmp_path / "g.json")]) == 0
    spec = {
        "method": "standard",
        "spectrum": True,
        "data": {
            "source": "synthetic",
            "path": str(tmp_path / "g.json"),
            "train_size": 30,
            "data_seed": 0,
        },
        "training": {"seeds": [0, 1], "epochs": 5000, "patience": 5000, "width": 2},
    }
    out, spectra = tmp_path / "out" / "runs", tmp_path / "out" / "spectra"
    spec["outputs"] = {"records": str(out), "spectra": str(spectra)}
    proc = subprocess.Popen(
        [
            str(BIN / "whcore"),
            "train",
            "--spec",
            json.dumps(spec),
            "--device",
            "cpu",
            "--log-every",
            "1",
        ],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("training 1 configuration(s) x 2 seed(s)"), line
        line = proc.stdout.readline()  # the first progress line: it is training
        assert line.startswith("epoch 1/"), line
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()
    assert not out.exists() and not spectra.exists()
    assert leftovers(out) == [] and leftovers(spectra) == []


def test_killed_job_under_snakemake_is_rerun_alone(tmp_path):
    """Snakemake runs two training jobs; one is SIGKILLed mid-run. The other completes (keep
    going), the killed one leaves no output, and a rerun with --rerun-incomplete trains only
    the killed job: no other output is touched."""
    config = spectrum_config(
        tmp_path,
        {"standard": {}, "hashwh": {"b": [3], "lam": [0.01]}},
        epochs=60,
        patience=60,
        log_every=1,
    )
    work = tmp_path / "work"
    victim, other = run_file("hashwh", "b3"), run_file("standard", "default")
    targets = [victim, other]
    victim_log = work / "logs/tiny/runs/spectrum/draw0/hashwh/b3/size30_dseed0.log"

    first, pid = start_and_find_trainer(work, config, victim_log, victim, "--keep-going", *targets)
    try:
        os.kill(pid, signal.SIGKILL)
        out, _ = first.communicate(timeout=300)
    finally:
        first.kill()
    assert first.returncode != 0, out[-3000:]
    assert "Error in rule train_spectrum" in out
    assert not (work / victim).exists() and leftovers(work / victim) == []
    assert not (work / run_file("hashwh", "b3", "spectra")).exists()
    assert (work / other).is_dir()  # the other job was not harmed (--keep-going)

    kept = [
        work / other,
        work / run_file("standard", "default", "spectra"),
        work / "results/tiny/synthetic/spectrum/draw0.json",
    ]
    mtimes = {p: p.stat().st_mtime_ns for p in kept}
    second = run_snakemake(work, config, "--rerun-incomplete", *targets)
    assert second.returncode == 0, second.stdout[-3000:]
    stats = dict(
        re.findall(r"^(\w+)\s+(\d+)$", second.stdout.split("Job stats:", 1)[1], re.MULTILINE)
    )
    assert stats == {"train_spectrum": "1", "total": "1"}, stats
    assert {p: p.stat().st_mtime_ns for p in kept} == mtimes
    records = pd.read_parquet(work / victim)
    assert set(records["seed"]) == {0, 1} and records["epoch"].max() == 60

    third = run_snakemake(work, config, "-n", *targets)
    assert "Nothing to be done" in third.stdout, third.stdout[-2000:]


def start_in_own_group(work: Path, config: Path, *args) -> subprocess.Popen:
    """Snakemake in a process group of its own, as a terminal runs it: Ctrl-C is SIGINT to
    the whole group (Snakemake, its job shells, their `whcore train`)."""
    return subprocess.Popen(
        snakemake_cmd(work, config, *args),
        env=_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )


def _as_from_a_terminal() -> None:
    """Ctrl-C reaches Snakemake as it does from a terminal, also where these tests run in a
    background job (a shell starts those with SIGINT ignored, and a child inherits that: Python
    then installs no KeyboardInterrupt and the Ctrl-C tests would see nothing stop)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ctrl_c(proc: subprocess.Popen) -> str:
    """SIGINT to the group of ``proc``; its output once it has ended."""
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode != 0, out[-3000:]
    return out


@pytest.mark.parametrize("moment", ["mid-training", "output-written"])
def test_ctrl_c_then_the_same_command_resumes(tmp_path, moment):
    """Ctrl-C (SIGINT to Snakemake's process group), then the same command again, no flag
    added: it finishes the run and leaves nothing to do.
    "mid-training": the training job is interrupted while it trains. "output-written": the job
    has written its output but Snakemake has not yet seen it end (Snakemake paused with SIGSTOP
    across that moment), so the output exists and Snakemake's own record still calls it
    incomplete: a plain rerun must not refuse (the workflow profile sets rerun-incomplete)."""
    epochs = 300 if moment == "mid-training" else 20
    config = spectrum_config(
        tmp_path, {"standard": {}}, epochs=epochs, patience=epochs, log_every=1
    )
    work = tmp_path / "work"
    target = run_file("standard", "default")
    log = work / "logs/tiny/runs/spectrum/draw0/standard/default/size30_dseed0.log"
    run = start_in_own_group(work, config, target)
    wait_for(
        lambda: log.is_file() and "epoch 1/" in log.read_text(),
        300,
        "the training job",
        run,
    )
    if moment == "mid-training":
        out = ctrl_c(run)
        assert not (work / target).exists() and leftovers(work / target) == []
    else:
        os.kill(run.pid, signal.SIGSTOP)  # Snakemake sleeps; its job trains on and finishes
        try:
            wait_for(lambda: (work / target).is_dir(), 300, "the job's output")
            wait_for(lambda: not whcore_train_pids(work, target), 60, "the trainer to end")
            os.killpg(run.pid, signal.SIGINT)
        finally:
            os.kill(run.pid, signal.SIGCONT)
        out, _ = run.communicate(timeout=300)
    second = run_snakemake(work, config, target)
    assert second.returncode == 0, (out[-2000:], second.stdout[-3000:])
    assert "IncompleteFilesException" not in second.stdout
    records = pd.read_parquet(work / target)
    assert records["epoch"].max() == epochs and (records["status"] == "ok").all()
    third = run_snakemake(work, config, "-n", target)
    assert "Nothing to be done" in third.stdout, third.stdout[-2000:]


# --- diverged training ---------------------------------------------------------------------------


def test_diverged_runs_are_recorded_counted_and_reported(tmp_path, capsys):
    """A loss that overflows (lambda = 1e300) makes training stop cleanly with status
    "diverged", the epoch and the reason in the records; aggregation counts the diverged runs,
    keeps a variant whose every configuration diverged as a diverged row, and the claims and
    figures that read the tables still build."""
    target = tmp_path / "draw0.json"  # the g* of dataset draw0 (tables match them by name)
    assert whcore(["target", "--spec", target_spec(target)]) == 0
    runs, spectra = [], []
    for method, params in [
        ("standard", {}),
        ("fullwh", {"lam": 0.1}),
        ("fullwh", {"lam": 1e300}),
        ("hashwh", {"b": 3, "lam": 1e300}),
    ]:
        spec = {
            "method": method,
            "grid": [params],
            "spectrum": True,
            "labels": {"experiment": "spectrum", "dataset": "draw0", "draw": 0},
            "data": {"source": "synthetic", "path": str(target), "train_size": 30, "data_seed": 0},
            "training": {"seeds": [0, 1], "epochs": 5, "patience": 5, "width": 2},
        }
        name = f"{method}_{len(runs)}"
        runs.append(str(tmp_path / name))
        spectra.append(str(tmp_path / f"{name}_spectra"))
        spec["outputs"] = {"records": runs[-1], "spectra": spectra[-1]}
        assert (
            whcore(["train", "--spec", json.dumps(spec), "--device", "cpu", "--log-every", "0"])
            == 0
        )

    for path in runs[2:]:  # every member diverged in the first epoch and stopped there
        records = pd.read_parquet(path)
        last = records.groupby("seed").tail(1)
        assert (last["status"] == "diverged").all() and (last["epoch"] == 1).all()
        assert last["note"].str.contains("NaN or infinite").all()
        assert (records.groupby("seed")["epoch"].max() == 1).all()
    for path in runs[:2]:
        assert (pd.read_parquet(path)["status"] == "ok").all()

    capsys.readouterr()
    tables = tmp_path / "tables"
    outputs = {
        f"spectrum_{t}": str(tables / f"spectrum_{t}.parquet")
        for t in ("selected", "epochs", "heatmap")
    }
    aggregate = {"experiment": "spectrum", "figure_train_size": 30, "outputs": outputs}
    assert (
        whcore(
            [
                "aggregate",
                "--spec",
                json.dumps(aggregate),
                "--runs",
                *runs,
                "--spectra",
                *spectra,
                "--targets",
                str(target),
            ]
        )
        == 0
    )
    report = capsys.readouterr().out
    assert (
        "diverged: 4 trained model(s) (configuration x seed) diverged" in report
        and "2 of 6 selections had only diverged configurations" in report
        and "hashwh_b3 x 2" in report
    ), report

    selected = pd.read_parquet(tables / "spectrum_selected.parquet").set_index(["variant", "seed"])
    assert len(selected) == 6  # standard, fullwh, hashwh_b3 x 2 seeds: nothing dropped
    fullwh, hashwh = selected.loc["fullwh"], selected.loc["hashwh_b3"]
    assert (fullwh["n_diverged_configs"] == 1).all() and not fullwh["diverged"].any()
    assert (fullwh["lam"] == 0.1).all() and fullwh["val_r2"].notna().all()
    assert hashwh["diverged"].all() and hashwh["val_r2"].isna().all()
    assert (hashwh["diverged_epoch"] == 1).all()
    assert hashwh["diverged_reason"].str.contains("NaN or infinite").all()
    assert (selected.loc["standard", "n_diverged_configs"] == 0).all()

    from whcore.pipeline.aggregation import summarize

    summary = summarize(selected.reset_index(), ["variant"], "val_r2").set_index("variant")
    assert summary.loc["hashwh_b3", "n_diverged"] == 2 and summary.loc["hashwh_b3", "count"] == 0
    assert summary.loc["fullwh", "n_diverged"] == 0 and summary.loc["fullwh", "count"] == 2

    table_paths = [str(tables / f"spectrum_{name}.parquet") for name in ("selected", "epochs")]
    claims = {"outputs": {"md": str(tmp_path / "claims.md"), "json": str(tmp_path / "claims.json")}}
    assert whcore(["claims", "--spec", json.dumps(claims), "--tables", *table_paths]) == 0
    settings = json.dumps({"figure_train_size": 30, "figure_draw": 0})
    for figure, table in [
        ("fig1b_spectrum_evolution", "heatmap"),
        ("fig2_sae_evolution", "epochs"),
    ]:
        spec = figure_spec(figure, tmp_path / figure, json.loads(settings))
        assert (
            whcore(
                ["figure", "--spec", spec, "--tables", str(tables / f"spectrum_{table}.parquet")]
            )
            == 0
        )
        assert (tmp_path / f"{figure}.pdf").is_file()


# --- a raw file that changes; two runs in one directory ------------------------------------------


def test_changed_raw_file_is_detected_and_rebuilt_never_mixed(tmp_path, data_mirror):
    """After binarization the raw file changes: Snakemake reruns binarize (the raw file is
    newer), binarize refuses the file by its sha256 and removes the old Parquet (no table of
    one file with the name of another); deleting the raw file fetches the pinned file again and
    rebuilds the Parquet, whose metadata records the sha256 it was built from."""
    config = TINY  # only its validation matters here; the target is one dataset
    work, env = tmp_path / "work", _env(WHCORE_DATA_MIRROR=str(data_mirror))
    spec = REGISTRY["entacmaea"]
    parquet = work / "resources/data/entacmaea.parquet"
    raw = work / "resources/raw/entacmaea" / spec.file
    target = "resources/data/entacmaea.parquet"

    first = run_snakemake(work, config, target, env=env)
    assert first.returncode == 0, first.stdout[-3000:]
    assert read_parquet_metadata(parquet)["source_sha256"] == spec.sha256 == sha256_of(raw)

    raw.chmod(0o644)
    with open(raw, "ab") as f:  # the file changes (and with it its mtime)
        f.write(b"\0appended")
    os.utime(raw, (time.time() + 5, time.time() + 5))
    dry = run_snakemake(work, config, "-n", target, env=env)
    assert re.search(
        r"rule binarize:.*?reason: Updated input files: resources/raw/entacmaea",
        dry.stdout,
        re.DOTALL,
    ), dry.stdout[-2000:]

    second = run_snakemake(work, config, target, env=env)
    assert second.returncode != 0
    log = (work / "logs/binarize/entacmaea.log").read_text()
    assert "checksum mismatch" in log and spec.sha256 in log, log
    assert not parquet.exists() and leftovers(parquet) == []

    raw.unlink()  # the fix the error message names: fetch the pinned file again
    third = run_snakemake(work, config, target, env=env)
    assert third.returncode == 0, third.stdout[-3000:]
    assert sha256_of(raw) == spec.sha256
    assert read_parquet_metadata(parquet)["source_sha256"] == spec.sha256


@pytest.mark.parametrize("same_target", [True, False])
def test_second_invocation_in_one_directory_is_refused(tmp_path, same_target):
    """While one Snakemake runs a training job, a second one in the same directory is refused,
    whether it asks for the same output (Snakemake refuses: locked or incomplete files) or for
    an output that shares no file with the first run (the project's own run lock: Snakemake's
    would let it run, and remove its lock folder on exit); the first finishes unharmed. (The
    first run's training process is paused with SIGSTOP while the second one tries, so that the
    first surely still runs however fast this machine is.)"""
    config = spectrum_config(tmp_path, {"standard": {}}, epochs=30, patience=30, log_every=1)
    settings = yaml.safe_load(config.read_text())
    settings["spectrum"]["draws"] = 2  # draw1's target shares no file with draw0's training
    config.write_text(yaml.safe_dump(settings, sort_keys=False))
    work = tmp_path / "work"
    target = run_file("standard", "default")
    other = target if same_target else "results/tiny/synthetic/spectrum/draw1.json"
    log = work / "logs/tiny/runs/spectrum/draw0/standard/default/size30_dseed0.log"
    first, pid = start_and_find_trainer(work, config, log, target, target)
    try:
        os.kill(pid, signal.SIGSTOP)
        try:
            second = run_snakemake(work, config, other)
        finally:
            os.kill(pid, signal.SIGCONT)
        out, _ = first.communicate(timeout=300)
    finally:
        first.kill()
    assert second.returncode != 0
    if same_target:
        refusals = ("Directory cannot be locked", "IncompleteFilesException")
    else:
        refusals = ("another Snakemake is running here",)
        assert not (work / other).exists()
    assert any(r in second.stdout for r in refusals), second.stdout[-2000:]
    assert first.returncode == 0, out[-3000:]
    records = pd.read_parquet(work / target)
    assert records["epoch"].max() == 30 and (records["status"] == "ok").all()


def test_training_job_dies_with_its_snakemake(tmp_path):
    """Snakemake itself is SIGKILLed mid-training: its training job stops within seconds
    instead of running on as an orphan (which would later write a result nobody planned)."""
    config = spectrum_config(tmp_path, {"standard": {}}, epochs=5000, patience=5000, log_every=1)
    work = tmp_path / "work"
    target = run_file("standard", "default")
    log = work / "logs/tiny/runs/spectrum/draw0/standard/default/size30_dseed0.log"
    first, pid = start_and_find_trainer(work, config, log, target, target)
    first.kill()  # SIGKILL: no cleanup by Snakemake
    first.wait()
    gone = lambda: not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)  # noqa: E731
    wait_for(gone, 30, f"the orphaned trainer {pid} to stop")
    assert not (work / target).exists() and leftovers(work / target) == []


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return "gone"
