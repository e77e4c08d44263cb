"""Parsers: one raw file of the paper's four datasets -> its binary design matrix and target.

Each parser returns a DataFrame with one uint8 0/1 column per binary feature (readable names)
followed by a float64 column ``y`` (the raw target). The encodings are the paper's (see
``shared/datasets/MANIFEST.md`` and the authors' ``datasets.py``), including the row order of the
authors' code. Anything unexpected in a file raises ``RawFormatError`` naming the file, the
problem and the fix; nothing is written here (``whcore.data.datasets.binarize`` writes the Parquet).
"""

from __future__ import annotations

import lzma
import re
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "DECOMPRESS_ERRORS",
    "TABLE_READ_ERRORS",
    "RawFormatError",
    "parse_avgfp",
    "parse_entacmaea",
    "parse_gb1",
    "parse_sgemm",
    "read_failure",
]

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"  # the 20 canonical residues, alphabetical (one-hot order)


class RawFormatError(ValueError):
    """A raw file that does not look like the published one."""


# What reading a truncated or damaged compressed file raises (a bad gzip is an OSError)
DECOMPRESS_ERRORS = (EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile)
# What reading a (possibly compressed) text table can raise on a bad file.
TABLE_READ_ERRORS = (
    *DECOMPRESS_ERRORS,
    OSError,
    pd.errors.ParserError,
    pd.errors.EmptyDataError,
    UnicodeDecodeError,
)


def read_failure(path, err: BaseException, what: str, fix: str) -> RawFormatError:
    """The one line for a file that cannot be read as ``what`` (a truncated or damaged
    compressed file says so)."""
    if isinstance(err, DECOMPRESS_ERRORS) or "gzip" in str(err).lower():
        return RawFormatError(
            f"{path}: cannot decompress it: truncated or damaged ({type(err).__name__}: {err}). "
            "Fix: copy or download the file again (its sha256 tells a whole copy)"
        )
    return RawFormatError(
        f"{path}: cannot read it as {what} ({type(err).__name__}: {err}). Fix: {fix}"
    )


_FIX = "use the file pinned in whcore.data.datasets (`whcore download <dataset>`), or fix the file"


def _fail(path, problem: str, fix: str = _FIX) -> RawFormatError:
    return RawFormatError(f"{path}: {problem}. Fix: {fix}")


def _frame(x: np.ndarray, names: list[str], y) -> pd.DataFrame:
    """Feature columns (uint8) then ``y`` (float64)."""
    frame = pd.DataFrame(x.astype(np.uint8, copy=False), columns=names)
    frame["y"] = np.asarray(y, dtype=np.float64)
    return frame


def _finite(path, cells: pd.Series, first_row: int, where: str) -> np.ndarray:
    """The target ``cells`` as float64; a RawFormatError at the first that is NaN, infinite,
    empty or not a number.

    ``cells`` is one column of consecutive raw rows, the first of them row ``first_row`` of the
    file as the user numbers it; ``where`` places a row number in the file ("line {}, ...")."""
    numbers = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(numbers)
    if not bad.any():
        return numbers
    index = int(np.argmax(bad))
    value = cells.iloc[index]
    shown = "empty" if pd.isna(value) or str(value).strip() == "" else repr(str(value))
    raise _fail(
        path,
        f"{where.format(first_row + index)} is {shown}, not a finite number",
        fix="write a finite number there or delete that row, or use the file pinned in "
        "whcore.data.datasets (`whcore download <dataset>`)",
    )


def _check_columns(path, found, expected, what: str) -> None:
    found = [str(c) for c in found]
    if found != list(expected):
        raise _fail(path, f"unexpected {what}: expected {list(expected)}, found {found}")


def _chars(strings: pd.Series, width: int) -> np.ndarray:
    """Equal-length ASCII strings -> a (rows, width) uint8 array of their character codes."""
    return np.frombuffer("".join(strings).encode("ascii"), dtype=np.uint8).reshape(-1, width)


# --- Entacmaea (Poelwijk et al. 2019, supplementary data 7) --------------------------------------

ENTACMAEA_HEADER = [
    [
        "binary",
        "amino acid",
        "counts",
        "counts",
        "counts",
        "",
        "brightness",
        "brightness",
        "",
        "brightness",
    ],
    ["genotype", "sequence", "input", "red", "blue", "", "red", "blue", "", "combined"],
]


def _read_entacmaea(path) -> pd.DataFrame:
    try:
        return pd.read_excel(
            path,
            sheet_name="genodata",
            header=None,
            dtype=object,
            keep_default_na=False,
            engine="openpyxl",
        )
    except (*DECOMPRESS_ERRORS, ValueError, KeyError, OSError) as err:
        raise _fail(
            path,
            f"cannot read it as the Poelwijk 2019 workbook with sheet 'genodata' "
            f"({type(err).__name__}: {err})",
        ) from err


