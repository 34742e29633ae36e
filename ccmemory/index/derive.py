"""What the index derives from one memory, computed once for both backends (pure functions).

A file record stores `payload(memory)` (JSON text); when that file wins its id, `derive` turns
the payload into a `DerivedMemory`: the served memory, its relations merged once, its topic and
file keys normalised once, the JSON columns, the text hash and the field text. SQLite and Neo4j
only decide how to store it. The rules used when reading (topic/file keys of a filter, how a
reference resolves to ids) live here too, so the backends cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ccmemory.core.model import (
    APPLIES_TO,
    Memory,
    fields_text,
    index_payload,
    merge_relations,
    normalise_topic,
)
from ccmemory.index.base import Edge, IndexedMemory, json_columns, text_hash

#: `resolve`: an id prefix needs at least this many characters, and gives at most this many ids.
PREFIX_MIN = 4
PREFIX_LIMIT = 20


def payload(memory: Memory) -> str:
    """The JSON text a file record keeps of its parsed memory (what `derive` starts from):
    `model.index_payload`, serialised once, here."""
    return json.dumps(index_payload(memory), default=str, ensure_ascii=False, sort_keys=True)


def topic_keys(topics: Iterable[str]) -> list[str]:
    """Distinct normalised topics in first-seen order; blank ones dropped."""
    return list(dict.fromkeys(normalise_topic(t) for t in topics if t.strip()))


def file_keys(files: Iterable[str]) -> list[str]:
    """Distinct stripped file paths in first-seen order; blank ones dropped."""
    return list(dict.fromkeys(f.strip() for f in files if f.strip()))


def supersession_cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The rings among SUPERSEDES edges ``(src, dst)``: groups of two or more memories each of
    which (transitively) supersedes the others (strongly connected components), members sorted,
    groups sorted. A self-edge alone is not a ring (see `superseded`)."""
    graph: dict[str, set[str]] = {}
    for src, dst in edges:
        if src != dst:
            graph.setdefault(src, set()).add(dst)
            graph.setdefault(dst, set())
    reverse: dict[str, set[str]] = {n: set() for n in graph}
    for src, dsts in graph.items():
        for dst in dsts:
            reverse[dst].add(src)
    order: list[str] = []  # Kosaraju: finishing order on the graph, then components on the reverse
    seen: set[str] = set()
    for start in sorted(graph):
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(sorted(graph[start])))]
        while stack:
            node, succ = stack[-1]
            nxt = next((n for n in succ if n not in seen), None)
            if nxt is None:
                stack.pop()
                order.append(node)
            else:
                seen.add(nxt)
                stack.append((nxt, iter(sorted(graph[nxt]))))
    groups: list[list[str]] = []
    done: set[str] = set()
    for start in reversed(order):
        if start in done:
            continue
        group, todo = [], [start]
        done.add(start)
        while todo:
            node = todo.pop()
            group.append(node)
            for prev in reverse[node] - done:
                done.add(prev)
                todo.append(prev)
        if len(group) > 1:
            groups.append(sorted(group))
    return sorted(groups)


def superseded(edges: Iterable[tuple[str, str]]) -> set[str]:
    """The ids the SUPERSEDES edges ``(src, dst)`` between memories make *superseded* (hidden from
    search and context): the target of every edge except a self-edge and an edge on a ring
    (`supersession_cycles`: its target also supersedes its source, directly or through others).
    A ring written by hand (A supersedes B, B supersedes A) would otherwise hide all its members
    with nothing left in force; `ccmemory check` reports rings and self-edges as errors. Both
    backends' queries implement exactly this rule (the conformance suite compares them)."""
    pairs = list(edges)
    ring = {m: i for i, group in enumerate(supersession_cycles(pairs)) for m in group}
    return {d for s, d in pairs if s != d and (s not in ring or ring.get(d) != ring[s])}


@dataclass(frozen=True)
class RefLookup:
    """How `Index.resolve` looks a reference up: an exact id or path, else an id prefix."""

    id: str
    path: str
    prefix: str | None  # None: too short to be a prefix


def ref_lookup(ref: str) -> RefLookup | None:
    ref = ref.strip()
    if not ref:
        return None
    return RefLookup(id=ref.upper(), path=ref, prefix=ref.upper() if len(ref) >= PREFIX_MIN else None)


@dataclass(frozen=True)
class DerivedMemory:
    """Everything an index stores for one served memory."""

    memory: IndexedMemory  # author: the frontmatter author only (see `author`)
    author_git: str | None  # the git adder, kept only when the frontmatter names no author
    topics: list[str]  # topic_keys
    files: list[str]  # file_keys
    edges: list[Edge]  # supersedes + relations merged once, sorted by (type, target)
    columns: dict[str, str]  # base.json_columns, in JSON_COLUMNS order
    text_hash: str
    fields_text: str
    applies_to: list[str]  # other projects named by `applies_to`, sorted

    @property
    def author(self) -> str | None:
        """The effective author: frontmatter, else git adder."""
        return self.memory.author or self.author_git


def derive(
    data: str | Mapping[str, Any],
    *,
    path: str,
    status: str,
    project: str,
    hash: str,
    adder: str | None = None,
) -> DerivedMemory:
    """The derived form of the memory in `data` (a `payload` text or its parsed dict)."""
    d = json.loads(data) if isinstance(data, str) else data
    im = IndexedMemory.from_payload(d, path=path, status=status, project=project, hash=hash)
    edges = [Edge(im.id, r.type, r.target, r.reason) for r in merge_relations(im.supersedes, im.relations)]
    return DerivedMemory(
        memory=im,
        author_git=None if im.author else adder,
        topics=topic_keys(im.topics),
        files=file_keys(im.files),
        edges=edges,
        columns=json_columns(im),
        text_hash=text_hash(im),
        fields_text=fields_text(im.type, im.fields),
        applies_to=sorted({str(t) for t in im.fields.get(APPLIES_TO) or [] if str(t) != project}),
    )
