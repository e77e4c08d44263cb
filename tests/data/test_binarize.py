"""Binarization on tiny hand-made raw files: the encodings, and a clear error (naming the file
and the problem, leaving no Parquet behind) for every kind of broken input."""

from __future__ import annotations

import re
import zipfile

import numpy as np
import openpyxl
import pandas as pd
import pytest

from whcore.core.io import read_parquet_metadata, write_parquet
from whcore.data import parsers
from whcore.data.datasets import binarize, get
from whcore.data.download import sha256_of
from whcore.data.parsers import RawFormatError
from whcore.pipeline.cli import main

pytestmark = pytest.mark.usefixtures("no_network")

# --- tiny raw files in the published formats -----------------------------------------------------

WILD, MUTANT = "DVL", "NAM"  # 3 sites: D1N, V2A, L3M


def entacmaea_xlsx(path, header=None, genotypes=None, targets=None):
    genotypes = genotypes or [format(t, "03b") for t in range(8)]
    targets = targets or [0.5 + t for t in range(len(genotypes))]
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "genodata"
    rows = header or [list(r) for r in parsers.ENTACMAEA_HEADER]
    for row in rows:
        sheet.append([c or None for c in row])
    for t, g in enumerate(genotypes):
        seq = "".join(MUTANT[i] if b == "1" else WILD[i] for i, b in enumerate(g))
        sheet.append([f"'{g}'", seq, 1, 1, 1, None, 0.1, 0.2, None, targets[t]])
    book.save(path)
    return path


def avgfp_tsv(path, lines):
    path.write_text(
        "aaMutations\tuniqueBarcodes\tmedianBrightness\tstd\n"
        + "".join(f"{m}\t1\t{y}\t\n" for m, y in lines)
    )
    return path


def gb1_zip(path, rows, columns=parsers.GB1_COLUMNS):
    frame = pd.DataFrame(rows, columns=columns)
    frame["sequence"] = "MQYKL"  # one of FLIP's extra columns, ignored
    frame.to_csv(
        path,
        index=False,
        compression={"method": "zip", "archive_name": path.name.removesuffix(".zip")},
    )
    return path


def sgemm_zip(path, frame, member=parsers.SGEMM_MEMBER):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, frame.to_csv(index=False))
    return path


def sgemm_frame(rows=4):
    values = {p: [16, 32, 16, 64][:rows] for p in parsers.SGEMM_PARAMETERS}
    runs = {r: [1.0, 2.0, 3.0, 4.0][:rows] for r in parsers.SGEMM_RUNS}
    frame = pd.DataFrame({**values, **runs})
    frame["Run4 (ms)"] = [5.0, 6.0, 7.0, 8.0][:rows]
    return frame


# --- the encodings ------------------------------------------------------------------------------


def test_entacmaea_bits_names_and_target(tmp_path):
    frame = parsers.parse_entacmaea(entacmaea_xlsx(tmp_path / "e.xlsx"))
    assert list(frame.columns) == ["D1N", "V2A", "L3M", "y"]
    expected = [[int(b) for b in format(t, "03b")] for t in range(8)]  # MSB-first, quotes gone
    np.testing.assert_array_equal(frame.iloc[:, :3].to_numpy(), expected)
    np.testing.assert_array_equal(frame["y"], 0.5 + np.arange(8))
    assert (frame.dtypes.iloc[:3] == np.uint8).all() and frame["y"].dtype == np.float64


def test_sgemm_one_hot_and_mean_of_runs(tmp_path):
    frame = parsers.parse_sgemm(sgemm_zip(tmp_path / "s.zip", sgemm_frame()))
    assert list(frame.columns[:3]) == ["MWG=16", "MWG=32", "MWG=64"]  # ascending, observed values
    assert frame.shape == (4, 14 * 3 + 1)
    assert (frame.drop(columns="y").sum(axis=1) == 14).all()  # one value per parameter
    np.testing.assert_allclose(frame["y"], [(1 + 1 + 1 + 5) / 4, 3.0, 4.0, 5.0])


def test_gb1_one_hot_of_four_sites(tmp_path):
    frame = parsers.parse_gb1(
        gb1_zip(tmp_path / "g.csv.zip", [["VDGV", 0, 9, 9, 1.0], ["ACDY", 4, 1, 2, 0.25]])
    )
    assert frame.shape == (2, 81)
    assert frame.columns[0] == "site39=A" and frame.columns[79] == "site54=Y"
    ones = [sorted(frame.columns[:80][frame.iloc[r, :80].to_numpy() == 1]) for r in range(2)]
    assert ones == [
        ["site39=V", "site40=D", "site41=G", "site54=V"],
        ["site39=A", "site40=C", "site41=D", "site54=Y"],
    ]
    np.testing.assert_array_equal(frame["y"], [1.0, 0.25])


