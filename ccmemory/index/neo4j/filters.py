"""Rows to memories, and filters to a WHERE clause: shared by the readers and the vector store
(a module of its own so neither imports the other)."""

from __future__ import annotations

from typing import Any

from ccmemory.core.model import format_timestamp, normalise_topic
from ccmemory.index.base import Filters, IndexedMemory, file_filter


def memory_of(r: Any) -> IndexedMemory:
    return IndexedMemory.from_columns(r.data())


def still_memories(rows: list[Any]) -> list[Any]:
    """The rows whose node was still a memory when its properties were read. Reads are read
    committed: another client's transaction can strip a node matched as `:Memory` back to a bare
    `:Ident` (its memory deleted, or re-derived) before this query reads its properties, which
    then come back null; such a row is left out, as if read just after that commit."""
    return [r for r in rows if r["type"] is not None]


def reaches_back(m: str) -> str:
    """The superseding memory `sx` is not reached back from `m` along SUPERSEDES edges (the edge
    lies on no ring): the rule of `ccmemory.index.derive.superseded`, as the SQLite index has it."""
    return f"NOT EXISTS {{ ({m})-[:SUPERSEDES*]->(sx) }}"


def where_clause(f: Filters, var: str = "m") -> tuple[str, dict[str, Any]]:
    """A WHERE clause over the Memory node `var` (already matched by project) and its params.

    The text is the same for every filter combination and every parameter always has the
    same type (unused lists hold one impossible value, unused strings are empty, flags say
    which filters apply): Neo4j caches plans by query text and parameter types, so each
    query is planned once instead of once per filter combination.
    """
    m = var
    none = ["\u0000"]
    files = list(f.files or [])
    exact, prefixes = file_filter(files)
    params: dict[str, Any] = {
        "f_use_ids": f.ids is not None,
        "f_ids": list(f.ids or []) or none,
        "f_use_types": bool(f.types),
        "f_types": list(f.types or []) or none,
        "f_status": f.status or "",
        "f_use_viewer": f.viewer is not None,
        "f_viewer": f.viewer or "",
        "f_since": format_timestamp(f.since) if f.since else "",
        "f_until": format_timestamp(f.until) if f.until else "",
        "f_use_topics": bool(f.topics),
        "f_topics": [normalise_topic(t) for t in f.topics or []] or none,
        "f_use_files": bool(files),
        "f_exact": exact or none,
        "f_prefixes": prefixes or none,
        "f_sup": bool(f.include_superseded),
    }
    clause = (
        f"(NOT $f_use_ids OR {m}.id IN $f_ids)"
        f" AND (NOT $f_use_types OR {m}.type IN $f_types)"
        f" AND ($f_status = '' OR {m}.status = $f_status)"
        f" AND (NOT $f_use_viewer OR {m}.status = 'curated' OR {m}.author = $f_viewer)"
        f" AND ($f_since = '' OR {m}.created >= $f_since)"
        f" AND ($f_until = '' OR {m}.created <= $f_until)"
        f" AND (NOT $f_use_topics OR EXISTS {{ ({m})-[:ABOUT]->(ft:Topic) WHERE ft.name IN $f_topics }})"
        f" AND (NOT $f_use_files OR EXISTS {{ ({m})-[:TOUCHES]->(fx:File) WHERE fx.path IN $f_exact"
        " OR any(pre IN $f_prefixes WHERE pre <> '\u0000' AND fx.path STARTS WITH pre) })"
        f" AND ($f_sup OR NOT EXISTS {{ (sx:Memory)-[:SUPERSEDES]->({m}) WHERE sx.id <> {m}.id"
        " AND (NOT $f_use_viewer OR sx.status = 'curated' OR sx.author = $f_viewer)"
        f" AND {reaches_back(m)} }})"
    )
    return clause, params
