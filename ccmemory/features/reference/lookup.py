"""Reading the reference index over a Service: section search (`query`) and the sections that fit a
task's budget (`context_sections`, used by the memories' context). Writing and caching are in
ccmemory.features.reference.ops."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ccmemory.core.errors import CcmemoryError
from ccmemory.features.reference.search import RefResponse, search_reference
from ccmemory.index.base import supports_reference

if TYPE_CHECKING:
    from ccmemory.app.service import Service


class ReferenceUnavailable(CcmemoryError):
    """The configured index backend has no reference support."""


def _index(svc: Service) -> Any:
    idx = svc.index
    if not supports_reference(idx):
        raise ReferenceUnavailable(f"the {idx.backend} index does not store reference chunks")
    return idx


def query(
    svc: Service, text: str, *, limit: int = 5, mode: str = "hybrid", status: str | None = None
) -> RefResponse:
    emb = svc.embedder() if mode in ("hybrid", "semantic") else None
    return search_reference(
        _index(svc),
        svc.project,
        text,
        limit=limit,
        mode=mode,
        embedder=emb,
        embedder_problem=getattr(svc, "_embedder_problem", None),
        status=status,
    )


def context_sections(svc: Service, task: str, budget_tokens: int, *, limit: int = 3) -> tuple[str, list[str]]:
    """The few most relevant sections for ``task`` that fit ``budget_tokens`` (text, chunk ids)."""
    from ccmemory.core.tokens import estimate_tokens

    if not task.strip() or budget_tokens <= 0:
        return "", []
    try:
        resp = query(svc, task, limit=limit, mode="text")
    except ReferenceUnavailable:
        return "", []
    parts: list[str] = []
    ids: list[str] = []
    used = 0
    for h in resp.hits:
        block = f"### {' > '.join(h.chunk.heading_path) or h.chunk.id}\n({h.chunk.uri})\n\n{h.chunk.text}\n"
        cost = estimate_tokens(block)
        if used + cost > budget_tokens:
            continue
        parts.append(block)
        ids.append(h.chunk.id)
        used += cost
    if not parts:
        return "", []
    return "## Reference sections\n\n" + "\n".join(parts), ids
