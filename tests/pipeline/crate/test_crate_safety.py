"""`whcore render` on crates from anyone: crafted and broken crates are refused in one line,
before anything is written; nothing is written outside --out, nothing is run, nothing fetched.

Each crafted crate is the tiny run's real crate with some members replaced; where a case is
about what the crate says rather than about its integrity, the crafter recomputes the sha256
and size in the metadata (as an attacker would), so that the check under test is the only one
that can refuse it."""

from __future__ import annotations

import io
import json
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from whcore.pipeline.crate import open as crate_open
from whcore.pipeline.crate.bundle import JOBS
from whcore.pipeline.crate.open import METADATA, CrateError, stream_facts
from whcore.pipeline.crate.render import render

pytestmark = pytest.mark.workflow  # the tiny run's crate

FIGURE = "figures/fig4a_synthetic_r2"  # a figure of the tiny run (stem, in the crate)


def crafted(crate: Path, out: Path, members: dict, rehash: bool = True) -> Path:
    """A copy of ``crate`` with ``members`` (name -> bytes, or None to drop it) replaced or
    added; with ``rehash`` the metadata's sha256 and size follow the new contents."""
    with zipfile.ZipFile(crate) as source:
        contents = {name: source.read(name) for name in source.namelist()}
    contents.update(members)
    contents = {name: data for name, data in contents.items() if data is not None}
    if rehash:
        document = json.loads(contents[METADATA])
        for entity in document["@graph"]:
            if entity["@id"] in members and members[entity["@id"]] is not None:
                entity.update(stream_facts(io.BytesIO(contents[entity["@id"]])))
        contents[METADATA] = json.dumps(document).encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in contents.items():
            target.writestr(name, data)
    return out


def plan_of(crate: Path) -> list[dict]:
    with zipfile.ZipFile(crate) as archive:
        return json.loads(archive.read(JOBS))


def with_plan(crate: Path, out: Path, plan: list) -> Path:
    return crafted(crate, out, {JOBS: json.dumps(plan).encode()})


