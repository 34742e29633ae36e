"""Hybrid retrieval: full-text and vector candidates fused (ccmemory.text.fusion.DEFAULT, the recipe
measured on LoCoMo and the dev set: min-max normalised text score (ccmemory.text.bm25, the same on
every backend) and cosine, weights 1.0 and 0.5, the text weight scaled down when the best text
match covers little of the query), then weighted by type, status, confidence, recency and query
intent, then expanded one hop along relations, topics and files.

One ranking serves `ccmemory search`, `context`, the MCP tools and the site's related lists.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol

from ccmemory.index.base import Filters, Index, IndexedMemory
from ccmemory.retrieval.basics import MIN_SIMILARITY, MODES, snippet
from ccmemory.retrieval.view import neighbours
from ccmemory.text import fusion, intent

# Corrections and preferences first (docs/architecture.md, "Retrieval").
TYPE_WEIGHT: dict[str, float] = {
    "correction": 1.30,
    "preference": 1.25,
    "decision": 1.10,
    "failed_approach": 1.10,
    "gotcha": 1.10,
    "fact": 1.05,
    "exception": 1.00,
    "insight": 1.00,
    "pattern": 1.00,
    "question": 0.95,
    "reference": 0.95,
    "concept": 0.95,
    "hypothesis": 0.95,  # not yet shown true: below what is known
    "knowledge_gap": 0.95,
}
STATUS_WEIGHT = {"curated": 1.0, "developmental": 0.9}
# The fused score is min-max normalised, so the weakest candidate would get 0 and lose its
# priors entirely; a small floor keeps type/status/recency meaningful at the tail.
FLOOR = 0.05
# Vector search always returns the nearest memories, however far: below this cosine a memory is
# probably unrelated (all-MiniLM-L6-v2 puts unrelated sentences at about 0.0-0.15). Such a hit is
# kept and marked weak (`Hit.weak`, "weak": true in JSON), never dropped: a floor that filters
# emptied semantic results whose right memory was the second nearest (issue 27).
RECENCY_HALF_LIFE_DAYS = 180.0
EXPAND_RELATION = 0.5  # share of the parent's score an expanded neighbour gets
EXPAND_SHARED = 0.3


class QueryEmbedder(Protocol):
    name: str

    def embed(self, texts: list[str], kind: str = "document") -> Any: ...


@dataclass
class Hit:
    memory: IndexedMemory
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    via: str | None = None  # "relation:DEPENDS_ON <id>" / "topic-or-file <id>" for expanded hits
    #: no full-text match and a cosine below the embedder's floor (MIN_SIMILARITY), or expanded
    #: from such a hit: shown, but marked as probably unrelated
    weak: bool = False

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        m = self.memory
        out: dict[str, Any] = {
            "id": m.id,
            "type": m.type,
            "title": m.title,
            "score": round(self.score, 6),
            "status": m.status,
            "path": m.path,
            "uri": m.uri,
            "created": m.created,
            "author": m.author,
            "topics": m.topics,
            "files": m.files,
            "snippet": snippet(m.body),
        }
        if self.via:
            out["via"] = self.via
        if self.weak:
            out["weak"] = True
        if explain:
            out["explain"] = {k: round(v, 6) for k, v in self.parts.items()}
        return out


@dataclass
class SearchResponse:
    hits: list[Hit]
    mode: str
    notices: list[str] = field(default_factory=list)
    vectors_pending: int = 0  # memories not embedded yet: semantic search is warming up
    #: the query's vector and the embedder's name when vectors ranked (prompt recall scores the
    #: vector again: ``ccmemory.features.recall.general``)
    query_vector: Any = None
    vector_model: str = ""


def recency_weight(created: str, now: datetime) -> float:
    try:
        when = datetime.fromisoformat(created)  # "…Z" parses on 3.11; 50x cheaper than strptime
    except ValueError:
        return 0.8
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    age_days = max((now - when).total_seconds() / 86400.0, 0.0)
    return 0.8 + 0.2 * math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def prior(m: IndexedMemory, now: datetime) -> dict[str, float]:
    """The query-independent weights of a memory."""
    conf = 1.0 if m.confidence is None else max(0.0, min(1.0, m.confidence))
    return {
        "type": TYPE_WEIGHT.get(m.type, 1.0),
        "status": STATUS_WEIGHT.get(m.status, 1.0),
        "confidence": 0.75 + 0.25 * conf,
        "recency": recency_weight(m.created, now),
    }


def search(
    index: Index,
    query: str,
    f: Filters,
    *,
    limit: int = 10,
    mode: str = "hybrid",
    embedder: QueryEmbedder | None = None,
    embedder_problem: str | None = None,
    expand: bool = True,
    now: datetime | None = None,
    recipe: fusion.FusionRecipe | None = None,
    groups: Sequence[Sequence[str]] | None = None,
) -> SearchResponse:
    """``groups``: the text half finds its candidates with these groups of analysed terms
    (`Index.text_search`), still scoring them on the query's terms."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    now = now or datetime.now(UTC)
    notices: list[str] = []
    used = mode
    recipe = recipe or fusion.DEFAULT
    if limit > recipe.candidates:  # never fewer than `limit` results when the vault has them
        recipe = replace(recipe, candidates=limit)
    halves = _halves(index, query, f, mode, embedder, embedder_problem, recipe.candidates, limit, groups)
    text_list, vec_list, floor, qv = halves.text, halves.vectors, halves.floor, halves.query_vector
    if halves.off_reason is not None:
        notices.append(f"semantic search is off: {halves.off_reason}; using full-text search only")
        used = "text"
    text_scores, vec_scores = dict(text_list), dict(vec_list)
    fused = dict(recipe.fuse(text_scores, vec_scores))
    model = getattr(embedder, "name", "") if qv is not None else ""
    if not fused:
        return SearchResponse([], used, notices, query_vector=qv, vector_model=model)
    scale = recipe.text_scale(text_scores, vec_scores)  # for `explain` (fuse applied it)
    parts_of = _fusion_parts(fused, scale, text_list, vec_list)
    asked = intent.wanted_types(query)
    bound = _prior_bound(asked)
    hits: dict[str, Hit] = {}
    order = sorted(parts_of, key=lambda mid: (-fused[mid], mid))
    done, batch = 0, max(2 * limit, 20)
    while done < len(order):
        chunk = order[done : done + batch]
        done, batch = done + len(chunk), batch * 2
        mems = {m.id: m for m in index.get(f.project, chunk)}
        for mid in chunk:
            m = mems.get(mid)
            if m is None:
                continue
            parts = parts_of[mid]
            pr = prior(m, now)
            pr["intent"] = intent.boost(asked, m.type)
            score = (parts["fused"] + FLOOR) * pr["type"] * pr["status"] * pr["confidence"] * pr["recency"]
            score *= pr["intent"]
            weak = mid not in text_scores and vec_scores.get(mid, 0.0) < floor
            hits[mid] = Hit(m, score, {**parts, **pr, "final": score}, weak=weak)
        if done < len(order) and len(hits) >= limit:
            kth = sorted((h.score for h in hits.values()), reverse=True)[limit - 1]
            if (fused[order[done]] + FLOOR) * bound < kth:
                break  # no candidate left can reach the top `limit`: their memories are not read
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.memory.id))
    if expand and ranked:
        ranked = _expand(index, f, ranked, limit, now, skip=set(order[done:]))
    return SearchResponse(ranked[:limit], used, notices, query_vector=qv, vector_model=model)


