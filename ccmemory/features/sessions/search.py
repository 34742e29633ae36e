"""Rank session records for a query: BM25F (ccmemory.text.bm25) over each record's summary
(title field), prompts (body field) and files/commands (third field). The query is analysed into
terms (ccmemory.text.analyzer) and never becomes query syntax of any engine."""

from __future__ import annotations

from typing import Any

from ccmemory.text import analyzer, bm25


def _fields(rec: dict[str, Any]) -> tuple[str, str, str]:
    prompts = "\n".join(str(p) for p in rec.get("prompts") or [])
    extra = " ".join(
        [*(rec.get("files_changed") or []), *(str(c.get("cmd", "")) for c in rec.get("commands") or [])]
    )
    return analyzer.analyse(str(rec.get("summary") or "")), analyzer.analyse(prompts), analyzer.analyse(extra)


def rank(query: str, records: list[dict[str, Any]], limit: int = 10) -> list[tuple[dict[str, Any], float]]:
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
