"""Inputs of a careless or hostile user: none deletes a user's file, none lets a bad row
survive, each is refused in one true line naming the file (docs/faults.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from whcore.pipeline.cli import main as whcore


def _target(path: Path) -> str:
    spec = {"family": "degree_ladder", "n": 6, "max_degree": 3, "seed": 0}
    return json.dumps({**spec, "outputs": {"target": str(path)}})


def _train(target: Path, records, spectra=None) -> str:
    outputs = {"records": str(records)}
    if spectra is not None:
        outputs["spectra"] = str(spectra)
    return json.dumps({
        "method": "standard",
        "spectrum": spectra is not None,
        "data": {"source": "synthetic", "path": str(target), "train_size": 20, "data_seed": 0},
        "training": {"seeds": [0], "epochs": 2, "patience": 2, "width": 1},
        "outputs": outputs,
    })  # fmt: skip


def _run_train(spec: str) -> int:
    return whcore(["train", "--spec", spec, "--device", "cpu", "--log-every", "0"])


# --- 1. a hand spec never replaces what no job wrote ---------------------------------------------


def test_a_hand_spec_never_replaces_a_users_folder_or_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert whcore(["synthetic", "--spec", _target(tmp_path / "g.json")]) == 0
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.txt").write_text("three years")
    assert _run_train(_train(tmp_path / "g.json", "precious")) == 2
    err = capsys.readouterr().err
    assert "precious: an existing folder that no whcore job wrote" in err
    assert len(err.strip().splitlines()) == 1
    assert (precious / "thesis.txt").read_text() == "three years"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "precious"]

    # the working directory (or a folder holding it) is never an output
    for path in (".", str(tmp_path), str(tmp_path.parent)):
        assert _run_train(_train(tmp_path / "g.json", path)) == 2
        assert "may not be the working directory" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "precious"]

    # a file of the user's named as a baselines' or a target's output
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}')
    assert whcore(["synthetic", "--spec", _target(notes)]) == 2
    assert "notes.json: an existing file that no whcore job wrote" in capsys.readouterr().err
    assert notes.read_text() == '{"mine": 1}'

    # what a job wrote is replaced on a rerun: a records folder, a g* target
    assert whcore(["synthetic", "--spec", _target(tmp_path / "g.json")]) == 0
    assert _run_train(_train(tmp_path / "g.json", "out/runs", "out/spectra")) == 0
    assert _run_train(_train(tmp_path / "g.json", "out/runs", "out/spectra")) == 0
    assert [p.name for p in (tmp_path / "out/runs").iterdir()] == ["default.parquet"]
    # one user's file inside a records folder makes it the user's again
    (tmp_path / "out/runs/readme.txt").write_text("mine")
    assert _run_train(_train(tmp_path / "g.json", "out/runs")) == 2
    assert (tmp_path / "out/runs/readme.txt").exists()


def test_a_damaged_raw_file_of_the_users_is_not_deleted_by_download_user(tmp_path, capsys):
    mine = tmp_path / "mine.csv"
    mine.write_text("my own data\n")
    spec = {"dataset": "mine", "url": "http://127.0.0.1:9/mine.csv", "sha256": "0" * 64,
            "outputs": {"raw": str(mine)}}  # fmt: skip
    assert whcore(["download-user", "--spec", json.dumps(spec)]) == 2
    assert "mine.csv: an existing file that no whcore job wrote" in capsys.readouterr().err
    assert mine.read_text() == "my own data\n"


def test_whcore_binarize_out_never_replaces_a_users_file(tmp_path, capsys):
    mine = tmp_path / "gb1.parquet"
    mine.write_bytes(b"not a whcore table")
    assert whcore(["binarize", "gb1", "--raw", os.devnull, "--out", str(mine)]) == 2
    assert "gb1.parquet: an existing file that no whcore job wrote" in capsys.readouterr().err
    assert mine.read_bytes() == b"not a whcore table"
