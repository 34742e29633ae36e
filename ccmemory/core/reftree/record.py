"""One reference file -> a RefRecord (frontmatter, chunks, links), or the reason it is unusable."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ccmemory.core.reftree import REF_ROOT, tree_path
from ccmemory.core.reftree.chunk import Chunk, resolve_link, split

#: Frontmatter keys a reference file may have; anything else is kept but warned about by check.
KNOWN_KEYS = ("title", "source", "cached_at", "tags")


@dataclass
class RefRecord:
    path: str  # repo-relative, under .ccmemory/reference/
    mtime_ns: int
    size: int
    hash: str
    title: str | None = None
    source: str | None = None
    cached_at: str | None = None
    tags: list[str] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (chunk id, target path, fragment)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    error: str | None = None
    error_line: int | None = None

    def meta_json(self) -> str:
        return json.dumps(
            {"title": self.title, "source": self.source, "cached_at": self.cached_at, "tags": self.tags},
            ensure_ascii=False,
            sort_keys=True,
        )


def _split_frontmatter(text: str) -> tuple[dict[str, Any], str, int]:
    """(metadata, body, line where the body starts). Raises ValueError on bad YAML."""
    if not text.startswith("---\n") and text.strip() != "---":
        return {}, text, 1
    end = text.find("\n---", 3)
    if end < 0:
        raise ValueError("frontmatter opened with '---' but never closed")
    import yaml

    raw = text[4:end]
    after = text.find("\n", end + 4)
    body = "" if after < 0 else text[after + 1 :]
    try:
        meta = yaml.safe_load(raw) if raw.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 2) if mark is not None else 1
        raise ValueError(
            f"line {line}: frontmatter is not valid YAML ({getattr(exc, 'problem', exc)})"
        ) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ValueError("frontmatter must be a mapping of keys to values")
    return {str(k): v for k, v in meta.items()}, body, raw.count("\n") + 3


def _str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def parse(text: str, rel: str, *, max_chars: int | None = None) -> RefRecord:
    """Parse one reference file's text (hash and stat data left empty)."""
    rec = RefRecord(rel, 0, 0, "")
    try:
        meta, body, _ = _split_frontmatter(text)
    except ValueError as exc:
        rec.error, rec.error_line = str(exc), 1
        return rec
    rec.title = _str(meta.get("title"))
    rec.source = _str(meta.get("source"))
    rec.cached_at = _str(meta.get("cached_at"))
    tags = meta.get("tags")
    if isinstance(tags, str):
        tags = [tags]
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str | int) for t in tags)):
        rec.warnings.append((1, "'tags' should be a list of words; ignored"))
        tags = []
    rec.tags = [str(t) for t in tags or []]
    for key in meta:
        if key in ("type", "id"):
            rec.warnings.append(
                (1, f"'{key}' in a reference file: reference files are not memories (no type or id)")
            )
        elif key not in KNOWN_KEYS:
            rec.warnings.append((1, f"unknown frontmatter key '{key}' (known: {', '.join(KNOWN_KEYS)})"))
    kw = {"max_chars": max_chars} if max_chars else {}
    rec.chunks = split(body, tree_path(rel), title=rec.title, **kw)
    for c in rec.chunks:
        for url in c.links:
            target = resolve_link(url, rel)
            if target is not None and target[0].endswith(".md"):
                rec.links.append((c.id, target[0], target[1]))
    rec.links = sorted(set(rec.links))
    return rec


def load(path: str, rel: str, mtime_ns: int, size: int) -> RefRecord:
    """Read and parse one file; a bad file becomes a record carrying its error."""
    from ccmemory.core.reftree.scan import MAX_BYTES
    from ccmemory.core.walk import read_regular

    try:
        data = read_regular(path, MAX_BYTES)
    except OSError as exc:
        return RefRecord(rel, mtime_ns, size, "", error=f"cannot read: {exc}", error_line=1)
    digest = hashlib.sha256(data).hexdigest()
    if b"\x00" in data[:8192]:
        return RefRecord(
            rel, mtime_ns, len(data), digest, error="binary file (NUL bytes), not markdown", error_line=1
        )
    try:
        text = data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        return RefRecord(
            rel,
            mtime_ns,
            len(data),
            digest,
            error=f"not UTF-8 text ({exc.reason} at byte {exc.start})",
            error_line=1,
        )
    rec = parse(text, rel)
    rec.mtime_ns, rec.size, rec.hash = mtime_ns, len(data), digest
    return rec


def is_reference_path(rel: str) -> bool:
    return rel.startswith(REF_ROOT + "/") and rel.endswith(".md")
