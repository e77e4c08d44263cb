"""The four real datasets from the shared mirror: checksums, exact shapes, names, reference rows,
idempotent re-runs, splits and y standardization. Expected numbers come from
shared/datasets/MANIFEST.md (not from the registry under test)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import torch

from whcore.core.io import read_parquet_metadata
from whcore.core.wht import all_inputs
from whcore.data import datasets
from whcore.data.download import sha256_of
from whcore.data.loading import load_job_data
from whcore.pipeline.cli import main
from whcore.pipeline.jobs.spec import DataSplit

pytestmark = pytest.mark.usefixtures("no_network")

MANIFEST = {  # name: (file under the mirror, sha256, bytes, rows, features)
    "entacmaea": (
        "entacmaea/41467_2019_12130_MOESM7_ESM.xlsx",
        "d893d36645d10334b326696e98edbb7222b15bbeb946176482ed83637120904b",
        737_089,
        8192,
        13,
    ),
    "sgemm": (
        "sgemm/sgemm_product_dataset.zip",
        "8d3ee0d82708df11b54debc6a4fbade77c604a047f019fa7940413032eb7b096",
        3_186_088,
        241_600,
        40,
    ),
    "gb1": (
        "gb1/four_mutations_full_data.csv.zip",
        "85692d808dcd3ae54fa2ac31f4e590858d4582369b6c7b05df299b9b6c383bff",
        2_659_007,
        149_361,
        80,
    ),
    "avgfp": (
        "avgfp/amino_acid_genotypes_to_brightness.tsv",
        "5581230b9888f9960708a4769ce1c9b4453561f0b5f0374525445b4a984d54d5",
        2_334_128,
        49_089,
        236,
    ),
}


def features(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns="y")


def test_registry_lists_the_four_datasets():
    assert tuple(datasets.REGISTRY) == ("entacmaea", "sgemm", "gb1", "avgfp")
    for name, (file, sha, size, rows, n) in MANIFEST.items():
        spec = datasets.get(name)
        assert (f"{name}/{spec.file}", spec.sha256, spec.size, spec.rows, spec.n) == (
            file,
            sha,
            size,
            rows,
            n,
        )
        assert spec.urls and all(u.startswith("https://") for u in spec.urls)
        for url in spec.urls:  # mirrors on GitHub are pinned to a commit, never a branch
            if "github" in url:
                assert re.search(r"/[0-9a-f]{40}/", url), url
    with pytest.raises(ValueError, match="unknown dataset 'mnist'; choose one of entacmaea"):
        datasets.get("mnist")


@pytest.mark.parametrize("name", list(MANIFEST))
def test_mirror_file_checksum(data_mirror, name):
    file, sha, size, *_ = MANIFEST[name]
    assert (data_mirror / file).stat().st_size == size
    assert sha256_of(data_mirror / file) == sha


@pytest.mark.parametrize("name", list(MANIFEST))
def test_shape_types_metadata(real_dataset, name):
    data = real_dataset(name)
    *_, rows, n = MANIFEST[name]
    assert data.frame.shape == (rows, n + 1)
    assert data.frame.columns[-1] == "y" and data.frame["y"].dtype == np.float64
    x = features(data.frame)
    assert (x.dtypes == np.uint8).all() and set(np.unique(x.to_numpy())) <= {0, 1}
    assert not data.frame.isna().any().any()
    assert x.columns.is_unique
    meta = read_parquet_metadata(data.parquet)
    assert (meta["source_sha256"], meta["n"], meta["rows"]) == (MANIFEST[name][1], n, rows)
    assert meta["whcore_version"]
    pd.testing.assert_frame_equal(pd.read_parquet(data.parquet), data.frame)


def test_entacmaea(real_dataset):
    frame = real_dataset("entacmaea").frame
    assert list(features(frame).columns) == [
        "D1N",
        "V2A",
        "L3M",
        "T4P",
        "F5S",
        "N6A",
        "S7G",
        "A8C",
        "A9L",
        "Y10R",
        "N11D",
        "N12K",
        "K13R",
    ]
    # All 2^13 genotypes in lexicographic order: exactly whcore's MSB-first enumeration.
    np.testing.assert_array_equal(features(frame).to_numpy(), all_inputs(13, torch.uint8).numpy())
    assert frame["y"].iloc[0] == pytest.approx(1.57463497188885)  # wild type DVLTFNSAAYNNK
    assert (frame["y"].min(), frame["y"].max(), frame["y"].mean()) == pytest.approx(
        (0.15486, 1.69245, 0.53805), abs=1e-5
    )


def test_sgemm(real_dataset):
    frame = real_dataset("sgemm").frame
    levels = {
        "MWG": [16, 32, 64, 128],
        "NWG": [16, 32, 64, 128],
        "KWG": [16, 32],
        "MDIMC": [8, 16, 32],
        "NDIMC": [8, 16, 32],
        "MDIMA": [8, 16, 32],
        "NDIMB": [8, 16, 32],
        "KWI": [2, 8],
        "VWM": [1, 2, 4, 8],
        "VWN": [1, 2, 4, 8],
        "STRM": [0, 1],
        "STRN": [0, 1],
        "SA": [0, 1],
        "SB": [0, 1],
    }
    assert list(features(frame).columns) == [f"{p}={v}" for p, vs in levels.items() for v in vs]
    assert (features(frame).sum(axis=1) == 14).all()  # exactly one level of each parameter
    assert (frame["y"].min(), frame["y"].max(), frame["y"].mean()) == pytest.approx(
        (13.3175, 3341.5075, 217.5720), abs=1e-4
    )


def test_gb1(real_dataset):
    frame = real_dataset("gb1").frame
    letters = "ACDEFGHIKLMNPQRSTVWY"
    assert list(features(frame).columns) == [
        f"site{s}={a}" for s in (39, 40, 41, 54) for a in letters
    ]
    blocks = features(frame).to_numpy().reshape(len(frame), 4, 20)
    assert (blocks.sum(axis=2) == 1).all()  # one residue per site
    wild = frame.iloc[0]  # the wild-type row VDGV with fitness 1.0
    assert [c for c in features(frame).columns if wild[c] == 1] == [
        "site39=V",
        "site40=D",
        "site41=G",
        "site54=V",
    ]
    assert wild["y"] == 1.0
    assert (frame["y"] == 0).sum() == 29_477 and frame["y"].max() == pytest.approx(8.7620, abs=1e-4)
    hamming = 4 - (blocks * blocks[0]).sum(axis=(1, 2))  # distance to the wild type
    assert np.bincount(hamming).tolist() == [1, 76, 2091, 26019, 121174]


def test_avgfp(data_mirror, real_dataset):
    frame = real_dataset("avgfp").frame
    x = features(frame)
    assert list(x.columns) == [f"site{k}" for k in range(236)]
    assert x.columns[x.sum() == 0].tolist() == ["site0", "site117", "site118"]
    assert x.iloc[0].sum() == 0 and frame["y"].iloc[0] == 3.7192121319  # the wild type
    # Independent check of the merge: the most frequent mutated-site set, read straight from the
    # TSV; its row must hold the average medianBrightness of all its genotypes.
    raw = pd.read_csv(data_mirror / MANIFEST["avgfp"][0], sep="\t", keep_default_na=False)
    site_sets = raw["aaMutations"].map(lambda m: frozenset(int(t[2:-1]) for t in m.split(":") if t))
    assert site_sets.nunique() == len(frame)
    common = site_sets.value_counts().index[0]
    expected = raw.loc[site_sets == common, "medianBrightness"]
    mask = x.sum(axis=1) == len(common)
    for site in common:
        mask &= x[f"site{site}"] == 1
    assert mask.sum() == 1 and len(expected) > 1
    assert frame.loc[mask, "y"].item() == pytest.approx(expected.mean(), rel=1e-12)


def test_binarize_is_idempotent(real_dataset, tmp_path):
    data = real_dataset("entacmaea")
    again = tmp_path / "entacmaea.parquet"
    datasets.binarize("entacmaea", data.raw, again)
    assert sha256_of(again) == sha256_of(data.parquet)  # byte-identical output


def test_load_downloads_binarizes_then_reuses(data_mirror, tmp_path):
    frame = datasets.load("entacmaea", tmp_path, mirror=data_mirror)
    raw, parquet = datasets.paths("entacmaea", tmp_path)
    assert raw == tmp_path / "raw" / "entacmaea" / "41467_2019_12130_MOESM7_ESM.xlsx"
    assert parquet == tmp_path / "data" / "entacmaea.parquet"
    assert frame.shape == (8192, 14)
    stamps = raw.stat().st_mtime_ns, parquet.stat().st_mtime_ns
    pd.testing.assert_frame_equal(datasets.load("entacmaea", tmp_path, mirror=""), frame)
    assert (raw.stat().st_mtime_ns, parquet.stat().st_mtime_ns) == stamps  # nothing redone


def test_cli_download_binarize_describe(data_mirror, tmp_path, capsys):
    raw, out = tmp_path / "raw.xlsx", tmp_path / "entacmaea.parquet"
    assert main(["download", "entacmaea", "--out", str(raw), "--mirror", str(data_mirror)]) == 0
    assert main(["binarize", "entacmaea", "--raw", str(raw), "--out", str(out)]) == 0
    assert main(["describe", "entacmaea", "--data", str(out)]) == 0
    text = capsys.readouterr().out
    assert "8192 rows x 13 binary features" in text and "D1N, V2A" in text
    assert "min 0.154863" in text and MANIFEST["entacmaea"][1] in text


# --- splits --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, train, val, test",
    [
        ("entacmaea", 20, 4086, 4086),
        ("entacmaea", 200, 3996, 3996),
        ("sgemm", 200, 20000, 20000),
        ("avgfp", 2000, 20000, 20000),
    ],
)
def test_paper_split_rules(name, train, val, test):
    split = datasets.split(name, train, data_seed=4)
    assert (len(split.train), len(split.val), len(split.test)) == (train, val, test)
    union = np.concatenate([split.train, split.val, split.test])
    assert len(np.unique(union)) == len(union)  # disjoint
    assert union.min() >= 0 and union.max() < datasets.get(name).rows


def test_split_is_a_pure_function_of_its_arguments():
    a, b = datasets.split("gb1", 200, 0), datasets.split("gb1", 200, 0)
    np.testing.assert_array_equal(a.val, b.val)
    assert not np.array_equal(a.train, datasets.split("gb1", 200, 1).train)
    # Golden values (of the unit's split, whcore.data.splits.unit_split): SplitMix64 in whcore.core.rng is fully specified integer arithmetic, so these
    # indices must never change across platforms or NumPy / PyTorch versions.
    assert a.train[:6].tolist() == [88451, 112785, 42, 33121, 41218, 74893]
    assert a.val[:3].tolist() == [116357, 115418, 141598]
    assert a.test[:3].tolist() == [141866, 134981, 112543]


# --- y standardization ---------------------------------------------------------------------------


def test_standardize_over_the_whole_dataset_before_splitting(real_dataset):
    """As the reference: y = (y - mean) / torch.std(y) (sample std) on all rows, then split."""
    data = real_dataset("entacmaea")
    spec = {
        "source": "table",
        "path": str(data.parquet),
        "train_size": 40,
        "val_size": "rest",
        "test_size": "rest",
        "data_seed": 2,
    }
    y = torch.tensor(data.frame["y"].to_numpy())
    reference = ((y - y.mean()) / torch.std(y)).numpy()
    split = datasets.split("entacmaea", 40, 2)
    standardized, _, _ = load_job_data(DataSplit.from_dict({**spec, "standardize": True}))
    for part, idx in (("train", split.train), ("val", split.val), ("test", split.test)):
        np.testing.assert_allclose(getattr(standardized, f"y_{part}"), reference[idx], rtol=1e-12)
    raw, _, _ = load_job_data(DataSplit.from_dict({**spec, "standardize": False}))
    np.testing.assert_array_equal(raw.y_train, y.numpy()[split.train])