@dataclass
class _Halves:
    text: list[tuple[str, float]]
    vectors: list[tuple[str, float]]
    floor: float
    query_vector: Any
    off_reason: str | None  # why semantic search is off, when it was asked for and is


def _halves(
    index: Index,
    query: str,
    f: Filters,
    mode: str,
    embedder: QueryEmbedder | None,
    embedder_problem: str | None,
    candidates: int,
    limit: int,
    groups: Sequence[Sequence[str]] | None,
) -> _Halves:
    """The full-text and vector candidates of ``mode`` (full text alone when the vectors fail)."""
    text_list: list[tuple[str, float]] = []
    vec_list: list[tuple[str, float]] = []
    floor = MIN_SIMILARITY
    aside: Callable[[], list[tuple[str, float]]] | None = None
    qv: Any = None
    off: str | None = None
    if mode == "hybrid" and embedder is not None and index.concurrent_reads:
        # the two halves wait on the server: the text half runs while this thread embeds the
        # query and waits on the vector half (the same calls and answers, in less time)
        from ccmemory.core.background import in_background

        aside = in_background(
            partial(index.text_search, groups=groups), query, f, candidates, name="ccmemory-text-half"
        )
    elif mode in ("text", "hybrid"):
        text_list = index.text_search(query, f, candidates, groups=groups)
    if mode in ("semantic", "hybrid"):
        vectors, reason, floor, qv = _vector_candidates(
            index, query, f, embedder, embedder_problem, candidates, limit
        )
        if aside is not None:
            text_list = aside()
        if vectors is None:
            off = reason
            if mode == "semantic":
                text_list = index.text_search(query, f, candidates, groups=groups)
        else:
            vec_list = vectors
    return _Halves(text_list, vec_list, floor, qv, off)