def test_avgfp_sites_merge_and_order(tmp_path):
    lines = [("", 3.0), ("SA5D", 1.0), ("SK2R:SA5*", 2.0), ("SA5C", 2.0), ("SA5D:SK2E", 4.0)]
    frame = parsers.parse_avgfp(avgfp_tsv(tmp_path / "a.tsv", lines))
    assert list(frame.columns) == [f"site{k}" for k in range(6)] + ["y"]  # width max site + 1
    # Rows sorted by site set, wild type first; {5} averages SA5D and SA5C, {2, 5} the other two.
    np.testing.assert_array_equal(
        frame.iloc[:, :6].to_numpy(), [[0] * 6, [0, 0, 1, 0, 0, 1], [0, 0, 0, 0, 0, 1]]
    )
    np.testing.assert_array_equal(frame["y"], [3.0, 3.0, 1.5])


# --- broken inputs -------------------------------------------------------------------------------


def assert_clear_failure(name, raw, out, match, error=RawFormatError, verify=False):
    """The error names the file and the problem, and no Parquet is left (not even an older
    binarized table of the dataset: a file that is none would be kept, not being the writer's)."""
    older = pd.DataFrame({"x0": [1], "y": [0.0]})
    write_parquet(older, out, {"dataset": name, "source_sha256": "0" * 64})
    with pytest.raises(error, match=match) as err:
        binarize(name, raw, out, verify=verify)
    assert str(raw) in str(err.value)
    assert not out.exists()
    assert [p.name for p in out.parent.iterdir() if p.suffix in (".tmp", ".parquet")] == []


def test_entacmaea_changed_header(tmp_path):
    header = [list(r) for r in parsers.ENTACMAEA_HEADER]
    header[1][9] = "red"  # column J no longer the combined brightness
    raw = entacmaea_xlsx(tmp_path / "e.xlsx", header=header)
    assert_clear_failure(
        "entacmaea",
        raw,
        tmp_path / "e.parquet",
        r"unexpected header row 2: expected .*'combined'.*found .*'red'",
    )


