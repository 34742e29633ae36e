"""Rank session records for a query, hybrid: BM25F (ccmemory.text.bm25) over each record's summary
(title field), prompts (body field) and files changed, commands and errors (third field), fused
by reciprocal rank (ccmemory.text.fusion.rrf) with the semantic ranking
(ccmemory.features.sessions.semantic) when an embedder is available; text only otherwise, and the
caller is told. The query is analysed into terms (ccmemory.text.analyzer) and never becomes query
syntax of any engine.

`indexed` runs the same search over the local session index (ccmemory.index.sessions_sqlite: the
text half scored by the same BM25F from FTS5's candidates, the semantic half from the texts the
index holds), without reading the record files; `hybrid` and `rank` read records given in memory
(the fallback when the index cannot be used, and the timeline)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ccmemory.text import analyzer, bm25

log = logging.getLogger("ccmemory.features.sessions")
_EMBEDDER: Any = None


def _fields(rec: dict[str, Any]) -> tuple[str, str, str]:
    from ccmemory.index.sessions_sqlite import session_fields

    return session_fields(rec)


def hybrid(
    query: str, records: list[dict[str, Any]], root: Path, limit: int = 10, *, semantic: bool = True
) -> tuple[list[tuple[dict[str, Any], float]], str | None]:
    """(records with fused scores, best first; a notice when semantic search was off)."""
    text = rank(query, records, limit=max(limit, 50))
    if not semantic or not records or not query.strip():
        return text[:limit], None if semantic else "semantic search off: text (BM25) only"
    sem_ids, notice = _semantic(query, records, root, limit)
    if sem_ids is None:
        return text[:limit], notice
    from ccmemory.text.fusion import rrf

    by_id = {r["id"]: r for r in records}
    fused = rrf([[r["id"] for r, _ in text], sem_ids])
    return [(by_id[i], round(s, 6)) for i, s in fused[:limit]], None


def _semantic(
    query: str, records: list[dict[str, Any]], root: Path, limit: int
) -> tuple[list[str] | None, str | None]:
    """The semantic half: session ids best first, or (None, why it is off)."""
    try:
        from ccmemory.features.sessions import semantic as sem
        from ccmemory.retrieval.embed import get_embedder

        global _EMBEDDER
        if _EMBEDDER is None:  # one model load per process (the MCP server asks many times)
            _EMBEDDER = get_embedder()
        return sem.rank(query, records, _EMBEDDER, root)[: max(limit, 50)], None
    except Exception as exc:  # EmbedderUnavailable, a missing numpy, a broken model file
        log.info("session search: semantic half skipped: %s", exc)
        return None, f"semantic search off ({exc}): text (BM25) only"


def indexed(
    query: str, idx: Any, root: Path, limit: int = 10, *, since: str | None = None, semantic: bool = True
) -> tuple[list[tuple[str, float]], str | None]:
    """(session ids with fused scores, best first; a notice when semantic search was off), from
    the session index `idx` (a ccmemory.index.sessions_sqlite.SessionIndex, refreshed)."""
    text = idx.rank_sessions(query, since=since, limit=max(limit, 50))
    if not semantic or not query.strip():
        return text[:limit], None if semantic else "semantic search off: text (BM25) only"
    records = idx.semantic_texts(since=since)
    if not records:
        return text[:limit], None
    sem_ids, notice = _semantic(query, records, root, limit)
    if sem_ids is None:
        return text[:limit], notice
    from ccmemory.text.fusion import rrf

    fused = rrf([[i for i, _ in text], sem_ids])
    return [(i, round(s, 6)) for i, s in fused[:limit]], None


def rank(query: str, records: list[dict[str, Any]], limit: int = 10) -> list[tuple[dict[str, Any], float]]:
    """BM25F only (the text half)."""
    terms = analyzer.query_terms(query)
    if not terms or not records:
        return []
    by_id = {r["id"]: r for r in records}
    cands = [bm25.Candidate(r["id"], _fields(r)) for r in records]
    lengths = [bm25.field_lengths(c.fields) for c in cands]
    totals = (sum(x[0] for x in lengths), sum(x[1] for x in lengths), sum(x[2] for x in lengths))
    df = {t: sum(1 for c in cands if any(t in f.split() for f in c.fields)) for t in terms}
    stats = bm25.Stats(docs=len(cands), lengths=totals, df=df)
    return [(by_id[i], s) for i, s in bm25.rank(terms, cands, stats)[:limit]]