def _mutation_names(path, bits: np.ndarray, sequences: pd.Series) -> list[str]:
    """'D1N' style names: the residue where the bit is 0, the site, the residue where it is 1.

    Also checks that the amino-acid column agrees with the genotype at every site."""
    n = bits.shape[1]
    if not (sequences.str.len() == n).all():
        raise _fail(
            path,
            f"the amino-acid sequences (column B) must have {n} residues, one per genotype bit",
        )
    residues = _chars(sequences, n)
    names = []
    for site in range(n):
        wild, mutant = (np.unique(residues[bits[:, site] == b, site]) for b in (0, 1))
        if len(wild) != 1 or len(mutant) != 1:
            raise _fail(
                path,
                f"genotype bit {site + 1} does not map to one residue each way "
                f"(bit 0: {wild.tobytes().decode()}, bit 1: {mutant.tobytes().decode()})",
            )
        names.append(f"{chr(wild[0])}{site + 1}{chr(mutant[0])}")
    return names


def parse_entacmaea(path: str | Path) -> pd.DataFrame:
    """13-bit genotype (column A, quotes stripped) -> 13 features; y = combined brightness (J)."""
    sheet = _read_entacmaea(path)
    header = sheet.iloc[:2].fillna("").astype(str).apply(lambda col: col.str.strip())
    for row, expected in enumerate(ENTACMAEA_HEADER):
        _check_columns(path, header.iloc[row].tolist(), expected, f"header row {row + 1}")
    data = sheet.iloc[2:]
    genotypes = data[0].astype(str).str.strip("'")
    if genotypes.empty:
        raise _fail(path, "the sheet has no data rows below the two header rows")
    n = len(genotypes.iloc[0])
    bad = ~genotypes.str.fullmatch(f"[01]{{{n}}}")
    if bad.any():
        raise _fail(
            path,
            f"column A must hold quoted binary genotypes of one length; row "
            f"{bad.idxmax() + 1} holds {genotypes[bad].iloc[0]!r}",
        )
    if genotypes.duplicated().any():
        raise _fail(path, f"genotype {genotypes[genotypes.duplicated()].iloc[0]!r} occurs twice")
    bits = _chars(genotypes, n) - ord("0")
    names = _mutation_names(path, bits, data[1].astype(str))
    y = _finite(path, data[9], 3, "sheet 'genodata', Excel row {}, column J (combined brightness)")
    return _frame(bits, names, y)


# --- SGEMM (UCI 440) -----------------------------------------------------------------------------

SGEMM_PARAMETERS = [
    "MWG",
    "NWG",
    "KWG",
    "MDIMC",
    "NDIMC",
    "MDIMA",
    "NDIMB",
    "KWI",
    "VWM",
    "VWN",
    "STRM",
    "STRN",
    "SA",
    "SB",
]
SGEMM_RUNS = ["Run1 (ms)", "Run2 (ms)", "Run3 (ms)", "Run4 (ms)"]
SGEMM_MEMBER = "sgemm_product.csv"


def parse_sgemm(path: str | Path) -> pd.DataFrame:
    """One-hot of the 14 kernel parameters (values ascending) -> 40 features; y = mean run time."""
    try:
        with zipfile.ZipFile(path) as archive, archive.open(SGEMM_MEMBER) as member:
            table = pd.read_csv(member, keep_default_na=False, skip_blank_lines=False)
    except (*DECOMPRESS_ERRORS, KeyError, OSError, pd.errors.ParserError, ValueError) as err:
        raise _fail(
            path, f"cannot read {SGEMM_MEMBER} from this zip ({type(err).__name__}: {err})"
        ) from err
    _check_columns(path, table.columns, SGEMM_PARAMETERS + SGEMM_RUNS, "columns in " + SGEMM_MEMBER)
    where = SGEMM_MEMBER + " (in the zip), line {}, column "
    runs = pd.DataFrame(
        {run: _finite(path, table[run], 2, where + repr(run)) for run in SGEMM_RUNS}
    )
    blocks, names = [], []
    for parameter in SGEMM_PARAMETERS:
        values = np.sort(table[parameter].unique())  # the category order of sklearn's OneHotEncoder
        blocks.append(table[parameter].to_numpy()[:, None] == values[None, :])
        names += [f"{parameter}={v}" for v in values]
    return _frame(np.hstack(blocks), names, runs.mean(axis=1))


# --- GB1 (Wu et al. 2016, via FLIP) --------------------------------------------------------------

GB1_SITES = (39, 40, 41, 54)
GB1_COLUMNS = ["Variants", "HD", "Count input", "Count selected", "Fitness"]  # the supplement's


