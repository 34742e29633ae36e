"""The full-text score, computed in Python over the candidates a backend found (issue #13).

Backends only *find* candidates (memories holding any analysed query term, see
`ccmemory.text.analyzer`) and report collection statistics; this module scores them, so every backend
ranks identically. Pure functions, no I/O.

Score: BM25F (Robertson & Zaragoza) over the three fields title / body / type fields: per query
term, the field frequencies are length-normalised per field, weighted (FIELD_WEIGHTS) and summed,
then saturated once with K1 and multiplied by the term's idf. The score is then *calibrated*:
divided by the summed idf of the query's terms, so it lies in [0, 1) and reads "the share of the
query's (idf-weighted) vocabulary this memory covers". A memory that only matches one common
word gets a small score, not 1.0 (what min-max normalisation of raw bm25 gave it). A query term
that no memory holds counts too (UNKNOWN_IDF_SHARE of the idf of document frequency 0): no memory
covers it, so it lowers every score of the query, and with it the confidence the fusion gives the
text list (ccmemory.fusion.FusionRecipe.text_confidence): a question whose one rare word is not
in the vault is not answered with confidence by the memories that share its common word.
Ranking by the calibrated score is the same as ranking by raw BM25F.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75
#: title, body, type fields (the weights FTS5's bm25 had before: 4 / 1 / 2)
FIELD_WEIGHTS = (4.0, 1.0, 2.0)
#: at most this many candidates are scored per query, taken in the backend's own relevance order
#: (FTS5 bm25 / Lucene, over the same terms with the same field weights); the search layer fuses
#: the top 100 of each list anyway (fusion.FusionRecipe.candidates). When more memories match,
#: the two backends may pick different sets and, rarely, rank differently below the top; the
#: statistics (Stats) are the project's either way.
CANDIDATE_CAP = 100
#: scores are rounded so float summation order can never split a tie differently on two backends
DIGITS = 9
#: a query term no memory holds counts in the calibration with this share of the idf of a term of
#: document frequency 0 (issue 27; 0.5 chosen on the tuning data, bench/RESULTS-retrieval.md)
UNKNOWN_IDF_SHARE = 0.5


@dataclass(frozen=True)
class Candidate:
    id: str
    fields: tuple[str, str, str]  # analysed title, body, type fields (space-separated terms)


@dataclass(frozen=True)
class Stats:
    """Collection statistics of the project (every memory in it, whatever the query's filters):
    how many memories, their total analysed field lengths, and per query term how many hold it."""

    docs: int
    lengths: tuple[int, int, int]
    df: Mapping[str, int]


def field_lengths(fields: Sequence[str]) -> tuple[int, int, int]:
    a, b, c = (len(f.split()) for f in fields)
    return a, b, c


def rank(terms: Sequence[str], candidates: Sequence[Candidate], stats: Stats) -> list[tuple[str, float]]:
    """Candidates holding at least one term, best first (ties by id), with calibrated scores."""
    terms = list(dict.fromkeys(terms))
    if not terms or not candidates:
        return []
    n = max(stats.docs, 1)
    idf: dict[str, float] = {}
    unknown = 0
    for t in terms:
        df = min(stats.df.get(t, 0), n)
        if df:
            idf[t] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        else:
            unknown += 1
    if not idf:
        return []
    total = sum(idf.values()) + unknown * UNKNOWN_IDF_SHARE * math.log(1.0 + (n + 0.5) / 0.5)
    avg = [max(length / n, 1.0) for length in stats.lengths]
    known = list(idf)
    out: list[tuple[str, float]] = []
    for cand in candidates:
        weighted: dict[str, float] = {}
        for fi, text in enumerate(cand.fields):
            present = [t for t in known if t in text]  # substring: cheap, may over-select
            if not present:
                continue
            toks = text.split()
            norm = FIELD_WEIGHTS[fi] / (1.0 - B + B * len(toks) / avg[fi])
            for t in present:
                c = toks.count(t)
                if c:
                    weighted[t] = weighted.get(t, 0.0) + c * norm
        if weighted:
            s = sum(idf[t] * weighted[t] / (K1 + weighted[t]) for t in known if t in weighted)
            out.append((cand.id, round(s / total, DIGITS)))
    out.sort(key=lambda kv: (-kv[1], kv[0]))
    return out
