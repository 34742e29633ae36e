"""The MCP tools' logic, free of the SDK: arguments in, JSON-able dicts out, `ToolFailure` on error.

Every result is bounded (limit/offset with caps) and every memory in it is cited by id, path and
`ccmemory://memory/<id>`. Recording writes the memory file first (Service.record), then indexes it;
nothing here rewrites an existing memory file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccmemory import settings as env_settings
from ccmemory.errors import CcmemoryError, mcp_error
from ccmemory.index.base import Filters, IndexedMemory, IndexError_
from ccmemory.model import REVERSE_NAMES, TYPES, Memory, Relation, new_id, parse_timestamp
from ccmemory.model import parse_when as model_parse_when
from ccmemory.redact import redact
from ccmemory.vault import VaultNotFound

if TYPE_CHECKING:
    from ccmemory.service import Service

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


def _bounded(limit: int, offset: int) -> tuple[int, int]:
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolFailure("invalid_argument", f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if offset < 0:
        raise ToolFailure("invalid_argument", f"offset must be 0 or more, got {offset}")
    return limit, offset


# --- redaction -----------------------------------------------------------------------------------

REDACTOR = "ccmemory.redact"


def redact_text(text: str) -> str:
    """Secrets replaced, <private> sections dropped: the same redaction capture uses."""
    return redact(text)


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
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


# --- the backend: one Service per server, refreshed now and then -----------------------------------


class Backend:
    """Opens the Service for the repository lazily, so the server starts (and lists its tools)
    even where `.ccmemory/` does not exist yet; every call re-checks and reports it clearly."""

    def __init__(self, start: Path | None = None, refresh_seconds: float | None = None):
        self.start = start
        if refresh_seconds is None:
            refresh_seconds = env_settings.MCP_REFRESH_SECONDS.value()
        self.refresh_seconds = refresh_seconds
        self._svc: Service | None = None
        self._refreshed = 0.0
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def service(self, *, refresh: bool = True) -> Iterator[Service]:
        with self._lock:
            try:
                svc = self._open()
                if refresh and 0 <= self.refresh_seconds <= time.monotonic() - self._refreshed:
                    svc.reindex()
                    self._refreshed = time.monotonic()
                yield svc
            except ToolFailure:
                raise
            except VaultNotFound as exc:
                raise ToolFailure(
                    "no_vault",
                    str(exc),
                    "run `ccmemory init` in the repository, or start the server with --repo PATH "
                    "(or CCMEMORY_REPO) pointing at a repository that has .ccmemory/",
                ) from None
            except IndexError_ as exc:
                self._drop()
                raise ToolFailure(
                    "index_unavailable",
                    f"the memory index is unavailable: {exc}",
                    "memory files are untouched; check the backend (`ccmemory doctor`), or run "
                    "`ccmemory reindex` to rebuild the local index",
                ) from None

    def _open(self) -> Service:
        if self._svc is None:
            from ccmemory.service import Service

            try:
                svc = Service.open(self.start)
            except ValueError as exc:  # unreadable config.yaml
                raise ToolFailure("bad_config", str(exc), "fix .ccmemory/config.yaml") from None
            try:
                svc.reindex()
            except (IndexError_, VaultNotFound):
                svc.close()
                raise
            except Exception as exc:  # e.g. a backend whose driver is missing or cannot connect
                svc.close()
                raise IndexError_(f"{svc.config.backend} backend: {type(exc).__name__}: {exc}") from None
            self._svc = svc
            self._refreshed = time.monotonic()
        return self._svc

    def _drop(self) -> None:
        if self._svc is not None:
            with contextlib.suppress(Exception):
                self._svc.close()
            self._svc = None

    def close(self) -> None:
        with self._lock:
            self._drop()


# --- helpers over the service ------------------------------------------------------------------------


def resolve_one(svc: Service, ref_: str, what: str = "memory") -> IndexedMemory:
    """The memory `ref_` names (ccmemory.resolve: id, unique prefix, path or slug); the same
    not-found and ambiguous messages as the CLI."""
    from ccmemory.resolve import RefError
    from ccmemory.resolve import resolve_one as resolve

    ref_ = (ref_ or "").strip()
    if not ref_:
        raise ToolFailure("invalid_argument", f"no {what} id given")
    try:
        return resolve(svc, ref_, what)
    except RefError as exc:
        raise ToolFailure(exc.code, exc.message, exc.hint) from None


def _filters(
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
        files=list(files) if files else None,
        since=parse_when(since, "since"),
        until=parse_when(until, "until"),
        include_superseded=include_superseded,
    )


# --- recording -----------------------------------------------------------------------------------


def record(
    svc: Service,
    mtype: str,
    *,
    title: str,
    body: str = "",
    topics: Sequence[str] | None = None,
    files: Sequence[str] | None = None,
    relations: Sequence[dict[str, Any]] | None = None,
    supersedes: Sequence[str] | None = None,
    confidence: float | None = None,
    session: str | None = None,
    fields: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from ccmemory import gitstate

    spec = TYPES[mtype]
    title = " ".join(redact_text(title).split())
    if not title:
        raise ToolFailure("invalid_argument", "title is empty", "give a one-line title")
    own = {k: _redact_value(v) for k, v in (fields or {}).items() if v not in (None, "", [])}
    unknown = set(own) - set(spec.fields)
    if unknown:
        raise ToolFailure(
            "invalid_argument",
            f"{', '.join(sorted(unknown))} not a field of {mtype} "
            f"(fields: {', '.join(spec.fields) or 'none'})",
        )

    def full_id(target: str) -> str:
        from ccmemory.resolve import written_reference

        return written_reference(resolve_one(svc, target, "memory to link to"))

    sup = list(dict.fromkeys(full_id(s) for s in supersedes or []))
    rels: list[Relation] = []
    for r in relations or []:
        rtype = str(r.get("type", "")).upper()
        if rtype == "SUPERSEDES":
            sup.append(full_id(str(r.get("target", ""))))
            continue
        reason = r.get("reason")
        rels.append(
            Relation(rtype, full_id(str(r.get("target", ""))), redact_text(reason) if reason else None)
        )
    clean = [t.strip() for t in topics or [] if t and t.strip()]
    memory = Memory(
        id=new_id(),
        type=mtype,
        title=title,
        created=datetime.now(UTC).replace(microsecond=0),
        body=redact_text(body).strip(),
        author=svc.config.user_id,
        session=session or None,
        branch=gitstate.current_branch(svc.vault.root) if gitstate.is_repo(svc.vault.root) else None,
        topics=list(dict.fromkeys(clean)),
        files=list(dict.fromkeys(f.strip() for f in files or [] if f and f.strip())),
        confidence=confidence,
        source="explicit",
        supersedes=list(dict.fromkeys(sup)),
        relations=rels,
        fields=own,
    )
    from ccmemory import personal
    from ccmemory.capture.linking import link_explicit

    to_personal = mtype == "preference" and own.get("scope") == "global"
    linked = [] if to_personal else link_explicit(svc, memory)  # never dropped: close ones linked
    try:
        if to_personal:  # a global preference lives in the personal vault (docs/cross-project.md)
            memory.branch = None
            rec = personal.record_global(memory)
            rec.path = str(personal.home() / rec.path)
        else:
            rec = svc.record(memory)
    except ValueError as exc:
        raise ToolFailure("invalid_argument", f"memory not written: {exc}") from None
    out: dict[str, Any] = {
        "id": memory.id,
        "type": mtype,
        "title": memory.title,
        "path": rec.path,
        "status": rec.status,
        "uri": f"ccmemory://memory/{memory.id}",
        "indexed": rec.indexed,
        "redaction": REDACTOR,
    }
    if rec.notice:
        out["notice"] = rec.notice
    if to_personal:
        out["vault"] = "personal"
        out["note"] = "written to your personal vault: shown at session start in every project"
    if memory.supersedes:
        out["supersedes"] = memory.supersedes
    if linked:
        out["linked"] = linked
    return out


def supersede(
    svc: Service,
    old_ref: str,
    *,
    title: str,
    body: str,
    reason: str | None,
    fields: dict[str, Any] | None,
    topics: Sequence[str] | None,
    files: Sequence[str] | None,
    relations: Sequence[dict[str, Any]] | None,
    confidence: float | None,
) -> dict[str, Any]:
    from ccmemory.resolve import written_reference

    old = resolve_one(svc, old_ref)
    notices: list[str] = []
    newer = svc.superseded_by([old.id]).get(old.id, [])
    if newer:
        notices.append(
            f"{old.id} is already superseded by {', '.join(newer)}; the new memory starts a second "
            "branch of the chain (supersede the newest one to keep a single chain)"
        )
    text = body.strip()
    link = os.path.relpath(svc.vault.root / old.path, svc.vault.folder_for(old.type)).replace(os.sep, "/")
    text += f"\n\nSupersedes [{old.title}]({link})" + (f": {reason.strip()}" if reason else ".")
    out = record(
        svc,
        old.type,
        title=title,
        body=text,
        topics=topics if topics is not None else old.topics,
        files=files if files is not None else old.files,
        relations=relations,
        supersedes=[written_reference(old)],
        confidence=confidence,
        fields=fields,
    )
    out["superseded"] = ref(old)
    out["note"] = "the old file is unchanged; the index now treats it as superseded"
    if notices:
        out["notices"] = notices
    return out


# --- querying ------------------------------------------------------------------------------------


def search(
    svc: Service,
    query: str,
    *,
    mode: str,
    limit: int,
    offset: int,
    explain: bool = False,
    **filter_args: Any,
) -> dict[str, Any]:
    limit, offset = _bounded(limit, offset)
    if not query.strip():
        raise ToolFailure("invalid_argument", "query is empty", "give a few words to search for")
    if offset + limit > MAX_WINDOW:
        raise ToolFailure("invalid_argument", f"offset + limit must stay within {MAX_WINDOW} results")
    cross = bool(filter_args.pop("include_cross_project", False))
    f = _filters(svc, **filter_args)
    if cross:
        return _cross_search(svc, query, f, mode=mode, limit=limit, offset=offset, explain=explain)
    resp = svc.search(query, f, limit=offset + limit + 1, mode=mode)
    hits = resp.hits[offset : offset + limit]
    results = []
    for h in hits:
        d = h.to_dict(explain)
        d.pop("author", None)
        if not d.get("topics"):
            d.pop("topics", None)
        if not d.get("files"):
            d.pop("files", None)
        results.append(d)
    more = len(resp.hits) > offset + limit
    out: dict[str, Any] = {
        "query": query,
        "mode_requested": mode,
        "mode_used": resp.mode,
        "results": results,
        "offset": offset,
        "limit": limit,
        "next_offset": offset + limit if more and offset + limit < MAX_WINDOW else None,
    }
    if resp.notices:
        out["notices"] = resp.notices
    if resp.vectors_pending:
        out["semantic_warming_up"] = {"vectors_pending": resp.vectors_pending}
    _telemetry(svc, "searched", [h.memory.id for h in hits])
    return out


def _cross_search(
    svc: Service, query: str, f: Filters, *, mode: str, limit: int, offset: int, explain: bool
) -> dict[str, Any]:
    """`search` with include_cross_project: related projects' hits, labelled (crossproject.py)."""
    from ccmemory.crossproject import cross_search

    resp = cross_search(svc, query, f, limit=offset + limit + 1, mode=mode)
    results = []
    for c in resp.hits[offset : offset + limit]:
        d = c.to_dict(explain)
        d.pop("author", None)
        d.setdefault("project", svc.project)
        results.append(d)
    more = len(resp.hits) > offset + limit
    out: dict[str, Any] = {
        "query": query,
        "mode_requested": mode,
        "mode_used": resp.mode,
        "cross_project": {"projects": [s.label() for s in resp.sources]},
        "results": results,
        "offset": offset,
        "limit": limit,
        "next_offset": offset + limit if more and offset + limit < MAX_WINDOW else None,
    }
    if resp.notices:
        out["notices"] = resp.notices
    return out


