"""Datasets by configuration: a user's deep-mutational-scanning or combinatorial table -> the
binary design matrix the networks and baselines read (feature columns, then ``y``).

A ``real.datasets.<name>`` entry of a workflow config that names a ``file`` (or a ``url`` with
its ``sha256``) instead of a registry dataset is read with one of three formats:

``proteingym``
    ProteinGym's substitution format: a CSV with ``mutant`` (``A1P:D2N``; empty, ``WT`` or
    ``_wt`` for the wild type), a score (``DMS_score``, or ``target_column``) and optionally
    ``mutated_sequence``. Sites are numbered as in the mutants. The wild type comes from
    ``mutated_sequence`` where it is present (at each site, the residue most rows not mutating
    it show), else from the ``wild_type`` key, else from the residue most mutants naming a site
    say it had; every mutant is then checked against it, so the row refused (or dropped) is the
    one that is wrong, wherever it stands in the file.
``sequences``
    a column of aligned, equal-length sequences (``sequence_column``) and ``target_column``;
    site k is the k-th character (from 1).

Residues are case-folded (``a`` and ``A`` are one residue: sequences, ``mutated_sequence`` and
``wild_type`` are read in upper case; a mutant is written in upper case). Every other character
is a residue of its own: a gap ``-`` or a stop ``*`` is one more residue at its site.
``binary``
    0/1 feature columns (``feature_columns``; default every column but the target) and
    ``target_column``.

Protein data are binarized as the paper does (``binarization``), every feature 0 in the wild
type (``whcore.data.features.encode`` says why): ``onehot``, at every variable site "site
mutated" (``site39=mutated``, in place of the wild-type residue's column) and one column per
other residue seen (``site39=A``; the registry's GB1 keeps the paper's wild-type columns), or
``mutated``, one column per mutated site that says whether it differs from the wild type
(``site39``, as avGFP). Rows with
the same binary genotype are merged, y their mean (as avGFP). A row with a missing or
non-finite target, an unparsable mutant, a mutant contradicting the wild type, or a sequence of
the wrong length is refused with the file, line, column and value; ``drop_invalid: true`` drops
such rows instead, counted by reason (``parse`` returns the counts; the readers of the formats
are ``whcore.data.formats``).

``folds`` (ProteinGym's split schemes, ``whcore.data.folds``): the fold of every row under each
listed scheme, from the file's column of that name where it has one (used exactly: integers 0
to 4, a bad cell refused like any bad row), else computed (``compute_folds``: random for any
table; modulo and contiguous from the mutants of a ``proteingym`` table of single mutants). They
travel in the Parquet's metadata (``folds``, one fold per row of the binarized table, and
``fold_sources``); a merged genotype takes the fold of its first row (merges across folds are
counted).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import write_parquet
from .download import sha256_of
from .features import encode
from .folds import FOLDS, SCHEMES, compute_folds
from .formats import (
    Rows,
    read_binary,
    read_proteingym,
    read_sequences,
    read_table_file,
    table_column,
    target_values,
)
from .parsers import RawFormatError

__all__ = [
    "SOURCE_KEYS",
    "Parsed",
    "binarize",
    "binarized",
    "encoding",
    "parse",
    "raw_file_name",
    "source_settings",
]

# The keys of a config entry that say where a user's dataset comes from and how it is read; the
# others (train_sizes, val_size, ...) are the splits and grids every real dataset has.
SOURCE_KEYS = (
    "file",
    "url",
    "sha256",
    "format",
    "target_column",
    "mutant_column",
    "sequence_column",
    "feature_columns",
    "wild_type",
    "binarization",
    "drop_invalid",
    "title",
    "folds",
)
DEFAULTS = {
    "target_column": {"proteingym": "DMS_score"},
    "mutant_column": "mutant",
    "sequence_column": "sequence",
    "binarization": "onehot",
    "drop_invalid": False,
}


def source_settings(entry: dict) -> dict:
    """The source keys of a config entry with their defaults filled in (what a binarization
    job's spec holds: a change to any of them rebuilds the dataset, and nothing else does)."""
    settings = {k: entry[k] for k in SOURCE_KEYS if k in entry}
    fmt = settings.get("format")
    target = DEFAULTS["target_column"].get(fmt)
    if target is not None:
        settings.setdefault("target_column", target)
    if fmt == "proteingym":
        settings.setdefault("mutant_column", DEFAULTS["mutant_column"])
    if fmt == "sequences":
        settings.setdefault("sequence_column", DEFAULTS["sequence_column"])
    if fmt in ("proteingym", "sequences"):
        settings.setdefault("binarization", DEFAULTS["binarization"])
    settings.setdefault("drop_invalid", DEFAULTS["drop_invalid"])
    return settings


def raw_file_name(settings: dict) -> str:
    """The raw file's name: the local file's, or the URL's last path segment."""
    source = settings.get("file") or settings["url"]
    name = source.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    return name or "data.csv"


def encoding(settings: dict) -> str:
    """One line saying how the table was binarized (the Parquet's metadata, ``describe``)."""
    if settings["format"] == "binary":
        return f"0/1 feature columns as given; y = {settings['target_column']}"
    how = {
        "onehot": (
            "one-hot of the residue at every variable site, the wild type's column replaced by "
            "site mutated (site<k>=<residue>, site<k>=mutated)"
        ),
        "mutated": "mutated-site indicators (site<k>: differs from the wild type)",
    }[settings["binarization"]]
    return f"{settings['format']} table; {how}; duplicate genotypes merged by the mean of y"


class Parsed:
    """The result of ``parse``: the binarized frame, rows dropped per reason, rows merged and,
    with ``folds``, the fold of every row of the frame per scheme, where each came from, the
    variants (rows read) of each fold and how many merged genotypes joined rows of different
    folds."""

    def __init__(self, frame: pd.DataFrame, dropped: dict[str, int], merged: int, rows: int):
        self.frame, self.dropped, self.merged, self.rows = frame, dropped, merged, rows
        self.folds: dict[str, np.ndarray] = {}
        self.fold_sources: dict[str, str] = {}
        self.fold_conflicts: dict[str, int] = {}
        self.fold_variants: dict[str, list[int]] = {}  # rows read into each fold, before merging

    def summary(self) -> str:
        dropped = sum(self.dropped.values())
        reasons = ", ".join(f"{count} {why}" for why, count in sorted(self.dropped.items()))
        return (
            f"{self.rows} rows read, {dropped} dropped{f' ({reasons})' if dropped else ''}, "
            f"{self.merged} merged into duplicates; {len(self.frame)} genotypes x "
            f"{self.frame.shape[1] - 1} binary features"
            + "".join(
                f"; {scheme} ({self.fold_sources[scheme]}) fold sizes "
                f"{np.bincount(folds, minlength=FOLDS).tolist()} genotypes"
                + (
                    f" from {self.fold_variants[scheme]} variants"
                    if scheme in self.fold_variants
                    else ""
                )
                + (
                    f", {self.fold_conflicts[scheme]} merges across folds"
                    if self.fold_conflicts.get(scheme)
                    else ""
                )
                for scheme, folds in self.folds.items()
            )
        )


def _file_folds(path, table: pd.DataFrame, schemes, rows: Rows) -> dict[str, np.ndarray]:
    """The folds of the schemes the file gives as columns, checked cell by cell."""
    folds = {}
    for scheme in schemes:
        if scheme not in table.columns:
            continue
        cells = table[scheme].str.strip()
        numbers = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isin(numbers, np.arange(FOLDS))
        for row in np.flatnonzero(bad):
            rows.refuse(
                row,
                scheme,
                cells.iloc[row],
                f"is not a fold 0 to {FOLDS - 1}",
                "fold not 0 to 4",
                f"write the row's fold (0 to {FOLDS - 1}) there",
            )
        folds[scheme] = np.where(bad, -1, numbers).astype(np.int64)
    return folds


def _computed_folds(path, table: pd.DataFrame, settings: dict, schemes, keep) -> dict:
    """The folds of the schemes the file has no column for, computed from the kept rows (the
    refused ones get -1)."""
    folds = {}
    for scheme in schemes:
        fix = (
            f"add the column {scheme} (folds 0 to {FOLDS - 1}) to the file, or leave {scheme} "
            "out of the dataset's folds key"
        )
        kept = np.flatnonzero(keep)
        if scheme == "fold_random_5":
            mutants = pd.Series([""] * len(kept))
        elif settings["format"] != "proteingym":
            raise RawFormatError(
                f"{path}: no column {scheme!r}, and a {settings['format']} table has no mutants "
                f"to compute it from (only fold_random_5 is computed for any table). Fix: {fix}"
            )
        else:
            mutants = table[settings["mutant_column"]].iloc[kept].str.strip()
            multiple = np.flatnonzero(mutants.str.count(":").to_numpy() > 0)
            if len(multiple):
                row = kept[multiple[0]]
                raise RawFormatError(
                    f"{path}: no column {scheme!r}, and line {row + 2} has the multiple mutant "
                    f"{mutants.iloc[multiple[0]]!r}: {scheme} is computed from one mutated "
                    f"position per row (ProteinGym defines it for single mutants). Fix: {fix}"
                )
        column = np.full(len(table), -1, dtype=np.int64)
        column[kept] = compute_folds(mutants.reset_index(drop=True), scheme)
        folds[scheme] = column
    return folds


def parse(path: str | Path, settings: dict) -> Parsed:
    """Read a user's table (``settings``: ``source_settings`` of its config entry) and binarize
    it; duplicate genotypes merged by the mean of y, in the order they first occur."""
    path = Path(path)
    settings = source_settings(settings)
    table = read_table_file(path)
    rows = Rows(path, len(table), settings["drop_invalid"])
    target = settings["target_column"]
    y = target_values(rows, table_column(path, table, target, "target_column"), target)
    fmt = settings["format"]
    schemes = settings.get("folds") or []
    unknown = [s for s in schemes if s not in SCHEMES]
    if unknown:
        raise RawFormatError(
            f"{path}: split scheme {unknown[0]!r} is not one of {list(SCHEMES)}. Fix: correct "
            "the dataset's folds key"
        )
    folds = _file_folds(path, table, schemes, rows)
    if fmt == "binary":
        x = read_binary(path, table, settings, rows)
    else:
        read = read_proteingym if fmt == "proteingym" else read_sequences
        residues, wt, sites = read(path, table, settings, rows)
        keep = rows.keep
        x = encode(residues[keep], wt, sites, settings["binarization"])
        x.index = np.flatnonzero(keep)
    x = x[rows.keep[x.index.to_numpy()]]
    if not len(x):
        raise RawFormatError(
            f"{path}: no valid rows are left ({dict(rows.reasons)} dropped). Fix: check the "
            "format and column keys of the dataset's config entry"
        )
    if x.shape[1] == 0:
        raise RawFormatError(
            f"{path}: no site varies, so there is nothing to learn. Fix: check the file"
        )
    missing = [s for s in schemes if s not in folds]
    folds.update(_computed_folds(path, table, settings, missing, rows.keep))
    names = list(x.columns)
    index = x.index.to_numpy()
    fold_columns = {f"fold:{s}": folds[s][index] for s in schemes}
    frame = x.reset_index(drop=True).assign(y=y[index], **fold_columns)
    groups = frame.groupby(names, sort=False)
    merged = groups.agg(y=("y", "mean"), **{c: (c, "first") for c in fold_columns})
    conflicts = {c: int((groups[c].nunique() > 1).sum()) for c in fold_columns}
    # the genotype columns joined at once (reset_index inserts them one by one, and pandas
    # warns once per insert on a wide table)
    keys = merged.index.to_frame(index=False).astype(np.uint8)
    merged = pd.concat([keys, merged.reset_index(drop=True)], axis=1)
    parsed = Parsed(merged[[*names, "y"]], dict(rows.reasons), len(frame) - len(merged), len(table))
    for scheme in schemes:
        parsed.folds[scheme] = merged[f"fold:{scheme}"].to_numpy(dtype=np.int64)
        parsed.fold_sources[scheme] = "the file's column" if scheme in table.columns else "computed"
        parsed.fold_conflicts[scheme] = conflicts[f"fold:{scheme}"]
        variants = np.bincount(frame[f"fold:{scheme}"], minlength=FOLDS)
        parsed.fold_variants[scheme] = variants.tolist()
        sizes = np.bincount(parsed.folds[scheme], minlength=FOLDS)
        if (sizes == 0).any():
            raise RawFormatError(
                f"{path}: fold {int(np.argmin(sizes))} of {scheme} has no rows (fold sizes "
                f"{sizes.tolist()}); every one of the {FOLDS} folds is held out once. Fix: "
                f"give the column {scheme} every fold 0 to {FOLDS - 1}, or leave {scheme} out "
                "of the dataset's folds key"
            )
    return parsed


def binarize(name: str, raw: str | Path, out: str | Path, settings: dict) -> Parsed:
    """Parse ``raw`` and write the Parquet ``out`` atomically (``binarized``)."""
    parsed, meta = binarized(name, raw, settings)
    write_parquet(parsed.frame, out, meta)
    return parsed


def _check_data_file(name: str, raw: Path) -> None:
    """Refuse a data file that is not a regular file, saying what it is: a device or a FIFO
    exists but would be read for ever (``/dev/zero``) or block."""
    if raw.is_dir():
        raise IsADirectoryError(
            f"{raw}: the data file of dataset {name} is a folder, not a file. Fix: name the "
            f"table itself (a .csv or .tsv in it, say) in the file key of real.datasets.{name}"
        )
    if not raw.exists():
        raise FileNotFoundError(
            f"{raw}: the data file of dataset {name} is not there. Fix: correct the file key of "
            f"real.datasets.{name}"
        )
    if not raw.is_file():
        raise RawFormatError(
            f"{raw}: the data file of dataset {name} is not a regular file (a device, FIFO or "
            f"socket). Fix: name a .csv or .tsv file in the file key of real.datasets.{name}"
        )


def binarized(name: str, raw: str | Path, settings: dict) -> tuple[Parsed, dict]:
    """Parse ``raw``: the table and its metadata, which records the source sha256 (checked
    against ``settings['sha256']`` when given) and the binarization."""
    from .. import __version__

    raw, settings = Path(raw), source_settings(settings)
    _check_data_file(name, raw)
    digest = sha256_of(raw)
    if settings.get("sha256") and digest != settings["sha256"].lower():
        raise RawFormatError(
            f"{raw}: sha256 {digest} is not the sha256 {settings['sha256']} of real.datasets."
            f"{name}. Fix: correct the sha256 key, or the file"
        )
    parsed = parse(raw, settings)
    frame = parsed.frame
    meta = {
        "dataset": name,
        "source_file": raw.name,
        "source_sha256": digest,
        "n": frame.shape[1] - 1,
        "rows": len(frame),
        "whcore_version": __version__,
        "encoding": encoding(settings),
        "binarization": json.loads(json.dumps(settings)),
        "dropped": parsed.dropped,
        "merged_duplicates": parsed.merged,
    }
    if parsed.folds:
        meta["folds"] = {scheme: folds.tolist() for scheme, folds in parsed.folds.items()}
        meta["fold_sources"] = parsed.fold_sources
    return parsed, meta
