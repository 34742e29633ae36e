"""Searching and reading: search, search_precedent, search_semantic, query_context,
query_by_topic, timeline, query_stale_decisions, query_failed_approaches, query_open_questions,
get_memory."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ccmemory.core.model import REVERSE_NAMES, parse_timestamp
from ccmemory.index.base import Filters, IndexedMemory

if TYPE_CHECKING:
    from ccmemory.app.service import Service
    from ccmemory.retrieval.view import Link
    from ccmemory.surfaces.mcp.backend import Backend

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ccmemory.features.context import context_for
from ccmemory.surfaces.mcp.common import (
    MAX_WINDOW,
    ToolFailure,
    bounded,
    cite,
    full,
    page,
    parse_when,
    ref,
    repo_files,
    resolve_one,
    telemetry_event,
    tool_filters,
)
from ccmemory.surfaces.mcp.tools import Tool
from ccmemory.surfaces.mcp.tools.params import (
    Files,
    Limit,
    MemoryRef,
    Offset,
    Query,
    Status,
    Topics,
    Types,
    When,
)

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
    limit, offset = bounded(limit, offset)
    if not query.strip():
        raise ToolFailure("invalid_argument", "query is empty", "give a few words to search for")
    if offset + limit > MAX_WINDOW:
        raise ToolFailure("invalid_argument", f"offset + limit must stay within {MAX_WINDOW} results")
    cross = bool(filter_args.pop("include_cross_project", False))
    f = tool_filters(svc, **filter_args)
    from ccmemory.text.timewords import apply as time_words

    asked = query
    query, when = time_words(query, f)  # "decisions from last week": a date range, not words
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
        "query": asked,
        **({"time_filter": {**when.as_dict(), "words_searched": query}} if when else {}),
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
    telemetry_event(svc, "searched", [h.memory.id for h in hits])
    return out


def _cross_search(
    svc: Service, query: str, f: Filters, *, mode: str, limit: int, offset: int, explain: bool
) -> dict[str, Any]:
    """`search` with include_cross_project: related projects' hits, labelled (crossproject.py)."""
    from ccmemory.features.crossproject import cross_search

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


def get_memory(svc: Service, ref_: str) -> dict[str, Any]:
    m = resolve_one(svc, ref_)
    telemetry_event(svc, "retrieved", [m.id])
    edges = svc.view.edges([m.id])
    out = full(m)
    out["superseded_by"] = [e.src for e in edges if e.type == "SUPERSEDES" and e.dst == m.id]
    out["incoming"] = [
        {"relation": REVERSE_NAMES.get(e.type, e.type), "from": e.src, "reason": e.reason}
        for e in edges
        if e.dst == m.id and e.src != m.id
    ][:50]
    if m.type == "hypothesis":  # its evidence, earlier versions' included (features/cothinker.py)
        from ccmemory.features.cothinker import evidence_for, status_of

        ev = evidence_for(svc, [m.id])[m.id]
        out["hypothesis"] = {"status": status_of(m.fields), "evidence": ev.as_dict()}
    if m.session:  # the session that produced it: the `sessions` tool (action 'get') resolves it
        from ccmemory.features.sessions.service import uri as session_uri

        out["session_uri"] = session_uri(m.session)
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
    limit, offset = bounded(limit, offset)
    clean = [t for t in topics if t and t.strip()]
    if not clean:
        raise ToolFailure("invalid_argument", "give at least one topic")
    f = tool_filters(svc, types=types, status=status, topics=clean, include_superseded=include_superseded)
    total = svc.view.count(f)
    mems = svc.view.query(f, limit=limit, offset=offset)
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
    limit, offset = bounded(limit, offset)
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
    f = tool_filters(svc, types=types, include_superseded=True)
    f.since, f.until = start, end
    total = svc.view.count(f)
    mems = svc.view.query(f, limit=limit, offset=offset)
    sup = svc.view.superseded_ids(dataclasses.replace(f, ids=[m.id for m in mems])) if mems else set()
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
    limit, offset = bounded(limit, offset)
    if query and query.strip():
        f = tool_filters(svc, types=["failed_approach"], topics=topics, files=files)
        resp = svc.search(query, f, limit=min(offset + limit + 1, MAX_WINDOW), mode="hybrid", expand=False)
        mems = [h.memory for h in resp.hits]
        chosen = mems[offset : offset + limit]
        info = {
            "order": "best match first",
            "next_offset": offset + limit if len(mems) > offset + limit else None,
        }
    else:
        f = tool_filters(svc, types=["failed_approach"], topics=topics, files=files)
        total = svc.view.count(f)
        chosen = svc.view.query(f, limit=limit, offset=offset)
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


