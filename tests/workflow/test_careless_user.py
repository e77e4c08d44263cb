"""Inputs of a careless or hostile user: none deletes a user's file, none lets a bad row
survive, each is refused in one true line naming the file (docs/faults.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, TINY, snakemake_cmd, snakemake_env

from whcore.core.io import write_parquet
from whcore.data import own_data
from whcore.data.download import DownloadError, fetch
from whcore.data.parsers import RawFormatError
from whcore.pipeline.cli import main as whcore


def _target(path: Path) -> str:
    spec = {"family": "degree_ladder", "n": 6, "max_degree": 3, "seed": 0}
    return json.dumps({**spec, "outputs": {"target": str(path)}})


def _train(target: Path, records, spectra=None) -> str:
    outputs = {"records": str(records)}
    if spectra is not None:
        outputs["spectra"] = str(spectra)
    return json.dumps(
        {
            "method": "standard",
            "spectrum": spectra is not None,
            "data": {"source": "synthetic", "path": str(target), "train_size": 20, "data_seed": 0},
            "training": {"seeds": [0], "epochs": 2, "patience": 2, "width": 1},
            "outputs": outputs,
        }
    )


def _run_train(spec: str) -> int:
    return whcore(["train", "--spec", spec, "--device", "cpu", "--log-every", "0"])


# --- 1. a hand spec never replaces what no job wrote ---------------------------------------------


def test_a_hand_spec_never_replaces_a_users_folder_or_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert whcore(["target", "--spec", _target(tmp_path / "g.json")]) == 0
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
    assert whcore(["target", "--spec", _target(notes)]) == 2
    assert "notes.json: an existing file that no whcore job wrote" in capsys.readouterr().err
    assert notes.read_text() == '{"mine": 1}'

    # what a job wrote is replaced on a rerun: a records folder, a g* target
    assert whcore(["target", "--spec", _target(tmp_path / "g.json")]) == 0
    assert _run_train(_train(tmp_path / "g.json", "out/runs", "out/spectra")) == 0
    assert _run_train(_train(tmp_path / "g.json", "out/runs", "out/spectra")) == 0
    assert [p.name for p in (tmp_path / "out/runs").iterdir()] == ["default.parquet"]
    # one user's file inside a records folder makes it the user's again
    (tmp_path / "out/runs/readme.txt").write_text("mine")
    assert _run_train(_train(tmp_path / "g.json", "out/runs")) == 2
    assert (tmp_path / "out/runs/readme.txt").exists()


def test_a_hand_spec_never_writes_over_its_input_or_a_data_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert whcore(["target", "--spec", _target(tmp_path / "g.json")]) == 0
    table = tmp_path / "resources/data/gb1.parquet"
    table.parent.mkdir(parents=True)
    write_parquet(pd.DataFrame({"y": [1.0]}), table, {"dataset": "gb1"})  # a binarized table
    for records, says in (
        ("resources/data", "resources/data: an output may not be a data folder"),
        ("resources", "resources: an output may not be a data folder"),
        # its own input, a g* target: no records folder (its kind is checked first)
        ("g.json", "g.json: holds another kind of whcore output (target, not records)"),
    ):
        assert _run_train(_train(tmp_path / "g.json", records)) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1
    assert json.loads((tmp_path / "g.json").read_text())["n"] == 6
    assert [p.name for p in table.parent.iterdir()] == ["gb1.parquet"]


def test_a_users_file_under_results_is_never_replaced(tmp_path, monkeypatch, capsys):
    """`whcore render --out results/mine` runs the claims job into results/mine: being under
    results/ makes no file the project's."""
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "results/mine/claims.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("# My reading of the claims\n")
    outputs = {"md": str(mine), "json": str(mine.with_suffix(".json"))}
    spec = json.dumps({"outputs": outputs})
    assert whcore(["claims", "--spec", spec, "--tables", "t.parquet"]) == 2
    err = capsys.readouterr().err
    assert "results/mine/claims.md: an existing file that no whcore job wrote" in err
    assert mine.read_text() == "# My reading of the claims\n"


