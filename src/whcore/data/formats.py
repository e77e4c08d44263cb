"""The readers of the three formats of a user's table (``whcore.data.own_data``): its rows ->
the residues at every site (``read_proteingym``, ``read_sequences``) or 0/1 features
(``read_binary``); those residues become binary features in ``whcore.data.features``. A bad
row is refused, naming the file, line, column and value, or dropped and counted (``Rows``)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from .parsers import TABLE_READ_ERRORS, RawFormatError, read_failure

__all__ = [
    "MUTANT_TOKEN",
    "WILD_TYPE_MUTANTS",
    "Rows",
    "read_binary",
    "read_proteingym",
    "read_sequences",
    "read_table_file",
    "table_column",
    "target_values",
]

WILD_TYPE_MUTANTS = ("", "wt", "_wt", "wildtype", "wild_type", "wild-type")
MUTANT_TOKEN = re.compile(r"([A-Z*\-])([1-9]\d*)([A-Z*\-])")
_SEQUENCE = "mutated_sequence"  # ProteinGym's optional full-sequence column


class Rows:
    """Refuses bad rows (the first raises, naming file, line, column and value) or, with
    ``drop``, marks them to be dropped and counts them by reason."""

    def __init__(self, path, count: int, drop: bool):
        self.path, self.drop = path, drop
        self.keep = np.ones(count, dtype=bool)
        self.reasons: Counter = Counter()

    def refuse(self, row: int, column: str, value, problem: str, reason: str, fix: str) -> None:
        if not self.keep[row]:
            return
        if not self.drop:
            shown = "empty" if value is None or str(value).strip() == "" else repr(str(value))
            raise RawFormatError(
                f"{self.path}: line {row + 2}, column {column!r}: {shown} {problem}. Fix: {fix}, "
                "or set drop_invalid: true in the dataset's config entry to drop such rows"
            )
        self.keep[row] = False
        self.reasons[reason] += 1


# A user's table, decompressed, is read into memory several times over (pandas' strings): the
# largest ProteinGym assay, its full sequences included, is about 250 MB; a line is one
# variant, at most a protein's sequence and its mutant list (titin, the longest, 35,000
# residues). Past these a file is refused before pandas reads it, not by a memory error.
MAX_TABLE_BYTES = 1 << 30
MAX_LINE_BYTES = 1 << 20
_BOUNDS_FIX = (
    "keep only the columns the dataset's config entry reads (mutant, the target, "
    "mutated_sequence) and split the file, or check it is the file you meant"
)


def _decompressed(path: Path):
    """The file's bytes as pandas reads them: decompressed by its suffix (None: a zip of other
    than one member, which pandas refuses in its own words)."""
    import bz2
    import gzip
    import lzma
    import zipfile

    openers = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
    suffix = path.suffix.lower()
    if suffix in openers:
        return openers[suffix](path, "rb")
    if suffix == ".zip":
        archive = zipfile.ZipFile(path)
        names = archive.namelist()
        return archive.open(names[0]) if len(names) == 1 else None
    return open(path, "rb")


def _check_bounds(path: Path) -> None:
    """Refuse, in one line with the fix, a table longer than ``MAX_TABLE_BYTES`` decompressed
    or with a line longer than ``MAX_LINE_BYTES``, reading it once in chunks."""
    stream = _decompressed(path)
    if stream is None:
        return
    total, line = 0, 0  # the bytes so far, and those of the line not yet ended
    with stream:
        while chunk := stream.read(1 << 20):
            total += len(chunk)
            pieces = chunk.split(b"\n")
            longest = max(line + len(pieces[0]), *map(len, pieces[1:-1]), 0)
            line = len(pieces[-1]) if len(pieces) > 1 else line + len(chunk)
            if max(longest, line) > MAX_LINE_BYTES:
                raise RawFormatError(
                    f"{path}: a line longer than {MAX_LINE_BYTES:,} bytes, more than a variant's "
                    f"row holds. Fix: {_BOUNDS_FIX}"
                )
            if total > MAX_TABLE_BYTES:
                raise RawFormatError(
                    f"{path}: more than {MAX_TABLE_BYTES:,} bytes decompressed, more than a table "
                    f"of variants this tool reads into memory. Fix: {_BOUNDS_FIX}"
                )


def read_table_file(path: Path) -> pd.DataFrame:
    tab = any(s in (".tsv", ".tab") for s in path.suffixes)
    try:
        _check_bounds(path)
        return pd.read_csv(
            path,
            sep="\t" if tab else ",",
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=False,
        )
    except RawFormatError:
        raise  # a bound: its own line
    except (*TABLE_READ_ERRORS, ValueError) as err:  # ValueError: a zip of several files, say
        raise read_failure(
            path,
            err,
            f"a {'TSV' if tab else 'CSV'} table",
            "give a comma-separated file "
            "(.csv) or a tab-separated one (.tsv) with a header row, optionally compressed "
            "(.gz, .bz2, .xz, .zip)",
        ) from err


def table_column(path, table: pd.DataFrame, name: str, key: str) -> pd.Series:
    if name not in table.columns:
        raise RawFormatError(
            f"{path}: no column {name!r} (found {list(table.columns)[:10]}). Fix: name the "
            f"right column with the config key {key}"
        )
    return table[name]


def target_values(rows: Rows, cells: pd.Series, column: str) -> np.ndarray:
    numbers = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
    for row in np.flatnonzero(~np.isfinite(numbers)):
        rows.refuse(
            row,
            column,
            cells.iloc[row],
            "is not a finite number",
            "missing or non-finite target",
            "write a finite number there or delete that row",
        )
    return numbers


def _proteingym_rows(path, table: pd.DataFrame, settings: dict, rows: Rows):
    """Every row's mutant as {site: (wild-type residue, new residue)} (empty for a refused
    row), and its upper-cased ``mutated_sequence`` (or None without that column)."""
    column = settings["mutant_column"]
    mutants = table_column(path, table, column, "mutant_column")
    sequences = table[_SEQUENCE].str.strip().str.upper() if _SEQUENCE in table.columns else None
    wild_type = (settings.get("wild_type") or "").upper()
    length = len(wild_type) or None
    fix_mutant = "write mutants like 'A1P:D2N' (wild-type residue, site from 1, new residue)"
    genotypes: list[dict[int, tuple[str, str]]] = []
    for row, text in enumerate(mutants):
        genotype: dict[int, tuple[str, str]] = {}
        genotypes.append(genotype)
        if not rows.keep[row]:
            continue
        text = text.strip()
        if text.lower() in WILD_TYPE_MUTANTS:
            tokens = []
        else:
            tokens = [MUTANT_TOKEN.fullmatch(token.strip()) for token in text.split(":")]
            sites = [int(t.group(2)) for t in tokens if t is not None]
            if None in tokens or len(set(sites)) != len(sites):
                problem = (
                    "is not a mutant like 'A1P:D2N'" if None in tokens else "names a site twice"
                )
                rows.refuse(row, column, text, problem, "unparsable mutant", fix_mutant)
                continue
        if sequences is not None:
            seq = sequences.iloc[row]
            length = len(seq) if length is None else length
            if len(seq) != length:
                rows.refuse(
                    row,
                    _SEQUENCE,
                    seq,
                    f"has {len(seq)} residues, not {length}",
                    "sequence of the wrong length",
                    "give every sequence the same length",
                )
                continue
        for token in tokens:
            site = int(token.group(2))
            if wild_type and site > len(wild_type):
                rows.refuse(
                    row,
                    column,
                    text,
                    f"names site {site} beyond the wild type's {len(wild_type)} residues",
                    "mutant contradicting the wild type",
                    "fix the mutant or the wild_type key",
                )
                genotype.clear()
                break
            genotype[site] = (token.group(1), token.group(3))
    return genotypes, sequences


def _wild_type_of(path, genotypes, sequences, rows: Rows, wild_type: str):
    """The wild-type residue of every site a mutant names, and where it comes from: the
    residue most ``mutated_sequence`` cells show there among the rows that do not mutate it,
    else the ``wild_type`` key, else the residue most mutants naming the site say it had."""
    named: dict[int, Counter] = {}
    for row, genotype in enumerate(genotypes):
        if rows.keep[row]:
            for site, (before, _) in genotype.items():
                named.setdefault(site, Counter())[before] += 1
    wild = {site: votes.most_common(1)[0][0] for site, votes in named.items()}
    source = {site: "the residue most mutants naming it say it had" for site in wild}
    if wild_type:
        wild.update({site: wild_type[site - 1] for site in wild})
        source = {site: "the wild_type key" for site in wild}
    if sequences is not None:
        kept = np.flatnonzero(rows.keep)
        length = len(sequences.iloc[kept[0]]) if len(kept) else 0
        cells = np.array(sequences.iloc[kept].tolist(), dtype=f"<U{max(length, 1)}")
        cells = cells.view("<U1").reshape(len(kept), -1)
        column = {site: k for k, site in enumerate(wild)}
        mutated = np.zeros((len(kept), len(column)), dtype=bool)
        for i, row in enumerate(kept):
            for site in genotypes[row]:
                mutated[i, column[site]] = True
        for site, k in column.items():
            seen = cells[~mutated[:, k], site - 1] if site <= length else cells[:0, 0]
            if not len(seen):
                continue
            residue = Counter(seen.tolist()).most_common(1)[0][0]
            if wild_type and residue != wild_type[site - 1]:
                raise RawFormatError(
                    f"{path}: the wild_type key has {wild_type[site - 1]} at site {site}, the "
                    f"column {_SEQUENCE!r} of the rows not mutating it has {residue}. Fix: "
                    "correct the wild_type key, or leave it out"
                )
            wild[site] = residue
            source[site] = f"the column {_SEQUENCE!r} of the rows not mutating it"
    return wild, source


def read_proteingym(path, table: pd.DataFrame, settings: dict, rows: Rows):
    """(residues (rows, sites) as characters, wild type (sites,), site numbers)."""
    column = settings["mutant_column"]
    genotypes, sequences = _proteingym_rows(path, table, settings, rows)
    wild, source = _wild_type_of(
        path, genotypes, sequences, rows, (settings.get("wild_type") or "").upper()
    )
    mutants = table[column]
    for row, genotype in enumerate(genotypes):
        if not rows.keep[row]:
            continue
        text = mutants.iloc[row].strip()
        seq = sequences.iloc[row] if sequences is not None else None
        for site, (before, after) in genotype.items():
            if before != wild[site]:
                rows.refuse(
                    row,
                    column,
                    text,
                    f"says site {site} is {before} in the wild type, which has {wild[site]} "
                    f"there (by {source[site]})",
                    "mutant contradicting the wild type",
                    "fix the mutant",
                )
                break
            if seq is not None and (site > len(seq) or seq[site - 1] != after):
                rows.refuse(
                    row,
                    _SEQUENCE,
                    seq,
                    f"does not have {after} at site {site} as mutant {text!r} says",
                    "mutant contradicting the wild type",
                    "fix the mutant or the sequence",
                )
                break
    sites = sorted(wild)
    wt = np.array([wild[s] for s in sites], dtype="<U1")
    residues = np.tile(wt, (len(genotypes), 1))
    position = {site: k for k, site in enumerate(sites)}
    for row, genotype in enumerate(genotypes):
        if rows.keep[row]:
            for site, (_, residue) in genotype.items():
                residues[row, position[site]] = residue
    return residues, wt, np.array(sites)


def read_sequences(path, table: pd.DataFrame, settings: dict, rows: Rows):
    column = settings["sequence_column"]
    cells = table_column(path, table, column, "sequence_column").str.strip().str.upper()
    wild_type = (settings.get("wild_type") or "").upper()
    length = len(wild_type) if wild_type else None
    for row, seq in enumerate(cells):
        if not rows.keep[row]:
            continue
        length = len(seq) if length is None and seq else length
        if not seq or len(seq) != length:
            rows.refuse(
                row,
                column,
                seq,
                f"has {len(seq)} characters, not {length}",
                "sequence of the wrong length",
                "align the sequences to one length (the wild_type key's, or the first row's)",
            )
    length = length or 0
    valid = cells.where(rows.keep, "-" * length)
    residues = np.array([list(s) for s in valid], dtype="<U1").reshape(len(cells), length)
    if wild_type:
        wt = np.array(list(wild_type), dtype="<U1")
    else:  # the consensus: the most common residue at every site among the kept rows
        kept = residues[rows.keep]
        wt = np.array(
            [Counter(kept[:, k]).most_common(1)[0][0] if len(kept) else "-" for k in range(length)],
            dtype="<U1",
        )
    return residues, wt, np.arange(1, length + 1)


def read_binary(path, table: pd.DataFrame, settings: dict, rows: Rows) -> pd.DataFrame:
    target = settings["target_column"]
    names = settings.get("feature_columns") or [c for c in table.columns if c != target]
    for name in names:
        table_column(path, table, name, "feature_columns")
    cells = table[names]
    bad = ~cells.isin(["0", "1"])
    for row, col in zip(*np.nonzero(bad.to_numpy())):
        rows.refuse(
            row,
            names[col],
            cells.iat[row, col],
            "is not 0 or 1",
            "feature not 0 or 1",
            "write 0 or 1 there, or leave the column out of feature_columns",
        )
    return (cells == "1").astype(np.uint8)
