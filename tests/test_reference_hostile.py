"""The adversarial pass of issue 32 on `ccmemory cache`, through the real command against a
hostile HTTP server on 127.0.0.1: redirect chains, endless, compressed-bomb and dripping
responses, odd charsets, and PDFs that are bombs. Each one ends in one line (or a cached page),
quickly, with nothing half-written."""

from __future__ import annotations

import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests._webserver import running
from tests.conftest import cli_env

ARTICLE = b"<p>" + b"Otters keep their holts near running water and line them with grass. " * 20 + b"</p>"


def _gzip_bomb(mb: int) -> bytes:
    """`mb` MB of one letter, gzip-compressed (about 1000:1)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"a" * (1 << 20)
    return b"".join(c.compress(block) for _ in range(mb)) + c.flush()


class Hostile(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    bomb = b""

    def log_message(self, *args: object) -> None:
        pass

    def _head(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()

    def _body(self, status: int, ctype: str, body: bytes, **extra: str) -> None:
        self._head(status, {"Content-Type": ctype, "Content-Length": str(len(body)), **extra})
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path
        try:
            if path.startswith("/hop/"):  # a chain of distinct URLs, never the same one twice
                n = int(path.rsplit("/", 1)[1])
                self._body(302, "text/plain", b"", Location=f"/hop/{n + 1}")
            elif path == "/endless":  # chunked, no length, never ends
                self._head(200, {"Content-Type": "text/html", "Transfer-Encoding": "chunked"})
                chunk = b"<p>" + b"x" * 65536 + b"</p>"
                while True:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            elif path == "/gzip-bomb":
                self._body(200, "text/html", self.bomb, **{"Content-Encoding": "gzip"})
            elif path == "/drip":  # one byte every 0.3 s: never a read timeout, never an end
                self._head(200, {"Content-Type": "text/html", "Transfer-Encoding": "chunked"})
                while True:
                    self.wfile.write(b"1\r\nx\r\n")
                    self.wfile.flush()
                    time.sleep(0.3)
            elif path.startswith("/charset/"):
                cs = path.rsplit("/", 1)[1]
                body = (
                    b"<html><head><title>Odd \xff\xfe page</title></head><body><article>"
                    b"<h1>Bad bytes \xc3\x28 \xed\xa0\x80 here</h1>"
                    + ARTICLE
                    + b"\xff\xfe\xfd</article></body></html>"
                )
                self._body(200, f"text/html; charset={cs}", body)
            elif path == "/bomb.pdf":
                self._body(200, "application/pdf", _flate_pdf(8, pages=50))
            else:
                self._body(404, "text/plain", b"not found")
        except OSError:  # the client gave up: that is the point
            return


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    Hostile.bomb = _gzip_bomb(300)  # 300 MB once decompressed, 0.3 MB on the wire
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    httpd.daemon_threads = True
    with running(httpd) as base:
        yield base


def cache(repo: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", "cache", *args],
        cwd=repo, capture_output=True, text=True, env=cli_env(), timeout=180,
    )  # fmt: skip
    return proc, time.monotonic() - start


def cached(repo: Path) -> list[Path]:
    folder = repo / ".ccmemory" / "reference"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def refused(proc: subprocess.CompletedProcess[str], took: float, *words: str, within: float = 20) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2, proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr
    assert took < within, took


@pytest.mark.parametrize(
    ("path", "args", "words"),
    [
        ("/hop/0", [], ["more than 5 redirects"]),
        ("/endless", [], ["over the 10485760-byte limit"]),
        ("/gzip-bomb", [], ["over the 10485760-byte limit"]),  # the limit is on decoded bytes
        ("/drip", ["--timeout", "1"], ["took longer than 3 s"]),
        ("/bomb.pdf", [], ["passes 32 MB", "not cached"]),
    ],
)
def test_hostile_responses_are_one_line_quickly(
    repo: Path, server: str, path: str, args: list[str], words: list[str]
) -> None:
    proc, took = cache(repo, server + path, "--allow-private-hosts", *args)
    refused(proc, took, *words)
    assert cached(repo) == []


@pytest.mark.parametrize("charset", ["utf-8", "x-no-such-charset", "base64", "utf-16", "utf-7"])
def test_odd_or_invalid_charsets_are_cached_not_crashed(repo: Path, server: str, charset: str) -> None:
    proc, _ = cache(repo, f"{server}/charset/{charset}", "--allow-private-hosts", "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    [page] = cached(repo)
    text = page.read_text(encoding="utf-8")  # always written as valid UTF-8
    # a header that lies with a charset that can decode anything (utf-16) gives mojibake, not a crash
    assert ("Otters keep their holts" in text) == (charset != "utf-16")


# --- PDF bombs, as local files ---------------------------------------------------------------------


def _pdf(objs: list[bytes]) -> bytes:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
PAGE = b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"


def _stream(data: bytes, flate: bool = False) -> bytes:
    if flate:
        data = zlib.compress(data, 9)
    return b"<< /Length %d%s >>\nstream\n%s\nendstream" % (
        len(data),
        b" /Filter /FlateDecode" if flate else b"",
        data,
    )


def _shared(content: bytes, pages: int, flate: bool = False) -> bytes:
    """`pages` pages that all draw one content stream (object 4)."""
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    head = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages)]
    return _pdf([*head, FONT, _stream(content, flate), *[PAGE] * pages])


def _flate_pdf(mb: int, pages: int) -> bytes:
    """`mb` MB of text operators, compressed to a few KB, drawn on every one of `pages` pages."""
    line = b"BT /F1 10 Tf 72 700 Td (x) Tj ET\n"
    return _shared(line * (mb * (1 << 20) // len(line)), pages, flate=True)


def _deep_page_tree(depth: int) -> bytes:
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    objs += [b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % (3 + i) for i in range(depth)]
    n = len(objs) + 1
    objs.append(
        b"<< /Type /Page /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>" % (n + 1, n + 2)
    )
    return _pdf([*objs, FONT, _stream(b"BT /F1 10 Tf 72 700 Td (Deep) Tj ET")])


BOMBS = {
    # 40 MB of text operators in 40 KB, on one page: past the content limit, refused before parsing
    "one-page-flate": (lambda: _flate_pdf(40, pages=1), ["passes 32 MB"]),
    # 5 MB on each of 100 pages through one shared stream (500 MB of work from 30 KB): it took
    # minutes (over 120 s, killed) before the limit
    "shared-flate": (lambda: _flate_pdf(5, pages=100), ["passes 32 MB", "page 7 of 100"]),
    # 6,000 pages of one line each: 26 s and 320 MB before the page limit
    "many-pages": (
        lambda: _shared(b"BT /F1 10 Tf 72 700 Td (A line of text.) Tj ET", 6000),
        ["6000 pages", "at most 5000"],
    ),
    # a page tree 5,000 levels deep: pypdf's LimitReachedError was a traceback
    "deep-page-tree": (lambda: _deep_page_tree(5000), ["not a readable PDF", "depth"]),
    "cyclic-page-tree": (
        lambda: _pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
                b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
                _stream(b"BT (x) Tj ET"),
            ]
        ),
        ["not a readable PDF"],
    ),
    "nested-arrays": (
        lambda: _pdf([b"<< /Type /Catalog /Pages 2 0 R /X " + b"[" * 100_000 + b"]" * 100_000 + b" >>"]),
        ["not a readable PDF"],
    ),
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_pdf_bombs_are_refused_in_bounded_time(repo: Path, tmp_path: Path, name: str) -> None:
    make, words = BOMBS[name]
    pdf = tmp_path / f"{name}.pdf"
    pdf.write_bytes(make())
    proc, took = cache(repo, str(pdf))
    refused(proc, took, *words)
    assert cached(repo) == []


def test_a_long_pdf_under_the_limits_is_still_cached(repo: Path, tmp_path: Path) -> None:
    pdf = tmp_path / "long.pdf"
    pdf.write_bytes(_shared(b"BT /F1 10 Tf 72 700 Td (A line of text about otters.) Tj ET", 2000))
    proc, _ = cache(repo, str(pdf), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "2000" in proc.stdout and len(cached(repo)) == 1