def test_macros_render_and_bundle_never_replace_a_manuscript(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    claims = REPO / "docs/faithful/claims.json"
    paper = {"main.tex": "\\documentclass{article}\n", "thesis.pdf": "%PDF-1.5 my thesis\n"}
    for name, text in paper.items():
        (tmp_path / name).write_text(text)
    for command in (
        ["macros", str(claims), "main.tex"],
        ["render", "no.crate.zip", "--tex", "main.tex"],  # refused before any rendering
        ["bundle", "results/tiny", "--out", "thesis.pdf"],  # refused before any bundling
    ):
        assert whcore(command) == 2
        err = capsys.readouterr().err
        assert "an existing file that no whcore job wrote" in err, command
        assert len(err.strip().splitlines()) == 1
    assert all((tmp_path / name).read_text() == text for name, text in paper.items())
    # a macros file this project wrote is replaced
    assert whcore(["macros", str(claims), "claims.tex"]) == 0
    assert whcore(["macros", str(claims), "claims.tex"]) == 0


def test_a_damaged_raw_file_of_the_users_is_not_deleted_by_download_own(tmp_path, capsys):
    mine = tmp_path / "mine.csv"
    mine.write_text("my own data\n")
    spec = {
        "dataset": "mine",
        "url": "http://127.0.0.1:9/mine.csv",
        "sha256": "0" * 64,
        "outputs": {"raw": str(mine)},
    }
    assert whcore(["download-own", "--spec", json.dumps(spec)]) == 2
    assert "mine.csv: an existing file that no whcore job wrote" in capsys.readouterr().err
    assert mine.read_text() == "my own data\n"


def test_whcore_binarize_out_never_replaces_a_users_file(tmp_path, capsys):
    mine = tmp_path / "gb1.parquet"
    mine.write_bytes(b"not a whcore table")
    assert whcore(["binarize", "gb1", "--raw", os.devnull, "--out", str(mine)]) == 2
    assert "gb1.parquet: an existing file that no whcore job wrote" in capsys.readouterr().err
    assert mine.read_bytes() == b"not a whcore table"


# --- 2. the wild type of a ProteinGym table: the row that is wrong is the one refused ---------


WILD, MUTANT = "MKVLFT", "PRWIGS"


def _landscape(bad_first: bool, sequences: bool) -> str:
    """Every genotype of 6 sites as a ProteinGym CSV; with ``bad_first`` its first row is a
    mutant that is wrong about site 5's wild type (Q5G: the wild type has F there)."""
    lines = ["mutant,DMS_score" + (",mutated_sequence" if sequences else "")]
    rows = []
    for code in range(2**6):
        bits = [(code >> i) & 1 for i in range(6)]
        mutant = ":".join(f"{WILD[i]}{i + 1}{MUTANT[i]}" for i in range(6) if bits[i])
        seq = "".join(MUTANT[i] if b else WILD[i] for i, b in enumerate(bits))
        rows.append((mutant, float(sum(bits)), seq))
    if bad_first:
        rows.insert(0, ("Q5G", 9.0, WILD[:4] + "G" + WILD[5]))
    for mutant, y, seq in rows:
        lines.append(f"{mutant},{y}" + (f",{seq}" if sequences else ""))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("sequences", [True, False], ids=["mutated_sequence", "mutants"])
def test_a_wrong_first_mutant_is_the_row_refused_or_dropped(tmp_path, sequences):
    path = tmp_path / "dms.csv"
    path.write_text(_landscape(bad_first=True, sequences=sequences))
    with pytest.raises(RawFormatError) as err:
        own_data.parse(path, {"format": "proteingym"})
    line = str(err.value)
    assert line.startswith(f"{path}: line 2, column 'mutant': 'Q5G' says site 5 is Q"), line
    assert "which has F there" in line and "\n" not in line
    parsed = own_data.parse(path, {"format": "proteingym", "drop_invalid": True})
    assert parsed.dropped == {"mutant contradicting the wild type": 1}
    clean = tmp_path / "clean.csv"
    clean.write_text(_landscape(bad_first=False, sequences=sequences))
    expected = own_data.parse(clean, {"format": "proteingym"}).frame
    pd.testing.assert_frame_equal(parsed.frame, expected)
    assert len(expected) == 64 and expected.shape[1] == 6 * 2 + 1


def test_the_wild_type_key_disagreeing_with_the_sequences_is_one_line(tmp_path):
    path = tmp_path / "dms.csv"
    path.write_text(_landscape(bad_first=False, sequences=True))
    with pytest.raises(RawFormatError, match=r"wild_type key has W at site 5, .* has F"):
        own_data.parse(path, {"format": "proteingym", "wild_type": "MKVLWT"})


# --- 3. sequences are case-folded ---------------------------------------------------------------


def test_lower_case_residues_are_the_same_residues(tmp_path):
    upper, lower = tmp_path / "upper.csv", tmp_path / "lower.csv"
    rows = ["ACD,1", "AWD,2", "GCD,3", "GWE,4"]
    upper.write_text("sequence,y\n" + "\n".join(rows) + "\n")
    lower.write_text(
        "sequence,y\n" + "\n".join(r.lower() if i % 2 else r for i, r in enumerate(rows)) + "\n"
    )
    settings = {"format": "sequences", "target_column": "y"}
    expected = own_data.parse(upper, settings).frame
    assert expected.shape == (4, 6 + 1)
    pd.testing.assert_frame_equal(own_data.parse(lower, settings).frame, expected)
    mutated = own_data.parse(lower, {**settings, "binarization": "mutated", "wild_type": "acd"})
    assert list(mutated.frame.columns) == ["site1", "site2", "site3", "y"]
    # ProteinGym's mutated_sequence in lower case
    path = tmp_path / "dms.csv"
    lines = _landscape(bad_first=False, sequences=True).splitlines()
    path.write_text(
        "\n".join([lines[0]] + [r[: r.rindex(",")] + r[r.rindex(",") :].lower() for r in lines[1:]])
        + "\n"
    )
    assert own_data.parse(path, {"format": "proteingym"}).frame.shape == (64, 13)


# --- 5. a truncated compressed file is one line with the file -----------------------------------


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip"])
def test_a_truncated_compressed_table_is_one_line_with_the_file(tmp_path, suffix):
    table = pd.DataFrame(
        {"mutant": [f"A1{r}" for r in "CDEFGHIKLMNPQRSTVWY"] * 300, "DMS_score": range(19 * 300)}
    )
    whole = tmp_path / f"whole{suffix}"
    table.to_csv(whole, index=False)
    assert len(own_data.parse(whole, {"format": "proteingym"}).frame) == 19
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(RawFormatError) as err:
        own_data.parse(cut, {"format": "proteingym"})
    line = str(err.value)
    assert line.startswith(f"{cut}: cannot decompress it: truncated or damaged"), line
    assert "\n" not in line and "Fix: copy or download the file again" in line


def test_a_truncated_registry_file_is_one_line_with_the_file(tmp_path):
    from whcore.data.parsers import parse_avgfp

    cut = tmp_path / "avgfp.tsv.gz"
    rows = range(5000)
    frame = pd.DataFrame(
        {"aaMutations": [f"SA{i % 230}C" for i in rows], "medianBrightness": [i / 7 for i in rows]}
    )
    frame.to_csv(cut, sep="\t", index=False)
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    with pytest.raises(RawFormatError, match=f"^{cut}: cannot decompress it: truncated"):
        parse_avgfp(cut)


# --- 7. messages that say what is true ----------------------------------------------------------


def test_a_data_file_that_is_a_folder_says_so(tmp_path):
    folder = tmp_path / "my_dms"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as err:
        own_data.binarize("my_dms", folder, tmp_path / "out.parquet", {"format": "proteingym"})
    assert str(err.value).startswith(f"{folder}: the data file of dataset my_dms is a folder")
    assert "file key of real.datasets.my_dms" in str(err.value)
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_data_file_that_is_a_device_or_a_fifo_says_so(tmp_path, kind):
    """Neither is missing: /dev/zero would be read for ever, a FIFO block until written."""
    raw = Path("/dev/zero") if kind == "device" else tmp_path / "my_dms.csv"
    if kind == "fifo":
        os.mkfifo(raw)
    with pytest.raises(RawFormatError) as err:
        own_data.binarize("my_dms", raw, tmp_path / "out.parquet", {"format": "proteingym"})
    assert str(err.value).startswith(f"{raw}: the data file of dataset my_dms is not a regular")
    assert "file key of real.datasets.my_dms" in str(err.value) and "\n" not in str(err.value)


def test_a_download_of_other_bytes_says_to_check_the_sha256_not_the_network(tmp_path):
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"other")

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/data.csv"
        with pytest.raises(DownloadError) as err:
            fetch("data.csv", "0" * 64, tmp_path / "data.csv", urls=(url,), mirror="")
    finally:
        httpd.shutdown()
        httpd.server_close()
    fix = str(err.value).rsplit("Fix: ", 1)[1]
    assert "connect to the network" not in fix
    assert fix.startswith("the server sent a file whose sha256 is not the expected one")
    assert not (tmp_path / "data.csv").exists()


