"""The paper's four real datasets: registry, checksummed download, binarization, splits, CLI.

Layout under a resources root (the workflow's ``resources/``)::

    <root>/raw/<name>/<file>        the raw file, exactly the pinned bytes (sha256 checked)
    <root>/data/<name>.parquet      0/1 feature columns, then y; metadata under key "whcore"

``load(name, root)`` fills in whatever is missing. Raw files come from a mirror folder first
(``mirror=``, config key ``data_mirror``, or ``WHCORE_DATA_MIRROR``), then from the pinned URLs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.io import read_parquet_metadata, write_parquet
from . import parsers as _parsers
from .download import fetch, sha256_of
from .loading import discard_failed
from .splits import Split, unit_seed, unit_split

__all__ = [
    "DatasetInfo",
    "REGISTRY",
    "get",
    "paths",
    "download",
    "binarize",
    "load",
    "split",
    "describe",
]


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    title: str
    short: str  # the name figures print, e.g. "avGFP"
    file: str  # raw file name (also its name in the mirror: <mirror>/<name>/<file>)
    sha256: str
    size: int  # bytes of the raw file
    urls: tuple[str, ...]  # tried in order: sources known to serve these exact bytes first
    parser: Callable[[Path], pd.DataFrame]
    n: int  # binary features
    rows: int  # rows after binarization
    val_size: int | str  # the paper's split rule ("rest" = the remainder; both "rest":
    test_size: int | str  # two equal halves)
    source: str
    encoding: str


_GH = "https://raw.githubusercontent.com"

REGISTRY: dict[str, DatasetInfo] = {
    info.name: info
    for info in (
        DatasetInfo(
            name="entacmaea",
            short="Entacmaea",
            title="Entacmaea quadricolor fluorescent protein (Poelwijk et al. 2019)",
            file="41467_2019_12130_MOESM7_ESM.xlsx",
            sha256="d893d36645d10334b326696e98edbb7222b15bbeb946176482ed83637120904b",
            size=737_089,
            urls=(
                # Byte-identical git blob; the Springer copy is believed identical but unverified.
                (
                    f"{_GH}/amirmohan/epistatic-net/4af08370e814ba74d074aa2deccae3435be9187e/"
                    "41467_2019_12130_MOESM7_ESM.xlsx"
                ),
                (
                    "https://static-content.springer.com/esm/art%3A10.1038%2Fs41467-019-12130-8/"
                    "MediaObjects/41467_2019_12130_MOESM7_ESM.xlsx"
                ),
            ),
            parser=_parsers.parse_entacmaea,
            n=13,
            rows=8192,
            val_size="rest",
            test_size="rest",
            source="Nat. Commun. 10 (2019), doi:10.1038/s41467-019-12130-8, supplementary data 7",
            encoding="13-bit genotype (column A, quotes stripped); y = combined brightness (J)",
        ),
        DatasetInfo(
            name="sgemm",
            short="SGEMM",
            title="SGEMM GPU kernel performance (UCI 440)",
            file="sgemm_product_dataset.zip",
            sha256="8d3ee0d82708df11b54debc6a4fbade77c604a047f019fa7940413032eb7b096",
            size=3_186_088,
            urls=(
                # A git blob of the original UCI zip; UCI's legacy URL is the fallback.
                (
                    f"{_GH}/Sarthak-Mohapatra/Classification-of-GPU-Run-as-high-or-low-time-consuming"
                    "-using-various-classification-Algorithms./7597991528265c0719d6ac31d40c9851a38ba8b4"
                    "/sgemm_product_dataset.zip"
                ),
                (
                    "https://archive.ics.uci.edu/ml/machine-learning-databases/00440/"
                    "sgemm_product_dataset.zip"
                ),
            ),
            parser=_parsers.parse_sgemm,
            n=40,
            rows=241_600,
            val_size=20_000,
            test_size=20_000,
            source="UCI Machine Learning Repository dataset 440 (Paredes & Ballester-Ripoll 2018)",
            encoding="one-hot of the 14 kernel parameters; y = mean of Run1..Run4 (ms)",
        ),
        DatasetInfo(
            name="gb1",
            short="GB1",
            title="Protein G domain B1, 4-site landscape (Wu et al. 2016)",
            file="four_mutations_full_data.csv.zip",
            sha256="85692d808dcd3ae54fa2ac31f4e590858d4582369b6c7b05df299b9b6c383bff",
            size=2_659_007,
            urls=(
                # FLIP's lossless re-export of the eLife supplement (which has other bytes).
                (
                    f"{_GH}/J-SNACKKB/FLIP/62cace8735f5610e2743cf06ce0f944b37fffaa6/"
                    "splits/gb1/four_mutations_full_data.csv.zip"
                ),
            ),
            parser=_parsers.parse_gb1,
            n=80,
            rows=149_361,
            val_size=20_000,
            test_size=20_000,
            source="eLife 5:e16965 (2016), supplementary file 1, as re-exported by FLIP",
            encoding="one-hot of the residues at sites 39, 40, 41, 54 (20 letters each); y = Fitness",
        ),
        DatasetInfo(
            name="avgfp",
            short="avGFP",
            title="Aequorea victoria GFP local fitness landscape (Sarkisyan et al. 2016)",
            file="amino_acid_genotypes_to_brightness.tsv",
            sha256="5581230b9888f9960708a4769ce1c9b4453561f0b5f0374525445b4a984d54d5",
            size=2_334_128,
            urls=(
                # figshare serves these bytes (its sha256 is the LFS oid of an independent copy).
                "https://figshare.com/ndownloader/files/4820647",
                (
                    "https://media.githubusercontent.com/media/csiro-funml/variationalsearch/"
                    "d5e30e162e0745dd5816834b8f7141808566d423/data/amino_acid_genotypes_to_brightness"
                    ".tsv"
                ),
            ),
            parser=_parsers.parse_avgfp,
            n=236,
            rows=49_089,
            val_size=20_000,
            test_size=20_000,
            source="Nature 533 (2016), figshare doi:10.6084/m9.figshare.3102154",
            encoding="mutated site present/absent (width max site + 1); genotypes with the same "
            "site set merged, y = mean medianBrightness",
        ),
    )
}


def get(name: str) -> DatasetInfo:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(REGISTRY)}") from None


def paths(name: str, root: str | Path) -> tuple[Path, Path]:
    """(raw file, binarized Parquet) of ``name`` under the resources root ``root``."""
    info, root = get(name), Path(root)
    return root / "raw" / name / info.file, root / "data" / f"{name}.parquet"


# For tests only: serve every dataset from ``<base>/<dataset>/<file>`` (a local HTTP server)
# instead of the pinned URLs, so the path a real user takes (no mirror, network) is exercised.
TEST_URL_BASE_ENV = "WHCORE_TEST_URL_BASE"


def source_urls(info: DatasetInfo) -> tuple[str, ...]:
    """The URLs tried for ``info``: the pinned ones, or the test server's when it is set."""
    base = os.environ.get(TEST_URL_BASE_ENV, "")
    return (f"{base.rstrip('/')}/{info.name}/{info.file}",) if base else info.urls