OPEN_TYPES = ("question", "knowledge_gap", "hypothesis")


def open_questions(
    svc: Service,
    *,
    topics: Sequence[str] | None,
    limit: int,
    offset: int,
    types: Sequence[str] | None = None,
) -> dict[str, Any]:
    from ccmemory.features.analysis import all_memories
    from ccmemory.features.cothinker import evidence_for, hypothesis_summary, is_open

    limit, offset = bounded(limit, offset)
    kinds = list(dict.fromkeys(types or OPEN_TYPES))
    if topics:
        f = tool_filters(svc, types=kinds, topics=topics)
        mems = svc.view.query(f, limit=5000)
    else:
        mems = all_memories(svc, types=kinds, include_superseded=False)
    open_ = [m for m in mems if is_open(m.type, m.fields)]
    chosen = open_[offset : offset + limit]
    ev = evidence_for(svc, [m.id for m in chosen if m.type == "hypothesis"])
    results = []
    for m in chosen:
        if m.type == "hypothesis":
            results.append(cite(m, **hypothesis_summary(m, ev.get(m.id))))
        else:
            extra = {"would_close": m.fields["would_close"]} if m.fields.get("would_close") else {}
            results.append(cite(m, question=m.fields.get("question") or m.title, **extra))
    return {
        "rule": "memories not superseded that are still open: questions and knowledge gaps whose "
        "`answer` is empty, hypotheses whose status is open (or empty)",
        "order": "newest first",
        "results": results,
        **page(open_, offset, limit),
    }


def stale(
    svc: Service, *, developmental_days: int, check_files: bool, limit: int, offset: int
) -> dict[str, Any]:
    from ccmemory.features.analysis import STALE_RULES, stale_decisions

    limit, offset = bounded(limit, offset)
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
    limit, _ = bounded(limit, 0)
    task = (task or "").strip() or None
    current_file = (current_file or "").strip().removeprefix("./") or None
    notices: list[str] = []
    picked = _context_seeds(svc, task, current_file, limit, notices)
    _follow_links(svc, picked, max_hops, limit)
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


_Picked = dict[str, tuple[IndexedMemory, str, float]]  # id -> (memory, why, score)


def _context_seeds(
    svc: Service, task: str | None, current_file: str | None, limit: int, notices: list[str]
) -> _Picked:
    """The best `limit` starting memories: the task's search hits, memories about the file and its
    folder, or the session-start context when neither is given. Adds search notices to `notices`."""
    picked: _Picked = {}

    def add(m: IndexedMemory, why: str, score: float) -> None:
        if m.id not in picked or picked[m.id][2] < score:
            picked[m.id] = (m, why, score)

    if task:
        resp = svc.search(task, limit=limit, expand=False)
        notices += resp.notices
        for h in resp.hits:
            if not h.weak:  # a nearest-but-far neighbour is no reason to read a memory first
                add(h.memory, "matches the task", 1.0 + h.score)
    if current_file:
        (current_file,) = repo_files(svc, [current_file])
        for m in svc.view.query(svc.filters(files=[current_file]), limit=limit):
            add(m, f"about {current_file}", 1.0)
        folder = current_file.rsplit("/", 1)[0] + "/" if "/" in current_file else None
        if folder:
            for m in svc.view.query(svc.filters(files=[folder]), limit=limit):
                add(m, f"about files in {folder}", 0.8)
    if not task and not current_file:
        ctx = context_for(svc)
        mems = svc.view.get(ctx.ids)
        for i, m in enumerate(mems):
            add(m, "session-start context (no task or file given)", 0.5 - i * 1e-3)
    seeds = sorted(picked.values(), key=lambda t: -t[2])[:limit]
    return {m.id: (m, why, s) for m, why, s in seeds}


