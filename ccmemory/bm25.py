"""The full-text score, computed in Python over the candidates a backend found (issue #13).

Backends only *find* candidates (memories holding any analysed query term, see
`ccmemory.analyzer`) and report collection statistics; this module scores them, so every backend
ranks identically. Pure functions, no I/O.

Score: BM25F (Robertson & Zaragoza) over the three fields title / body / type fields: per query
term, the field frequencies are length-normalised per field, weighted (FIELD_WEIGHTS) and summed,
then saturated once with K1 and multiplied by the term's idf. The score is then *calibrated*:
divided by the summed idf of the query terms that occur in the collection, so it lies in [0, 1)
and reads "the share of the query's (idf-weighted) vocabulary this memory covers". A memory
that only matches one common word gets a small score, not 1.0 (what min-max normalisation of raw
bm25 gave it). Ranking by the calibrated score is the same as ranking by raw BM25F.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75
#: title, body, type fields (the weights FTS5's bm25 had before: 4 / 1 / 2)
FIELD_WEIGHTS = (4.0, 1.0, 2.0)
#: at most this many candidates are scored per query (a backend returns them in its own relevance
#: order). Below it, every backend scores the same set and ranks identically; above it (a query
#: whose terms occur in more memories than this, in a large vault) the document frequencies are
#: counted over the capped set and the tail may differ between backends.
CANDIDATE_CAP = 1000
#: scores are rounded so float summation order can never split a tie differently on two backends
DIGITS = 9


@dataclass(frozen=True)
class Candidate:
    id: str
    fields: tuple[str, str, str]  # analysed title, body, type fields (space-separated terms)


@dataclass(frozen=True)
class Stats:
    """Of the memories the filters allow: how many, and their total analysed field lengths."""

    docs: int
    lengths: tuple[int, int, int]


def field_lengths(fields: Sequence[str]) -> tuple[int, int, int]:
    a, b, c = (len(f.split()) for f in fields)
    return a, b, c


def rank(terms: Sequence[str], candidates: Sequence[Candidate], stats: Stats) -> list[tuple[str, float]]:
    """Candidates holding at least one term, best first (ties by id), with calibrated scores.

    Document frequencies are counted over ``candidates``, which must therefore be every memory
    (under the filters) that holds any of ``terms``; the backends' candidate cap bounds this."""
    if not terms or not candidates:
        return []
    wanted = set(terms)
    n = max(stats.docs, len(candidates))
    avg = [max(total / n, 1.0) for total in stats.lengths]
    per_doc: list[tuple[str, dict[str, float]]] = []
    df: Counter[str] = Counter()
    for cand in candidates:
        weighted: dict[str, float] = {}
        for fi, text in enumerate(cand.fields):
            toks = text.split()
            counts = Counter(t for t in toks if t in wanted)
            if not counts:
                continue
            norm = FIELD_WEIGHTS[fi] / (1.0 - B + B * len(toks) / avg[fi])
            for t, c in counts.items():
                weighted[t] = weighted.get(t, 0.0) + c * norm
        if weighted:
            per_doc.append((cand.id, weighted))
            df.update(weighted.keys())
    idf = {t: math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in dict.fromkeys(terms) if df[t]}
    total = sum(idf.values())
    if total <= 0:
        return []
    out: list[tuple[str, float]] = []
    for mid, weighted in per_doc:
        s = sum(idf[t] * w / (K1 + w) for t, w in sorted(weighted.items()))
        out.append((mid, round(s / total, DIGITS)))
    out.sort(key=lambda kv: (-kv[1], kv[0]))
    return out
