"""Superseded outputs, writable folders and replaceable paths (whcore.pipeline.runtime.guards)."""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from whcore.core.io import write_parquet
from whcore.pipeline.runtime import guards


def test_a_result_written_for_another_spec_meanwhile_is_never_replaced(tmp_path):
    path = tmp_path / "runs.parquet"
    before = guards.stamp(path)  # nothing there when the job started
    write_parquet(pd.DataFrame({"x": [1]}), path, {"spec": {"training": {"epochs": 50}}})
    with pytest.raises(RuntimeError, match="different spec"):
        guards.refuse_superseded(path, {"training": {"epochs": 6001}}, before)
    guards.refuse_superseded(path, {"training": {"epochs": 50}}, before)  # the same job: fine
    unchanged = guards.stamp(path)  # there before the job started, unchanged since
    guards.refuse_superseded(path, {"training": {"epochs": 6001}}, unchanged)


def test_an_output_dated_in_the_future_does_not_stop_a_job_with_a_new_spec(tmp_path):
    """A clock set wrong (or a copy) dates an output ahead: only a change since the job's start
    tells another job's output."""
    from whcore.pipeline.jobs.entacmaea_energy import EntacmaeaEnergySpec
    from whcore.pipeline.jobs.writer import Outputs

    path = tmp_path / "table.parquet"
    write_parquet(pd.DataFrame({"a": [1]}), path, {"spec": {"top": 5}})
    ahead = time.time() + 86_400
    os.utime(path, (ahead, ahead))
    spec = EntacmaeaEnergySpec.from_dict({"data": "d.parquet", "outputs": {"table": str(path)}})
    Outputs(spec).table("table", pd.DataFrame({"a": [2]}))
    assert pd.read_parquet(path)["a"].tolist() == [2]


def test_unwritable_output_folder_is_named_before_any_work(tmp_path):
    blocker = tmp_path / "results"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(PermissionError, match=f"{blocker / 'runs'}: cannot write outputs"):
        guards.check_writable(blocker / "runs" / "r.parquet")
    guards.check_writable(tmp_path / "ok" / "r.parquet")
    assert os.listdir(tmp_path / "ok") == []


def test_a_full_disk_is_named_before_any_work(tmp_path, monkeypatch):
    from whcore.pipeline.jobs.entacmaea_energy import EntacmaeaEnergySpec
    from whcore.pipeline.jobs.writer import Outputs

    path = tmp_path / "tables" / "table.parquet"
    spec = EntacmaeaEnergySpec.from_dict({"data": "d.parquet", "outputs": {"table": str(path)}})
    usage = shutil.disk_usage(tmp_path)._replace(free=guards.MIN_FREE_BYTES - 1)
    monkeypatch.setattr(guards.shutil, "disk_usage", lambda folder: usage)
    with pytest.raises(OSError) as err:
        Outputs(spec)
    assert str(err.value).startswith(f"{path.parent}: its disk has 99 MiB free, less than ")
    assert str(err.value).endswith(
        "free space there or run in a working directory on a larger disk"
    )


@pytest.mark.parametrize("how", ["table", "file"])
def test_a_disk_that_fills_while_writing_names_the_output(tmp_path, monkeypatch, how):
    from whcore.pipeline.jobs import writer
    from whcore.pipeline.jobs.entacmaea_energy import EntacmaeaEnergySpec

    path = tmp_path / "table.parquet"
    spec = EntacmaeaEnergySpec.from_dict({"data": "d.parquet", "outputs": {"table": str(path)}})
    outputs = writer.Outputs(spec)

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer, "write_parquet", full)
    with pytest.raises(OSError, match=f"^{path}: the disk filled while writing it; free space"):
        if how == "table":
            outputs.table("table", pd.DataFrame({"a": [1]}))
        else:
            with outputs.file(path) as tmp:
                full(tmp)
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_a_full_disk_hidden_behind_a_zlib_error_is_named(tmp_path):
    """Matplotlib's PDF writer, on a full disk, raises zlib's error with the ENOSPC behind it."""
    import zlib

    path = tmp_path / "fig.pdf"
    with pytest.raises(OSError, match=f"^{path}: the disk filled while writing it; free"):
        with guards.naming_a_full_disk(path):
            try:
                raise OSError(errno.ENOSPC, "No space left on device")
            except OSError:
                raise zlib.error("Error -2 while flushing: inconsistent stream state") from None
    with pytest.raises(zlib.error):  # a zlib error of its own stays what it is
        with guards.naming_a_full_disk(path):
            raise zlib.error("Error -3 while decompressing")


def test_provenance_names_the_code_libraries_device_host_and_time():
    from whcore.pipeline.runtime.provenance import git_commit, provenance

    record = provenance("cpu")
    assert record["device"] == "cpu" and record["host"] and record["started"]
    assert record["whcore_version"] and {"torch", "numpy", "pandas"} <= set(record["libraries"])
    assert record["git_commit"].removesuffix("+dirty") == git_commit().removesuffix("+dirty")
    assert git_commit(Path("/")) == "not a checkout"


