"""`whcore bundle --slim`: a small crate of the tiny run that `whcore render` turns into the same
claims as the full crate, which says what it left out and what it cut to the values the claims
read, passes the full crate's checks, and is refused, naming the member and the fix, when a
member is removed or edited."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from test_crate_safety import crafted, refused, sandbox  # noqa: F401 (a fixture)

from whcore.pipeline.crate.bundle import JOBS, bundle, check_crate, validate_crate
from whcore.pipeline.crate.open import METADATA
from whcore.pipeline.crate.render import render
from whcore.pipeline.crate.slim import LEFT_OUT, SLIM

pytestmark = pytest.mark.workflow  # the tiny run's crate

CLAIMS = ("claims.json", "claims.md", "provenance.tsv")
HEATMAP = "tables/spectrum_heatmap.parquet"  # per epoch, read by figures only: left out
EPOCHS = "tables/spectrum_epochs.parquet"  # per epoch, read by the claims: kept


@pytest.fixture(scope="module")
def slim(crate, tmp_path_factory) -> Path:
    """The slim crate of the run the full crate ``crate`` was made from (written beside no
    file of the run; validated by roc-validator as it is written)."""
    return bundle(
        crate.parent, out=tmp_path_factory.mktemp("slim") / "tiny.slim.crate.zip", slim=True
    )


def _graph(crate: Path) -> dict[str, dict]:
    with zipfile.ZipFile(crate) as archive:
        graph = json.loads(archive.read(METADATA))["@graph"]
    return {entity["@id"]: entity for entity in graph}


def _names(crate: Path) -> set[str]:
    with zipfile.ZipFile(crate) as archive:
        return set(archive.namelist())


def _read(crate: Path, member: str) -> bytes:
    with zipfile.ZipFile(crate) as archive:
        return archive.read(member)


def _claims_tables(crate: Path) -> set[str]:
    plan = json.loads(_read(crate, JOBS))
    return {
        path.removeprefix("results/tiny/")
        for entry in plan
        if entry["kind"] == "claims"
        for path in entry["command_inputs"]["--tables"]
    }


def _table(crate: Path, member: str):
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(_read(crate, member)))


def test_the_slim_crate_is_smaller_and_says_what_it_left_out(crate, slim):
    full, small = _names(crate), _names(slim)
    assert slim.stat().st_size < crate.stat().st_size / 2
    assert small < full
    # every table a claim reads (re-encoded: the same table, in fewer bytes); a per-epoch table
    # only figures read, and every figure render can redraw, left out; the PDF of a figure it
    # cannot redraw, kept
    for member in set(CLAIMS) | {JOBS, "config.yaml"}:
        assert _read(slim, member) == _read(crate, member), member
    graph, full_graph = _graph(slim), _graph(crate)
    for member in _claims_tables(crate) - {EPOCHS}:
        table, run_table = _table(slim, member), _table(crate, member)
        assert table.schema.equals(run_table.schema, check_metadata=True), member
        assert table.to_pandas().equals(run_table.to_pandas()), member
        assert "re-encoded losslessly" in graph[member]["description"]
        assert full_graph[member]["sha256"] in graph[member]["description"]
    # the per-epoch table the curve claims read: cut to what they read (claims.CLAIM_READS)
    table, run_table = _table(slim, EPOCHS), _table(crate, EPOCHS)
    assert table.schema.equals(run_table.schema, check_metadata=True)
    assert 0 < table.num_rows < run_table.num_rows
    assert table["val_mse"].null_count == table.num_rows
    assert "cut to the values the claims read" in graph[EPOCHS]["description"]
    assert full_graph[EPOCHS]["sha256"] in graph[EPOCHS]["description"]
    assert graph[SLIM]["mentions"] == [{"@id": EPOCHS}]
    assert len(_read(slim, EPOCHS)) < len(_read(crate, EPOCHS))
    assert EPOCHS in small and HEATMAP not in small
    for figure in ("fig1b_spectrum_evolution", "fig1a_support_evolution"):
        assert f"figures/{figure}.pdf" in small  # drawn from a table left out / cut: kept
        assert f"figures/{figure}.png" not in small
    assert "figures/fig4a_synthetic_r2.pdf" not in small  # redrawn from synthetic_summary

    assert {"@id": SLIM} in graph["./"]["mentions"]
    listed = {part["@id"].removeprefix(LEFT_OUT) for part in graph[SLIM]["hasPart"]}
    assert listed == full - small  # what was left out, no more, no less
    for member in listed:
        entity, original = graph[LEFT_OUT + member], full_graph[member]
        assert entity["@type"] == "CreativeWork" and "left out" in entity["description"]
        assert (entity["sha256"], entity["contentSize"]) == (
            original["sha256"],
            original["contentSize"],
        )
    # the actions name what was left out, as they name the run records
    fig4a = graph["#job/results/tiny/figures/fig4a_synthetic_r2.pdf"]
    assert {r["@id"] for r in fig4a["result"]} == {
        f"{LEFT_OUT}figures/fig4a_synthetic_r2.pdf",
        f"{LEFT_OUT}figures/fig4a_synthetic_r2.png",
    }
    assert check_crate(slim) == []
    assert validate_crate(slim) == []


def test_render_of_the_slim_crate_gives_the_claims_of_the_full_crate(
    tiny_run, crate, slim, tmp_path
):
    """The full crate's claims are those its render writes (test_bundle): the slim crate's
    render writes them too, byte for byte; it redraws every figure it can, as the run drew
    it, and copies, saying so, the PDF of each one it cannot."""
    from matplotlib.image import imread

    notices = []
    written = render(slim, tmp_path / "out", log=lambda msg: None, notice=notices.append)
    out = tmp_path / "out"
    for name in CLAIMS:
        assert (out / name).read_bytes() == _read(crate, name), name
    assert json.loads((out / "claims.json").read_text()) == json.loads(_read(crate, "claims.json"))

    run = tiny_run / "results" / "tiny" / "figures"
    copied = {p.removeprefix("figures/") for p in _names(slim) if p.startswith("figures/")}
    from_epochs = {
        f"{name}.pdf"
        for name in (
            "fig1a_support_evolution",
            "fig2_sae_evolution",
            "fig3_degree_sae_energy",
            "figA1_support_evolution_sizes",
            "figA3_sae_evolution_sizes",
            "figA4_degree_sae_energy_sizes",
        )
    }
    assert copied == from_epochs | {
        "fig1b_spectrum_evolution.pdf",
        "figA2_spectrum_evolution_draws.pdf",
        "fig4b_synthetic_runtime.pdf",
        "figA6_synthetic_runtime_all.pdf",
    }
    assert len(notices) == len(copied)
    for name in copied:
        assert (out / "figures" / name).read_bytes() == (run / name).read_bytes()
        notice = next(n for n in notices if name in n)
        assert "copied from the crate, not redrawn" in notice
        why = "cut to the values the claims read" if name in from_epochs else "left out"
        assert why in notice, notice
        assert not (out / "figures" / name).with_suffix(".png").exists()
    drawn = {p.name for p in run.iterdir()} - copied - {Path(n).stem + ".png" for n in copied}
    assert {p.name for p in (out / "figures").iterdir()} == drawn | copied
    for name in drawn:
        if name.endswith(".png"):
            assert (imread(out / "figures" / name) == imread(run / name)).all(), name
    assert sorted(written) == sorted(p for p in out.rglob("*") if p.is_file())


def _left_out_too(slim: Path, member: str) -> bytes:
    """The slim crate's metadata listing ``member`` as left out, as if it were."""
    document = json.loads(_read(slim, METADATA))
    graph = [e for e in document["@graph"] if e["@id"] != member]
    graph.append({"@id": LEFT_OUT + member, "@type": "CreativeWork", "name": member})
    next(e for e in graph if e["@id"] == SLIM)["hasPart"].append({"@id": LEFT_OUT + member})
    return json.dumps({**document, "@graph": graph}).encode()


