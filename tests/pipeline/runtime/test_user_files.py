"""Nothing a user wrote is removed or replaced by any command: a run folder holds a user's files
of every kind, at the paths the project's writers write and beside them, and every writer (one
job of each kind of the tiny configuration, `binarize`, a failing `binarize-own`, `macros`,
`bundle`) and the remover (`stale --remove`) run over it."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from conftest import TINY

from whcore.pipeline.cli import main
from whcore.pipeline.contract import load_contract
from whcore.pipeline.runtime.runrecord import RECORD, config_digest

SCHEMA = str(Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml")


def _user_figure(path: Path) -> None:
    """A figure of the user's own, its metadata saying "whcore" (a title is no maker's mark)."""
    fig = plt.figure()
    title = {"Title": "whcore, redrawn"}
    fig.savefig(
        path, metadata={**title, "Creator": "my notebook"} if path.suffix == ".pdf" else title
    )
    plt.close(fig)


def user_file(path: Path) -> None:
    """A file of the user's own at ``path``, of the kind its suffix says, that mentions whcore:
    a table, a figure, a crate-like zip, JSON, Markdown, TSV, TeX; a folder for no suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == "":
        path.mkdir(exist_ok=True)
        (path / "notes.txt").write_text("my whcore notes")
    elif path.suffix == ".parquet":
        pd.DataFrame({"whcore": [1.0], "y": [0.5]}).to_parquet(path)
    elif path.suffix in (".pdf", ".png"):
        _user_figure(path)
    elif path.suffix == ".zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("ro-crate-metadata.json", json.dumps({"@graph": []}))
    else:
        path.write_text(
            {
                ".json": json.dumps({"note": "whcore", "verdict": "mine"}),
                ".md": "# My notes on whcore\n",
                ".tsv": "tool\twhcore_version_i_used\nwhcore\t0\n",
                ".tex": "% my manuscript on whcore (whcore macros)\n\\section{Results}\n",
            }[path.suffix]
        )


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``root``."""
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in root.rglob("*")
    }


@pytest.fixture
def filled(tmp_path, monkeypatch):
    """The working folder of the tiny configuration with its run record, a user's file at one
    output of every kind of job (their paths) and a user's files of every kind beside them (a
    repository after `git gc`, a nested one, notes, an empty folder)."""
    monkeypatch.chdir(tmp_path)
    contract = load_contract(str(TINY), SCHEMA)
    root = Path(contract.layout.root)
    root.mkdir(parents=True)
    record = {"digest": config_digest(contract.config), "source": str(TINY), "run_name": "tiny"}
    (root / RECORD).write_text(json.dumps(record))
    jobs = {}
    for job in contract.jobs.values():
        jobs.setdefault(job.kind, job)
    for job in jobs.values():
        for path in job.spec.written():
            user_file(Path(path))
    for name in ("notes.md", "old/figures/fig1a_support_evolution.pdf", "old/t.parquet"):
        user_file(root / name)
    for repo in (root, root / "figures" / "drafts"):
        for empty in ("refs/heads", "refs/tags"):
            (repo / ".git" / empty).mkdir(parents=True)
    (root / "tables" / "empty-by-the-user").mkdir(parents=True)
    user_file(root / "claims.tex")
    user_file(root / "tiny-mine.crate.zip")
    user_file(Path("resources/data/gb1.parquet"))
    return contract, jobs


def test_no_writer_or_remover_removes_or_replaces_a_users_file(filled, tmp_path, capsys):
    from whcore.pipeline.crate.bundle import bundle
    from whcore.pipeline.jobs.binarize_own import BinarizeOwnSpec
    from whcore.pipeline.jobs.writer import Outputs

    contract, jobs = filled
    before = snapshot(tmp_path)
    refused = []
    for kind, job in sorted(jobs.items()):
        with pytest.raises(FileExistsError, match="no whcore job wrote") as err:
            Outputs(job.spec)
        refused.append(kind)
        assert "\n" not in str(err.value)
    root = Path(contract.layout.root)
    raw = tmp_path / "gb1.csv"
    raw.write_text("not the data")
    binarize = ["binarize", "gb1", "--raw", str(raw), "--out", "resources/data/gb1.parquet"]
    assert main(binarize) == 2
    source = {"format": "binary", "file": str(raw)}
    with pytest.raises(Exception):  # noqa: B017 (the file is no table: any failure)
        spec = {"dataset": "gb1", "raw": str(raw), "source": source}
        BinarizeOwnSpec(**spec, outputs={"data": "resources/data/gb1.parquet"}).run(None, None)
    claims = Path(jobs["claims"].spec.outputs["json"])
    for tex in (root / "claims.tex", claims):  # the manuscript, and a typo naming claims.json
        assert main(["macros", str(claims), str(tex)]) == 2
    with pytest.raises(FileExistsError):
        bundle(root, out=root / "tiny-mine.crate.zip")
    assert main(["stale", str(TINY), "--remove"]) == 0
    capsys.readouterr()
    after = snapshot(tmp_path)
    changed = [name for name, data in before.items() if after.get(name, b"gone") != data]
    assert not changed, f"removed or replaced: {changed}"
    assert {"target", "train", "aggregate", "figure", "claims"} <= set(refused), refused