def _snakemake(workdir: Path, *args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        snakemake_cmd(workdir, *args),
        env=snakemake_env(**env),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=300,
    )


@pytest.mark.workflow
def test_a_bad_whcore_variable_stops_the_workflow_too(tmp_path):
    result = _snakemake(tmp_path, "-n", "--configfile", str(TINY), WHCORE_LOG_EVERY="ten")
    assert result.returncode == 1, result.stdout[-2000:]
    assert "Error: environment variable WHCORE_LOG_EVERY='ten': use a whole number" in (
        result.stdout
    )
    assert "Traceback" not in result.stdout


@pytest.mark.workflow
def test_a_mistyped_figure_id_gets_the_figure_ids(tmp_path):
    result = _snakemake(tmp_path, "fig5a", "-n", "--configfile", str(TINY))
    assert result.returncode == 1, result.stdout[-2000:]
    assert "Error: no rule or figure is named 'fig5a'. Did you mean fig5a_real_r2?" in (
        result.stdout
    )
    assert "fig1a_support_evolution" in result.stdout and "Traceback" not in result.stdout


@pytest.mark.workflow
def test_zero_cores_is_refused_in_one_line(tmp_path):
    """`--cores 0` would leave Snakemake waiting at "Select jobs to execute..." for ever."""
    result = _snakemake(tmp_path, "--cores", "0", "--configfile", str(TINY))
    assert result.returncode == 1, result.stdout[-2000:]
    assert "Error: --cores 0 leaves no core to run a job on. Fix: --cores N" in result.stdout
    assert not (tmp_path / "results").exists()


