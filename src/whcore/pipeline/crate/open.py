"""A crate from anyone, opened safely: unpacked within stated bounds and checked against its own
metadata before any of it is read (``whcore render``).

A crate is untrusted input. ``open_crate`` refuses, in one line naming the crate and the limit
or member:

- anything that is not a zip, or whose members number more than ``MAX_MEMBERS``, unpack to more
  than ``MAX_BYTES`` in all, or expand more than ``MAX_RATIO`` times (a zip bomb is refused
  from its directory, before a byte is unpacked; a member that unpacks to more than its
  directory says is cut off there);
- a member named by an absolute path, with ``..``, twice, or as a symbolic link;
- a member that the metadata does not describe as a File with its ``sha256`` and
  ``contentSize`` (``whcore bundle`` writes both), or that differs from them: an edited table
  is not the run's.

What it returns holds only checked members, by their path in the crate.
"""

from __future__ import annotations

import hashlib
import json
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = [
    "MAX_BYTES",
    "MAX_MEMBERS",
    "MAX_RATIO",
    "METADATA",
    "CrateError",
    "OpenedCrate",
    "facts_differ",
    "file_facts",
    "open_crate",
    "safe_member",
    "stream_facts",
]

METADATA = "ro-crate-metadata.json"
MAX_MEMBERS = 20_000  # a paper-scale crate holds a few hundred
MAX_BYTES = 2 * 2**30  # unpacked, in all: a paper-scale crate is tens of MB
MAX_RATIO = 200  # unpacked / packed, for members above RATIO_FLOOR (Parquet and PNG: under 10)
RATIO_FLOOR = 2**20  # small members (JSON, Markdown) may compress far better, harmlessly
_CHUNK = 2**20


class CrateError(ValueError):
    """A crate that cannot be opened or read as a run's crate; the message names the crate and
    what is wrong, in one line."""


def file_facts(path: str | Path) -> dict:
    """The ``sha256`` and ``contentSize`` (a string, as RO-Crate has it) of the file ``path``."""
    with open(path, "rb") as handle:
        return stream_facts(handle)


