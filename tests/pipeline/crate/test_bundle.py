"""A finished run as one Workflow Run RO-Crate (`whcore bundle`) and the figures and claims
redrawn from it alone (`whcore render`): on the tiny run, validated with roc-validator at the
Provenance Run Crate profile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import TINY
from test_macros import check_macros, parse_macros

from whcore.pipeline.config.schema import SCHEMA_PATH
from whcore.pipeline.contract import load_contract
from whcore.pipeline.crate.bundle import JOBS, PROFILE, bundle, check_crate, validate_crate

RUN = Path("results") / "tiny"


def _metadata(crate: Path) -> dict[str, dict]:
    with zipfile.ZipFile(crate) as archive:
        graph = json.loads(archive.read("ro-crate-metadata.json"))["@graph"]
    return {entity["@id"]: entity for entity in graph}


def _ids(value) -> list[str]:
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


def _rewritten(crate: Path, out: Path, edit) -> Path:
    """A copy of ``crate`` whose metadata graph ``edit`` changed (in place), every other member
    kept, except those ``edit`` returns."""
    with zipfile.ZipFile(crate) as source, zipfile.ZipFile(out, "w") as target:
        document = json.loads(source.read("ro-crate-metadata.json"))
        dropped = edit(document["@graph"]) or ()
        for item in source.infolist():
            if item.filename == "ro-crate-metadata.json":
                target.writestr(item, json.dumps(document))
            elif item.filename not in dropped:
                target.writestr(item, source.read(item))
    return out


pytestmark = pytest.mark.workflow


def test_the_crate_holds_the_run_and_every_jobs_spec(tiny_run, crate):
    run = tiny_run / RUN
    with zipfile.ZipFile(crate) as archive:
        names = set(archive.namelist())
        plan = json.loads(archive.read(JOBS))
    expected = {
        *(str(p.relative_to(run)) for p in (run / "tables").glob("*.parquet")),
        *(str(p.relative_to(run)) for p in (run / "figures").iterdir()),
        "claims.md",
        "claims.json",
        "provenance.tsv",
        "configuration.json",
        "config.yaml",
        "environment/installed.txt",
        "envs/linux-cpu.lock",
        "Snakefile",
        "workflow/Snakefile",
        JOBS,
    }
    assert expected <= names, expected - names
    assert len([n for n in names if n.startswith("figures/")]) >= 2 * 17  # PDF and PNG
    with zipfile.ZipFile(crate) as archive:
        for name in ("claims.json", "tables/real_selected.parquet", "figures/fig5a_real_r2.png"):
            assert archive.read(name) == (run / name).read_bytes(), name

    # every job of the plan, with its canonical spec, as an action of its step's tool
    contract = load_contract(str(TINY), str(SCHEMA_PATH))
    assert {entry["id"] for entry in plan} == set(contract.jobs)
    graph = _metadata(crate)
    timed = 0
    for entry in plan:
        job = contract.jobs[entry["id"]]
        action = graph[f"#job/{entry['id']}"]
        assert action["@type"] == "CreateAction"
        spec = graph[_ids(action["object"])[0]]
        assert json.loads(spec["value"]) == json.loads(job.spec_json), entry["id"]
        assert graph[spec["exampleOfWork"]["@id"]]["@type"] == "FormalParameter"
        inputs = [graph[i].get("name", i) for i in _ids(action["object"])[1:]]
        assert len(inputs) == len(job.inputs)
        assert len(_ids(action["result"])) == len(contract.written_by(job))
        timed += "startTime" in action and "endTime" in action
        control = graph[f"#control/{entry['id']}"]
        assert control["object"]["@id"] == action["@id"]
        assert graph[control["instrument"]["@id"]]["@type"] == "HowToStep"
    assert timed == len(plan)  # Snakemake's records give every job's start and end
    figure = next(e for e in plan if e["kind"] == "figure" and "fig5a" in e["id"])
    results = _ids(graph[f"#job/{figure['id']}"]["result"])
    assert results == ["figures/fig5a_real_r2.pdf", "figures/fig5a_real_r2.png"]
    organize = graph["#orchestrate"]
    assert organize["@type"] == "OrganizeAction" and organize["result"]["@id"] == "#run"
    assert graph["./"]["mainEntity"]["@id"] == "workflow/Snakefile"


def test_the_crate_passes_the_provenance_run_crate_profile(crate):
    assert PROFILE == "provenance-run-crate-0.5"
    assert validate_crate(crate) == []
    assert check_crate(crate) == []


def test_a_crate_naming_an_output_missing_from_the_zip_fails(crate, tmp_path):
    def add_missing_output(graph):
        action = next(e for e in graph if str(e["@id"]).startswith("#job/"))
        action["result"] = [*action["result"], {"@id": "tables/missing.parquet"}]
        graph.append({"@id": "tables/missing.parquet", "@type": "File", "name": "missing"})

    bad = _rewritten(crate, tmp_path / "bad.crate.zip", add_missing_output)
    assert validate_crate(bad) != []
    assert any("tables/missing.parquet" in p for p in check_crate(bad))

    # an output the crate describes, taken out of the zip
    lost = _rewritten(crate, tmp_path / "lost.crate.zip", lambda graph: ["claims.json"])
    assert validate_crate(lost) != []
    assert any("claims.json" in p for p in check_crate(lost))


@pytest.fixture(scope="module")
def alone(crate, tmp_path_factory) -> Path:
    """A folder holding only the crate, where `whcore render <crate> --tex` ran with no data
    mirror and no Snakemake loaded, from an empty folder `here` (a checkout, say) and with no
    --out: the crate, here/ and what render wrote beside the crate by default."""
    alone = tmp_path_factory.mktemp("alone")
    shutil.copy(crate, alone / crate.name)
    (alone / "here").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHCORE_")}
    code = (
        "import sys; from whcore.command import main; rc = main(sys.argv[1:]); "
        "assert 'snakemake' not in sys.modules; sys.exit(rc)"
    )
    subprocess.run(
        [sys.executable, "-c", code, "render", f"../{crate.name}", "--tex"],
        cwd=alone / "here",
        env=env,
        check=True,
        capture_output=True,
    )
    return alone


def test_render_rebuilds_the_figures_and_claims_from_the_crate_alone(tiny_run, crate, alone):
    from matplotlib.image import imread

    out, run = alone / "tiny-rendered", tiny_run / RUN
    assert (out / "claims.json").read_text() == (run / "claims.json").read_text()
    assert (out / "claims.md").read_text() == (run / "claims.md").read_text()
    assert (out / "provenance.tsv").read_text() == (run / "provenance.tsv").read_text()
    drawn = sorted(p.name for p in (out / "figures").iterdir())
    assert drawn == sorted(p.name for p in (run / "figures").iterdir())
    for png in (run / "figures").glob("*.png"):
        assert (imread(out / "figures" / png.name) == imread(png)).all(), png.name
    # beside the crate, not in the folder it ran from (a checkout would have untracked files)
    assert sorted(p.name for p in alone.iterdir()) == sorted([crate.name, "here", out.name])
    assert not list((alone / "here").iterdir())


def test_render_writes_the_claims_tex_macros(tiny_run, alone):
    claims = json.loads((tiny_run / RUN / "claims.json").read_text())
    check_macros(claims, parse_macros((alone / "tiny-rendered" / "claims.tex").read_text()))
    assert {c["verdict"] for c in claims} > {"not evaluated"}  # the tiny run tests some claims


def test_bundle_names_what_is_missing(tmp_path):
    with pytest.raises(ValueError, match="configuration.json: no such file"):
        bundle(tmp_path / "results" / "nothing")


def _recorded_run(work: Path, source: str, **settings) -> Path:
    """results/tiny under ``work`` with only the record a run of the tiny configuration plus
    ``settings``, made from ``source``, leaves."""
    from whcore.pipeline.runtime.runrecord import RECORD, config_digest

    config = load_contract(str(TINY), str(SCHEMA_PATH)).config
    record = {"digest": config_digest({**config, **settings}), "source": source, "run_name": "tiny"}
    run = work / RUN
    run.mkdir(parents=True)
    (run / RECORD).write_text(json.dumps(record))
    return run


def test_bundle_refuses_a_run_whose_results_came_from_config_settings(tmp_path):
    """A crate holds a configuration file: --config settings that changed the results have
    none; those that change no result (the device) leave the file the run's own."""
    changed = _recorded_run(tmp_path / "a", f"{TINY} and --config", entacmaea_energy={"top": 5})
    with pytest.raises(ValueError, match="with --config settings that change its results"):
        bundle(changed)
    runtime = _recorded_run(tmp_path / "b", f"{TINY} and --config", device="cuda")
    with pytest.raises(ValueError, match="the run is not finished"):
        bundle(runtime)
    merged = _recorded_run(tmp_path / "c", f"{TINY}, {TINY}")
    with pytest.raises(ValueError, match="several configuration files"):
        bundle(merged)
    assert not list(tmp_path.rglob("*.crate.zip"))