def _csv_lines(path) -> str:
    """Where a CSV line number points: into the zip's CSV for a .zip (as pandas reads it)."""
    if Path(path).suffix != ".zip":
        return "line {}"
    with zipfile.ZipFile(path) as archive:
        return archive.namelist()[0] + " (in the zip), line {}"


def parse_gb1(path: str | Path) -> pd.DataFrame:
    """One-hot of the 4 residues (20 letters each) -> 80 features; y = Fitness."""
    try:
        header = pd.read_csv(path, nrows=0).columns
        missing = [c for c in GB1_COLUMNS if c not in header]
        if missing:
            raise _fail(
                path, f"the supplement columns {missing} are missing (found {list(header)[:8]}...)"
            )
        table = pd.read_csv(
            path,
            usecols=GB1_COLUMNS,
            dtype={"Variants": str},
            keep_default_na=False,
            skip_blank_lines=False,
        )
    except TABLE_READ_ERRORS as err:
        raise read_failure(path, err, "the FLIP GB1 CSV", _FIX) from err
    variants = table["Variants"].fillna("")
    bad = ~variants.str.fullmatch(f"[{AMINO_ACIDS}]{{{len(GB1_SITES)}}}")
    if bad.any():
        raise _fail(
            path,
            f"variant {variants[bad].iloc[0]!r} (row {bad.idxmax() + 2}) is not "
            f"{len(GB1_SITES)} canonical amino-acid letters",
        )
    lookup = np.full(256, -1)
    lookup[np.frombuffer(AMINO_ACIDS.encode(), np.uint8)] = np.arange(len(AMINO_ACIDS))
    letters = lookup[_chars(variants, len(GB1_SITES))]  # (rows, sites) letter indices
    columns = np.arange(len(GB1_SITES)) * len(AMINO_ACIDS) + letters
    x = np.zeros((len(table), len(GB1_SITES) * len(AMINO_ACIDS)), dtype=np.uint8)
    x[np.arange(len(table))[:, None], columns] = 1
    names = [f"site{s}={a}" for s in GB1_SITES for a in AMINO_ACIDS]
    y = _finite(path, table["Fitness"], 2, _csv_lines(path) + ", column 'Fitness'")
    return _frame(x, names, y)


# --- avGFP (Sarkisyan et al. 2016) ---------------------------------------------------------------

AVGFP_COLUMNS = ["aaMutations", "uniqueBarcodes", "medianBrightness", "std"]
# 'S' + wild-type residue + site + new residue (or '*' for a stop), e.g. SA108D.
_MUTATION = re.compile(r"S([A-Z])(\d+)([A-Z*])")


def _mutated_sites(path, mutations: pd.Series) -> list[tuple[int, ...]]:
    """Each genotype's sorted tuple of mutated sites (empty for the wild type)."""
    site_sets = []
    for row, text in enumerate(mutations):
        sites = []
        for token in text.split(":") if text else ():
            match = _MUTATION.fullmatch(token)
            if match is None:
                raise _fail(
                    path,
                    f"unknown mutation token {token!r} on line {row + 2}; expected "
                    "'S' + residue + site + residue, e.g. 'SA108D'",
                )
            sites.append(int(match.group(2)))
        if len(set(sites)) != len(sites):
            raise _fail(path, f"line {row + 2} lists a site twice: {text!r}")
        site_sets.append(tuple(sorted(sites)))
    return site_sets


def parse_avgfp(path: str | Path) -> pd.DataFrame:
    """Presence of a mutation at each site (width max site + 1) -> 236 features; genotypes with
    the same set of mutated sites merged by averaging medianBrightness (rows sorted by site set,
    wild type first, as the authors' groupby did)."""
    try:
        table = pd.read_csv(
            path,
            sep="\t",
            keep_default_na=False,
            skip_blank_lines=False,
            dtype={"aaMutations": str, "std": str},
        )
    except TABLE_READ_ERRORS as err:
        raise read_failure(path, err, "a TSV", _FIX) from err
    _check_columns(path, table.columns, AVGFP_COLUMNS, "TSV header")
    # Raw rows are checked before genotypes are merged, so errors name lines of the file.
    table["y"] = _finite(path, table["medianBrightness"], 2, "line {}, column 'medianBrightness'")
    table["sites"] = _mutated_sites(path, table["aaMutations"])
    merged = table.groupby("sites", sort=True)["y"].mean()
    width = max((max(s) for s in merged.index if s), default=-1) + 1
    x = np.zeros((len(merged), width), dtype=np.uint8)
    for row, sites in enumerate(merged.index):
        x[row, list(sites)] = 1
    return _frame(x, [f"site{k}" for k in range(width)], merged.to_numpy())
