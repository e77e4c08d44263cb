import json
import re
from pathlib import Path

import pandas as pd
import pytest

from whcore.core.io import read_parquet_metadata
from whcore.pipeline.cli import main
from whcore.pipeline.jobs import SpecError
from whcore.pipeline.jobs.train import TrainSpec


def validate_spec(spec: dict) -> dict:
    """The spec checked and filled in, as the plan and `whcore train` check it."""
    return TrainSpec.from_dict(spec, "spec").to_dict()


def load_spec(path) -> dict:
    return TrainSpec.read(path).to_dict()


def spec_for(target: Path, **overrides) -> dict:
    spec = {
        "method": "hashwh",
        "grid": [{"lam": 0.01, "b": 4}],
        "data": {"source": "synthetic", "path": str(target), "train_size": 100, "data_seed": 0},
        "training": {"seeds": [0, 1], "epochs": 3, "batch_size": 32, "width": 1},
        "outputs": {"records": str(target.parent / "runs" / "r.parquet")},
    }
    for key, value in overrides.items():
        section, _, field = key.partition(".")
        if field:
            spec[section][field] = value
        else:
            spec[section] = value
    return spec


@pytest.fixture
def target(tmp_path):
    path = tmp_path / "target.json"
    spec = {
        "family": "degree_ladder",
        "n": 8,
        "max_degree": 3,
        "seed": 0,
        "outputs": {"target": str(path)},
    }
    assert main(["target", "--spec", json.dumps(spec)]) == 0
    return path


def test_defaults_are_filled(target):
    spec = validate_spec(spec_for(target))
    assert spec["data"]["val_size"] == "rest" and spec["data"]["standardize"] is False
    assert spec["training"]["patience"] == 10 and spec["spectrum"] is False


@pytest.mark.parametrize(
    "change,field",
    [
        ({"data": {"source": "synthetic", "train_size": 10, "data_seed": 0}}, "data"),
        ({"data.train_size": "ten"}, "data.train_size"),
        ({"data.trian_size": 5}, "data"),
        ({"training.seeds": []}, "training.seeds"),
        ({"data.val_size": -3}, "data.val_size"),
        ({"methd": "hashwh"}, "methd"),
    ],
)
def test_bad_specs_name_the_field(target, tmp_path, change, field):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec_for(target, **change)))
    with pytest.raises(SpecError, match=re.escape(f"{path}: field {field}")):
        load_spec(path)


def test_unreadable_spec(tmp_path):
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(SpecError, match="mapping"):
        load_spec(tmp_path / "list.yaml")


@pytest.mark.parametrize(
    "text,line,problem",
    [
        ("method: hashwh\ndata:\n  path: [a, b\n  x: 1\n", 4, "expected ',' or ']'"),
        ("method: hashwh\n\tdata: 1\n", 2, "'\\t' that cannot start any token"),
        ("method: hashwh\ndata: {a: 1\n", 3, "expected ',' or '}'"),
    ],
)
def test_a_yaml_syntax_error_names_the_file_and_the_line(tmp_path, capsys, text, line, problem):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    message = str(err.value)
    assert message.startswith(f"{path}, line {line}, column ") and problem in message
    assert "\n" not in message and "<unicode string>" not in message
    assert main(["train", "--spec", str(path)]) == 2
    assert capsys.readouterr().err == f"whcore train: error: {message}\n"


def test_train_cli_writes_records_and_spectra(target, tmp_path):
    spec = tmp_path / "spec.json"
    out, spectra = tmp_path / "runs" / "r", tmp_path / "runs" / "s"
    outputs = {"records": str(out), "spectra": str(spectra)}
    spec.write_text(json.dumps(spec_for(target, spectrum=True, outputs=outputs)))
    assert main(["train", "--spec", str(spec), "--device", "cpu", "--log-every", "1"]) == 0
    records = pd.read_parquet(out / "b4_lam0.01.parquet")
    assert set(records["seed"]) == {0, 1} and (records["method"] == "hashwh").all()
    assert {"sae_support", "sae_full", "energy_deg3", "sae_deg3"} <= set(records.columns)
    wide = pd.read_parquet(spectra / "b4_lam0.01.parquet")
    assert wide.shape == (len(records), 2 + 2**8)
    meta = read_parquet_metadata(out / "b4_lam0.01.parquet")
    assert meta["spec"]["grid"] == [{"lam": 0.01, "b": 4}] and meta["params"] == {
        "lam": 0.01,
        "b": 4,
    }
    assert sorted(p.name for p in out.parent.iterdir()) == ["r", "s"]


