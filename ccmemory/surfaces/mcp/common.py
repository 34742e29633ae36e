"""What every MCP tool shares: the structured failure, citations, pagination bounds, redaction,
dates, the resolver and filters over the service. Free of the SDK."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ccmemory.core.errors import CcmemoryError, mcp_error
from ccmemory.core.model import TYPES
from ccmemory.core.model import parse_when as model_parse_when
from ccmemory.core.redact import redact
from ccmemory.index.base import Filters, IndexedMemory

if TYPE_CHECKING:
    from ccmemory.app.service import Service

MAX_LIMIT = 50
MAX_WINDOW = 200  # offset + limit for ranked searches
BODY_CAP = 20_000
SNIPPET = 240


class ToolFailure(CcmemoryError):
    """An anticipated failure, reported to the model as a structured tool error (its own code)."""

    def __init__(self, code: str, message: str, hint: str | None = None):
        super().__init__(message, hint)
        self.code = code

    def as_dict(self) -> dict[str, Any]:
        return mcp_error(self)


# --- citations -----------------------------------------------------------------------------------


def _snippet(text: str, width: int = SNIPPET) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def cite(m: IndexedMemory, **extra: Any) -> dict[str, Any]:
    """The short form of a memory in any result: enough to decide whether to open it."""
    out: dict[str, Any] = {
        "id": m.id,
        "type": m.type,
        "title": m.title,
        "status": m.status,
        "created": m.created,
        "path": m.path,
        "uri": m.uri,
    }
    if m.topics:
        out["topics"] = m.topics
    if m.files:
        out["files"] = m.files
    snip = _snippet(m.body)
    if snip:
        out["snippet"] = snip
    out.update(extra)
    return out


def ref(m: IndexedMemory) -> dict[str, Any]:
    """The shortest citation (inside groups and chains)."""
    return {"id": m.id, "type": m.type, "title": m.title, "path": m.path, "uri": m.uri}


def full(m: IndexedMemory) -> dict[str, Any]:
    body = m.body
    truncated = len(body) > BODY_CAP
    out = cite(m)
    out.pop("snippet", None)
    out.update(
        {
            "author": m.author,
            "session": m.session,
            "branch": m.branch,
            "confidence": m.confidence,
            "source": m.source,
            "supersedes": m.supersedes,
            "relations": [r.to_dict() for r in m.relations],
            "fields": m.fields,
            "body": body[:BODY_CAP],
        }
    )
    if truncated:
        out["body_truncated"] = f"body cut at {BODY_CAP} of {len(body)} characters; read {m.path}"
    return out


def page(items: Sequence[Any], offset: int, limit: int, total: int | None = None) -> dict[str, Any]:
    """Pagination fields for a result whose full list is `items` (or `total` long)."""
    n = len(items) if total is None else total
    nxt = offset + limit if offset + limit < n else None
    return {"total": n, "offset": offset, "limit": limit, "next_offset": nxt}


def bounded(limit: int, offset: int) -> tuple[int, int]:
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolFailure("invalid_argument", f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if offset < 0:
        raise ToolFailure("invalid_argument", f"offset must be 0 or more, got {offset}")
    return limit, offset


# --- redaction -----------------------------------------------------------------------------------

REDACTOR = "ccmemory.core.redact"


def redact_text(text: str) -> str:
    """Secrets replaced, <private> sections dropped: the same redaction capture uses."""
    return redact(text)


def redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


# --- dates ---------------------------------------------------------------------------------------


def parse_when(value: str | None, name: str) -> datetime | None:
    """A date (2026-11-20), an ISO timestamp, or relative 12h / 7d / 3w / 6m / 1y ago."""
    if value is None or not value.strip():
        return None
    parsed = model_parse_when(value)
    if parsed is None:
        raise ToolFailure(
            "invalid_argument",
            f"{name}={value!r} is not a date",
            "use 2026-11-20, 2026-11-20T14:03:11Z, or a relative age such as 7d, 3w, 12h",
        )
    return parsed


# --- helpers over the service ------------------------------------------------------------------------


def resolve_one(svc: Service, ref_: str, what: str = "memory") -> IndexedMemory:
    """The memory `ref_` names (ccmemory.app.resolve: id, unique prefix, path or slug); the same
    not-found and ambiguous messages as the CLI."""
    from ccmemory.app.resolve import RefError
    from ccmemory.app.resolve import resolve_one as resolve

    ref_ = (ref_ or "").strip()
    if not ref_:
        raise ToolFailure("invalid_argument", f"no {what} id given")
    try:
        return resolve(svc, ref_, what)
    except RefError as exc:
        raise ToolFailure(exc.code, exc.message, exc.hint) from None


def repo_files(svc: Service, files: Sequence[str]) -> list[str]:
    """File filters as the index stores `files:` entries: repository-relative (Claude's tool
    inputs are absolute paths; `core.repopath`). One outside the repository stays as given: it
    matches nothing, as before."""
    from ccmemory.core.repopath import repo_path

    out = []
    for f in files:
        rel = repo_path(f, svc.vault.root) if f.strip() else None
        out.append(rel if rel else f)
    return out


def tool_filters(
    svc: Service,
    *,
    types: Sequence[str] | None = None,
    status: str | None = None,
    topics: Sequence[str] | None = None,
    files: Sequence[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    include_superseded: bool = False,
) -> Filters:
    for t in types or []:
        if t not in TYPES:
            raise ToolFailure("invalid_argument", f"unknown type {t!r}; use one of: {', '.join(TYPES)}")
    return svc.filters(
        types=list(types) if types else None,
        status=status,
        topics=list(topics) if topics else None,
        files=repo_files(svc, files) if files else None,
        since=parse_when(since, "since"),
        until=parse_when(until, "until"),
        include_superseded=include_superseded,
    )


def telemetry_event(svc: Service, kind: str, ids: Sequence[str]) -> None:
    """One telemetry event (ids and counts only; ccmemory/telemetry.py). Off per config."""
    from ccmemory.core import telemetry

    if telemetry.config_from(svc.config.raw).enabled:
        telemetry.emit(svc.vault.dir / "local", kind, ids, session=_MCP_SESSION, source="mcp")


_MCP_SESSION = f"mcp-{os.getpid()}-{int(time.time())}"