def _telemetry(svc: Service, kind: str, ids: Sequence[str]) -> None:
    """One telemetry event (ids and counts only; ccmemory/telemetry.py). Off per config."""
    from ccmemory import telemetry

    if telemetry.config_from(svc.config.raw).enabled:
        telemetry.emit(svc.vault.dir / "local", kind, ids, session=_MCP_SESSION, source="mcp")


_MCP_SESSION = f"mcp-{os.getpid()}-{int(time.time())}"


def get_memory(svc: Service, ref_: str) -> dict[str, Any]:
    m = resolve_one(svc, ref_)
    _telemetry(svc, "retrieved", [m.id])
    edges = svc.index.edges(svc.project, [m.id])
    out = full(m)
    out["superseded_by"] = [e.src for e in edges if e.type == "SUPERSEDES" and e.dst == m.id]
    out["incoming"] = [
        {"relation": REVERSE_NAMES.get(e.type, e.type), "from": e.src, "reason": e.reason}
        for e in edges
        if e.dst == m.id and e.src != m.id
    ][:50]
    return out


def query_by_topic(
    svc: Service,
    topics: Sequence[str],
    *,
    types: Sequence[str] | None,
    status: str | None,
    include_superseded: bool,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    limit, offset = _bounded(limit, offset)
    clean = [t for t in topics if t and t.strip()]
    if not clean:
        raise ToolFailure("invalid_argument", "give at least one topic")
    f = _filters(svc, types=types, status=status, topics=clean, include_superseded=include_superseded)
    total = svc.index.count(f)
    mems = svc.index.query(f, limit=limit, offset=offset)
    co = Counter(t for m in mems for t in m.topics if t.casefold() not in {c.casefold() for c in clean})
    return {
        "topics": clean,
        "order": "newest first",
        "results": [cite(m) for m in mems],
        **page(mems, offset, limit, total),
        "co_occurring_topics": [t for t, _ in co.most_common(10)],
    }


def timeline(
    svc: Service,
    *,
    around: str | None,
    window_days: int,
    since: str | None,
    until: str | None,
    types: Sequence[str] | None,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    limit, offset = _bounded(limit, offset)
    center: IndexedMemory | None = None
    if around:
        center = resolve_one(svc, around)
        when = parse_timestamp(center.created)
        assert when is not None
        start, end = when - timedelta(days=window_days), when + timedelta(days=window_days)
    else:
        start = parse_when(since, "since") or datetime.now(UTC) - timedelta(days=30)
        end = parse_when(until, "until") or datetime.now(UTC) + timedelta(days=1)
    if start > end:
        raise ToolFailure("invalid_argument", "since is after until")
    f = _filters(svc, types=types, include_superseded=True)
    f.since, f.until = start, end
    total = svc.index.count(f)
    mems = svc.index.query(f, limit=limit, offset=offset)
    sup = svc.index.superseded_ids(dataclasses.replace(f, ids=[m.id for m in mems])) if mems else set()
    results = []
    for m in mems:
        extra: dict[str, Any] = {}
        if m.id in sup:
            extra["superseded"] = True
        if center is not None:
            extra["position"] = (
                "this"
                if m.id == center.id
                else ("before" if (m.created, m.id) < (center.created, center.id) else "after")
            )
        results.append(cite(m, **extra))
    out: dict[str, Any] = {
        "from": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "to": end.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "order": "newest first",
        "results": results,
        **page(mems, offset, limit, total),
    }
    if center is not None:
        out["around"] = ref(center)
    return out


def failed_approaches(
    svc: Service,
    *,
    query: str | None,
    topics: Sequence[str] | None,
    files: Sequence[str] | None,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    limit, offset = _bounded(limit, offset)
    if query and query.strip():
        f = _filters(svc, types=["failed_approach"], topics=topics, files=files)
        resp = svc.search(query, f, limit=min(offset + limit + 1, MAX_WINDOW), mode="hybrid", expand=False)
        mems = [h.memory for h in resp.hits]
        chosen = mems[offset : offset + limit]
        info = {
            "order": "best match first",
            "next_offset": offset + limit if len(mems) > offset + limit else None,
        }
    else:
        f = _filters(svc, types=["failed_approach"], topics=topics, files=files)
        total = svc.index.count(f)
        chosen = svc.index.query(f, limit=limit, offset=offset)
        info = {"order": "newest first", **page(chosen, offset, limit, total)}
    results = [
        cite(
            m,
            approach=m.fields.get("approach"),
            outcome=m.fields.get("outcome"),
            lesson=m.fields.get("lesson"),
        )
        for m in chosen
    ]
    return {"results": results, "offset": offset, "limit": limit, **info}


def open_questions(svc: Service, *, topics: Sequence[str] | None, limit: int, offset: int) -> dict[str, Any]:
    from ccmemory.analysis import all_memories

    limit, offset = _bounded(limit, offset)
    if topics:
        f = _filters(svc, types=["question"], topics=topics)
        mems = svc.index.query(f, limit=5000)
    else:
        mems = all_memories(svc, types=["question"], include_superseded=False)
    open_ = [m for m in mems if m.fields.get("answer") in (None, "", [])]
    chosen = open_[offset : offset + limit]
    return {
        "rule": "question memories (not superseded) whose `answer` field is empty",
        "order": "newest first",
        "results": [cite(m, question=m.fields.get("question") or m.title) for m in chosen],
        **page(open_, offset, limit),
    }


def stale(
    svc: Service, *, developmental_days: int, check_files: bool, limit: int, offset: int
) -> dict[str, Any]:
    from ccmemory.analysis import STALE_RULES, stale_decisions

    limit, offset = _bounded(limit, offset)
    items = stale_decisions(svc, developmental_days=developmental_days, check_files=check_files)
    chosen = items[offset : offset + limit]
    return {
        "rules": STALE_RULES.replace("N days", f"{developmental_days} days"),
        "files_checked": check_files,
        "order": "oldest first",
        "results": [cite(s.memory, reasons=s.reasons) for s in chosen],
        **page(items, offset, limit),
    }


def query_context(
    svc: Service,
    *,
    task: str | None,
    current_file: str | None,
    max_hops: int,
    include_cross_project: bool,
    limit: int,
) -> dict[str, Any]:
    limit, _ = _bounded(limit, 0)
    task = (task or "").strip() or None
    current_file = (current_file or "").strip().removeprefix("./") or None
    picked: dict[str, tuple[IndexedMemory, str, float]] = {}
    notices: list[str] = []

    def add(m: IndexedMemory, why: str, score: float) -> None:
        if m.id not in picked or picked[m.id][2] < score:
            picked[m.id] = (m, why, score)

    if task:
        resp = svc.search(task, limit=limit, expand=False)
        notices += resp.notices
        for h in resp.hits:
            add(h.memory, "matches the task", 1.0 + h.score)
    if current_file:
        for m in svc.index.query(svc.filters(files=[current_file]), limit=limit):
            add(m, f"about {current_file}", 1.0)
        folder = current_file.rsplit("/", 1)[0] + "/" if "/" in current_file else None
        if folder:
            for m in svc.index.query(svc.filters(files=[folder]), limit=limit):
                add(m, f"about files in {folder}", 0.8)
    if not task and not current_file:
        ctx = svc.context(None)
        mems = svc.index.get(svc.project, ctx.ids)
        for i, m in enumerate(mems):
            add(m, "session-start context (no task or file given)", 0.5 - i * 1e-3)
    seeds = sorted(picked.values(), key=lambda t: -t[2])[:limit]
    picked = {m.id: (m, why, s) for m, why, s in seeds}
    frontier = set(picked)
    visible = svc.filters()
    for hop in range(1, max_hops + 1):
        if not frontier or len(picked) >= limit:
            break
        offers: dict[str, str] = {}
        for e in svc.index.edges(svc.project, sorted(frontier)):
            for here, other, label in (
                (e.src, e.dst, e.type),
                (e.dst, e.src, REVERSE_NAMES.get(e.type, e.type)),
            ):
                if here in frontier and other not in picked:
                    offers.setdefault(other, f"{label} of {here} (hop {hop})")
        if hop == 1:
            for other, via, shared in svc.index.related_by_topic_or_file(
                visible, sorted(frontier), limit=limit
            ):
                if other not in picked:
                    offers.setdefault(other, f"shares {shared} topic(s)/file(s) with {via} (hop 1)")
        allowed = (
            svc.index.query(dataclasses.replace(visible, ids=sorted(offers)), limit=len(offers))
            if offers
            else []
        )
        nxt = set()
        for m in allowed:
            if len(picked) >= limit:
                break
            picked[m.id] = (m, offers[m.id], 0.5 / hop)
            nxt.add(m.id)
        frontier = nxt
    cross: dict[str, Any] = {"requested": include_cross_project, "available": False}
    if include_cross_project:
        cross.update(_cross_context(svc, task, limit))
    return {
        "task": task,
        "current_file": current_file,
        "max_hops": max_hops,
        "results": [cite(m, why=why) for m, why, _ in picked.values()][:limit],
        "cross_project": cross,
        **({"notices": notices} if notices else {}),
    }


def _cross_context(svc: Service, task: str | None, limit: int) -> dict[str, Any]:
    """Related projects' memories for query_context: those matching the task, else those whose
    applies_to names this project; each labelled with its project, relation and citation."""
    from ccmemory.crossproject import CrossHit, applying_memories, cross_search
    from ccmemory.search import Hit

    if task:
        resp = cross_search(svc, task, limit=limit, expand=False)
        hits = [c for c in resp.hits if c.source is not None]
        results = [
            cite(c.hit.memory, why="matches the task", **c.source.label(), citation=c.citation())
            for c in hits
            if c.source is not None
        ]
        projects, notices = [s.label() for s in resp.sources], resp.notices
    else:
        found, notices = applying_memories(svc, limit=limit)
        why = f"its applies_to names {svc.project}"
        results = [
            cite(m, why=why, **src.label(), citation=CrossHit(Hit(m, 0.0), src).citation())
            for m, src in found
        ]
        projects = [s.label() for s in {src.name: src for _, src in found}.values()]
    out: dict[str, Any] = {
        "available": True,
        "backend": svc.config.backend,
        "projects": projects,
        "results": results[:limit],
    }
    if not svc.config.related and svc.config.backend != "neo4j":
        out["reason"] = "no related projects: add related_to to .ccmemory/config.yaml"
    if notices:
        out["notices"] = notices
    return out


# --- graph ---------------------------------------------------------------------------------------


def trace(svc: Service, ref_: str, *, direction: str, depth: int, max_steps: int) -> dict[str, Any]:
    root = resolve_one(svc, ref_)
    t = svc.trace(root.id, direction=direction, depth=depth)
    assert t is not None
    _telemetry(svc, "retrieved", [root.id])
    steps = t.steps[:max_steps]
    lines = []
    out_steps = []
    for s in steps:
        here = s.edge.src if s.direction == "out" else s.edge.dst
        other = s.edge.dst if s.direction == "out" else s.edge.src
        a, b = t.nodes[here], t.nodes[other]
        reason = f" — {s.edge.reason}" if s.edge.reason else ""
        lines.append(
            f"{'  ' * (s.depth - 1)}[{a.type}] {a.title} —{s.label}→ [{b.type}] {b.title} ({b.id}){reason}"
        )
        out_steps.append(
            {"depth": s.depth, "from": here, "relation": s.label, "to": other, "reason": s.edge.reason}
        )
    used = {t.root.id} | {s["from"] for s in out_steps} | {s["to"] for s in out_steps}
    sup = svc.superseded_by([m.id for m in t.chain])
    chain = [ref(m) | {"superseded": m.id in sup} for m in t.chain]
    readable = ""
    if len(t.chain) > 1:
        readable = "supersession (oldest first): " + " → ".join(f"{m.title} ({m.id})" for m in t.chain) + "\n"
    readable += "\n".join(lines) if lines else "no relations"
    return {
        "root": cite(t.root),
        "direction": direction,
        "depth": depth,
        "chain": chain,
        "steps": out_steps,
        "truncated": len(t.steps) > max_steps,
        "nodes": {i: ref(m) for i, m in t.nodes.items() if i in used},
        "readable": readable,
    }


def patterns(svc: Service, *, min_size: int, limit: int) -> dict[str, Any]:
    from ccmemory.analysis import (
        all_edges,
        all_memories,
        correction_hotspots,
        exception_clusters,
        supersession_chains,
    )

    mems = all_memories(svc)
    edges = all_edges(svc, [m.id for m in mems])
    clusters = exception_clusters(mems, min_size=min_size)
    chains = supersession_chains(mems, edges, min_length=max(3, min_size))
    hot = correction_hotspots(mems, min_count=min_size)
    return {
        "rules": {
            "exception_clusters": f"{min_size}+ exceptions breaking the same rule (normalised wording) "
            "or sharing a topic",
            "supersession_chains": f"chains of {max(3, min_size)}+ memories, each superseding the last",
            "correction_hotspots": f"topics or files with {min_size}+ corrections",
        },
        "exception_clusters": {
            "total": len(clusters),
            "items": [
                {
                    "by": c["by"],
                    "key": c["key"],
                    "size": len(c["members"]),
                    "members": [ref(m) for m in c["members"][:10]],
                }
                for c in clusters[:limit]
            ],
        },
        "supersession_chains": {
            "total": len(chains),
            "items": [{"length": len(c), "chain": [ref(m) for m in c[:20]]} for c in chains[:limit]],
        },
        "correction_hotspots": {
            "total": len(hot),
            "items": [
                {
                    "by": h["by"],
                    "key": h["key"],
                    "count": h["count"],
                    "members": [ref(m) for m in h["members"][:10]],
                }
                for h in hot[:limit]
            ],
        },
    }


ISSUE_KINDS = ("contradictions", "stale", "orphans", "cycles", "broken_links", "invalid_files")


def detect_issues(
    svc: Service, *, kinds: Sequence[str] | None, limit: int, include_cross_project: bool = False
) -> dict[str, Any]:
    from ccmemory.analysis import (
        all_edges,
        all_memories,
        contradictions,
        dependency_cycles,
        orphans,
        stale_decisions,
    )

    wanted = list(kinds) if kinds else list(ISSUE_KINDS)
    out: dict[str, Any] = {}
    mems = all_memories(svc)
    by_id = {m.id: m for m in mems}
    edges = all_edges(svc, list(by_id))
    superseded = svc.index.superseded_ids(svc.filters(include_superseded=True))
    if "contradictions" in wanted:
        items = contradictions(mems, edges, superseded)
        out["contradictions"] = {
            "total": len(items),
            "items": [
                {"rule": c["rule"], "reason": c["reason"], "members": [ref(m) for m in c["members"]]}
                for c in items[:limit]
            ],
        }
    if "stale" in wanted:
        from ccmemory.analysis import STALE_RULES

        st = stale_decisions(svc)
        out["stale"] = {
            "rule": STALE_RULES.replace("N days", "30 days"),
            "total": len(st),
            "items": [ref(s.memory) | {"reasons": s.reasons} for s in st[:limit]],
        }
    if "orphans" in wanted:
        orph = orphans([m for m in mems if m.id not in superseded], edges)
        out["orphans"] = {
            "rule": "current memories with no topics, no files and no relation in either direction",
            "total": len(orph),
            "items": [ref(m) for m in orph[:limit]],
        }
    if "cycles" in wanted:
        cyc = dependency_cycles(edges)
        out["cycles"] = {
            "rule": "cycles among DEPENDS_ON edges, and among SUPERSEDES edges "
            "(a memory cannot replace itself)",
            "total": len(cyc),
            "items": [
                {"relation": c["relation"], "members": [ref(by_id[i]) for i in c["ids"][:20] if i in by_id]}
                for c in cyc[:limit]
            ],
        }
    if "broken_links" in wanted:
        dang = svc.index.dangling(svc.project)
        out["broken_links"] = {
            "rule": "relations or supersedes entries whose target id is not in the index",
            "total": len(dang),
            "items": [
                {
                    "from": ref(by_id[e.src]) if e.src in by_id else {"id": e.src},
                    "relation": e.type,
                    "missing_target": e.dst,
                }
                for e in dang[:limit]
            ],
        }
    if "invalid_files" in wanted:
        probs = svc.index.file_problems(svc.project)
        out["invalid_files"] = {
            "rule": "memory files that cannot be parsed, or reuse another file's id "
            "(fix them and run `ccmemory check`)",
            "total": len(probs),
            "items": [{"path": p.path, "line": p.line, "reason": p.reason} for p in probs[:limit]],
        }
    if include_cross_project:
        from ccmemory.analysis import CROSS_RULE, cross_project_contradictions

        items, notices = cross_project_contradictions(svc)
        out["cross_project_contradictions"] = {
            "rule": CROSS_RULE,
            "total": len(items),
            "items": [
                {
                    "rule": c["rule"],
                    "reason": c["reason"],
                    "project": c["project"],
                    "relation": c["relation"],
                    "members": [
                        ref(c["members"][0]) | {"project": svc.project},
                        ref(c["members"][1]) | {"project": c["project"]},
                    ],
                }
                for c in items[:limit]
            ],
            **({"notices": notices} if notices else {}),
        }
    out["summary"] = {k: v["total"] for k, v in out.items()}
    return out


def suggest_across(svc: Service, *, limit: int) -> dict[str, Any]:
    """`suggest_connections` without an id: the project's strongest missing links (links.py)."""
    from ccmemory.links import RULE, missing_links

    items = missing_links(svc, limit=limit)
    return {
        "rule": RULE,
        "results": [
            {
                "from": ref(s["from"]),
                "to": ref(s["to"]),
                "score": round(s["score"], 6),
                "suggested_relation": s["suggested_relation"],
                "shared_words": s["shared_words"],
                "shared_topics": s["shared_topics"],
                "shared_files": s["shared_files"],
            }
            for s in items
        ],
        "how_to_link": "memory files are not rewritten by tools: add the relation to the `from` "
        "memory's file by hand in a pull request (relations: [{type, target: <id or path>}]), or "
        "record a new memory with relations=[{type, target}]",
    }


def suggest(svc: Service, ref_: str | None, *, limit: int) -> dict[str, Any]:
    from ccmemory.analysis import suggest_connections

    if ref_ is None or not ref_.strip():
        return suggest_across(svc, limit=limit)
    m = resolve_one(svc, ref_)
    items, notices = suggest_connections(svc, m, limit=limit)
    out: dict[str, Any] = {
        "memory": ref(m),
        "rule": "hybrid search on the memory's title, topics and text; memories already linked to it "
        "(either direction) are left out",
        "results": [
            cite(
                s["memory"],
                score=round(s["score"], 6),
                shared_topics=s["shared_topics"],
                shared_files=s["shared_files"],
                suggested_relation=s["suggested_relation"],
            )
            for s in items
        ],
        "how_to_link": "memory files are not rewritten by tools: record a new memory with "
        "relations=[{type, target}] (or memory_supersede), or add the relation to "
        f"{m.path} by hand in a pull request",
    }
    if notices:
        out["notices"] = notices
    return out


def metrics(svc: Service) -> dict[str, Any]:
    from ccmemory.analysis import metrics as compute

    return compute(svc)


# --- resources -----------------------------------------------------------------------------------


def schema() -> dict[str, Any]:
    from ccmemory.model import RELATION_TYPES

    return {
        "source_of_truth": "markdown files with YAML frontmatter under .ccmemory/<type folder>/",
        "nodes": {
            "Memory": "one memory file; label also its type in Neo4j",
            "Topic": "(Memory)-[:ABOUT]->(Topic)",
            "File": "(Memory)-[:TOUCHES]->(File), a code path",
            "Project": "the repository (config `project`)",
            "Session": "(Memory)-[:CAPTURED_IN]->(Session)",
            "Author": "frontmatter author, else the git author who added the file",
            "Chunk": "a section of a reference file (.ccmemory/reference/): (RefFile)-[:HAS_CHUNK]->(Chunk),"
            " NEXT in document order, REFERENCES to chunks and memories, (Memory)-[:CITES_CHUNK]->(Chunk)",
        },
        "relations": {r: {"reverse": REVERSE_NAMES[r]} for r in RELATION_TYPES},
        "relation_rule": "written only on the newer memory; reverse edges are derived in the index",
        "status": "derived from git: curated = file in the main branch's tree; developmental = elsewhere",
        "types": {
            name: {
                "folder": spec.folder,
                "fields": list(spec.fields),
                "enums": {k: list(v) for k, v in spec.enums.items()},
            }
            for name, spec in TYPES.items()
        },
        "uri": "ccmemory://memory/<id>",
    }


def stats(svc: Service) -> dict[str, Any]:
    data = dict(svc.index.stats(svc.project))
    data["project"] = svc.project
    data["superseded"] = len(svc.index.superseded_ids(svc.filters(include_superseded=True)))
    return data


def project_overview(svc: Service, name: str) -> dict[str, Any]:
    if name != svc.project:
        raise ToolFailure(
            "not_found",
            f"project {name!r} is not served here; this server serves project {svc.project!r}",
            f"read graph://project/{svc.project}",
        )
    f = svc.filters()
    recent = svc.index.query(svc.filters(types=["decision"]), limit=10)
    topics = Counter(t for m in svc.index.query(f, limit=2000) for t in m.topics)
    return {
        "project": svc.project,
        "root": str(svc.vault.root),
        "backend": svc.config.backend,
        "stats": stats(svc),
        "top_topics": dict(topics.most_common(20)),
        "recent_decisions": [ref(m) | {"created": m.created, "status": m.status} for m in recent],
    }


def memory_markdown(svc: Service, ref_: str) -> str:
    m = resolve_one(svc, ref_)
    from ccmemory.walk import inside, read_regular

    try:  # the one safe reader: no symlink followed, no FIFO blocking the server
        text = read_regular(inside(svc.vault.root, *m.path.split("/"))).decode("utf-8", "replace")
    except (OSError, ValueError):
        text = f"# {m.title}\n\n{m.body}\n"
    return text[: BODY_CAP * 2]