def test_every_kind_of_file_the_project_writes_carries_its_mark(tmp_path):
    """What the writers write is recognised as the project's (and so may be replaced); a
    user's file of each kind is not, wherever it lies."""
    import json
    import shutil
    import zipfile

    import matplotlib.pyplot as plt
    from test_own_data_report import selected_table

    from whcore.data.synthetic import degree_ladder
    from whcore.pipeline.analyses.own_data import write_report
    from whcore.pipeline.claims.macros import write_macros
    from whcore.pipeline.figures.style import save_figure
    from whcore.pipeline.runtime.marks import CRATE_NAME, owned

    faithful = Path(__file__).resolve().parents[3] / "docs" / "faithful"
    for name in ("claims.md", "claims.json", "provenance.tsv", "fig3_degree_sae_energy.png"):
        shutil.copy(faithful / name, tmp_path / name)
    write_macros(tmp_path / "claims.json", tmp_path / "claims.tex")
    write_report({"real_selected": selected_table()}, tmp_path / "own.md", tmp_path / "own.json")
    degree_ladder(6, 3, 0).to_json(tmp_path / "g.json")
    write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "t.parquet", {"spec": {}})
    save_figure(plt.figure(), tmp_path / "fig", {"whcore_version": "0"})
    with zipfile.ZipFile(tmp_path / "run.crate.zip", "w") as crate:
        graph = [{"@id": "./", "name": CRATE_NAME.format(run="tiny")}]
        crate.writestr("ro-crate-metadata.json", json.dumps({"@graph": graph}))
    written = sorted(tmp_path.iterdir())
    assert len(written) == 12 and all(owned(path) for path in written), written

    users = tmp_path / "results" / "mine"  # under results/: no mark for that
    users.mkdir(parents=True)
    for path in written:
        (users / path.name).write_bytes(b"mine")
    pd.DataFrame({"x": [1]}).to_parquet(users / "t.parquet")
    assert not any(owned(path) for path in users.iterdir())
    with pytest.raises(FileExistsError, match=r"claims.md: an existing file .* Fix: move it"):
        guards.check_replaceable(users / "claims.md", fix="move it")


# --- a writer replaces only the same kind of output ---------------------------------------------

FAITHFUL = Path(__file__).resolve().parents[3] / "docs" / "faithful"


def binarized(path: Path, dataset: str) -> Path:
    """A binarized table of ``dataset`` at ``path`` (its metadata as `whcore binarize` writes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame({"x0": [0, 1, 0, 1], "y": [0.1, 0.2, 0.3, 0.4]})
    write_parquet(frame, path, {"dataset": dataset, "source_sha256": "0" * 64})
    return path


def test_a_writer_keeps_the_projects_output_of_another_kind(tmp_path, monkeypatch, capsys):
    """The typos of a careless user: `macros X.json X.json`, `bundle --out <a table>`, a
    training job whose records are a binarized table, `binarize gb1 --out <entacmaea's>`."""
    from test_spec_cli import spec_for

    from whcore.pipeline.cli import main
    from whcore.pipeline.crate.bundle import bundle
    from whcore.pipeline.jobs.train import TrainSpec
    from whcore.pipeline.jobs.writer import Outputs

    monkeypatch.chdir(tmp_path)
    claims = tmp_path / "results" / "tiny" / "claims.json"
    claims.parent.mkdir(parents=True)
    shutil.copy(FAITHFUL / "claims.json", claims)
    table = tmp_path / "results" / "tiny" / "tables" / "t.parquet"
    table.parent.mkdir()
    write_parquet(pd.DataFrame({"x": [1]}), table, {"spec": {}})
    data = binarized(tmp_path / "resources" / "data" / "entacmaea.parquet", "entacmaea")
    before = {path: path.read_bytes() for path in (claims, table, data)}

    assert main(["macros", str(claims), str(claims)]) == 2
    assert "holds another kind of whcore output (claims, not macros)" in capsys.readouterr().err
    with pytest.raises(FileExistsError, match="another kind of whcore output .table, not crate"):
        bundle(tmp_path / "results" / "tiny", out=table)
    spec = TrainSpec.from_dict(spec_for(tmp_path / "g.json", outputs={"records": str(data)}))
    with pytest.raises(FileExistsError, match="data:entacmaea, not records"):
        Outputs(spec)
    raw = tmp_path / "gb1.csv"
    raw.write_text("not read")
    assert main(["binarize", "gb1", "--raw", str(raw), "--out", str(data), "--no-verify"]) == 2
    assert "(data:entacmaea, not data:gb1)" in capsys.readouterr().err
    assert {path: path.read_bytes() for path in before} == before


def test_a_failing_binarization_deletes_only_its_own_datasets_table(tmp_path):
    from whcore.data import datasets
    from whcore.pipeline.jobs.binarize_own import BinarizeOwnSpec

    other = binarized(tmp_path / "gb1.parquet", "entacmaea")
    with pytest.raises(FileNotFoundError):
        datasets.binarize("gb1", tmp_path / "missing.csv", other)
    mine = binarized(tmp_path / "mine.parquet", "gb1")  # a user's table under the output's name
    source = {"format": "binary", "file": str(tmp_path / "missing.csv")}
    spec = {"dataset": "mine", "raw": source["file"], "source": source}
    with pytest.raises(Exception):  # noqa: B017 (any failure of the binarization)
        BinarizeOwnSpec(**spec, outputs={"data": str(mine)}).run(None, None)
    assert other.is_file() and mine.is_file()
    with pytest.raises(FileNotFoundError):  # its own dataset's older table goes
        datasets.binarize("gb1", tmp_path / "missing.csv", binarized(tmp_path / "g.parquet", "gb1"))
    assert not (tmp_path / "g.parquet").exists()


def test_a_binarized_table_is_read_only_as_the_dataset_it_names(tmp_path):
    from whcore.data.loading import read_table

    swapped = binarized(tmp_path / "entacmaea.parquet", "gb1")
    with pytest.raises(
        ValueError, match="entacmaea.parquet: a binarized table of dataset gb1, not"
    ):
        read_table(str(swapped))
    x, y = read_table(str(binarized(tmp_path / "gb1.parquet", "gb1")))
    assert x.shape == (4, 1) and len(y) == 4
