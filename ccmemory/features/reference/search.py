"""Section retrieval over reference chunks: full-text and vector candidates fused with the
memories' recipe less its text-confidence scale (:data:`ccmemory.text.fusion.UNCALIBRATED`: chunks
are scored by FTS5's raw bm25); no memory priors (type, recency) apply."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ccmemory.index.base import IndexedChunk
from ccmemory.retrieval.basics import MIN_SIMILARITY, MODES, snippet
from ccmemory.text import fusion


@dataclass
class RefHit:
    chunk: IndexedChunk
    score: float
    parts: dict[str, float] = field(default_factory=dict)

    def to_dict(self, *, text: bool = True, explain: bool = False) -> dict[str, Any]:
        c = self.chunk
        out: dict[str, Any] = {
            "id": c.id,
            "citation": c.uri,
            "path": c.path,
            "heading_path": c.heading_path,
            "title": c.title,
            "source": c.source,
            "status": c.status,
            "score": round(self.score, 6),
            "snippet": snippet(c.text),
        }
        if text:
            out["text"] = c.text
        if explain:
            out["explain"] = {k: round(v, 6) for k, v in self.parts.items()}
        return out


@dataclass
class RefResponse:
    hits: list[RefHit]
    mode: str
    notices: list[str] = field(default_factory=list)


def embed_missing(index: Any, project: str, embedder: Any) -> str | None:
    """Embed chunks without a vector for this embedder; return a problem or None."""
    todo = index.ref_missing_vectors(project, embedder.name)
    for start in range(0, len(todo), 128):
        part = todo[start : start + 128]
        try:
            vectors = embedder.embed([t for _, t in part], kind="document")
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        index.store_vectors(
            embedder.name, int(embedder.dim), list(zip([h for h, _ in part], vectors, strict=True))
        )
    return None


def search_reference(
    index: Any,
    project: str,
    query: str,
    *,
    limit: int = 5,
    mode: str = "hybrid",
    embedder: Any = None,
    embedder_problem: str | None = None,
    status: str | None = None,
) -> RefResponse:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    recipe = fusion.UNCALIBRATED  # reference chunks' text scores are raw bm25
    notices: list[str] = []
    used = mode
    text_list: list[tuple[str, float]] = []
    vec_list: list[tuple[str, float]] = []
    if mode in ("text", "hybrid"):
        text_list = index.ref_text_search(query, project, recipe.candidates)
    if mode in ("semantic", "hybrid"):
        problem = embedder_problem or "no embedder configured"
        if embedder is not None:
            problem = embed_missing(index, project, embedder) or ""
        if not problem:
            try:
                qv = embedder.embed([query], kind="query")[0]
                floor = float(getattr(embedder, "min_similarity", MIN_SIMILARITY))
                vec_list = [
                    (cid, s)
                    for cid, s in index.ref_vector_search(embedder.name, qv, project, recipe.candidates)
                    if s >= floor
                ]
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
        if problem:
            notices.append(f"semantic search is off: {problem}; using full-text search only")
            if mode == "semantic":
                text_list = index.ref_text_search(query, project, recipe.candidates)
            used = "text"
    fused = recipe.fuse(dict(text_list), dict(vec_list))
    if not fused:
        return RefResponse([], used, notices)
    parts: dict[str, dict[str, float]] = {cid: {"fused": s} for cid, s in fused}
    for name, items in (("text", text_list), ("vector", vec_list)):
        for rank, (cid, s) in enumerate(items, 1):
            if cid in parts:
                parts[cid][f"{name}_rank"] = rank
                parts[cid][f"{name}_score"] = s
    ranked = sorted(fused, key=lambda kv: (-kv[1], kv[0]))
    wanted = [cid for cid, _ in ranked]
    chunks = {c.id: c for c in index.ref_chunks(project, wanted)}
    hits = [
        RefHit(chunks[cid], s, parts[cid])
        for cid, s in ranked
        if cid in chunks and (status is None or chunks[cid].status == status)
    ]
    return RefResponse(hits[:limit], used, notices)