def one_figure(crate: Path) -> dict:
    """The plan entry of ``FIGURE``."""
    return next(e for e in plan_of(crate) if e["kind"] == "figure" and FIGURE in str(e["spec"]))


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A working folder inside ``tmp_path``; any connection, or any subprocess but the ``git``
    that a figure's provenance asks for this checkout's commit, fails the test."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def refuse(*args, **kwargs):
        raise AssertionError(f"render started something: {args!r:.200}")

    popen = subprocess.Popen

    def only_git(command, *args, **kwargs):
        if list(command)[:1] != ["git"]:
            refuse(command)
        return popen(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", only_git)
    import socket

    monkeypatch.setattr(socket.socket, "connect", refuse)
    return tmp_path


def refused(crate: Path, sandbox: Path, match: str) -> str:
    """Render ``crate`` into sandbox/out; assert it is refused with ``match`` in one line and
    that nothing at all was written."""
    before = tree(sandbox)
    with pytest.raises(CrateError, match=match) as caught:
        render(crate, sandbox / "out", log=lambda msg: None)
    message = str(caught.value)
    assert "\n" not in message
    new = [sandbox / p for p in tree(sandbox) - before]
    assert not [p for p in new if not p.is_dir()], "refused, yet it wrote"
    return message


# --- what a job may write, read and run ----------------------------------------------------------


@pytest.mark.parametrize(
    "stem",
    [
        "/tmp/elsewhere/results/tiny/figures/fig4a_synthetic_r2",  # absolute
        "results/tiny/../../../planted",  # climbing
        "results/tiny/figures/../../../../planted",
        "results/other/figures/fig4a_synthetic_r2",  # another run's
        "results/tiny/figures/not_in_the_crate",  # not one of the run's outputs
    ],
)
def test_a_job_writes_only_the_runs_outputs_under_out(crate, sandbox, stem):
    entry = one_figure(crate)
    entry["spec"]["outputs"]["stem"] = stem
    bad = with_plan(crate, sandbox / "bad.zip", [entry])
    message = refused(bad, sandbox, "is not a path of the run|not a file of the crate")
    assert "job" in message


def test_a_foreign_subcommand_or_kind_is_never_run(crate, sandbox):
    """The subcommand a plan names is not read; kinds other than figures and claims are skipped:
    a download job fetches nothing, a training job trains nothing."""
    entry = one_figure(crate)
    entry["subcommand"] = "download-own"
    download = {
        "id": "evil",
        "kind": "download_own",
        "subcommand": "download-own",
        "spec": {"url": "http://example.com/x", "outputs": {"raw": "/tmp/planted"}},
        "command_inputs": {},
        "outputs": ["/tmp/planted"],
    }
    train = {**download, "id": "burn", "kind": "train", "subcommand": "train"}
    bad = with_plan(crate, sandbox / "bad.zip", [download, train, entry])
    written = render(bad, sandbox / "out", log=lambda msg: None)
    stem = sandbox / "out" / FIGURE
    assert written == [stem.with_suffix(".pdf"), stem.with_suffix(".png")]
    assert tree(sandbox / "out") == {"figures", f"{FIGURE}.pdf", f"{FIGURE}.png"}

    only_foreign = with_plan(crate, sandbox / "foreign.zip", [download, train])
    refused(only_foreign, sandbox, "names no figure or claims job")


@pytest.mark.parametrize(
    "tables",
    [
        ["/etc/passwd"],
        ["results/tiny/../../../../etc/passwd"],
        ["results/tiny/claims.md"],  # a member, not a table
        ["results/tiny/tables/missing.parquet"],
        [],
    ],
)
def test_a_job_reads_only_the_crates_own_tables(crate, sandbox, tables):
    entry = one_figure(crate)
    entry["command_inputs"] = {"--tables": tables}
    bad = with_plan(crate, sandbox / "bad.zip", [entry])
    refused(bad, sandbox, "not a path of the run|not a table of the crate|names no table")


def test_a_job_takes_no_other_option(crate, sandbox):
    entry = one_figure(crate)
    entry["command_inputs"]["--mirror"] = ["http://example.com"]
    refused(with_plan(crate, sandbox / "bad.zip", [entry]), sandbox, "must be --tables only")


def test_a_spec_is_checked_as_its_kind_checks_it(crate, sandbox):
    entry = one_figure(crate)
    entry["spec"]["command"] = "rm -rf ~"
    refused(with_plan(crate, sandbox / "bad.zip", [entry]), sandbox, "field command: unknown")


def test_two_jobs_writing_one_file_are_refused(crate, sandbox):
    entry = one_figure(crate)
    bad = with_plan(crate, sandbox / "bad.zip", [entry, {**entry, "id": "again"}])
    refused(bad, sandbox, "another job writes too")


def test_a_link_in_out_that_leads_away_is_refused(crate, sandbox):
    (sandbox / "elsewhere").mkdir()
    (sandbox / "out").mkdir()
    (sandbox / "out" / "figures").symlink_to(sandbox / "elsewhere")
    bad = with_plan(crate, sandbox / "bad.zip", [one_figure(crate)])
    with pytest.raises(CrateError, match="leads outside"):
        render(bad, sandbox / "out", log=lambda msg: None)
    assert not list((sandbox / "elsewhere").iterdir())


# --- time: what a crate says costs bounded time to draw -------------------------------------------


def test_a_long_string_in_a_spec_is_refused_before_drawing(crate, sandbox):
    """A 15 MB run name took about 50 minutes to draw; any string longer than a name is refused
    (here 100,000 characters, as a 15 MB one would be)."""
    entry = one_figure(crate)
    entry["spec"].setdefault("settings", {})["run_name"] = "x" * 100_000
    bad = with_plan(crate, sandbox / "bad.zip", [entry])
    refused(bad, sandbox, "a string of 100,000 characters .* more than the 1,000 a name or title")


def test_tables_with_too_many_rows_or_columns_are_refused_before_drawing(
    crate, sandbox, monkeypatch
):
    """Ten times the draws took minutes against seconds: a figure's tables are bounded in rows
    (all its tables together) and columns (the bounds lowered below the tiny run's tables)."""
    from whcore.pipeline.crate import render as module

    bad = with_plan(crate, sandbox / "bad.zip", [one_figure(crate)])
    monkeypatch.setattr(module, "MAX_ROWS", 2)
    refused(bad, sandbox, "rows in all .* more than the 2 a figure's tables may hold")
    monkeypatch.setattr(module, "MAX_ROWS", 10**9)
    monkeypatch.setattr(module, "MAX_COLUMNS", 2)
    refused(bad, sandbox, "columns, more than the 2 a figure's table may have")


def test_a_render_longer_than_its_bound_stops_in_one_line(crate, sandbox):
    with pytest.raises(CrateError, match="rendering took more than 0.01 s and was stopped") as err:
        render(crate, sandbox / "out", log=lambda msg: None, seconds=0.01)
    assert "\n" not in str(err.value) and "--max-seconds" in str(err.value)


# --- integrity: the members are the run's -------------------------------------------------------


def test_an_edited_table_is_refused(crate, sandbox):
    with zipfile.ZipFile(crate) as archive:
        table = next(n for n in archive.namelist() if n.endswith(".parquet"))
        data = bytearray(archive.read(table))
    data[len(data) // 2] ^= 0xFF
    bad = crafted(crate, sandbox / "bad.zip", {table: bytes(data)}, rehash=False)
    refused(bad, sandbox, f"member {table} differs from its sha256 and size")


def test_a_member_the_metadata_does_not_describe_is_refused(crate, sandbox):
    bad = crafted(crate, sandbox / "bad.zip", {"tables/extra.parquet": b"x"}, rehash=False)
    refused(bad, sandbox, "tables/extra.parquet is not described")


def test_a_crate_without_digests_is_refused_with_the_fix(crate, sandbox):
    with zipfile.ZipFile(crate) as archive:
        document = json.loads(archive.read(METADATA))
    for entity in document["@graph"]:
        entity.pop("sha256", None)
    bad = crafted(crate, sandbox / "bad.zip", {METADATA: json.dumps(document).encode()}, False)
    refused(bad, sandbox, "has no sha256 and contentSize.*bundle the run again")


# --- unpacking is bounded -----------------------------------------------------------------------


def _zip(path: Path, members: dict, link: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return path


def test_a_zip_bomb_is_refused_from_its_directory(sandbox, monkeypatch):
    bomb = _zip(sandbox / "bomb.zip", {"tables/zeros.parquet": bytes(8 * 2**20)})
    assert bomb.stat().st_size < 50_000
    refused(bomb, sandbox, "expands 1[0-9]{3} times, more than the limit of 200")
    monkeypatch.setattr(crate_open, "MAX_BYTES", 2**20)
    refused(bomb, sandbox, "unpacks to 8 MiB, more than the limit of 1 MiB")
    monkeypatch.setattr(crate_open, "MAX_MEMBERS", 3)
    many = _zip(sandbox / "many.zip", {f"m{i}": b"" for i in range(4)})
    refused(many, sandbox, "4 members, more than the limit of 3")


@pytest.mark.parametrize("name", ["../planted", "/tmp/planted", "a/../../planted", "C:/x"])
def test_a_member_that_would_unpack_outside_is_refused(sandbox, name):
    refused(_zip(sandbox / "bad.zip", {name: b"x"}), sandbox, "would unpack outside the crate")
    assert not (sandbox / "planted").exists()


def test_a_symbolic_link_member_is_refused(sandbox):
    bad = _zip(sandbox / "bad.zip", {"a": b""}, link="tables/passwd.parquet")
    refused(bad, sandbox, "tables/passwd.parquet is a symbolic link")


def test_a_member_longer_than_its_entry_says_is_cut_off(sandbox):
    path = _zip(sandbox / "bad.zip", {"big": bytes(5000)})
    data = bytearray(path.read_bytes())  # shrink the declared size in both headers
    for marker, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(marker) + offset
        data[at : at + 4] = (100).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    refused(path, sandbox, "big (unpacks to more than the 100 bytes|cannot be unpacked)")


# --- broken crates: one line each ---------------------------------------------------------------


def test_broken_crates_are_refused_in_one_line(crate, sandbox):
    not_zip = sandbox / "not.zip"
    not_zip.write_text("hello")
    refused(not_zip, sandbox, "not a zip file")
    refused(_zip(sandbox / "empty.zip", {}), sandbox, "no ro-crate-metadata.json")
    refused(crafted(crate, sandbox / "m.zip", {METADATA: b"{"}, False), sandbox, "not RO-Crate")
    refused(crafted(crate, sandbox / "j.zip", {JOBS: b"[{"}), sandbox, "jobs.json is not valid")
    refused(crafted(crate, sandbox / "n.zip", {JOBS: b"{}"}), sandbox, "not a list of jobs")
    refused(crafted(crate, sandbox / "d.zip", {JOBS: b"[" * 100_000}), sandbox, "not valid")
    refused(crafted(crate, sandbox / "x.zip", {JOBS: None}), sandbox, "jobs.json is missing")
    record = json.dumps({"run_name": "../x"}).encode()
    refused(crafted(crate, sandbox / "r.zip", {"configuration.json": record}), sandbox, "no run")


def _table_replaced(crate: Path, out: Path, frame: pd.DataFrame) -> tuple[Path, dict]:
    """The crate with the first table ``FIGURE`` reads replaced by ``frame`` (rehashed), and
    that figure's plan alone."""
    entry = one_figure(crate)
    member = entry["command_inputs"]["--tables"][0].split("/", 2)[2]
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    plan = json.dumps([entry]).encode()
    return crafted(crate, out, {member: buffer.getvalue(), JOBS: plan}), entry


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame(),  # empty
        pd.DataFrame({"method": ["x"], "test_r2": ["not a number"]}),  # wrong dtype
    ],
)
def test_a_table_a_figure_cannot_be_drawn_from_is_one_line(crate, sandbox, frame):
    bad, entry = _table_replaced(crate, sandbox / "bad.zip", frame)
    refused(bad, sandbox, f"job '{entry['id']}' cannot be drawn from its tables")


def test_render_on_the_command_line_says_one_line(crate, tmp_path):
    bad = with_plan(crate, tmp_path / "bad.zip", [])
    command = [sys.executable, "-m", "whcore.command", "render", str(bad), "--out", "out"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "names no figure or claims job" in done.stderr


# --- the bundle holds files, not what links point to --------------------------------------------


def test_bundle_refuses_a_symbolic_link_in_the_run_folder(tiny_run, tmp_path):
    import shutil

    from conftest import TINY

    from whcore.pipeline.crate.bundle import bundle

    work = tmp_path / "work"
    shutil.copytree(tiny_run, work, symlinks=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("a key")
    figure = work / "results" / "tiny" / f"{FIGURE}.png"
    figure.unlink()
    figure.symlink_to(secret)
    with pytest.raises(ValueError, match=r"fig4a_synthetic_r2.png: a symbolic link.*Fix"):
        bundle(work / "results" / "tiny", str(TINY))
    assert not list(work.rglob("*.crate.zip"))


def test_render_replaces_no_users_file_in_out_and_refuses_before_drawing(crate, sandbox):
    out = sandbox / "out"
    out.mkdir()
    (out / "claims.md").write_text("my notes\n")
    with pytest.raises(FileExistsError, match="claims.md: an existing file that no whcore job"):
        render(crate, out, log=lambda msg: None)
    assert tree(out) == {"claims.md"} and (out / "claims.md").read_text() == "my notes\n"
