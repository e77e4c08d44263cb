"""Datasets by configuration (whcore.data.own_data): ProteinGym, aligned sequences and 0/1 tables
binarized as the paper does, GB1 rewritten into ProteinGym's format binarizing as the registry's
parser does, and a one-line error (file, line, column, value) for every kind of bad row."""

from __future__ import annotations

import itertools
import zipfile

import numpy as np
import pandas as pd
import pytest

from whcore.core.io import read_parquet_metadata
from whcore.data import own_data
from whcore.data.download import sha256_of
from whcore.data.parsers import RawFormatError

pytestmark = pytest.mark.usefixtures("no_network")

WILD = "MKVLAT"  # 6 sites; every site either wild type or one mutant residue
MUTANT = "PRWIGS"
PLANTED = {(1,): 0.8, (2, 4): 1.0, (0, 3, 5): -0.7}  # site indices (0-based) -> coefficient


def planted_landscape(wild=WILD, mutant=MUTANT, planted=PLANTED, constant=0.3):
    """Every genotype of the sites (2^n rows): its ProteinGym mutant string, bits and the
    sparse-spectrum target y = c + sum_S a_S (-1)^{sum of the bits in S}."""
    rows = []
    for bits in itertools.product((0, 1), repeat=len(wild)):
        y = constant + sum(a * (-1) ** sum(bits[i] for i in s) for s, a in planted.items())
        mutant_text = ":".join(f"{wild[i]}{i + 1}{mutant[i]}" for i, b in enumerate(bits) if b)
        sequence = "".join(mutant[i] if b else wild[i] for i, b in enumerate(bits))
        rows.append((mutant_text, y, sequence, bits))
    return rows


def write_proteingym(path, rows, sequences=True):
    frame = pd.DataFrame(
        {
            "mutant": [r[0] for r in rows],
            "DMS_score": [r[1] for r in rows],
            **({"mutated_sequence": [r[2] for r in rows]} if sequences else {}),
        }
    )
    frame.to_csv(path, index=False)
    return path


def test_proteingym_mutated_sites_are_the_genotype_bits(tmp_path):
    rows = planted_landscape()
    path = write_proteingym(tmp_path / "dms.csv", rows)
    parsed = own_data.parse(path, {"format": "proteingym", "binarization": "mutated"})
    frame = parsed.frame
    assert list(frame.columns) == [f"site{k}" for k in range(1, 7)] + ["y"]
    np.testing.assert_array_equal(frame.drop(columns="y").to_numpy(), [r[3] for r in rows])
    np.testing.assert_allclose(frame["y"], [r[1] for r in rows])
    assert parsed.dropped == {} and parsed.merged == 0


def test_proteingym_onehot_is_zero_in_the_wild_type_one_column_per_residue_seen(tmp_path):
    rows = planted_landscape()
    path = write_proteingym(tmp_path / "dms.csv", rows, sequences=False)
    frame = own_data.parse(path, {"format": "proteingym"}).frame
    expected = [f"site{k + 1}={name}" for k in range(6) for name in ("mutated", MUTANT[k])]
    assert list(frame.columns[:-1]) == expected
    assert (frame.loc[0, expected] == 0).all()  # the first row is the wild type
    for k in range(6):  # the mutated indicator in place of the wild-type residue's column
        bits = [r[3][k] for r in rows]
        assert (frame[f"site{k + 1}=mutated"] == bits).all()
        assert (frame[f"site{k + 1}={MUTANT[k]}"] == bits).all()


def onehot_reference(residues: np.ndarray, wild: str) -> pd.DataFrame:
    """The slow definition: the full one-hot (one column per residue of every site), each
    column XOR the wild type's, then the columns constant over the rows left out; the
    wild-type residue's column named ``site<k>=mutated``."""
    columns = {}
    for k in range(residues.shape[1]):
        for residue in sorted(set(residues[:, k]) | {wild[k]}):
            column = np.array([int(r == residue) ^ int(wild[k] == residue) for r in residues[:, k]])
            if column.min() != column.max():
                name = "mutated" if residue == wild[k] else residue
                columns[f"site{k + 1}={name}"] = column
    return pd.DataFrame(columns).astype(np.uint8)