def stream_facts(handle) -> dict:
    """``file_facts`` of what the binary stream ``handle`` holds from where it stands."""
    digest, size = hashlib.sha256(), 0
    while chunk := handle.read(_CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return {"sha256": digest.hexdigest(), "contentSize": str(size)}


def facts_differ(entity: dict, facts: dict) -> str | None:
    """Why the File ``entity`` does not describe a file of ``facts``, or None."""
    if "sha256" not in entity or "contentSize" not in entity:
        return "has no sha256 and contentSize"
    if (
        str(entity["sha256"]) != facts["sha256"]
        or str(entity["contentSize"]) != facts["contentSize"]
    ):
        return "differs from its sha256 and size"
    return None


def safe_member(name: str) -> PurePosixPath | None:
    """``name`` as a relative path inside a folder, or None when it could leave the folder
    (absolute, a drive, a ``..``, a backslash) or names nothing."""
    path = PurePosixPath(name)
    if not name or "\\" in name or "\0" in name or path.is_absolute() or ":" in path.parts[0]:
        return None
    if any(part in ("..", ".", "") for part in name.rstrip("/").split("/")):
        return None
    return path


@dataclass(frozen=True)
class OpenedCrate:
    """A crate unpacked under ``folder``: ``files`` maps each checked member's path in the
    crate to its unpacked file; ``graph`` is its metadata's entities by ``@id``."""

    name: str
    folder: Path
    files: dict[str, Path]
    graph: dict[str, dict]

    def json(self, member: str):
        """The checked member ``member``, parsed as JSON."""
        path = self.member(member)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as err:
            raise CrateError(f"{self.name}: {member} is not valid JSON ({err})") from None

    def member(self, member: str) -> Path:
        """The unpacked file of the checked member ``member``."""
        if member not in self.files:
            raise CrateError(f"{self.name}: {member} is missing; not a crate of a finished run")
        return self.files[member]


def open_crate(crate: str | Path, folder: str | Path) -> OpenedCrate:
    """Unpack ``crate`` into the empty folder ``folder`` within the bounds above and check every
    member against the metadata (see the module's description); raise ``CrateError``."""
    name, folder = str(crate), Path(folder)
    try:
        archive = zipfile.ZipFile(crate)
    except zipfile.BadZipFile:
        raise CrateError(f"{name}: not a zip file (a crate is <run>.crate.zip)") from None
    except IsADirectoryError:
        raise CrateError(f"{name}: a folder, not a crate (<run>.crate.zip)") from None
    with archive:
        members = _listed(archive, name)
        for info in members:
            _unpack(archive, info, folder / info.filename, name)
    graph = _graph(folder, name)
    files = {info.filename: folder / info.filename for info in members}
    _check_described(files, graph, name)
    return OpenedCrate(name, folder, files, graph)


def _listed(archive: zipfile.ZipFile, name: str) -> list[zipfile.ZipInfo]:
    """The archive's file members, its directory checked against the bounds and the naming
    rules before anything is unpacked."""
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise CrateError(f"{name}: {len(infos)} members, more than the limit of {MAX_MEMBERS}")
    total = sum(info.file_size for info in infos)
    if total > MAX_BYTES:
        raise CrateError(
            f"{name}: unpacks to {total / 2**20:.0f} MiB, more than the limit of "
            f"{MAX_BYTES / 2**20:.0f} MiB"
        )
    seen, files = set(), []
    for info in infos:
        if safe_member(info.filename) is None:
            raise CrateError(f"{name}: member {info.filename!r} would unpack outside the crate")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise CrateError(f"{name}: member {info.filename} is a symbolic link")
        key = info.filename.rstrip("/")
        if key in seen:
            raise CrateError(f"{name}: member {key} is in the zip twice")
        seen.add(key)
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FLOOR and ratio > MAX_RATIO:
            raise CrateError(
                f"{name}: member {info.filename} expands {ratio:.0f} times, more than the "
                f"limit of {MAX_RATIO} (a zip bomb?)"
            )
        if not info.is_dir():
            files.append(info)
    return files


def _unpack(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, name: str) -> None:
    """Unpack one member, never past the size its directory entry gives."""
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    try:
        with archive.open(info) as source, open(target, "xb") as sink:
            while chunk := source.read(_CHUNK):
                written += len(chunk)
                if written > info.file_size:
                    raise CrateError(
                        f"{name}: member {info.filename} unpacks to more than the "
                        f"{info.file_size} bytes its entry gives"
                    )
                sink.write(chunk)
    except (zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError) as err:
        raise CrateError(f"{name}: member {info.filename} cannot be unpacked ({err})") from None
    except FileExistsError:  # a file and a folder of the same name, in either order
        raise CrateError(f"{name}: member {info.filename} is in the zip twice") from None


def _graph(folder: Path, name: str) -> dict[str, dict]:
    """The metadata's entities by ``@id``."""
    path = folder / METADATA
    if not path.is_file():
        raise CrateError(f"{name}: no {METADATA}; not an RO-Crate (make one with whcore bundle)")
    try:
        graph = json.loads(path.read_text(encoding="utf-8"))["@graph"]
        return {entity["@id"]: entity for entity in graph}
    except (ValueError, RecursionError, KeyError, TypeError) as err:
        raise CrateError(f"{name}: {METADATA} is not RO-Crate metadata ({err!r:.80})") from None


def _check_described(files: dict[str, Path], graph: dict[str, dict], name: str) -> None:
    """Every member but the metadata is a File the metadata describes with the sha256 and size
    it has."""
    for member, path in files.items():
        if member == METADATA:
            continue
        entity = graph.get(member)
        if not isinstance(entity, dict):
            raise CrateError(f"{name}: member {member} is not described in {METADATA}")
        problem = facts_differ(entity, file_facts(path))
        if problem:
            fix = (
                "it is not the file the run made"
                if "differs" in problem
                else "a crate of an older whcore bundle: bundle the run again"
            )
            raise CrateError(f"{name}: member {member} {problem} in {METADATA}; {fix}")
