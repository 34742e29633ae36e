"""Which memories to look at for "more like this" (the site's related lists, issue 29).

A memory's related list is the product's text search for its title and topics. Searched as it is,
that query matches every memory holding any of its words, and the full-text engine reads each
word's whole list of memories and scores every match before the best are kept: at 100k memories,
where each common word is in thousands of them, that was 56 ms a memory (1.5 hours for a site).
As Lucene's MoreLikeThis does, the memories are *found* with the query's distinctive terms only;
unlike it, they are still *scored* on the whole query, so the ranking among them is the search's.

`like_groups` picks groups of analysed terms (AND inside a group, groups OR-ed) within a cost
budget, whatever the vault's size: each group must be selective (at most MAX_MATCHES estimated
matches: a rare term alone, else two or three commoner terms together, which is what a related
memory shares), smaller groups first, cheapest first, skipping a group that holds one already
taken. A group's cost is what the engine does for it: read the list of every term in it (READ_US
a memory) and score its matches (SCORE_US each; both measured on SQLite FTS5 at 10k and 100k).
Its matches are estimated by its document frequency for one term, by the independence product for
several (correlated words match more than that, never more than the rarest of them). A memory
whose words are all common in a very large vault may get no group, hence no list: the price of a
bounded cost. Pure function, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations

#: microseconds the full-text engine spends per memory in a term's list it reads (SQLite FTS5)
READ_US = 0.05
#: microseconds it spends scoring one match
SCORE_US = 1.2
#: the cost the groups of one query may add up to, in microseconds
BUDGET_US = 3000.0
#: a group expected to match more memories than this is not specific enough to be worth scoring
MAX_MATCHES = 150.0
#: at most this many groups in one query (its match expression stays short)
MAX_GROUPS = 16
#: terms considered for pairs and triples, rarest first
MAX_COMBINED = 8
#: largest group: three words shared is already a strong tie
MAX_SIZE = 3


def estimate(group: Sequence[str], df: Mapping[str, int], docs: int) -> float:
    """Expected memories holding every term of ``group`` (terms taken as independent)."""
    n = max(docs, 1)
    return n * math.prod(min(df.get(t, 0), n) / n for t in group)


def cost(group: Sequence[str], df: Mapping[str, int], docs: int) -> float:
    """Estimated microseconds the engine spends finding and scoring the matches of ``group``."""
    return READ_US * sum(df.get(t, 0) for t in group) + SCORE_US * estimate(group, df, docs)


def like_groups(
    terms: Sequence[str], df: Mapping[str, int], docs: int, budget_us: float = BUDGET_US
) -> list[tuple[str, ...]]:
    """Groups of ``terms`` (analysed, ``df`` their document frequencies among ``docs`` memories)
    to find similar memories with, within ``budget_us``; empty when none fits.

    A term held by at most one memory (the memory itself) finds nothing and is left out."""
    useful = sorted((t for t in dict.fromkeys(terms) if df.get(t, 0) > 1), key=lambda t: (df[t], t))
    taken: list[tuple[str, ...]] = []
    spent = 0.0
    for size in range(1, MAX_SIZE + 1):
        pool = useful if size == 1 else useful[:MAX_COMBINED]
        costed = sorted(
            (cost(g, df, docs), g) for g in combinations(pool, size) if estimate(g, df, docs) <= MAX_MATCHES
        )
        for c, group in costed:
            if len(taken) >= MAX_GROUPS or spent + c > budget_us:
                break
            if any(set(t) <= set(group) for t in taken):
                continue  # its matches are already found by a smaller group
            taken.append(group)
            spent += c
    return taken
