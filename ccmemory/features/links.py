"""Suggested connections across a whole project: the strongest links that are missing.

`suggest_connections` without an id (MCP). Rule, deterministic and explainable:

- every current (not superseded) memory's content words: title, body, prose fields and topics,
  words of 3+ letters without stop words (`lifecycle.review.words`);
- a word shared by more than :data:`MAX_DF` memories connects nothing in particular and is
  ignored; the others weigh idf = ln(1 + N / df);
- a pair's score is the idf weight of the words they share over the geometric mean of their own
  idf weights (a cosine over binary idf vectors, 0..1), plus :data:`TOPIC_BONUS` per shared
  topic and :data:`FILE_BONUS` per shared `files:` entry;
- pairs already linked in either direction are left out; the rest are ranked by score, then
  by ids; the suggested relation goes from the newer memory (where relations are written) to
  the older, its type chosen like the per-memory suggestions.

Pairs come from an inverted index (only memories sharing a kept word are compared), so the
cost follows the number of shared rare words, not N².
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ccmemory.core.model import normalise_topic, prose_values
from ccmemory.index.base import IndexedMemory

if TYPE_CHECKING:
    from ccmemory.app.service import Service

MAX_DF = 50
TOPIC_BONUS = 0.15
FILE_BONUS = 0.15
MIN_SCORE = 0.2
RULE = (
    "content words (title, body, prose fields, topics; 3+ letters, no stop words, words in more than "
    f"{MAX_DF} memories ignored) weighted by idf, cosine over the shared words, +{TOPIC_BONUS} per "
    f"shared topic and +{FILE_BONUS} per shared file; pairs already linked either way are left out; "
    f"score >= {MIN_SCORE}"
)


def _words(m: IndexedMemory) -> set[str]:
    from ccmemory.features.lifecycle.review import words

    parts = [m.title, m.body, *(" ".join(v) for v in prose_values(m.type, m.fields)), *m.topics]
    return words("\n".join(parts))


def suggested_relation(newer: IndexedMemory, older: IndexedMemory) -> str:
    """The relation type to propose from `newer` to `older` (same rule as the per-memory mode)."""
    if {newer.type, older.type} == {"exception", "decision"}:
        return "CITES"
    if newer.type == older.type == "decision" or older.type in ("correction", "preference", "fact"):
        return "DEPENDS_ON"
    return "RELATES_TO"


def missing_links(svc: Service, limit: int = 10) -> list[dict[str, Any]]:
    """The `limit` strongest missing links of the project, strongest first."""
    from ccmemory.features.analysis import all_edges, all_memories

    mems = all_memories(svc, include_superseded=False)
    if len(mems) < 2:
        return []
    by_id = {m.id: m for m in mems}
    linked = {frozenset((e.src, e.dst)) for e in all_edges(svc, by_id)}
    words = {m.id: _words(m) for m in mems}
    weight, idf = _weights(words, len(mems))
    own = {mid: sum(weight.get(w, 0.0) for w in ws) for mid, ws in words.items()}
    topics = {m.id: {normalise_topic(t) for t in m.topics} for m in mems}
    scored: list[tuple[float, str, str]] = []
    for (a, b), overlap in _shared(words, idf).items():
        if frozenset((a, b)) in linked:
            continue
        denom = math.sqrt(own[a] * own[b])
        score = overlap / denom if denom else 0.0
        score += TOPIC_BONUS * len(topics[a] & topics[b])
        score += FILE_BONUS * len(set(by_id[a].files) & set(by_id[b].files))
        if score >= MIN_SCORE:
            scored.append((score, a, b))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [
        _suggestion(by_id[a], by_id[b], score, words[a] & words[b] & idf.keys(), idf, topics)
        for score, a, b in scored[:limit]
    ]


def _weights(words: dict[str, set[str]], n: int) -> tuple[dict[str, float], dict[str, float]]:
    """(idf of every word in at most MAX_DF memories, the same for those in two or more: the only
    ones a pair can share)."""
    df: dict[str, int] = defaultdict(int)
    for ws in words.values():
        for w in ws:
            df[w] += 1
    weight = {w: math.log(1 + n / c) for w, c in df.items() if c <= MAX_DF}
    idf = {w: v for w, v in weight.items() if df[w] > 1}  # only these can be shared
    return weight, idf


def _shared(words: dict[str, set[str]], idf: dict[str, float]) -> dict[tuple[str, str], float]:
    """(id a, id b) with a < b -> the idf weight of the words they share, through postings lists."""
    postings: dict[str, list[str]] = defaultdict(list)
    for mid in sorted(words):
        for w in words[mid]:
            if w in idf:
                postings[w].append(mid)
    shared: dict[tuple[str, str], float] = defaultdict(float)
    for w, ids in postings.items():
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                shared[(a, b)] += idf[w]
    return shared


def _suggestion(
    ma: IndexedMemory,
    mb: IndexedMemory,
    score: float,
    common_words: set[str],
    idf: dict[str, float],
    topics: dict[str, set[str]],
) -> dict[str, Any]:
    """One missing link, from the newer memory to the older, with what the two share."""
    newer, older = (ma, mb) if (ma.created, ma.id) >= (mb.created, mb.id) else (mb, ma)
    common = sorted(common_words, key=lambda w: (-idf[w], w))
    return {
        "from": newer,
        "to": older,
        "score": score,
        "shared_words": common[:8],
        "shared_topics": sorted(topics[ma.id] & topics[mb.id]),
        "shared_files": sorted(set(ma.files) & set(mb.files)),
        "suggested_relation": suggested_relation(newer, older),
    }