def download(name: str, out: str | Path, mirror: str | Path | None = None, **options) -> Path:
    """Fetch the raw file of ``name`` to ``out`` (see ``whcore.data.download.fetch`` for options).

    A damaged copy at ``out`` is replaced, but only if ``out`` is named like the dataset's raw
    file: a wrong path never destroys some other file."""
    info = get(name)
    out = Path(out)
    if out.exists() and out.name != info.file:
        raise ValueError(
            f"--out {out}: exists and is not a copy of {name}'s raw file {info.file}; "
            f"refusing to replace it. Fix: use e.g. resources/raw/{name}/{info.file}"
        )
    return fetch(info.file, info.sha256, out, source_urls(info), mirror, subdir=name, **options)


def _metadata(info: DatasetInfo, digest: str, frame: pd.DataFrame) -> dict:
    from .. import __version__

    return {
        "dataset": info.name,
        "source_file": info.file,
        "source_sha256": digest,
        "n": frame.shape[1] - 1,
        "rows": len(frame),
        "whcore_version": __version__,
        "encoding": info.encoding,
        "source": info.source,
    }


def binarize(name: str, raw: str | Path, out: str | Path, verify: bool = True) -> pd.DataFrame:
    """Parse ``raw`` with the paper's encoding and write ``out`` (Parquet, atomically).

    With ``verify`` the raw file must have the pinned sha256 and the result the paper's shape;
    ``verify=False`` binarizes a deliberately modified file of the same format."""
    info = get(name)
    try:
        return _binarize(info, Path(raw), Path(out), verify)
    except BaseException:
        # ``out`` claims to be the binarization of ``raw``: after a failure an older table of
        # this dataset there would be a lie (a job that fails leaves no output behind)
        discard_failed(out, name)
        raise


