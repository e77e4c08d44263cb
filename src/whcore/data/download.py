"""Checksummed file download: a local mirror folder first, then pinned URLs in order.

Nothing is kept unless its sha256 matches: every copy or download goes to a temporary file
beside the target (``whcore.core.io.atomic_path``) and is renamed only after the digest checks out.
When every source fails, one error lists each place tried and why (not found, offline, HTTP
status, checksum mismatch with both digests). After a workflow run whose download failed,
``missing_raw_lines`` names every raw file the run still lacks and the fix, one line each.
"""

from __future__ import annotations

import hashlib
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

from ..core.io import atomic_path

__all__ = [
    "DownloadError",
    "ChecksumError",
    "fetch",
    "mirror_warning",
    "missing_raw_lines",
    "resolve_mirror",
    "sha256_of",
]

MIRROR_ENV = "WHCORE_DATA_MIRROR"
_CHUNK = 1 << 20


class DownloadError(FileNotFoundError):
    """No source produced the file with the expected checksum; the message lists every try."""


class ChecksumError(ValueError):
    """A file's sha256 is not the pinned one."""


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def resolve_mirror(mirror: str | Path | None = None) -> Path | None:
    """The mirror folder: ``mirror`` if given (config key ``data_mirror``), else the environment
    variable ``WHCORE_DATA_MIRROR``; an empty value means no mirror."""
    value = os.environ.get(MIRROR_ENV, "") if mirror is None else str(mirror)
    return Path(value) if value else None


def mirror_warning(mirror: str | Path | None = None, source: str = "--mirror") -> str | None:
    """One line when the mirror folder (``mirror``, named by ``source``, else
    ``WHCORE_DATA_MIRROR``) is set but is no folder, so that a mistyped path is said at start
    instead of every raw file silently coming from the network; None when all is well."""
    folder = resolve_mirror(mirror)
    if folder is None or folder.is_dir():
        return None
    source = source if mirror is not None else MIRROR_ENV
    why = "is not a folder" if folder.exists() else "does not exist"
    return f"warning: {source}: {folder} {why}; raw files will come from the pinned URLs"


def _copy_checked(read, tmp: Path, expected: str) -> None:
    """Stream ``read`` (a binary file object) into ``tmp`` and check the digest on the way."""
    digest = hashlib.sha256()
    with open(tmp, "wb") as out:
        for chunk in iter(lambda: read.read(_CHUNK), b""):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != expected:
        raise ChecksumError(
            f"checksum mismatch: expected sha256 {expected}, got {digest.hexdigest()}"
        )


def _from_mirror(source: Path, out: Path, sha256: str) -> None:
    with open(source, "rb") as read, atomic_path(out) as tmp:
        _copy_checked(read, tmp, sha256)


def _from_url(url: str, out: Path, sha256: str, timeout: float) -> None:
    from .. import __version__

    request = urllib.request.Request(url, headers={"User-Agent": f"whcore/{__version__}"})
    with urllib.request.urlopen(request, timeout=timeout) as read, atomic_path(out) as tmp:
        _copy_checked(read, tmp, sha256)


def _mirror_candidates(mirror: Path, subdir: str | None, file_name: str) -> list[Path]:
    # The shared mirror keeps one folder per dataset (raw/<dataset>/<file>); a flat folder works too.
    return ([mirror / subdir / file_name] if subdir else []) + [mirror / file_name]


def _try_url(url: str, out: Path, sha256: str, retries: int, timeout: float, backoff: float):
    """None on success, else why the URL failed. Only transient failures (offline, timeouts,
    HTTP 5xx/429) are retried; a wrong checksum or a 4xx answer will not change on a retry."""
    reason = "not tried"
    for attempt in range(max(retries, 1)):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        try:
            _from_url(url, out, sha256, timeout)
            return None
        except ChecksumError as err:
            return str(err)
        except urllib.error.HTTPError as err:
            reason = f"HTTP {err.code} {err.reason}"
            if err.code < 500 and err.code != 429:
                return reason
        except (urllib.error.URLError, OSError) as err:  # includes timeouts and refused connections
            why = getattr(err, "reason", err)
            reason = f"offline or unreachable ({why})"
    return f"{reason} after {max(retries, 1)} attempts"


