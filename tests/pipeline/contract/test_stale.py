"""`whcore stale CONFIG [--remove]`: the files of a run folder judged by the configuration that
made it: listed, and removed only where this project wrote them."""

import json
import zipfile
from pathlib import Path

import pandas as pd
from conftest import TINY
from test_spec_lookup import RECORDS, ROOT, contract  # noqa: F401 (a fixture)

from whcore.pipeline.cli import main


def stale_cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["stale", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def _recorded_run(contract, **other) -> Path:  # noqa: F811
    """results/tiny with the record of the tiny configuration (plus ``other`` settings: then
    another configuration, from other.yaml) and 30 training records of a train size the tiny
    configuration has not: what an earlier configuration of the same run name left."""
    from whcore.core.io import write_parquet
    from whcore.pipeline.runtime.runrecord import RECORD, config_digest

    config = {**contract.config, **other}
    source = "other.yaml" if other else str(TINY)
    record = {"digest": config_digest(config), "source": source, "run_name": "tiny"}
    Path(ROOT).mkdir(parents=True)
    (Path(ROOT) / RECORD).write_text(json.dumps(record))
    folder = Path(RECORDS.replace("/size30_", "/size999_"))  # a train size tiny has not
    folder.mkdir(parents=True)
    for k in range(30):
        write_parquet(pd.DataFrame({"r2": [0.5]}), folder / f"lam{k}.parquet", {"spec": {}})
    return folder


def test_stale_refuses_a_run_another_configuration_made(
    capsys,
    tmp_path,
    monkeypatch,
    contract,  # noqa: F811
):
    monkeypatch.chdir(tmp_path)
    records = _recorded_run(contract, n_seeds_other=1)
    for remove in ([], ["--remove"]):
        code, out, err = stale_cli(capsys, TINY, *remove)
        assert code == 2 and out == "" and len(err.splitlines()) == 1
        assert f"{ROOT}: made by another configuration (other.yaml, digest" in err
        assert "nothing was listed or removed" in err
    assert len(list(records.iterdir())) == 30


def test_stale_remove_deletes_only_what_this_project_wrote(
    capsys,
    tmp_path,
    monkeypatch,
    contract,  # noqa: F811
):
    monkeypatch.chdir(tmp_path)
    records = _recorded_run(contract)
    root = Path(ROOT)
    mine = {  # the user's own files in the run folder
        "NOTES.md": "my notes",
        ".git/config": "[core]",
        "analysis.ipynb": "{}",
        "report-before.html": "<html>",
        f"{records.relative_to(root)}/notes.txt": "why lam0 diverged",
    }
    for name, text in mine.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    with zipfile.ZipFile(root / "tiny-before.crate.zip", "w") as crate:  # a crate kept aside
        graph = [{"@id": "./", "name": "whcore run tiny"}]
        crate.writestr("ro-crate-metadata.json", json.dumps({"@graph": graph}))

    stale = sorted(str(p) for p in records.glob("*.parquet"))
    code, out, err = stale_cli(capsys, TINY, "--remove")
    assert code == 0 and len(err.splitlines()) == 1
    assert sorted(out.split()) == stale
    assert "6 file(s) no whcore job wrote are kept, never removed" in err
    assert not list(records.glob("*.parquet")) and (records / "notes.txt").exists()
    assert all((root / name).read_text() == text for name, text in mine.items())
    assert (root / "tiny-before.crate.zip").exists()


def _user_pdf(path: Path) -> None:
    """A user's own figure whose bytes say "whcore" (its title), made by another program."""
    import matplotlib.pyplot as plt

    fig = plt.figure()
    fig.savefig(path, metadata={"Title": "whcore results, redrawn", "Creator": "my notebook"})
    plt.close(fig)


def test_stale_remove_never_touches_a_repository_or_a_users_figure(
    capsys,
    tmp_path,
    monkeypatch,
    contract,  # noqa: F811
):
    """Only files at the layout's paths that carry the project's mark as data are removed, and
    only the folders that held them: a repository kept in the run folder after `git gc` (empty
    refs folders) and one nested in it stay whole, and a user's figure titled "whcore" stays."""
    monkeypatch.chdir(tmp_path)
    records = _recorded_run(contract)
    root = Path(ROOT)
    for repo in (root, root / "figures" / "drafts"):  # the run folder and a folder in it
        for empty in ("refs/heads", "refs/tags", "objects/info"):
            (repo / ".git" / empty).mkdir(parents=True)
        (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "figures" / "drafts" / "fig1a_support_evolution.pdf").write_bytes(b"%PDF whcore")
    (root / "tables" / "empty-by-the-user").mkdir(parents=True)
    _user_pdf(root / "figures" / "fig9_mine.pdf")
    assert b"whcore" in (root / "figures" / "fig9_mine.pdf").read_bytes()

    code, out, err = stale_cli(capsys, TINY)  # a dry run by default
    assert code == 0 and sorted(out.split()) == sorted(map(str, records.glob("*.parquet")))
    assert "a dry run: --remove removes them" in err
    assert len(list(records.glob("*.parquet"))) == 30
    code, out, err = stale_cli(capsys, TINY, "--remove")
    assert code == 0 and f"{records}/" in out.split()  # the removal lists what it removes
    assert not records.exists() and (root / "figures" / "fig9_mine.pdf").is_file()
    for repo in (root, root / "figures" / "drafts"):
        assert all(
            (repo / ".git" / e).is_dir() for e in ("refs/heads", "refs/tags", "objects/info")
        )
    assert (root / "figures" / "drafts" / "fig1a_support_evolution.pdf").is_file()
    assert (root / "tables" / "empty-by-the-user").is_dir()
