"""Rank fusion for hybrid retrieval: pure functions, no I/O, no heavy imports.

The search layer runs a full-text query (bm25) and a vector query, then calls these to merge
the two candidate lists. Recipes measured on LoCoMo are in ``bench/locomo/RESULTS.md``;
:data:`DEFAULT` is the one that won there.

Conventions: a *ranking* is a sequence of keys, best first; a *score map* is ``{key: score}``
with higher = better (negate bm25 first: SQLite's ``bm25()`` is lower = better).
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

K = TypeVar("K", bound=Hashable)

Normalisation = Literal["minmax", "max", "zscore", "rank", "raw"]

#: English function words dropped from full-text queries (they match everything and drown
#: bm25 in short documents). Kept small and boring on purpose.
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don didn doesn isn wasn weren won wouldn ll ve re d m
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def query_terms(text: str, *, stopwords: bool = True, min_len: int = 1) -> list[str]:
    """Lower-cased words of ``text``, without stopwords (unless all of them are stopwords)."""
    words = [w.lower() for w in _WORD.findall(text)]
    words = [w for w in words if len(w) >= min_len]
    if stopwords:
        kept = [w for w in words if w not in STOPWORDS]
        if kept:
            words = kept
    return list(dict.fromkeys(words))


def fts5_match(text: str, *, stopwords: bool = True) -> str:
    """An FTS5 MATCH expression: every term quoted (no FTS syntax from user text), joined by OR.

    Returns ``""`` when the text has no words; callers should skip the query then.
    """
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in query_terms(text, stopwords=stopwords))


def rrf(
    rankings: Sequence[Sequence[K]],
    *,
    k: float = 60.0,
    weights: Sequence[float] | None = None,
) -> list[tuple[K, float]]:
    """Weighted reciprocal-rank fusion: ``score(d) = sum_i w_i / (k + rank_i(d))``, ranks from 1.

    A key missing from a ranking contributes nothing for it. Ties keep first-seen order.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[K, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])


def normalise(scores: Mapping[K, float], method: Normalisation = "minmax") -> dict[K, float]:
    """Map scores (higher = better) onto a comparable scale.

    ``minmax``: (s - min) / (max - min) into [0, 1]; ``max``: s / max; ``zscore``: (s - mean) /
    std; ``rank``: 1 for the best down to 1/n; ``raw``: unchanged (for scores already on an
    absolute scale, such as cosine). A constant list maps to 1.0 everywhere.
    """
    if not scores:
        return {}
    if method == "raw":
        return dict(scores)
    values = list(scores.values())
    if method == "rank":
        order = sorted(scores, key=lambda key: -scores[key])
        n = len(order)
        return {key: (n - i) / n for i, key in enumerate(order)}
    hi, lo = max(values), min(values)
    if method == "minmax":
        span = hi - lo
        return {key: (s - lo) / span if span > 0 else 1.0 for key, s in scores.items()}
    if method == "max":
        return {key: s / hi if hi > 0 else 1.0 for key, s in scores.items()}
    if method == "zscore":
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return {key: (s - mean) / std if std > 0 else 1.0 for key, s in scores.items()}
    raise ValueError(f"unknown normalisation {method!r}")


def score_fusion(
    score_maps: Sequence[Mapping[K, float]],
    *,
    weights: Sequence[float] | None = None,
    method: Normalisation | Sequence[Normalisation] = "minmax",
    missing: float = 0.0,
) -> list[tuple[K, float]]:
    """Convex combination of normalised scores; a key absent from a list gets ``missing`` there.

    ``method`` is one normalisation for all maps or one per map.
    """
    if weights is None:
        weights = [1.0] * len(score_maps)
    if len(weights) != len(score_maps):
        raise ValueError("one weight per score map")
    methods = [method] * len(score_maps) if isinstance(method, str) else list(method)
    if len(methods) != len(score_maps):
        raise ValueError("one normalisation per score map")
    normed = [normalise(m, how) for m, how in zip(score_maps, methods, strict=True)]
    keys: dict[K, None] = {}
    for m in score_maps:
        keys.update(dict.fromkeys(m))
    fused = {key: sum(w * n.get(key, missing) for w, n in zip(weights, normed, strict=True)) for key in keys}
    return sorted(fused.items(), key=lambda kv: -kv[1])