def test_a_grid_job_writes_one_file_per_configuration(target, tmp_path):
    """Each configuration of a grid gets the records it would get trained alone."""
    grid = [{"lam": 0.01, "b": 4}, {"lam": 1.0, "b": 4}]
    out = tmp_path / "grid"
    spec = spec_for(target, grid=grid, outputs={"records": str(out)})
    assert main(["train", "--spec", json.dumps(spec), "--device", "cpu"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["b4_lam0.01.parquet", "b4_lam1.parquet"]
    for params in grid:
        alone = tmp_path / f"alone{params['lam']}"
        assert (
            main(
                [
                    "train",
                    "--spec",
                    json.dumps(spec_for(target, grid=[params], outputs={"records": str(alone)})),
                    "--device",
                    "cpu",
                ]
            )
            == 0
        )
        (written,) = alone.iterdir()
        together = pd.read_parquet(out / written.name)
        assert (together["lam"] == params["lam"]).all()
        pd.testing.assert_frame_equal(
            together.filter(regex="_(mse|r2)$"),
            pd.read_parquet(written).filter(regex="_(mse|r2)$"),
            rtol=1e-4,
            atol=1e-6,
        )


@pytest.mark.parametrize(
    "grid,message",
    [
        ([{"lam": 0.1, "b": 4}, {"lam": 0.1, "b": 4.0}], "appears twice"),
        ([{"lam": 0.1, "b": 4}, {"lam": 0.1, "b": 5}], "must share ['b']"),
    ],
)
def test_bad_grids_are_refused(target, tmp_path, capsys, grid, message):
    spec = spec_for(target, grid=grid, outputs={"records": str(tmp_path / "g")})
    assert main(["train", "--spec", json.dumps(spec), "--device", "cpu"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_a_grid_is_the_one_way_to_name_configurations(target):
    with pytest.raises(SpecError, match="field params: unknown"):
        validate_spec({**spec_for(target), "params": {"lam": 0.1, "b": 4}})
    with pytest.raises(SpecError, match="field grid: give at least one configuration"):
        validate_spec(spec_for(target, grid=[]))


def test_failing_job_leaves_no_output(target, tmp_path, capsys):
    out = tmp_path / "r"
    outputs = {"records": str(out)}
    bad = json.dumps(spec_for(target, grid=[{"lam": 0.1, "b": 9}], outputs=outputs))  # b > n = 8
    assert main(["train", "--spec", bad]) == 2
    assert "b = 9" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.glob(".r.*")) == []
    unknown = json.dumps(spec_for(target, method="lasso2", outputs=outputs))
    assert main(["train", "--spec", unknown]) == 2
    assert "unknown method 'lasso2'" in capsys.readouterr().err


def test_every_option_has_help_and_there_is_a_version(capsys):
    import argparse

    from whcore import __version__
    from whcore.pipeline.cli import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, sub in commands.choices.items():
        for action in sub._actions:
            assert action.help or isinstance(action, argparse._HelpAction), (name, action.dest)
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"whcore {__version__}"


@pytest.mark.parametrize(
    "params,field,message",
    [
        ({"b": 3, "lam": -1}, ".lam", "less than the minimum of 0"),
        ({"b": 0, "lam": 0.1}, ".b", "less than the minimum of 1"),
        ({"b": 3.5, "lam": 0.1}, ".b", "is not of type 'integer'"),
        ({"b": 3}, "", "'lam' is a required property"),
        ({"b": 3, "lam": 0.1, "bogus": 1}, "", "'bogus' was unexpected"),
        ({"b": 3, "lam": float("nan")}, ".lam", "not a finite number"),
    ],
)
def test_a_spec_by_hand_is_checked_like_a_configuration(target, tmp_path, params, field, message):
    """The bounds of a configuration file's grids (the method registry) hold for a spec given
    to `whcore train` by hand: a negative lambda never trains."""
    out = tmp_path / "r"
    spec = spec_for(target, grid=[params], outputs={"records": str(out)})
    with pytest.raises(SpecError, match=re.escape(f"spec: field grid.0{field}: ")) as err:
        validate_spec(spec)
    assert message in str(err.value)
    second = spec_for(target, grid=[{"b": 3, "lam": 0.1}, params])
    with pytest.raises(SpecError, match=re.escape(f"field grid.1{field}: ")):
        validate_spec(second)
    assert main(["train", "--spec", json.dumps(spec)]) == 2 and not out.exists()


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_spec_with_an_infinite_number_is_one_line(target, tmp_path, capsys, value):
    """JSON's Infinity in a hand spec (`width: Infinity`) ended in an OverflowError traceback."""
    out = tmp_path / "r"
    spec = spec_for(target, **{"training.width": value}, outputs={"records": str(out)})
    assert main(["train", "--spec", json.dumps(spec)]) == 2 and not out.exists()
    err = capsys.readouterr().err
    assert f"field training.width: {value} is not a finite number" in err
    assert len(err.strip().splitlines()) == 1


def test_spec_seeds_stay_in_the_generators_range(target):
    with pytest.raises(SpecError, match="field training.seeds.1"):
        validate_spec(spec_for(target, **{"training.seeds": [0, 10**30]}))
    validate_spec(spec_for(target, **{"training.seeds": [0, 2**32 - 1]}))


def test_an_error_naming_a_file_prints_no_control_character(tmp_path, capsys):
    """A file or crate member named with a terminal's escape codes is named escaped."""
    crate = tmp_path / "\x1b[2J\x1b]0;owned\x07x.zip"
    crate.write_text("not a zip")
    assert main(["render", str(crate), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "\\x1b[2J\\x1b]0;owned\\x07x.zip: not a zip file" in err
    assert not any(ord(char) < 32 for char in err.rstrip("\n"))


def test_a_line_break_in_a_name_cannot_begin_a_message_of_its_own(tmp_path, capsys):
    """A message keeps its line breaks, every line after its first indented: a name carrying
    one cannot print a line that reads as whcore's."""
    crate = tmp_path / "x\nwhcore render: done.zip"
    crate.write_text("not a zip")
    assert main(["render", str(crate), "--out", str(tmp_path / "out")]) == 2
    first, *rest = capsys.readouterr().err.rstrip("\n").split("\n")
    assert first.startswith("whcore render: error: ") and len(rest) == 1
    assert rest[0].startswith("  whcore render: done.zip: not a zip file")