def _binarize(info: DatasetInfo, raw: Path, out: Path, verify: bool) -> pd.DataFrame:
    name = info.name
    if not raw.is_file():
        raise FileNotFoundError(
            f"{raw}: raw file of {name} not found. Fix: run "
            f"`whcore download {name} --out {raw}` first"
        )
    digest = sha256_of(raw)
    if verify and digest != info.sha256:
        raise _parsers.RawFormatError(
            f"{raw}: checksum mismatch: expected sha256 {info.sha256}, got {digest}; the file is "
            f"truncated, corrupt or another version. Fix: delete it and run `whcore download {name}`"
        )
    frame = info.parser(raw)
    if verify and frame.shape != (info.rows, info.n + 1):
        raise _parsers.RawFormatError(
            f"{raw}: binarized to {frame.shape[0]} x {frame.shape[1] - 1}, expected "
            f"{info.rows} x {info.n}; this is a bug in the {name} parser, please report it"
        )
    write_parquet(frame, out, _metadata(info, digest, frame))
    return frame


def _is_current(parquet: Path, info: DatasetInfo) -> bool:
    from .. import __version__

    if not parquet.is_file():
        return False
    meta = read_parquet_metadata(parquet)
    return meta.get("source_sha256") == info.sha256 and meta.get("whcore_version") == __version__


def load(name: str, data_dir: str | Path, mirror: str | Path | None = None) -> pd.DataFrame:
    """The binarized dataset (feature columns, then ``y``), downloading the raw file into
    ``<data_dir>/raw/<name>/`` and binarizing it into ``<data_dir>/data/<name>.parquet`` if
    needed (a Parquet from another raw file or whcore version is rebuilt)."""
    info = get(name)
    raw, parquet = paths(name, data_dir)
    if not _is_current(parquet, info):
        download(name, raw, mirror)
        return binarize(name, raw, parquet)
    return pd.read_parquet(parquet)


def split(name: str, train_size: int, data_seed: int, size: int | None = None) -> Split:
    """The paper's split of ``name``: ``train_size`` rows for training, then validation and
    test by the registry's rule (Entacmaea: the rest in two halves; others 20000 / 20000)."""
    info = get(name)
    rows = info.rows if size is None else size
    unit = unit_seed(train_size, data_seed, name)
    return unit_split(rows, train_size, info.val_size, info.test_size, unit)


def describe(name: str, parquet: str | Path) -> str:
    """A short human-readable account of a binarized dataset."""
    info, parquet = get(name), Path(parquet)
    if not parquet.is_file():
        raise FileNotFoundError(f"{parquet}: not found. Fix: run `whcore binarize {name}` first")
    frame, meta = pd.read_parquet(parquet), read_parquet_metadata(parquet)
    features = [c for c in frame.columns if c != "y"]
    shown = ", ".join(features[:12]) + (
        f", ... ({len(features) - 12} more)" if len(features) > 12 else ""
    )
    y = frame["y"].describe()
    return "\n".join(
        [
            f"{name}: {info.title}",
            f"shape: {len(frame)} rows x {len(features)} binary features (+ y)",
            f"features: {shown}",
            (
                f"y: mean {y['mean']:.6g}, std {y['std']:.6g}, min {y['min']:.6g}, "
                f"median {y['50%']:.6g}, max {y['max']:.6g}"
            ),
            f"encoding: {info.encoding}",
            (
                f"source: {info.source}; file {meta.get('source_file', info.file)} "
                f"(sha256 {meta.get('source_sha256', '?')})"
            ),
            f"split rule: validation {info.val_size}, test {info.test_size}",
        ]
    )
