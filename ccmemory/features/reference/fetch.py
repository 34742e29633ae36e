"""Fetch one web page for the reference cache, defensively (httpx, imported lazily).

- only ``http``/``https``; a URL with a user name or password is refused (it would be written
  into the cached file's frontmatter and the index);
- redirects are followed by hand, at most ``max_redirects``, and every hop is checked again, so
  a redirect can never lead to ``file://``, ``ftp://`` or a credentialed URL;
- connect/read timeouts plus an overall deadline; the body is streamed and cut off at
  ``max_bytes`` (Content-Length is checked first);
- only HTML, XHTML, plain text, markdown and PDF content types are accepted;
- hosts that resolve to loopback, private, link-local (cloud metadata) or otherwise non-public
  addresses are refused unless ``allow_private`` (config ``reference: allow_private_hosts: true``
  or ``ccmemory cache --allow-private-hosts``): a URL handed to the MCP tool by a prompt must not
  read internal services into the repository. The check runs on every hop; a DNS answer that
  changes between the check and the connection is not caught.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from ccmemory.core.errors import CcmemoryError

MAX_BYTES = 10 * 1024 * 1024
TIMEOUT = 20.0
MAX_REDIRECTS = 5
USER_AGENT = "ccmemory-reference-cache/1 (python-httpx)"
ACCEPTED = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "text/markdown": "text",
    "text/x-markdown": "text",
    "application/pdf": "pdf",
}


class FetchError(CcmemoryError):
    """A page could not be fetched; the message names the URL and the cause."""


@dataclass
class Fetched:
    url: str  # as asked
    final_url: str  # after redirects
    kind: str  # html | text | pdf
    content_type: str
    charset: str | None
    body: bytes


def check_url(url: str) -> str:
    """The URL, stripped, if it may be fetched; FetchError naming the reason otherwise."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a malformed port
    except ValueError as exc:
        raise FetchError(f"{url!r} is not a valid URL ({exc})") from None
    del port
    if parts.scheme.lower() not in ("http", "https"):
        raise FetchError(
            f"{url!r}: only http:// and https:// URLs can be cached (not {parts.scheme or 'no scheme'!r})"
        )
    if parts.username is not None or parts.password is not None:
        raise FetchError(
            f"refusing a URL with credentials in it ({parts.scheme}://…@{parts.hostname}):"
            " they would be stored in the cached file; fetch the page another way"
        )
    if not parts.hostname:
        raise FetchError(f"{url!r} has no host")
    return url


def check_host(url: str) -> None:
    """FetchError unless every address the URL's host resolves to is a public one."""
    import ipaddress
    import socket

    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80))
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"{url}: cannot resolve {host!r} ({exc})") from None
    for info in infos:
        addr = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if not addr.is_global:
            raise FetchError(
                f"{url}: {host} resolves to a non-public address ({addr}); refusing (set"
                " `reference: allow_private_hosts: true` in .ccmemory/config.yaml or pass"
                " --allow-private-hosts to cache intranet pages)"
            )


def fetch(
    url: str,
    *,
    timeout: float = TIMEOUT,
    max_bytes: int = MAX_BYTES,
    max_redirects: int = MAX_REDIRECTS,
    transport: Any = None,
    allow_private: bool = False,
) -> Fetched:
    import httpx

    current = check_url(url)
    if not allow_private:
        check_host(current)
    deadline = time.monotonic() + timeout * 3
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,application/pdf;q=0.9,"
        "text/plain;q=0.8,text/markdown;q=0.8",
    }
    with httpx.Client(
        follow_redirects=False, timeout=httpx.Timeout(timeout), headers=headers, transport=transport
    ) as client:
        for _hop in range(max_redirects + 1):
            try:
                with client.stream("GET", current) as resp:
                    if resp.is_redirect:
                        location = resp.headers.get("location")
                        if not location:
                            raise FetchError(f"{current}: redirect without a Location header")
                        nxt = urljoin(current, location)
                        try:
                            current = check_url(nxt)
                            if not allow_private:
                                check_host(current)
                        except FetchError as exc:
                            raise FetchError(
                                f"{current} redirects to a URL that is not allowed: {exc}"
                            ) from None
                        continue
                    if resp.status_code >= 400:
                        raise FetchError(f"{current}: HTTP {resp.status_code} {resp.reason_phrase}")
                    ctype = resp.headers.get("content-type", "")
                    mime = ctype.split(";", 1)[0].strip().lower()
                    kind = ACCEPTED.get(mime)
                    if kind is None:
                        raise FetchError(
                            f"{current}: content type {mime or 'unknown'!r} is not cached"
                            " (HTML, text, markdown or PDF only)"
                        )
                    length = resp.headers.get("content-length")
                    if length and length.isdigit() and int(length) > max_bytes:
                        raise FetchError(f"{current}: {int(length)} bytes is over the {max_bytes}-byte limit")
                    data = bytearray()
                    for block in resp.iter_bytes():
                        data += block
                        if len(data) > max_bytes:
                            raise FetchError(f"{current}: the page is over the {max_bytes}-byte limit")
                        if time.monotonic() > deadline:
                            raise FetchError(f"{current}: download took longer than {timeout * 3:.0f} s")
                    return Fetched(url.strip(), current, kind, mime, resp.charset_encoding, bytes(data))
            except httpx.TimeoutException:
                raise FetchError(f"{current}: timed out after {timeout:.0f} s") from None
            except httpx.HTTPError as exc:
                raise FetchError(f"{current}: {type(exc).__name__}: {exc}") from None
    raise FetchError(f"{url}: more than {max_redirects} redirects")
