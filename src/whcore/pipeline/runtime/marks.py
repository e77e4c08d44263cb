"""The marks this project's outputs carry, and reading them back: every writer takes its mark
from here, so that a writer and the check of what it wrote never part.

A mark is data in the file's own format, never a substring of its bytes: a Parquet's ``whcore``
metadata (``whcore.core.io``), a figure's PDF Creator or PNG Software (``FIGURE_CREATOR``), a
crate's root name (``CRATE_NAME``), a claims.md title, a macros file's first line, the form of a
JSON. ``kind_of`` names the kind of output a path holds (``runtime.guards`` replaces a path only
with the same kind).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "CLAIMS_TITLE",
    "CRATE_NAME",
    "FIGURE_CREATOR",
    "MACROS_MARK",
    "OWN_DATA_TITLE",
    "RECORDS",
    "SNAKEMAKE_TIMESTAMP",
    "figure_creator",
    "kind_of",
    "mark_of",
    "owned",
    "written_kinds",
]

_MAX_SCAN = 64 * 2**20  # a figure larger than this is not one of ours
SNAKEMAKE_TIMESTAMP = ".snakemake_timestamp"  # what Snakemake keeps in a folder output
# The marks the text files of this project's writers start with (the writers take them from
# here, so that a writer and its mark never part).
CLAIMS_TITLE = "# The paper's claims, checked against this run's measurements"  # claims.md
OWN_DATA_TITLE = "# Your data: which method predicts it best"  # claims.md of a user's own data
MACROS_MARK = "(whcore macros)"  # on the first line of a `whcore macros` TeX file
CRATE_NAME = "whcore run {run}"  # the name of a `whcore bundle` crate's root dataset
FIGURE_CREATOR = "whcore"  # a figure's PDF Creator and PNG Software start with it


def figure_creator(version: str = "") -> str:
    """The Creator / Software of a figure that whcore ``version`` draws."""
    return f"{FIGURE_CREATOR} {version}".strip()


def _marked_crate(path: Path) -> bool:
    """Whether the zip ``path`` is a crate of ``whcore bundle``: its metadata names a run."""
    import json
    import zipfile

    with zipfile.ZipFile(path) as archive:
        graph = json.loads(archive.read("ro-crate-metadata.json"))["@graph"]
    root = next(entity for entity in graph if entity.get("@id") == "./")
    return str(root.get("name", "")).startswith(CRATE_NAME.format(run=""))


def _json_kind(value) -> str | None:
    """``target`` (a g* target's JSON), ``claims`` (the paper's claims or a user's own-data
    comparison) or None."""
    if isinstance(value, dict):
        if {"n", "frequencies", "amplitudes"} <= set(value):
            return "target"
        return "claims" if value.get("report") == "own data" else None
    if isinstance(value, list) and all(isinstance(v, dict) and "verdict" in v for v in value):
        return "claims"
    return None


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_software(data: bytes) -> str:
    """The ``Software`` text chunk of the PNG ``data`` (what the figure writer sets), or ''."""
    import struct

    at = len(_PNG_SIGNATURE)
    while at + 8 <= len(data) and data.startswith(_PNG_SIGNATURE):
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + size]
        if kind == b"tEXt" and body.startswith(b"Software\0"):
            return body.split(b"\0", 1)[1].decode("latin-1")
        at += 12 + size
    return ""


def _pdf_creator(data: bytes) -> str:
    """The ``Creator`` of the PDF ``data``'s document information dictionary (the one its
    last trailer names), or '': a title or a text that says "whcore" is not the creator."""
    import re

    trailers = re.findall(rb"trailer\s*<<(.*?)>>", data, re.S)
    info = re.search(rb"/Info\s+(\d+)\s+0\s+R", trailers[-1]) if trailers else None
    if not data.startswith(b"%PDF") or info is None:
        return ""
    body = re.search(rb"(?:^|\s)" + info.group(1) + rb"\s+0\s+obj\s*<<(.*?)>>\s*endobj", data, re.S)
    creator = re.search(rb"/Creator\s*\(([^)]*)\)", body.group(1)) if body else None
    return creator.group(1).decode("latin-1") if creator else ""


def _only_macros(text: str) -> bool:
    """Whether a macros file holds only what ``whcore macros`` writes (comments and claim
    macros): one with lines a user added is theirs too, and is not replaced."""
    return all(line.startswith(("%", "\\newcommand{\\claim")) for line in text.splitlines() if line)


def _by_creator(creator: str) -> bool:
    return creator == FIGURE_CREATOR or creator.startswith(f"{FIGURE_CREATOR} ")


def _parquet_kind(path: Path) -> str | None:
    """``data:<dataset>`` for a binarized table (its metadata names the dataset and the
    source's digest), ``table`` for any other Parquet the project wrote, else None."""
    from ...core.io import read_parquet_metadata

    meta = read_parquet_metadata(path)
    if isinstance(meta, dict) and {"dataset", "source_sha256"} <= set(meta):
        return f"data:{meta['dataset']}"
    return "table" if meta else None


def mark_of(path: Path) -> str | None:
    """The kind of whcore output the file ``path`` is, read from the mark it carries as data
    (never a substring of its bytes): ``table`` or ``data:<dataset>`` (a Parquet's ``whcore``
    metadata), ``figure`` (a PDF's Creator, a PNG's Software), ``crate`` (its root's name),
    ``target`` / ``claims`` (the form of the JSON), ``claims.md``, ``provenance`` or ``macros``
    (the first line); None for a file that carries none."""
    import json

    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            return _parquet_kind(path)
        if suffix == ".zip":  # read member by member: a crate may be larger than _MAX_SCAN
            return "crate" if _marked_crate(path) else None
        if path.stat().st_size > _MAX_SCAN:
            return None
        data = path.read_bytes()
        if suffix == ".png":
            return "figure" if _by_creator(_png_software(data)) else None
        if suffix == ".pdf":
            return "figure" if _by_creator(_pdf_creator(data)) else None
        first = data.split(b"\n", 1)[0].decode()
        if suffix == ".json":
            return _json_kind(json.loads(data))
        if suffix == ".md" and first in (CLAIMS_TITLE, OWN_DATA_TITLE):
            return "claims.md"
        if suffix == ".tsv" and "whcore_version" in first:
            return "provenance"
        if suffix == ".tex" and first.startswith("%") and MACROS_MARK in first:
            return "macros" if _only_macros(data.decode()) else None
    except Exception:  # unreadable, or not the format its name says: not ours
        return None
    return None


RECORDS = "records"  # the kind of a training job's output: a folder of marked Parquet files
# What a writer that names no kind writes at a path, by its suffix.
_KIND_OF_SUFFIX = {
    ".parquet": ("table",),
    ".pdf": ("figure",),
    ".png": ("figure",),
    ".zip": ("crate",),
    ".json": ("target", "claims"),
    ".md": ("claims.md",),
    ".tsv": ("provenance",),
    ".tex": ("macros",),
}


def _records_folder(path: Path) -> bool:
    entries = [e for e in path.iterdir() if e.name != SNAKEMAKE_TIMESTAMP]
    return all(e.is_file() and e.suffix == ".parquet" and mark_of(e) for e in entries)


def kind_of(path: Path) -> str | None:
    """The kind of whcore output the existing ``path`` is: ``mark_of`` a file, ``records`` for
    a folder of marked Parquet files (a training job's), else None."""
    if path.is_dir() and not path.is_symlink():
        return RECORDS if _records_folder(path) else None
    return mark_of(path) if path.is_file() else None


def owned(path: Path) -> bool:
    """Whether an existing output path is one a job of this project wrote: it carries a mark."""
    return kind_of(path) is not None


def written_kinds(path: Path) -> tuple[str, ...]:
    """The kinds a writer that names none writes at ``path``, by its suffix (``records`` for a
    path without one)."""
    return _KIND_OF_SUFFIX.get(path.suffix.lower(), (RECORDS,))
