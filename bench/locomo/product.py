"""LoCoMo ranked through the product: each turn is a memory file, indexed by ``ccmemory.app.sync.reindex``
into a ``SQLiteIndex`` (or ``Neo4jIndex``), queried by ``ccmemory.retrieval.search.search`` (the product's
query builder, bm25 column weights, vector search, fusion, priors and intent boosts).

What differs from a user's vault, and why:

* Document expansion is kept as LoCoMo needs it: a turn's memory has ``"Speaker: text"`` as its
  title (bm25 weight 4) and the image caption and the two neighbouring turns on each side (same
  session) as its body (weight 1). The old in-memory harness had text 1, speaker 1, caption 1 and
  neighbours 0.5 as separate columns; here the turn weighs 4 to its neighbours' 1, and bm25's
  length normalisation runs over the whole document, not per column.
* The vector stored for a turn is the embedding of ``"Speaker: text [shares a photo of …]"`` (the
  harness's best document, without the neighbours), stored through ``Index.store_vectors`` under
  the memory's text hash; the product would embed title + body (with the neighbours) instead.
* Every turn is a ``fact`` created at the same instant, so type, status and recency priors are
  equal for all candidates; ``NOW`` is fixed.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ccmemory.app.sync import reindex
from ccmemory.core.model import Memory
from ccmemory.core.vault import Vault
from ccmemory.index.base import Filters, Index, text_hash
from ccmemory.index.sqlite import SQLiteIndex
from ccmemory.retrieval.search import search
from ccmemory.text import fusion

NOW = datetime(2024, 1, 1, tzinfo=UTC)
CREATED = datetime(2023, 1, 1, tzinfo=UTC)
CONTEXT = 2
MODES = ("text", "semantic", "hybrid")


def _ulid(key: str, when: datetime) -> str:
    crock = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = (int(when.timestamp() * 1000) << 80) | int.from_bytes(
        hashlib.sha256(key.encode()).digest()[:10], "big"
    )
    return "".join(crock[(n >> (5 * i)) & 31] for i in reversed(range(26)))


def turn_memory(conv: Any, i: int) -> Memory:
    t = conv.turns[i]
    ctx = [
        conv.turns[j].text
        for j in range(i - CONTEXT, i + CONTEXT + 1)
        if j != i and 0 <= j < len(conv.turns) and conv.turns[j].session == t.session
    ]
    body = f"[shares a photo of {t.caption}]" if t.caption else ""
    if ctx:
        body += "\n\n" + "\n".join(ctx)
    created = CREATED + timedelta(seconds=i)
    return Memory(
        id=_ulid(f"{conv.sample_id}/{t.dia_id}", created),
        type="fact",
        title=f"{t.speaker}: {t.text}",
        created=created,
        body=body,
        author="locomo@example.com",
        source="import",
    )


class QueryCache:
    """Query vectors from the bench's vector cache, in the shape ``search`` wants."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache
        self.name = cache.embedder.name
        self.dim = cache.embedder.dim

    def embed(self, texts: list[str], kind: str = "document") -> Any:
        return self.cache.embed(texts, kind)


class IndexedConversation:
    def __init__(self, conv: Any, cache: Any, tmp: Path, doc_format: Any) -> None:
        self.conv = conv
        root = tmp / conv.sample_id
        root.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
        vault = Vault(root)
        (root / ".ccmemory" / "local").mkdir(parents=True)
        self.turn_of: dict[str, int] = {}
        for i in range(len(conv.turns)):
            m = turn_memory(conv, i)
            vault.write_new(m)
            self.turn_of[m.id] = i
        self.project = "locomo-" + uuid.uuid4().hex[:8]
        self.index: Index = SQLiteIndex(root / ".ccmemory" / "local" / "index.db")
        reindex(vault, self.index, self.project, main_branch="main")
        mems = self.index.query(Filters(self.project, include_superseded=True), limit=len(conv.turns) + 10)
        docs = []
        for m in mems:
            i = self.turn_of[m.id]
            prev = conv.turns[i - 1] if i > 0 and conv.turns[i - 1].session == conv.turns[i].session else None
            docs.append(doc_format(conv.turns[i], prev))
        vecs = cache.embed(docs, "document")
        self.index.store_vectors(
            cache.embedder.name,
            int(vecs.shape[1]),
            [(text_hash(m), v) for m, v in zip(mems, vecs, strict=True)],
        )
        self.emb = QueryCache(cache)

    def rank(self, question: str, mode: str, recipe: fusion.FusionRecipe | None, k: int = 10) -> list[int]:
        resp = search(
            self.index,
            question,
            Filters(self.project),
            limit=k,
            mode=mode,
            embedder=self.emb,
            now=NOW,
            recipe=recipe,
        )
        return [self.turn_of[h.memory.id] for h in resp.hits]

    def close(self) -> None:
        self.index.close()


def evaluate(
    indexed: Sequence[IndexedConversation],
    which: Iterable[int],
    ks: Sequence[int],
    recipe: fusion.FusionRecipe | None = None,
    modes: Sequence[str] = MODES,
) -> dict[str, np.ndarray]:
    out: dict[str, list[list[float]]] = {m: [] for m in modes}
    for ci in which:
        ic = indexed[ci]
        for q in ic.conv.questions:
            for mode in modes:
                r = ic.rank(q.text, mode, recipe, max(ks))
                out[mode].append([float(any(i in q.evidence for i in r[:k])) for k in ks])
    return {m: np.array(v).mean(axis=0) for m, v in out.items()}


def build(convs: Sequence[Any], cache: Any, doc_format: Any, tmp: Path) -> list[IndexedConversation]:
    return [IndexedConversation(c, cache, tmp, doc_format) for c in convs]


def tempdir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="locomo-product-")