def fetch(
    file_name: str,
    sha256: str,
    out: str | Path,
    urls: tuple[str, ...] | list[str] = (),
    mirror: str | Path | None = None,
    subdir: str | None = None,
    retries: int = 3,
    timeout: float = 60.0,
    backoff: float = 1.0,
) -> Path:
    """Make ``out`` a verified copy of ``file_name`` (sha256 ``sha256``) and return its path.

    An existing ``out`` with the right digest is kept as it is. Otherwise the mirror folder is
    tried first (``<mirror>/<subdir>/<file_name>``, then ``<mirror>/<file_name>``), then each URL
    in order with ``retries`` attempts of ``timeout`` seconds each. Raises ``DownloadError``
    listing every place tried when none works.
    """
    out = Path(out)
    failures = []
    if out.exists():
        digest = sha256_of(out)
        if digest == sha256:
            return out
        # A stale or damaged copy must not survive as if it were valid output.
        out.unlink()
        failures.append(
            f"{out} (existing file): checksum mismatch: expected sha256 {sha256}, "
            f"got {digest}; deleted it"
        )
    mirror_dir = resolve_mirror(mirror)
    for source in _mirror_candidates(mirror_dir, subdir, file_name) if mirror_dir else []:
        if not source.is_file():
            failures.append(f"{source} (mirror): not found")
            continue
        try:
            _from_mirror(source, out, sha256)
            return out
        except (ChecksumError, OSError) as err:
            failures.append(f"{source} (mirror): {err}")
    if mirror_dir is None:
        failures.append(f"no mirror folder (set --mirror, config data_mirror or {MIRROR_ENV})")
    received = []  # URLs that answered with a file of another sha256
    for url in urls:
        reason = _try_url(url, out, sha256, retries, timeout, backoff)
        if reason is None:
            return out
        failures.append(f"{url}: {reason}")
        if reason.startswith("checksum mismatch"):
            received.append(url)
    tried = "\n".join(f"  - {line}" for line in failures)
    mirror_fix = (
        f"put the file into a mirror folder (<mirror>/{subdir + '/' if subdir else ''}"
        f"{file_name}) and pass --mirror or set {MIRROR_ENV}"
    )
    if received and len(received) == len(urls):
        fix = (
            "the server sent a file whose sha256 is not the expected one: check that the "
            "sha256 (a dataset's sha256 key) and the URL are right, or " + mirror_fix
        )
    else:
        fix = "connect to the network, or " + mirror_fix
    raise DownloadError(
        f"could not obtain {file_name} (sha256 {sha256}) as {out}; tried:\n{tried}\nFix: {fix}."
    )


def missing_raw_lines(downloads, started: float, mirror: str | Path | None = None) -> list[str]:
    """After a failed workflow run: one line for each raw file of ``downloads`` (the dataset,
    raw file and log of each of its download jobs) that is missing, with the fix, if one of
    their downloads failed since ``started`` (its log written since); else none (the run
    failed elsewhere). ``mirror``: the config's data_mirror (else ``WHCORE_DATA_MIRROR``)."""
    missing = [
        (name, Path(raw), Path(log)) for name, raw, log in downloads if not Path(raw).exists()
    ]
    failed = {log for _, _, log in missing if log.is_file() and log.stat().st_mtime >= started}
    if not failed:
        return []
    folder = resolve_mirror(mirror)
    lines = []
    for name, raw, log in sorted(missing, key=lambda m: (m[2] not in failed, m[0])):
        why = (
            f"its download failed: {log}"
            if log in failed
            else "not tried: the run stopped at a failed download"
        )
        place = f"{folder or '<folder>'}/{name}/{raw.name}"
        fix = (
            f"put the file into the data mirror as {place}, or connect to the network"
            if folder
            else f"connect to the network, or put the file into a folder as {place} and set "
            f"data_mirror: <folder> in the config (or {MIRROR_ENV}=<folder>)"
        )
        lines.append(f"error: {name}: no raw file {raw} ({why}). Fix: {fix}")
    return lines