def _follow_links(svc: Service, picked: _Picked, max_hops: int, limit: int) -> None:
    """Add to `picked` the visible memories up to `max_hops` links (or, at hop 1, shared topics or
    files) away, nearest hop first, until it holds `limit`."""
    frontier = set(picked)
    visible = svc.filters()
    for hop in range(1, max_hops + 1):
        if not frontier or len(picked) >= limit:
            break
        links, visible_ones = svc.view.neighbours(
            frontier, visible, shared_limit=limit if hop == 1 else 0, known=picked
        )
        offers = _link_reasons(links, picked, hop)
        allowed = [m for m in visible_ones.values() if m.id in offers]
        nxt = set()
        for m in allowed:
            if len(picked) >= limit:
                break
            picked[m.id] = (m, offers[m.id], 0.5 / hop)
            nxt.add(m.id)
        frontier = nxt


def _link_reasons(links: list[Link], picked: _Picked, hop: int) -> dict[str, str]:
    """Each newly reached memory's first reason: the relation or what it shares, and with what."""
    offers: dict[str, str] = {}
    for link in links:
        if link.other in picked:
            continue
        if link.edge is not None:
            offers.setdefault(link.other, f"{link.label} of {link.here} (hop {hop})")
        else:
            shared = f"shares {link.shared} topic(s)/file(s) with {link.here} (hop 1)"
            offers.setdefault(link.other, shared)
    return offers


def _cross_context(svc: Service, task: str | None, limit: int) -> dict[str, Any]:
    """Related projects' memories for query_context: those matching the task, else those whose
    applies_to names this project; each labelled with its project, relation and citation."""
    from ccmemory.features.crossproject import CrossHit, applying_memories, cross_search
    from ccmemory.retrieval.search import Hit

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


# The tools registered below take these functions' names: they call them through these aliases.
_search_logic = search
_query_context = query_context
_query_by_topic = query_by_topic
_timeline = timeline
_get_memory = get_memory