def test_a_slim_crate_missing_or_editing_a_member_is_refused(slim, sandbox):  # noqa: F811
    # an edited table
    data = bytearray(_read(slim, EPOCHS))
    data[len(data) // 2] ^= 0xFF
    bad = crafted(slim, sandbox / "edited.zip", {EPOCHS: bytes(data)}, rehash=False)
    refused(bad, sandbox, f"member {EPOCHS} differs from its sha256 and size")

    # a table the claims read, taken out of the zip
    lost = crafted(slim, sandbox / "lost.zip", {EPOCHS: None})
    message = refused(lost, sandbox, f"reads {EPOCHS}, which is not a table of the crate")
    assert "metadata describes it" in message and "Fix: bundle the run again" in message

    # ... and said to be left out: the claims cannot be drawn without it
    members = {EPOCHS: None, METADATA: _left_out_too(slim, EPOCHS)}
    message = refused(
        crafted(slim, sandbox / "out.zip", members, rehash=False),
        sandbox,
        f"reads {EPOCHS}, which is left out of this slim crate",
    )
    assert "claims.md" in message and str(sandbox / "out.zip") in message
    assert "Fix: render the run's full crate" in message and "without --slim" in message

    # a figure whose table is left out, or cut to the claims' reads, without the PDF the slim
    # crate keeps of it
    for figure, table, why in (
        ("fig1b_spectrum_evolution", HEATMAP, "is left out of this slim crate"),
        ("fig1a_support_evolution", EPOCHS, "is cut to the values the claims read"),
    ):
        pdf = f"figures/{figure}.pdf"
        members = {pdf: None, METADATA: _left_out_too(slim, pdf)}
        message = refused(
            crafted(slim, sandbox / f"{figure}.zip", members, rehash=False),
            sandbox,
            f"{figure}.*reads {table}, which {why}",
        )
        assert "Fix: render the run's full crate" in message


def test_a_slim_crate_naming_a_cut_table_outside_it_is_refused(slim, sandbox):  # noqa: F811
    document = json.loads(_read(slim, METADATA))
    marker = next(e for e in document["@graph"] if e["@id"] == SLIM)
    marker["mentions"] = [{"@id": "../../outside.parquet"}]
    bad = crafted(slim, sandbox / "outside.zip", {METADATA: json.dumps(document).encode()})
    refused(bad, sandbox, "lists '../../outside.parquet', not a member path")
