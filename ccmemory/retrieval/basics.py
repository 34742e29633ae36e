"""Search modes, the semantic floor and result snippets: shared by memory search
(ccmemory.retrieval.search) and reference search (ccmemory.features.reference.search)."""

from __future__ import annotations

MODES = ("hybrid", "text", "semantic")
MIN_SIMILARITY = 0.25


def snippet(body: str, width: int = 160) -> str:
    text = " ".join(body.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
