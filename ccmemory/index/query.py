"""User text -> full-text query, safely. Query text is never interpreted as search syntax.

Words are extracted with a unicode-aware pattern and each is emitted as a quoted string, so
quotes, `*`, `-`, `:`, `NEAR`, `AND`, parentheses and unbalanced quotes all search as plain words.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 32
# Very common English words: dropped from queries when other words remain (bm25 would give them
# little weight anyway, and they slow OR queries down on large indexes).
STOPWORDS = frozenset(
    (
        "a an and are as at be been but by can could did do does for from had has have how i if in into "
        "is it its me my not of on or our so than that the their them then there these they this to was "
        "we were what when where which who why will with would you your"
    ).split()
)


def words(text: str) -> list[str]:
    """Distinct query words in order, lowercased, stopwords dropped unless nothing else is left."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.casefold()):
        w = w.strip("_")
        if w:
            seen.setdefault(w, None)
    terms = list(seen)
    kept = [w for w in terms if w not in STOPWORDS]
    return (kept or terms)[:MAX_TERMS]


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression: every word quoted, OR-ed (bm25 rewards documents matching more)."""
    return " OR ".join(f'"{w}"' for w in words(text))


_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


def lucene_query(text: str) -> str:
    """A Lucene query for Neo4j full-text indexes: the same words, each escaped, OR-ed."""
    terms = [_LUCENE_SPECIAL.sub(r"\\\1", w) for w in words(text)]
    # Lucene keywords (AND/OR/NOT/TO) are lowercased by words(), so they are plain terms.
    return " OR ".join(terms)
