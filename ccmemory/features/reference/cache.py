"""Write cached sources into the tree: ``reference/cached/web/<slug>-<hash>.md`` for a URL,
``reference/cached/pdf/<slug>-<hash>.md`` for a PDF. Files only; indexing is the caller's.

Cached content is untrusted: it is redacted (ccmemory.core.redact) before it is written, the file
name is built from safe characters only (never from the page), and the target is checked to be
inside ``cached/`` (no symlinked folder can divert it).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ccmemory.core.errors import CcmemoryError
from ccmemory.core.layout import REFERENCE_DIR
from ccmemory.core.reftree import REF_ROOT
from ccmemory.core.vault import Vault, dump_yaml, slugify

SLUG_LEN = 60


class CacheError(CcmemoryError):
    """Nothing was written; the message names the source and the cause."""


@dataclass
class CacheResult:
    path: str  # repo-relative
    title: str | None
    source: str
    created: bool  # False: an earlier copy was replaced
    redactions: int
    pages: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "title": self.title,
            "source": self.source,
            "created": self.created,
            "redactions": self.redactions,
            **({"pages": self.pages} if self.pages is not None else {}),
        }


def url_key(url: str) -> str:
    """The URL a cached page is filed under: fragment dropped, scheme and host lower-cased."""
    p = urlsplit(url.strip())
    return urlunsplit((p.scheme.lower(), p.netloc.lower(), p.path or "/", p.query, ""))


def web_name(url: str) -> str:
    key = url_key(url)
    p = urlsplit(key)
    slug = slugify(f"{p.hostname or ''} {p.path}", max_len=SLUG_LEN)
    return f"{slug}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:10]}.md"


def pdf_name(stem: str, data: bytes) -> str:
    return f"{slugify(stem, max_len=SLUG_LEN)}-{hashlib.sha256(data).hexdigest()[:10]}.md"


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _target(vault: Vault, sub: str, name: str) -> Path:
    """The file's absolute path, refusing anything that would land outside reference/cached/."""
    if "/" in name or "\\" in name or name.startswith(".") or not name.endswith(".md"):
        raise CacheError(f"unsafe cache file name {name!r}")
    ref = vault.dir / REFERENCE_DIR
    folder = ref / "cached" / sub
    for part in (ref, ref / "cached", folder):
        if part.is_symlink():
            raise CacheError(f"{part} is a symbolic link; refusing to write through it")
    folder.mkdir(parents=True, exist_ok=True)
    real = Path(os.path.realpath(folder))
    if real != Path(os.path.realpath(vault.dir)) / REFERENCE_DIR / "cached" / sub:
        raise CacheError(f"{folder} resolves outside the reference tree ({real})")
    path = folder / name
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise CacheError(f"{path} exists and is not a regular file; not replaced")
    return path


def write_cached(vault: Vault, sub: str, name: str, meta: dict[str, Any], body: str) -> tuple[str, bool, int]:
    """Redact, then write atomically. Returns (repo-relative path, created, redactions)."""
    from ccmemory.core.atomic import UMASK, atomic_write
    from ccmemory.core.redact import find_secrets, redact

    found = len(find_secrets(body)) + sum(len(find_secrets(str(v))) for v in meta.values() if v)
    clean_meta = {k: (redact(v) if isinstance(v, str) else v) for k, v in meta.items() if v not in (None, [])}
    text = "---\n" + dump_yaml(clean_meta) + "---\n\n" + redact(body).strip("\n") + "\n"
    path = _target(vault, sub, name)
    created = not path.exists()
    atomic_write(path, text.encode("utf-8"), overwrite=True, mode=UMASK)  # committed like a memory
    return f"{REF_ROOT}/cached/{sub}/{name}", created, found


def cache_url(vault: Vault, url: str, *, fetch_kw: dict[str, Any] | None = None) -> CacheResult:
    """Fetch, extract and write one page (HTML, text/markdown or PDF)."""
    from ccmemory.features.reference.fetch import FetchError, check_url, fetch

    try:
        url = check_url(url)
        got = fetch(url, **(fetch_kw or {}))
    except FetchError as exc:
        raise CacheError(str(exc)) from None
    pages: int | None = None
    if got.kind == "pdf":
        import tempfile

        from ccmemory.features.reference.pdf import PdfError, pdf_to_markdown

        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "page.pdf"
            p.write_bytes(got.body)
            try:
                pdf = pdf_to_markdown(p, name=url)
            except PdfError as exc:
                raise CacheError(str(exc)) from None
        title, body, pages = pdf.title, pdf.markdown, pdf.pages
    else:
        text = _decode(got.body, got.charset)
        if got.kind == "html":
            from ccmemory.features.reference.extract import html_to_markdown

            title, body = html_to_markdown(text, got.final_url)
        else:
            from ccmemory.features.reference.extract import text_title

            title, body = text_title(text), text
    if not body.strip():
        raise CacheError(f"{url}: no main content found on the page; nothing written")
    meta = {"title": title, "source": url_key(url), "cached_at": now_iso(), "tags": ["web"]}
    rel, created, n = write_cached(vault, "web", web_name(url), meta, body)
    return CacheResult(rel, title, url_key(url), created, n, pages)


def cache_pdf(vault: Vault, file: Path) -> CacheResult:
    from ccmemory.features.reference.pdf import PdfError, pdf_to_markdown

    try:
        data = file.read_bytes()
    except OSError as exc:
        raise CacheError(f"{file}: cannot read ({exc.strerror or exc})") from None
    if not data.startswith(b"%PDF-"):
        raise CacheError(f"{file.name} is not a PDF (no %PDF- header)")
    try:
        pdf = pdf_to_markdown(file)
    except PdfError as exc:
        raise CacheError(str(exc)) from None
    try:
        source = file.resolve().relative_to(vault.root.resolve()).as_posix()
    except ValueError:
        source = file.name  # never an absolute path from outside the repository
    meta = {"title": pdf.title or file.stem, "source": source, "cached_at": now_iso(), "tags": ["pdf"]}
    rel, created, n = write_cached(vault, "pdf", pdf_name(file.stem, data), meta, pdf.markdown)
    return CacheResult(rel, pdf.title or file.stem, source, created, n, pdf.pages)


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


def _decode(body: bytes, charset: str | None) -> str:
    """The header's charset, else a <meta> charset in the first 4 KB, else UTF-8 (lossy)."""
    declared = _META_CHARSET.search(body[:4096])
    meta = declared.group(1).decode("ascii", "replace") if declared else None
    for enc in (charset, meta, "utf-8"):
        if not enc:
            continue
        try:
            return body.decode(enc)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("utf-8", errors="replace")