def register(tool: Tool, server: MCPServer, be: Backend) -> None:
    """Add this section's tools with the server's own `tool` decorator (errors, annotations)."""

    def _search(query: str, mode: str, limit: int, offset: int, **kw: Any) -> dict[str, Any]:
        with be.service() as svc:
            return _search_logic(svc, query, mode=mode, limit=limit, offset=offset, **kw)

    @tool(
        "Search the project's memories (hybrid: full-text + embeddings, fused and weighted so corrections "
        "and preferences come first; superseded memories hidden unless asked). Returns cited snippets; "
        "open one with get_memory."
    )
    def search(
        query: Query,
        mode: Literal["hybrid", "text", "semantic"] = "hybrid",
        types: Types = None,
        status: Status | None = None,
        topics: Topics = None,
        files: Files = None,
        since: When = None,
        until: When = None,
        include_superseded: bool = False,
        limit: Limit = 10,
        offset: Offset = 0,
        explain: Annotated[bool, Field(description="Include the score breakdown.")] = False,
        include_cross_project: Annotated[
            bool, Field(description="Also search the related projects (related_to in config).")
        ] = False,
    ) -> dict[str, Any]:
        return _search(
            query,
            mode,
            limit,
            offset,
            explain=explain,
            include_cross_project=include_cross_project,
            types=types,
            status=status,
            topics=topics,
            files=files,
            since=since,
            until=until,
            include_superseded=include_superseded,
        )

    @tool(
        "Full-text (BM25) search for precedent: what was decided, excepted or corrected before, matching "
        "these exact words. Defaults to decisions, exceptions and corrections."
    )
    def search_precedent(
        query: Query,
        types: Types = None,
        topics: Topics = None,
        include_superseded: bool = False,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        return _search(
            query,
            "text",
            limit,
            offset,
            types=types or ["decision", "exception", "correction"],
            topics=topics,
            include_superseded=include_superseded,
        )

    @tool(
        "Semantic (embedding) search: memories close in meaning even without shared words. If embeddings "
        "are unavailable the result says so in `notices` and falls back to full-text."
    )
    def search_semantic(
        query: Query,
        types: Types = None,
        topics: Topics = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        return _search(query, "semantic", limit, offset, types=types, topics=topics)

    @tool(
        "Context for the work at hand: memories matching the task, memories about the current file (and "
        "its folder), then their neighbours up to max_hops along relations and shared topics/files. "
        "Without task or file it returns the session-start context. include_cross_project adds the related "
        "projects' memories (related_to in config), labelled with their project."
    )
    def query_context(
        task: Annotated[str | None, Field(max_length=2000, description="What you are about to do.")] = None,
        current_file: Annotated[str | None, Field(max_length=300, description="Repo-relative path.")] = None,
        max_hops: Annotated[int, Field(ge=0, le=3)] = 1,
        include_cross_project: bool = False,
        limit: Limit = 15,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return _query_context(
                svc,
                task=task,
                current_file=current_file,
                max_hops=max_hops,
                include_cross_project=include_cross_project,
                limit=limit,
            )

    @tool("Memories about one or more topics (any of them), newest first, with co-occurring topics.")
    def query_by_topic(
        topics: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=60)]], Field(min_length=1, max_length=20)
        ],
        types: Types = None,
        status: Status | None = None,
        include_superseded: bool = False,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return _query_by_topic(
                svc,
                topics,
                types=types,
                status=status,
                include_superseded=include_superseded,
                limit=limit,
                offset=offset,
            )

    @tool(
        "Timeline: memories created within window_days of one memory (`around`), or within since..until "
        "(default: the last 30 days). Superseded memories are included and marked."
    )
    def timeline(
        around: Annotated[str | None, Field(max_length=300, description="Memory id to centre on.")] = None,
        window_days: Annotated[int, Field(ge=1, le=3650)] = 7,
        since: When = None,
        until: When = None,
        types: Types = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return _timeline(
                svc,
                around=around,
                window_days=window_days,
                since=since,
                until=until,
                types=types,
                limit=limit,
                offset=offset,
            )

    @tool(
        "Decisions that need review. Rule: a current decision is stale if it has a revisit_trigger, or is "
        "still developmental developmental_days after creation, or a file in its `files:` has a git commit "
        "newer than the decision. Each result lists its reasons."
    )
    def query_stale_decisions(
        developmental_days: Annotated[int, Field(ge=0, le=3650)] = 30,
        check_files: Annotated[bool, Field(description="Compare `files:` with git history.")] = True,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return stale(
                svc,
                developmental_days=developmental_days,
                check_files=check_files,
                limit=limit,
                offset=offset,
            )

    @tool(
        "Failed approaches (don't repeat them): with a query, the best matches; without, the newest. "
        "Each result carries approach, outcome and lesson."
    )
    def query_failed_approaches(
        query: Annotated[str | None, Field(max_length=1000)] = None,
        topics: Topics = None,
        files: Files = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return failed_approaches(svc, query=query, topics=topics, files=files, limit=limit, offset=offset)

    @tool(
        "What is still open, newest first: questions and knowledge gaps without an answer, hypotheses "
        "still open (each with its prediction and evidence counts)."
    )
    def query_open_questions(
        topics: Topics = None,
        types: Annotated[
            list[Literal[OPEN_TYPES]] | None,  # type: ignore[valid-type]
            Field(max_length=3, description="Only these (default: all three)."),
        ] = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return open_questions(svc, topics=topics, limit=limit, offset=offset, types=types)

    @tool(
        "The full text and metadata of one memory (body capped at 20k characters), with incoming relations."
    )
    def get_memory(id: MemoryRef) -> dict[str, Any]:
        with be.service() as svc:
            return _get_memory(svc, id)
