"""The claims' wording, read from one sheet (``sheet.toml``, keyed by claim id): where the paper
says each claim, its words and how it is checked here. The code holds the tests and fills a test
sentence's placeholders with the constants it tests, so a sentence never states a number the
code does not use."""

from __future__ import annotations

import re
import string
from functools import cache
from pathlib import Path
from typing import NamedTuple

import tomllib

__all__ = ["SHEET", "Wording", "entries", "wording"]

SHEET = Path(__file__).with_name("sheet.toml")
FIELDS = ("source", "quote", "test")


class Wording(NamedTuple):
    """What a claim says: ``quote, test, source = wording(cid, ...)``."""

    quote: str
    test: str
    source: str


@cache
def entries() -> dict[str, dict[str, str]]:
    """The sheet's entries by id (an id with ``{placeholders}`` stands for several claims); each
    has exactly ``FIELDS``, every one a string."""
    with SHEET.open("rb") as handle:
        sheet = tomllib.load(handle)
    for cid, entry in sheet.items():
        if not isinstance(entry, dict) or set(entry) != set(FIELDS):
            raise ValueError(f"{SHEET}: [{cid}] must have exactly {', '.join(FIELDS)}")
        if not all(isinstance(entry[f], str) and entry[f] for f in FIELDS):
            raise ValueError(f"{SHEET}: [{cid}]: {', '.join(FIELDS)} must be non-empty strings")
    return sheet


def _pattern(key: str) -> re.Pattern:
    """An id with placeholders as a pattern over the ids it stands for (a placeholder stands
    for a name without underscores: a dataset, a method, a degree)."""
    parts = re.split(r"\{\w+\}", key)
    return re.compile(r"[A-Za-z0-9]+".join(map(re.escape, parts)))


def entry_of(cid: str) -> tuple[str, dict[str, str]]:
    """The sheet's key and entry of the claim ``cid``: its own, else the one id with
    placeholders that stands for it."""
    sheet = entries()
    if cid in sheet:
        return cid, sheet[cid]
    keys = [key for key in sheet if "{" in key and _pattern(key).fullmatch(cid)]
    if len(keys) != 1:
        found = "no entry" if not keys else f"{len(keys)} entries ({', '.join(keys)})"
        raise KeyError(f"{SHEET}: {found} for the claim {cid!r}; add [{cid}] with {FIELDS}")
    return keys[0], sheet[keys[0]]


def placeholders(text: str) -> set[str]:
    """The names a test sentence's placeholders read (``HIGH`` of ``{HIGH[0]}``)."""
    return {
        re.split(r"[.\[]", field)[0]
        for _, field, _, _ in string.Formatter().parse(text)
        if field is not None
    }


def wording(cid: str, **values) -> Wording:
    """The claim ``cid``'s quote, test sentence (its placeholders filled from ``values``, which
    must be exactly the names it reads) and source."""
    key, entry = entry_of(cid)
    wanted = placeholders(entry["test"])
    if set(values) != wanted:
        raise TypeError(
            f"{SHEET}: [{key}]'s test reads {sorted(wanted)}, the code gives {sorted(values)}"
        )
    return Wording(entry["quote"], entry["test"].format(**values), entry["source"])