def test_entacmaea_truncated_workbook(tmp_path):
    good = entacmaea_xlsx(tmp_path / "good.xlsx").read_bytes()
    raw = tmp_path / "e.xlsx"
    raw.write_bytes(good[: len(good) // 2])
    assert_clear_failure("entacmaea", raw, tmp_path / "e.parquet", "cannot read it as the Poelwijk")


def test_entacmaea_genotype_that_is_not_binary(tmp_path):
    raw = entacmaea_xlsx(tmp_path / "e.xlsx", genotypes=["000", "001", "0x1"])
    assert_clear_failure("entacmaea", raw, tmp_path / "e.parquet", "quoted binary genotypes")


def test_wrong_checksum_names_both_digests(tmp_path):
    raw = entacmaea_xlsx(tmp_path / "e.xlsx")
    assert_clear_failure(
        "entacmaea",
        raw,
        tmp_path / "e.parquet",
        f"expected sha256 {get('entacmaea').sha256}, got {sha256_of(raw)}",
        verify=True,
    )


def test_missing_raw_file(tmp_path):
    assert_clear_failure(
        "gb1",
        tmp_path / "nothing.csv.zip",
        tmp_path / "g.parquet",
        "not found. Fix: run `whcore download gb1",
        error=FileNotFoundError,
    )


@pytest.mark.parametrize("token", ["SA108", "A108D", "SA1O8D", "SA108DD"])
def test_avgfp_unknown_mutation_token(tmp_path, token):
    raw = avgfp_tsv(tmp_path / "a.tsv", [("", 3.0), ("SA5D", 1.0), (f"SK2R:{token}", 2.0)])
    assert_clear_failure(
        "avgfp", raw, tmp_path / "a.parquet", f"unknown mutation token '{token}' on line 4"
    )


def test_avgfp_changed_header(tmp_path):
    raw = tmp_path / "a.tsv"
    raw.write_text("mutations\tuniqueBarcodes\tmedianBrightness\tstd\n\t1\t3.0\t\n")
    assert_clear_failure("avgfp", raw, tmp_path / "a.parquet", "unexpected TSV header")


def test_gb1_missing_supplement_column(tmp_path):
    raw = gb1_zip(tmp_path / "g.csv.zip", [["VDGV", 0, 9, 9]], columns=parsers.GB1_COLUMNS[:4])
    assert_clear_failure("gb1", raw, tmp_path / "g.parquet", r"columns \['Fitness'\] are missing")


def test_gb1_non_canonical_letter(tmp_path):
    raw = gb1_zip(tmp_path / "g.csv.zip", [["VDGV", 0, 9, 9, 1.0], ["VDGB", 1, 1, 1, 0.5]])
    assert_clear_failure("gb1", raw, tmp_path / "g.parquet", r"variant 'VDGB' \(row 3\)")


def test_sgemm_zip_without_the_csv(tmp_path):
    raw = sgemm_zip(tmp_path / "s.zip", sgemm_frame(), member="other.csv")
    assert_clear_failure("sgemm", raw, tmp_path / "s.parquet", "cannot read sgemm_product.csv")


def test_sgemm_not_a_zip(tmp_path):
    raw = tmp_path / "s.zip"
    raw.write_bytes(b"MWG,NWG\n16,16\n")
    assert_clear_failure("sgemm", raw, tmp_path / "s.parquet", "BadZipFile")


def test_sgemm_renamed_column(tmp_path):
    frame = sgemm_frame().rename(columns={"SB": "sb"})
    raw = sgemm_zip(tmp_path / "s.zip", frame)
    assert_clear_failure("sgemm", raw, tmp_path / "s.parquet", "unexpected columns")


# --- targets that are not finite numbers: the error names the raw row as the user sees it ---------

# (cell as written in the raw file, how the error shows it)
bad_targets = pytest.mark.parametrize(
    ("cell", "shown"),
    [("NaN", "'NaN'"), ("inf", "'inf'"), ("", "empty"), ("n/a", "'n/a'")],
    ids=["nan", "inf", "empty", "n/a"],
)


def assert_bad_target(name, raw, where, shown):
    problem = f"{where} is {shown}, not a finite number. Fix: write a finite number there"
    assert_clear_failure(name, raw, raw.with_suffix(".parquet"), re.escape(problem))


@bad_targets
def test_entacmaea_bad_brightness_names_excel_row(tmp_path, cell, shown):
    targets = [0.5 + t for t in range(8)]
    targets[7] = cell or None  # the last genotype: Excel row 10, below the two header rows
    raw = entacmaea_xlsx(tmp_path / "e.xlsx", targets=targets)
    where = "sheet 'genodata', Excel row 10, column J (combined brightness)"
    assert_bad_target("entacmaea", raw, where, shown)


@bad_targets
def test_sgemm_bad_run_time_names_member_line(tmp_path, cell, shown):
    frame = sgemm_frame().astype({"Run3 (ms)": object})
    frame.loc[2, "Run3 (ms)"] = cell  # the third data row: line 4 of the CSV
    raw = sgemm_zip(tmp_path / "s.zip", frame)
    where = "sgemm_product.csv (in the zip), line 4, column 'Run3 (ms)'"
    assert_bad_target("sgemm", raw, where, shown)


@bad_targets
def test_gb1_bad_fitness_names_member_line(tmp_path, cell, shown):
    rows = [["VDGV", 0, 9, 9, 1.0], ["ADGV", 1, 1, 1, 0.5], ["CDGV", 1, 1, 1, cell]]
    raw = gb1_zip(tmp_path / "g.csv.zip", rows)
    assert_bad_target("gb1", raw, "g.csv (in the zip), line 4, column 'Fitness'", shown)


@bad_targets
def test_avgfp_bad_brightness_names_raw_line_before_merging(tmp_path, cell, shown):
    # SA5C merges with SA5D into one genotype: the old code averaged the bad value away.
    lines = [("", 3.0), ("SA5D", 1.0), ("SK2R", 2.0), ("SA5C", cell)]
    raw = avgfp_tsv(tmp_path / "a.tsv", lines)
    assert_bad_target("avgfp", raw, "line 5, column 'medianBrightness'", shown)


# --- through the command line --------------------------------------------------------------------


def test_cli_binarize_writes_metadata(tmp_path, capsys):
    raw = avgfp_tsv(tmp_path / "a.tsv", [("", 3.0), ("SA5D", 1.0)])
    out = tmp_path / "data" / "avgfp.parquet"
    assert main(["binarize", "avgfp", "--raw", str(raw), "--out", str(out), "--no-verify"]) == 0
    meta = read_parquet_metadata(out)
    assert meta["n"] == 6 and meta["rows"] == 2 and meta["dataset"] == "avgfp"
    assert "whcore_version" in meta and len(meta["source_sha256"]) == 64
    assert "2 rows x 6 features" in capsys.readouterr().out


def test_cli_error_is_one_clear_line_and_exit_2(tmp_path, capsys):
    raw = avgfp_tsv(tmp_path / "a.tsv", [("", 3.0), ("SX", 1.0)])
    out = tmp_path / "a.parquet"
    assert main(["binarize", "avgfp", "--raw", str(raw), "--out", str(out), "--no-verify"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("whcore binarize: error:") and str(raw) in err and "'SX'" in err
    assert "\n" not in err and not out.exists()


def test_cli_download_without_mirror_or_network(tmp_path, capsys):
    out = tmp_path / "raw" / "gb1.csv.zip"
    args = [
        "download",
        "gb1",
        "--out",
        str(out),
        "--mirror",
        str(tmp_path / "no-mirror"),
        "--retries",
        "1",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "could not obtain four_mutations_full_data.csv.zip" in err
    assert "(mirror): not found" in err and "raw.githubusercontent.com" in err
    assert not out.exists()
    assert (list(out.parent.iterdir()) if out.parent.exists() else []) == []