def _prior_bound(asked: set[str]) -> float:
    """An upper bound of the product of a memory's priors (type, status, confidence and recency
    are at most their largest weight, 1 and 1; intent at most its boost when the query asks for
    types), with a margin for float rounding: a candidate whose (fused + FLOOR) times this is
    below the limit-th score found cannot enter the results."""
    top_type = max(1.0, *TYPE_WEIGHT.values())
    top_status = max(1.0, *STATUS_WEIGHT.values())
    return top_type * top_status * (intent.BOOST if asked else 1.0) * (1 + 1e-9)


def _vector_candidates(
    index: Index,
    query: str,
    f: Filters,
    embedder: QueryEmbedder | None,
    embedder_problem: str | None,
    candidates: int,
    limit: int,
) -> tuple[list[tuple[str, float]] | None, str, float, Any]:
    """(the vector candidates or None when semantic search is off, why it is off, the embedder's
    similarity floor, the query's vector or None)."""
    floor = MIN_SIMILARITY
    if embedder is None:
        return None, embedder_problem or "no embedder configured", floor, None
    try:
        qv = embedder.embed([query], kind="query")[0]
        floor = float(getattr(embedder, "min_similarity", MIN_SIMILARITY))
        nearest = index.vector_search(embedder.name, qv, f, candidates)
        # the fusion takes the memories above the floor, and at least the `limit`
        # nearest however far (marked weak below)
        kept = [(mid, s) for i, (mid, s) in enumerate(nearest) if i < limit or s >= floor]
        return kept, "", floor, qv
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}", floor, None


def _fusion_parts(
    fused: dict[str, float],
    scale: float,
    text_list: list[tuple[str, float]],
    vec_list: list[tuple[str, float]],
) -> dict[str, dict[str, float]]:
    """Per candidate, the score parts `explain` shows: fused score, text scale, ranks and scores."""
    parts_of: dict[str, dict[str, float]] = {mid: {"fused": score} for mid, score in fused.items()}
    if scale < 1.0:
        for parts in parts_of.values():
            parts["text_scale"] = scale
    for name, items in (("text", text_list), ("vector", vec_list)):
        for rank, (mid, score) in enumerate(items, 1):
            parts_of[mid][f"{name}_rank"] = rank
            parts_of[mid][f"{name}_score"] = score
    return parts_of


def _expand(
    index: Index, f: Filters, ranked: list[Hit], limit: int, now: datetime, skip: set[str]
) -> list[Hit]:
    """Add one-hop neighbours of the top hits with a share of their parent's score. `skip`: the
    candidates left unscored because they rank below the top `limit`: not offered either."""
    top = ranked[:limit]
    top_ids = [h.memory.id for h in top]
    by_id = {h.memory.id: h for h in ranked}
    links, allowed = neighbours(index, top_ids, f, shared_limit=limit * 2, known=by_id.keys() | skip)
    offers: dict[str, tuple[float, str, bool]] = {}
    for link in links:
        if link.other in by_id or link.other in skip:
            continue
        if link.edge is not None:
            s = by_id[link.here].score * EXPAND_RELATION
            via = f"relation:{link.edge.type} {link.here}"
        else:
            s = by_id[link.here].score * EXPAND_SHARED * min(1.0, 0.5 + 0.25 * link.shared)
            via = f"shared topic/file with {link.here}"
        if s > offers.get(link.other, (0.0, "", False))[0]:
            offers[link.other] = (s, via, by_id[link.here].weak)
    allowed = {mid: m for mid, m in allowed.items() if mid in offers}
    for mid, m in allowed.items():
        base, via, weak = offers[mid]
        pr = prior(m, now)
        score = base * pr["type"] * pr["status"] * pr["confidence"] * pr["recency"]
        by_id[mid] = Hit(m, score, {"expanded_from": base, **pr, "final": score}, via, weak)
    return sorted(by_id.values(), key=lambda h: (-h.score, h.memory.id))
