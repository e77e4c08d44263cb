"""`whcore spec CONFIG OUTPUT`: the spec of the job writing an output, ready for its subcommand."""

import json
import shlex
from pathlib import Path

import pytest
from conftest import TINY
from conftest import run_snakemake as snakemake

from whcore.pipeline.cli import main
from whcore.pipeline.contract import load_contract

SCHEMA = str(Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml")
ROOT = "results/tiny"
RECORDS = f"{ROOT}/runs/spectrum/draw0/hashwh/b3/size30_dseed0"


@pytest.fixture(scope="module")
def contract():
    return load_contract(str(TINY), SCHEMA)


def spec_cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["spec", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "output,first,subcommand",
    [
        (RECORDS, RECORDS, "train"),
        (f"{RECORDS}/b3_lam0.01.parquet", RECORDS, "train"),  # a configuration's file
        (RECORDS.replace("/runs/", "/spectra/"), RECORDS, "train"),
        (f"./{RECORDS}/", RECORDS, "train"),
        (f"{ROOT}/synthetic/spectrum/draw0.json", None, "target"),
        (f"{ROOT}/runs/real/gb1/lasso/grid/size100_dseed0.parquet", None, "baselines"),
        (f"{ROOT}/tables/ablation_sgemm.parquet", None, "ablation"),
        (f"{ROOT}/tables/entacmaea_energy.parquet", None, "entacmaea-energy"),
        (
            f"{ROOT}/tables/spectrum_epochs.parquet",
            f"{ROOT}/tables/spectrum_selected.parquet",
            "aggregate",
        ),
        (f"{ROOT}/figures/fig5a_real_r2.png", f"{ROOT}/figures/fig5a_real_r2.pdf", "figure"),
        (f"{ROOT}/provenance.tsv", f"{ROOT}/claims.md", "claims"),
    ],
)
def test_any_output_gives_its_jobs_spec_and_subcommand(capsys, contract, output, first, subcommand):
    code, out, err = spec_cli(capsys, TINY, output)
    assert code == 0, err
    assert out == contract.job(first or output).spec_json + "\n"  # what Snakemake passes
    assert err.startswith(f"run it: whcore {subcommand} --spec ")
    assert len(err.splitlines()) == 1
    assert spec_cli(capsys, TINY, output, "--kind") == (0, f"{subcommand}\n", "")


def test_the_command_names_the_input_files(capsys, contract):
    _, _, err = spec_cli(capsys, TINY, f"{ROOT}/figures/fig5a_real_r2.pdf")
    assert err.endswith(f" --tables {ROOT}/tables/real_summary.parquet\n")
    # many files: a command substitution that lists them
    table = f"{ROOT}/tables/real_summary.parquet"
    _, _, err = spec_cli(capsys, TINY, table)
    assert err.rstrip().endswith(f"$(whcore spec --inputs {TINY} {table})")
    code, out, _ = spec_cli(capsys, TINY, table, "--inputs")
    words = shlex.split(out)
    assert code == 0 and words[0] == "--runs" and "--baselines" in words
    assert sorted(words[1 : words.index("--baselines")]) == contract.outputs(
        "train", experiment="real"
    )


def test_a_spec_from_the_config_runs_its_job(capsys, tmp_path, monkeypatch):
    """The printed spec is ready for the subcommand: a target, then a training job on it."""
    monkeypatch.chdir(tmp_path)
    target = f"{ROOT}/synthetic/spectrum/draw0.json"
    for output, subcommand, options in (
        (target, "target", []),
        (RECORDS, "train", ["--device", "cpu"]),
    ):
        code, spec, err = spec_cli(capsys, TINY, output)
        assert code == 0, err
        assert main([subcommand, "--spec", spec.strip(), *options]) == 0
        capsys.readouterr()
    assert (tmp_path / target).is_file()
    assert sorted(p.name for p in (tmp_path / RECORDS).iterdir()) == ["b3_lam0.01.parquet"]


@pytest.mark.parametrize(
    "output,says",
    [
        (f"{ROOT}/tables/real_sumary.parquet", f"nearest: {ROOT}/tables/real_summary.parquet"),
        ("results/quick/claims.md", f"this config's outputs are under {ROOT}/ (run_name: tiny)"),
        ("resources/data/gb1.parquet", "`whcore download` / `whcore binarize`"),
        (f"{ROOT}/runs/real/gb1/hashwh/b9/size100_dseed0", "nearest: "),
    ],
)
def test_an_unknown_output_is_one_line_with_nearby_outputs(capsys, contract, output, says):
    code, out, err = spec_cli(capsys, TINY, output)
    assert code == 2 and out == ""
    assert err.startswith(f"whcore spec: error: {output}: ") and says in err
    count = len(contract.all_outputs())
    assert err.rstrip().endswith(f"`whcore spec {TINY} --list` lists all {count}")
    assert len(err.splitlines()) == 1


def test_list_names_every_output_and_its_subcommand(capsys, contract):
    code, out, _ = spec_cli(capsys, TINY, "--list")
    rows = [line.split() for line in out.splitlines()]
    assert code == 0 and len(rows) == len(contract.all_outputs())
    assert len(rows) == len({path for _, path in rows}) > len(contract.jobs)
    assert ["figure", f"{ROOT}/figures/fig5a_real_r2.png"] in rows
    assert ["train", RECORDS.replace("/runs/", "/spectra/")] in rows
    assert spec_cli(capsys, TINY)[0] == 2  # neither an output nor --list


@pytest.mark.parametrize(
    "text,says",
    [
        (
            "run_name: x\nspectrum:\n  n: [1, 2\n  draws: 3\n",
            "bad.yaml, line 4, column 8: not valid YAML",
        ),
        ("run_name: x\n\tdevice: cpu\n", "bad.yaml, line 2, column 1: not valid YAML"),
        ("run_name: x\nbogus: 1\n", "config key (top level): Additional properties"),
        ("- 1\n", "bad.yaml: a config must be a mapping of keys"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_file_and_line(capsys, tmp_path, text, says):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    code, out, err = spec_cli(capsys, config, "--list")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("whcore spec: error: ") and says in err
    assert spec_cli(capsys, tmp_path / "missing.yaml", "--list")[2].startswith(
        f"whcore spec: error: {tmp_path / 'missing.yaml'}: cannot read the config file"
    )


@pytest.mark.workflow
def test_the_spec_is_the_one_snakemake_passes(capsys, tmp_path):
    figure = f"{ROOT}/figures/fig5a_real_r2.pdf"
    _, spec, _ = spec_cli(capsys, TINY, figure)
    shell = snakemake(figure, "-n", "-p", "--configfile", str(TINY), workdir=tmp_path).stdout
    assert f"whcore figure --spec {shlex.quote(spec.strip())} " in shell
    assert json.loads(spec)["outputs"] == {"stem": figure.removesuffix(".pdf")}