def test_onehot_encoding_equals_the_full_one_hot_xor_the_wild_type():
    """Random sequences over a few residues, one site never showing the wild type and one
    never varying: the fast encoding is the slow definition, column for column."""
    from whcore.data.features import encode

    rng = np.random.default_rng(3)
    wild = "ACDEF"
    options = ["ACW", "WY", "D", "EGHK", "FY"]  # site 2 never C, its wild type; site 3 fixed
    residues = np.array(
        [[rng.choice(list(options[k])) for k in range(5)] for _ in range(60)], dtype="<U1"
    )
    fast = encode(residues, np.array(list(wild)), np.arange(1, 6), "onehot")
    slow = onehot_reference(residues, wild)
    assert sorted(fast.columns) == sorted(slow.columns)
    pd.testing.assert_frame_equal(fast[slow.columns], slow)
    assert "site2=mutated" not in fast and "site3=mutated" not in fast


def test_duplicates_merge_by_mean_and_the_parquet_records_source_and_binarization(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("mutant,DMS_score\n,1\nA1P,2\nA1P:C2W,3\nA1P,4\nA1G,10\n")
    out = tmp_path / "dup.parquet"
    settings = {"format": "proteingym", "binarization": "mutated"}
    parsed = own_data.binarize("mine", path, out, settings)
    frame = pd.read_parquet(out)
    # A1P and A1G are the same mutated-site genotype; A1P twice too: merged, in first order.
    assert frame.values.tolist() == [[0, 0, 1.0], [1, 0, (2 + 4 + 10) / 3], [1, 1, 3.0]]
    assert parsed.merged == 2
    meta = read_parquet_metadata(out)
    assert meta["source_sha256"] == sha256_of(path)
    assert meta["binarization"]["binarization"] == "mutated"
    assert meta["binarization"]["target_column"] == "DMS_score"
    assert meta["dataset"] == "mine" and meta["n"] == 2


def test_other_score_column_sequences_and_binary_formats(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("sequence,fitness,DMS_score\nACD,1,x\nAWD,2,x\nPWD,3,x\nACD,5,x\n")
    onehot = own_data.parse(path, {"format": "sequences", "target_column": "fitness"}).frame
    # the consensus ACD is the wild type
    assert list(onehot.columns) == ["site1=mutated", "site1=P", "site2=mutated", "site2=W", "y"]
    assert onehot["y"].tolist() == [3.0, 2.0, 3.0]  # ACD twice: (1 + 5) / 2
    mutated = own_data.parse(
        path,
        {
            "format": "sequences",
            "target_column": "fitness",
            "binarization": "mutated",
            "wild_type": "PCD",
        },
    ).frame
    assert mutated.drop(columns="y").values.tolist() == [[1, 0], [1, 1], [0, 1]]
    binary = tmp_path / "b.csv"
    binary.write_text("a,b,y2\n0,1,1.5\n1,1,2.5\n")
    frame = own_data.parse(binary, {"format": "binary", "target_column": "y2"}).frame
    assert frame.values.tolist() == [[0, 1, 1.5], [1, 1, 2.5]]


def test_gb1_in_proteingym_format_binarizes_like_the_registry_parser(tmp_path, data_mirror):
    from whcore.data.parsers import GB1_SITES, parse_gb1

    raw = data_mirror / "gb1" / "four_mutations_full_data.csv.zip"
    if not raw.is_file():
        pytest.skip(f"{raw} not in the mirror")
    expected = parse_gb1(raw)
    with zipfile.ZipFile(raw) as archive, archive.open(archive.namelist()[0]) as member:
        table = pd.read_csv(member, usecols=["Variants", "Fitness"], dtype={"Variants": str})
    wild = "VDGV"  # GB1's residues at sites 39, 40, 41, 54
    variants = table["Variants"].to_numpy().astype("U4").view("U1").reshape(-1, 4)
    tokens = np.where(
        variants != np.array(list(wild)),
        np.char.add(np.char.add([f"{w}{s}" for w, s in zip(wild, GB1_SITES)], variants), ":"),
        "",
    )
    mutants = ["".join(row).rstrip(":") for row in tokens]
    path = tmp_path / "gb1_proteingym.csv"
    pd.DataFrame({"mutant": mutants, "DMS_score": table["Fitness"]}).to_csv(path, index=False)
    frame = own_data.parse(path, {"format": "proteingym"}).frame
    # the registry's (the paper's) columns, the wild-type residue's complemented into "site
    # mutated": the same genotypes, row for row
    for site, residue in zip(GB1_SITES, wild, strict=True):
        column = expected.pop(f"site{site}={residue}")
        expected[f"site{site}=mutated"] = (1 - column).astype(column.dtype)
    assert sorted(frame.columns) == sorted(expected.columns)
    pd.testing.assert_frame_equal(frame[expected.columns], expected, check_dtype=True)


BAD_ROWS = [
    ("mutant,DMS_score\nA1P,1\nC2W,\n", "line 3, column 'DMS_score': empty", "missing"),
    ("mutant,DMS_score\nA1P,1\nC2W,inf\n", "line 3, column 'DMS_score': 'inf'", "non-finite"),
    (
        "mutant,DMS_score\nA1P,1\nC2-W,2\n",
        "line 3, column 'mutant': 'C2-W' is not a mutant",
        "unparsable mutant",
    ),
    (
        "mutant,DMS_score\nA1P,1\nG1P:C2W,2\n",
        "line 3, column 'mutant': 'G1P:C2W' says site 1 is G in the wild type, which has A",
        "mutant contradicting the wild type",
    ),
    (
        "mutant,DMS_score,mutated_sequence\nA1P,1,PC\nC2W,2,AWQ\n",
        "line 3, column 'mutated_sequence': 'AWQ' has 3 residues, not 2",
        "sequence of the wrong length",
    ),
    (
        "mutant,DMS_score,mutated_sequence\nA1P,1,PC\nC2W,2,AC\n",
        "line 3, column 'mutated_sequence': 'AC' does not have W at site 2",
        "mutant contradicting the wild type",
    ),
]


@pytest.mark.parametrize("text,message,reason", BAD_ROWS)
def test_bad_rows_are_refused_in_one_line_or_dropped_and_counted(tmp_path, text, message, reason):
    path = tmp_path / "bad.csv"
    path.write_text(text + "A1P:C2W,3" + (",PW" if "mutated_sequence" in text else "") + "\n")
    with pytest.raises(RawFormatError) as err:
        own_data.parse(path, {"format": "proteingym"})
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{path}: {message}"), line
    assert "Fix:" in line and "drop_invalid" in line
    parsed = own_data.parse(path, {"format": "proteingym", "drop_invalid": True})
    assert sum(parsed.dropped.values()) == 1 and parsed.rows == 3
    assert len(parsed.frame) == 2
    assert any(reason.split()[0] in why for why in parsed.dropped), parsed.dropped


@pytest.mark.parametrize(
    "text,settings,message",
    [
        ("sequence,y\nACD,1\nAC,2\n", {}, "line 3, column 'sequence': 'AC' has 2 characters"),
        ("a,b,y\n0,1,1\n2,0,1\n", {"format": "binary"}, "line 3, column 'a': '2' is not 0 or 1"),
        ("sequence,y\nACD,1\nAWD,nan\n", {}, "line 3, column 'y': 'nan' is not a finite"),
    ],
)
def test_sequence_and_binary_rows_are_refused(tmp_path, text, settings, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(RawFormatError, match="^" + str(path) + ": " + message):
        own_data.parse(path, {"format": "sequences", "target_column": "y", **settings})


def test_a_missing_column_names_the_config_key(tmp_path):
    path = tmp_path / "dms.csv"
    path.write_text("mutant,score\nA1P,1\n")
    with pytest.raises(RawFormatError, match="no column 'DMS_score'.*target_column"):
        own_data.parse(path, {"format": "proteingym"})


def test_a_wrong_sha256_is_refused_and_nothing_written(tmp_path):
    path = write_proteingym(tmp_path / "dms.csv", planted_landscape())
    out = tmp_path / "out.parquet"
    with pytest.raises(RawFormatError, match="sha256"):
        own_data.binarize("mine", path, out, {"format": "proteingym", "sha256": "0" * 64})
    assert not out.exists()


# --- the configuration keys ------------------------------------------------------------------------

OWN = "{train_sizes: [10], val_size: rest, test_size: rest"


@pytest.mark.parametrize(
    "entry, key, words",
    [
        (
            f"{{gb1: {OWN}, file: x.csv, format: proteingym}}}}",
            "real.datasets.gb1.file",
            "one of the paper's datasets",
        ),
        (f"{{mine: {OWN}}}}}", "real.datasets.mine", "give file (or url and sha256)"),
        (
            f"{{mine: {OWN}, url: 'https://x.org/a.csv', format: binary, target_column: y}}}}",
            "real.datasets.mine.sha256",
            "needs the sha256",
        ),
        (f"{{mine: {OWN}, file: a.csv}}}}", "real.datasets.mine.format", "missing"),
        (
            f"{{mine: {OWN}, file: a.csv, format: sequences}}}}",
            "real.datasets.mine.target_column",
            "needs its target column",
        ),
        (
            f"{{mine: {OWN}, file: a.csv, format: binary, target_column: y, binarization: mutated}}}}",
            "real.datasets.mine.binarization",
            "applies to format",
        ),
        (
            f"{{mine: {OWN}, file: a.csv, format: fasta}}}}",
            "real.datasets.mine.format",
            "is not one of",
        ),
        (f"{{Mine: {OWN}, file: a.csv, format: binary}}}}", "real.datasets", "does not match"),
    ],
)
def test_config_keys_of_an_own_dataset_are_checked_in_one_line(entry, key, words):
    from test_config import assert_own_dataset_refused

    assert_own_dataset_refused(entry, key, words)


def test_a_config_with_only_an_own_dataset_plans_its_jobs():
    from test_config import changed, validate

    from whcore.pipeline.contract import Contract

    config = changed("real.datasets", f"{{mine: {OWN}, file: a.csv, format: proteingym}}}}")
    config["real"]["runtime_dataset"] = "mine"
    for experiment in ("spectrum", "synthetic", "ablation", "entacmaea_energy"):
        del config[experiment]  # left out: not run
    validate(config)
    contract = Contract(config)
    kinds = {job.kind for job in contract.jobs.values()}
    assert {"binarize_own", "epistasis", "epistasis_figure", "train", "figure"} <= kinds
    assert not {"target", "ablation", "entacmaea_energy", "download_own"} & kinds
    (data,) = [job for job in contract.jobs.values() if job.kind == "binarize_own"]
    assert data.inputs == ("a.csv",) and data.spec.source["target_column"] == "DMS_score"
    (claims,) = [job for job in contract.jobs.values() if job.kind == "claims"]
    assert claims.spec.settings["report"] == "own_data"  # the comparison, not the paper's claims
    (figure,) = contract.jobs_of("epistasis_figure")  # labelled with its run, as every figure
    assert figure.spec.run_name == config["run_name"]


def test_above_twenty_sites_the_spectrum_comes_from_spright():
    """A network that is a known sparse function of n = 24 inputs: SPRIGHT recovers it."""
    import torch

    from whcore.pipeline.analyses.epistasis import network_spectrum, top_interactions

    n = 24

    class Sparse(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(()))

        def forward(self, x):
            sign = 1 - 2 * x
            return self.scale * (0.5 + 2 * sign[:, 3] * sign[:, 17] - 1.5 * sign[:, 20])

    bits, coefs, how = network_spectrum(Sparse(), n, m=6, d=3)
    assert how.startswith("SPRIGHT")
    top = top_interactions(bits, coefs, [f"s{i}" for i in range(n)], 2)
    assert top["interaction"].tolist() == ["s3 x s17", "s20"]
    np.testing.assert_allclose(top["coefficient"], [2.0, -1.5], atol=1e-6)


@pytest.mark.parametrize(
    "what,rows,says",
    [
        ("size", [b"A1P,1.0\n"] * 40_000, "more than 65,536 bytes decompressed"),
        ("line", [b"A1P,1.0,", b"A" * 40_000, b"\n"], "a line longer than 4,096 bytes"),
    ],
)
def test_a_compressed_table_is_bounded_before_it_is_read(tmp_path, monkeypatch, what, rows, says):
    """A 3 MB .csv.gz can hold 2 GiB of rows or one 1 GiB line (a memory error under a 4 GB
    cap): both are refused in one line with the fix, before pandas reads them (the bounds
    lowered here, the crafted files scaled down alike)."""
    import gzip

    from whcore.data import formats

    monkeypatch.setattr(formats, "MAX_TABLE_BYTES", 1 << 16, raising=False)
    monkeypatch.setattr(formats, "MAX_LINE_BYTES", 1 << 12, raising=False)
    path = tmp_path / "dms.csv.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b"mutant,DMS_score,mutated_sequence\n" + b"".join(rows))
    with pytest.raises(
        RawFormatError, match=f"^{path}: {says}.* Fix: keep only the columns"
    ) as err:
        own_data.parse(path, {"format": "proteingym"})
    assert "\n" not in str(err.value)
    assert path.stat().st_size < 4_000  # the compressed file is small
