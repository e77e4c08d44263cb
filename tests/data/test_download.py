"""Checksummed download: mirror first, then URLs; nothing kept unless the digest matches."""

from __future__ import annotations

import hashlib
import http.server
import socket
import threading
from pathlib import Path

import pytest

from whcore.data.download import (
    DownloadError,
    fetch,
    mirror_warning,
    resolve_mirror,
    sha256_of,
)

pytestmark = pytest.mark.usefixtures("no_network")

CONTENT = b"genotype,brightness\n'000',1.5\n" * 100
DIGEST = hashlib.sha256(CONTENT).hexdigest()
FILE = "data.csv"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.fixture
def server():
    """A local HTTP server: ``routes[path] = (status, body)``; ``hits[path]`` counts requests."""
    routes, hits = {}, {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits[self.path] = hits.get(self.path, 0) + 1
            status, body = routes.get(self.path, (404, b"not here"))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield base, routes, hits
    httpd.shutdown()
    httpd.server_close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/{FILE}"  # nothing listens there any more: refused


def test_sha256_of_matches_hashlib(tmp_path):
    path = tmp_path / FILE
    path.write_bytes(CONTENT)
    assert sha256_of(path) == DIGEST


def test_resolve_mirror_argument_then_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("WHCORE_DATA_MIRROR", str(tmp_path))
    assert resolve_mirror() == tmp_path
    assert resolve_mirror("elsewhere") == Path("elsewhere")
    assert resolve_mirror("") is None  # an explicit empty value switches the mirror off
    monkeypatch.setenv("WHCORE_DATA_MIRROR", "")
    assert resolve_mirror() is None


def test_a_mirror_that_is_no_folder_is_one_warning(monkeypatch, tmp_path, capsys):
    from whcore.pipeline.cli import main

    missing, a_file = tmp_path / "nowhere", tmp_path / "file"
    a_file.write_text("x")
    monkeypatch.setenv("WHCORE_DATA_MIRROR", str(missing))
    assert mirror_warning() == (
        f"warning: WHCORE_DATA_MIRROR: {missing} does not exist; "
        "raw files will come from the pinned URLs"
    )
    assert mirror_warning(a_file, "config key data_mirror").startswith(
        f"warning: config key data_mirror: {a_file} is not a folder;"
    )
    assert mirror_warning(tmp_path) is None and mirror_warning("") is None
    monkeypatch.setenv("WHCORE_DATA_MIRROR", "")
    assert mirror_warning() is None
    # `whcore download` says it first, before trying the URLs
    out = tmp_path / "raw" / "41467_2019_12130_MOESM7_ESM.xlsx"
    args = ["download", "entacmaea", "--out", str(out), "--mirror", str(missing)]
    assert main([*args, "--retries", "1", "--timeout", "1"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert (
        first
        == f"warning: --mirror: {missing} does not exist; raw files will come from the pinned URLs"
    )


@pytest.mark.parametrize("layout", ["per-dataset", "flat"])
def test_mirror_copy_is_verified(tmp_path, layout):
    mirror = tmp_path / "mirror"
    source = mirror / "toy" / FILE if layout == "per-dataset" else mirror / FILE
    source.parent.mkdir(parents=True)
    source.write_bytes(CONTENT)
    out = tmp_path / "raw" / FILE
    assert fetch(FILE, DIGEST, out, mirror=mirror, subdir="toy") == out
    assert out.read_bytes() == CONTENT
    assert leftovers(out.parent) == [FILE]


def test_existing_good_file_is_kept_without_any_source(tmp_path):
    out = tmp_path / FILE
    out.write_bytes(CONTENT)
    before = out.stat().st_mtime_ns
    fetch(FILE, DIGEST, out, urls=(closed_port_url(),), mirror="")
    assert out.stat().st_mtime_ns == before


def test_mirror_with_wrong_bytes_falls_back_to_url(tmp_path, server):
    base, routes, _ = server
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / FILE).write_bytes(CONTENT[:-5])  # truncated copy
    routes["/" + FILE] = (200, CONTENT)
    out = tmp_path / "raw" / FILE
    fetch(FILE, DIGEST, out, urls=(f"{base}/{FILE}",), mirror=tmp_path / "mirror")
    assert out.read_bytes() == CONTENT


def test_url_order_and_file_urls(tmp_path, server):
    base, _, hits = server
    local = tmp_path / "elsewhere" / FILE
    local.parent.mkdir()
    local.write_bytes(CONTENT)
    out = tmp_path / "raw" / FILE
    fetch(FILE, DIGEST, out, urls=(f"{base}/gone", local.as_uri()), mirror="", backoff=0)
    assert out.read_bytes() == CONTENT
    assert hits == {"/gone": 1}  # a 404 is final: not retried


def test_every_failure_is_listed_and_nothing_is_kept(tmp_path, server):
    base, routes, hits = server
    wrong = CONTENT.replace(b"1.5", b"2.5")
    routes["/wrong"] = (200, wrong)
    routes["/broken"] = (503, b"try later")
    out = tmp_path / "raw" / FILE
    urls = (f"{base}/missing", f"{base}/wrong", f"{base}/broken", closed_port_url())
    with pytest.raises(DownloadError) as err:
        fetch(
            FILE,
            DIGEST,
            out,
            urls=urls,
            mirror=tmp_path / "empty-mirror",
            subdir="toy",
            retries=2,
            backoff=0,
            timeout=5,
        )
    message = str(err.value)
    assert FILE in message and DIGEST in message and str(out) in message
    assert f"{tmp_path / 'empty-mirror' / 'toy' / FILE} (mirror): not found" in message
    assert f"{base}/missing: HTTP 404" in message
    assert (
        f"{base}/wrong: checksum mismatch: expected sha256 {DIGEST}, got "
        f"{hashlib.sha256(wrong).hexdigest()}" in message
    )
    assert f"{base}/broken: HTTP 503" in message and "after 2 attempts" in message
    assert "offline or unreachable" in message
    assert hits["/broken"] == 2 and hits["/wrong"] == 1  # only transient failures are retried
    assert leftovers(out.parent) == []  # no partial or temporary file survives


def test_no_mirror_and_no_network_says_how_to_fix(tmp_path):
    out = tmp_path / FILE
    out.write_bytes(b"stale")  # a damaged earlier copy must not survive either
    with pytest.raises(DownloadError, match="no mirror folder") as err:
        fetch(
            FILE,
            DIGEST,
            out,
            urls=("https://example.org/data.csv",),
            mirror="",
            retries=1,
            backoff=0,
        )
    assert "network access disabled" in str(err.value) and "WHCORE_DATA_MIRROR" in str(err.value)
    assert not out.exists()
