"""Check that the README's installs resolve on a clean machine, with no local pip configuration.

A developer's or CI's pip may be configured with a local wheel folder, local indexes or a
constraints file that no user has; this check switches all of that off and asks the public
indexes alone:

1. the lock (``make test``): every pinned line but torch resolves against PyPI, dependencies
   included, for this interpreter and platform;
2. the ranges of ``pyproject.toml`` (``pip install -e '.[dev]'``): they resolve against PyPI;
3. torch's line of each: the PyTorch index the Makefile names lists a wheel for this platform
   that meets it (read from the index page, so the multi-GB CUDA build on PyPI is never
   downloaded). Where that index cannot be reached (no network beyond PyPI), the line is
   reported as not checked, or fails with ``--require-torch-index``.

Usage: python envs/check_install.py [--lock envs/linux-cpu.lock] [--torch-index URL]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import html.parser
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.tags import sys_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

REPO = Path(__file__).resolve().parent.parent
DEFAULT_LOCK = REPO / "envs" / "linux-cpu.lock"
DEFAULT_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
# Network plumbing a user may need to reach any index at all; every other PIP_* variable (find
# links, index URLs, constraints, no-index) is a package source and is dropped.
KEPT_PIP_VARIABLES = {"PIP_CERT", "PIP_CLIENT_CERT", "PIP_PROXY"}
NETWORK_TIMEOUT_S = 15


def clean_pip_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """``environ`` without package sources: no pip configuration file, no PIP_* source variable."""
    environ = dict(os.environ if environ is None else environ)
    env = {k: v for k, v in environ.items() if not k.startswith("PIP_") or k in KEPT_PIP_VARIABLES}
    env["PIP_CONFIG_FILE"] = os.devnull  # pip then reads no configuration file at all
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def split_lock(lines: list[str]) -> tuple[list[str], Requirement]:
    """The requirement lines (of the lock, or of pyproject.toml) other than torch, and torch's
    own line."""
    others, torch = [], []
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if text.startswith("-"):
            raise ValueError(f"lock line {line!r}: options belong in the Makefile, not the lock")
        requirement = Requirement(text)
        (torch if canonicalize_name(requirement.name) == "torch" else others).append(text)
    if len(torch) != 1:
        raise ValueError(f"torch must appear exactly once, found {len(torch)} lines")
    return others, Requirement(torch[0])


def project_requirements(pyproject: Path, extra: str) -> list[str]:
    """The requirements of ``pip install '.[extra]'``, with the project's own extras expanded."""
    project = tomllib.loads(pyproject.read_text())["project"]
    name = canonicalize_name(project["name"])
    optional = project.get("optional-dependencies", {})
    wanted, seen, pending = list(project["dependencies"]), set(), [extra]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for text in optional[current]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == name:
                pending.extend(requirement.extras)
            else:
                wanted.append(text)
    return wanted


def resolve_on_pypi(requirements: list[str], label: str) -> tuple[bool, str]:
    """Resolve ``requirements`` (dependencies included) with pip against PyPI alone, dry run."""
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp, "requirements.txt")
        listing.write_text("\n".join(requirements) + "\n")
        command = [
            *(sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed"),
            *("--target", str(Path(tmp, "target")), "--timeout", str(NETWORK_TIMEOUT_S)),
            *("--index-url", "https://pypi.org/simple", "-r", str(listing)),
        ]
        done = subprocess.run(command, env=clean_pip_env(), capture_output=True, text=True)
    if done.returncode != 0:
        return False, f"FAIL {label}: pip could not resolve it against PyPI:\n{done.stderr.strip()}"
    would = [line for line in done.stdout.splitlines() if line.startswith("Would install")]
    count = len(would[0].split()) - 2 if would else 0
    return (
        True,
        f"ok   {label}: {len(requirements)} requirements resolve on PyPI ({count} packages)",
    )


class _Links(html.parser.HTMLParser):
    """The file names of a PEP 503 simple-index page."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []
        self._in_link = False

    def handle_starttag(self, tag, attrs):
        self._in_link = tag == "a"

    def handle_data(self, data):
        if self._in_link and data.strip():
            self.names.append(data.strip())

    def handle_endtag(self, tag):
        self._in_link = False


def index_files(page: str) -> list[str]:
    parser = _Links()
    parser.feed(page)
    return parser.names


def matching_wheels(files: list[str], requirement: Requirement, tags=None) -> list[str]:
    """The wheels among ``files`` that this interpreter can install and that meet the line."""
    supported = set(sys_tags() if tags is None else tags)
    found = []
    for name in files:
        if not name.endswith(".whl"):
            continue
        project, version, _, wheel_tags = parse_wheel_filename(name)
        if canonicalize_name(project) != canonicalize_name(requirement.name):
            continue
        if requirement.specifier.contains(version, prereleases=True) and wheel_tags & supported:
            found.append(name)
    return found


def check_torch(requirement: Requirement, index: str, required: bool, label: str) -> bool:
    """Does ``index`` list a wheel for this platform that meets torch's ``requirement``?"""
    url = f"{index.rstrip('/')}/{canonicalize_name(requirement.name)}/"
    try:
        with urllib.request.urlopen(url, timeout=NETWORK_TIMEOUT_S) as response:
            page = response.read().decode()
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", error)
        verdict = "FAIL" if required else "skip"
        print(f"{verdict} {label}: {requirement} not checked, {url} unreachable here ({reason})")
        return not required
    wheels = matching_wheels(index_files(page), requirement)
    if not wheels:
        print(f"FAIL {label}: {url} lists no wheel for this platform that meets {requirement}")
        return False
    print(f"ok   {label}: {requirement} is met by {wheels[-1]} on {index}")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lock", type=Path, default=DEFAULT_LOCK)
    parser.add_argument("--pyproject", type=Path, default=REPO / "pyproject.toml")
    parser.add_argument("--extra", default="dev", help="the extra of `pip install -e .[EXTRA]`")
    parser.add_argument("--torch-index", default=DEFAULT_TORCH_INDEX)
    parser.add_argument(
        "--require-torch-index", action="store_true", help="fail where the index is unreachable"
    )
    args = parser.parse_args(argv)
    if sys.version_info[:2] != (3, 11) or sys.platform != "linux":
        print(f"note: the lock is for Linux x86-64 and Python 3.11; this is {sys.platform}")

    lock_lines, lock_torch = split_lock(args.lock.read_text().splitlines())
    dev_lines, dev_torch = split_lock(project_requirements(args.pyproject, args.extra))
    lock_label, dev_label = args.lock.name, f"pyproject .[{args.extra}]"
    # The two resolutions wait mostly on the network: run them side by side.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        resolved = pool.map(resolve_on_pypi, (lock_lines, dev_lines), (lock_label, dev_label))
        ok = True
        for resolves, message in resolved:
            print(message, flush=True)
            ok &= resolves
    ok &= check_torch(lock_torch, args.torch_index, args.require_torch_index, lock_label)
    ok &= check_torch(dev_torch, args.torch_index, args.require_torch_index, dev_label)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
