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