def ranking(scores: Mapping[K, float] | Iterable[tuple[K, float]]) -> list[K]:
    """Keys ordered best first."""
    items = scores.items() if isinstance(scores, Mapping) else scores
    return [key for key, _ in sorted(items, key=lambda kv: -kv[1])]


@dataclass(frozen=True)
class FusionRecipe:
    """How the search layer should merge full-text and vector candidates."""

    method: Literal["rrf", "score"] = "rrf"
    rrf_k: float = 60.0
    text_weight: float = 1.0
    vector_weight: float = 1.0
    normalisation: Normalisation = "minmax"
    candidates: int = 100  # taken from each list before fusing
    #: the vector list's own normalisation (None: the same as ``normalisation``); ``raw`` keeps
    #: cosine on its absolute scale, so a weak best match stays weak
    vector_normalisation: Normalisation | None = None
    #: for *calibrated* text scores only (ccmemory.text.bm25: the share of the query's idf a memory
    #: covers, in [0, 1)): the text list's weight is scaled by min(1, best / text_confidence), so
    #: a list whose best match covers little of the query (one common word of a paraphrase) no
    #: longer outweighs the vector list once min-max lifts that match to 1.0. None: off.
    text_confidence: float | None = None

    def text_scale(self, text_scores: Mapping[K, float], vector_scores: Mapping[K, float]) -> float:
        """How much the text list counts next to the vector list (1.0 unless
        :attr:`text_confidence` is set and both lists have candidates: one list alone keeps
        its ranking and its scores)."""
        if self.text_confidence is None or not text_scores or not vector_scores:
            return 1.0
        return min(1.0, max(0.0, max(text_scores.values())) / self.text_confidence)

    def fuse(self, text_scores: Mapping[K, float], vector_scores: Mapping[K, float]) -> list[tuple[K, float]]:
        """Fuse two score maps (higher = better; negate bm25 first) into one ranking."""
        text = dict(sorted(text_scores.items(), key=lambda kv: -kv[1])[: self.candidates])
        vec = dict(sorted(vector_scores.items(), key=lambda kv: -kv[1])[: self.candidates])
        weights = (self.text_weight * self.text_scale(text, vec), self.vector_weight)
        if self.method == "rrf":
            return rrf([ranking(text), ranking(vec)], k=self.rrf_k, weights=weights)
        methods = (self.normalisation, self.vector_normalisation or self.normalisation)
        return score_fusion([text, vec], weights=weights, method=methods)


#: The memory search recipe, chosen on the tuning halves of the dev set and LoCoMo together
#: (bench/RESULTS-retrieval.md): min-max normalised scores, full-text weighted 1.0 and cosine
#: 0.5, top 100 from each list, the text list scaled down when its best match covers less than
#: half of the query's idf (``text_confidence``; needs ccmemory.text.bm25's calibrated scores).
#: Plain RRF (k=60, equal weights) was clearly worse; weighted RRF with k=5 came close.
DEFAULT = FusionRecipe(
    method="score",
    normalisation="minmax",
    text_weight=1.0,
    vector_weight=0.5,
    candidates=100,
    text_confidence=0.5,
)
#: Prompt recall's recipe for a long prompt that is not a question (a task or a bug report: six
#: content words or more, ``ccmemory.features.recall.engine.prompt_recipe``): the embedding of a
#: whole long prompt averages all its words, so its cosine counts less (0.35) and on its raw
#: scale (min-max would lift the best of a diluted list to 1.0). Chosen on the recall tuning sets
#: (bench/RESULTS-recall.md, 2026-11-26 fifth session); searches and questions keep DEFAULT.
LONG_PROMPT = FusionRecipe(
    method="score",
    normalisation="minmax",
    text_weight=1.0,
    vector_weight=0.35,
    vector_normalisation="raw",
    candidates=100,
    text_confidence=0.5,
)
#: The same without the confidence scale, for text scores that are not calibrated (reference
#: chunks are scored by FTS5's raw bm25).
UNCALIBRATED = FusionRecipe(
    method="score", normalisation="minmax", text_weight=1.0, vector_weight=0.5, candidates=100
)
#: Reciprocal-rank alternative for callers that only have ranks, not scores.
RRF_DEFAULT = FusionRecipe(method="rrf", rrf_k=5.0, text_weight=1.0, vector_weight=0.5)
