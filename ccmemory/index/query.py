"""User text -> full-text query, safely. Query text is never interpreted as search syntax.

Words are extracted with a unicode-aware pattern and each is emitted as a quoted string, so
quotes, `*`, `-`, `:`, `NEAR`, `AND`, parentheses and unbalanced quotes all search as plain words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ccmemory.text.fusion import query_terms

MAX_TERMS = 32


def words(text: str) -> list[str]:
    """Distinct query words in order, lowercased, stopwords dropped unless nothing else is left.

    The same tokenisation the LoCoMo benchmark measured (`ccmemory.text.fusion.query_terms`).
    """
    return query_terms(text)[:MAX_TERMS]


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression: every word quoted, OR-ed (bm25 rewards documents matching more)."""
    return " OR ".join(f'"{w}"' for w in words(text))


def fts_match_terms(terms: list[str]) -> str:
    """An FTS5 MATCH expression for already analysed terms (`ccmemory.text.analyzer.query_terms`):
    each quoted, OR-ed."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def lucene_match_terms(terms: list[str]) -> str:
    """A Lucene query for already analysed terms: each escaped, OR-ed."""
    return " OR ".join(_LUCENE_SPECIAL.sub(r"\\\1", t) for t in terms)


def fts_match_groups(groups: Sequence[Sequence[str]]) -> str:
    """An FTS5 MATCH expression for groups of analysed terms: the terms of a group quoted and
    AND-ed, the groups OR-ed (`ccmemory.text.morelike.like_groups`)."""
    return " OR ".join("(" + " AND ".join(fts_match_terms([t]) for t in g) + ")" for g in groups if g)


def lucene_match_groups(groups: Sequence[Sequence[str]]) -> str:
    """A Lucene query for groups of analysed terms: each term escaped, AND inside a group, the
    groups OR-ed."""
    return " OR ".join("(" + " AND ".join(lucene_match_terms([t]) for t in g) + ")" for g in groups if g)


_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


def lucene_query(text: str) -> str:
    """A Lucene query for Neo4j full-text indexes: the same words, each escaped, OR-ed."""
    terms = [_LUCENE_SPECIAL.sub(r"\\\1", w) for w in words(text)]
    # Lucene keywords (AND/OR/NOT/TO) are lowercased by words(), so they are plain terms.
    return " OR ".join(terms)