@pytest.mark.workflow
@pytest.mark.parametrize("text", ["", "- a\n- b\n"], ids=["empty", "list"])
def test_an_empty_or_list_configfile_is_as_the_fault_table_says(tmp_path, text, capsys):
    """Snakemake reads a --configfile before the workflow runs, so its message is its own; the
    fault table quotes it and `whcore spec` names the file."""
    config = tmp_path / "my.yaml"
    config.write_text(text)
    result = _snakemake(tmp_path / "work", "-n", "--configfile", str(config))
    row = next(
        line
        for line in (REPO / "docs/faults.md").read_text().splitlines()
        if line.startswith("| an empty `--configfile`")
    )
    quoted = re.search(r'"([^"]+)"', row).group(1)
    assert result.returncode == 1 and quoted in result.stdout, result.stdout[-2000:]
    assert whcore(["spec", str(config), "--list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"whcore spec: error: {config}: a config must be a mapping of keys")


# --- 4. one run name never hides another run ----------------------------------------------------


def _spectrum_config(path: Path, methods: dict, max_degree: int = 3) -> Path:
    config = yaml.safe_load(TINY.read_text())
    for experiment in ("synthetic", "real", "ablation", "entacmaea_energy"):
        config[experiment]["enabled"] = False
    config["spectrum"].update(draws=1, train_sizes=[30], methods=methods, max_degree=max_degree)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.mark.workflow
def test_a_second_configuration_under_the_same_run_name_is_refused(tmp_path, monkeypatch, capsys):
    first = _spectrum_config(tmp_path / "first.yaml", {"standard": {}, "fullwh": {"lam": [0.1]}})
    second = _spectrum_config(tmp_path / "second.yaml", {"standard": {}}, max_degree=2)
    work, target = tmp_path / "work", "results/tiny/synthetic/spectrum/draw0.json"
    done = _snakemake(work, target, "--cores", "1", "--configfile", str(first))
    assert done.returncode == 0, done.stdout[-2000:]
    made = (work / target).read_bytes()
    record = json.loads((work / "results/tiny/configuration.json").read_text())
    # outside the run's working directory: recorded as given (absolute), so a copy still finds it
    first_label, second_label = str(first), str(second)
    assert record["source"] == first_label

    refused = _snakemake(work, target, "--cores", "1", "--configfile", str(second))
    assert refused.returncode == 1, refused.stdout[-2000:]
    line = next(x for x in refused.stdout.splitlines() if x.startswith("Error: results/tiny"))
    assert f"made by another configuration ({first_label}, digest" in line
    assert f"than this one ({second_label}, digest" in line and "--config run_name=tiny-2" in line
    assert "--config replace_run=True" in line and "Traceback" not in refused.stdout
    assert (work / target).read_bytes() == made
    dry = _snakemake(work, target, "-n", "--configfile", str(second))
    assert dry.returncode == 0 and "warning: results/tiny: made by another" in dry.stdout

    # asked to replace it: it runs, and the first's records no job of the second writes are
    # listed (never read into a table) and removable
    stale = work / "results/tiny/runs/spectrum/draw0/fullwh/default/size30_dseed0/lam0.1.parquet"
    stale.parent.mkdir(parents=True)
    write_parquet(pd.DataFrame({"test_r2": [0.5]}), stale, {"spec": {"method": "fullwh"}})
    notes = work / "results/tiny/NOTES.md"  # the user's: listed, never removed
    notes.write_text("my notes")
    args = ("--cores", "1", "--configfile", str(second), "--config", "replace_run=True")
    replaced = _snakemake(work, target, *args)
    assert replaced.returncode == 0, replaced.stdout[-2000:]
    assert (work / target).read_bytes() != made
    record = json.loads((work / "results/tiny/configuration.json").read_text())
    assert record["source"] == f"{second_label} and --config"
    again = _snakemake(work, target, "-n", "--configfile", str(second))
    assert "made by another" not in again.stdout

    from whcore.pipeline.config.schema import SCHEMA_PATH
    from whcore.pipeline.contract import load_contract

    monkeypatch.chdir(work)
    contract = load_contract(str(second), str(SCHEMA_PATH))
    read = [p for paths in contract.aggregate_inputs("spectrum").values() for p in paths]
    assert read and not any("fullwh" in p for p in read)
    # `whcore bundle` (and `--slim`), `snakemake --report`
    own = ["tiny.crate.zip", "tiny.slim.crate.zip", "report.html", "report.zip"]
    for name in own:
        (work / "results/tiny" / name).write_bytes(b"the run's own")
    capsys.readouterr()
    assert whcore(["stale", str(second)]) == 0
    assert capsys.readouterr().out.split() == [str(stale.relative_to(work))]
    assert whcore(["stale", str(second), "--remove"]) == 0
    assert not stale.exists() and not (work / "results/tiny/runs/spectrum/draw0/fullwh").exists()
    assert "1 file(s) no whcore job wrote are kept" in capsys.readouterr().err
    assert notes.read_text() == "my notes"
    assert whcore(["stale", str(first), "--remove"]) == 2  # not the run's configuration
    assert "results/tiny: made by another configuration" in capsys.readouterr().err
    assert (work / target).exists() and (work / "results/tiny/configuration.json").exists()
    assert all((work / "results/tiny" / name).exists() for name in own)


def test_a_run_folder_no_job_wrote_to_is_taken_by_the_next_configuration(tmp_path):
    """A run that failed before any job wrote an output (a bad row at binarization) left only
    its record: the corrected configuration runs there without --config replace_run=True."""
    from whcore.pipeline.runtime.runrecord import RunConflictError, claim_run, recorded_maker

    first, second = (yaml.safe_load(TINY.read_text()) for _ in range(2))
    second["spectrum"]["draws"] = 1
    root = tmp_path / "results/tiny"
    claim_run(root, first, "first.yaml")
    (root / "runs").mkdir()  # a folder Snakemake made for a job that failed
    claim_run(root, second, "second.yaml")
    assert recorded_maker(root)[1] == "second.yaml"
    (root / "runs/draw0.parquet").write_bytes(b"an output")
    with pytest.raises(RunConflictError, match="made by another configuration"):
        claim_run(root, first, "first.yaml")
