"""The one vector score both backends report (issue #13: one ranking on both backends).

Stored vectors are float32 and unit length. SQLite multiplied them in float32; Neo4j's
`vector.similarity.cosine` divides by the norms in double precision. The two agree to about 1e-7,
which is enough to round a score to a different sixth decimal and, at a tie, to swap two
memories. So each backend only *selects* its candidates its own way and then scores them here:
float64 dot products of the float32 vectors with the float32 query (every product exact, the
sums within 1e-16), rounded to 6 places and ordered by score, then id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DIGITS = 6


def exact_scores(
    ids: Sequence[str], vectors: Any, query: Any, top: int | None = None
) -> list[tuple[str, float]]:
    """``[(id, cosine)]`` best first (ties by id) for the rows of ``vectors`` (one per id).

    ``top``: only the best ``top`` rows by the unrounded score (ties by id), the ones a server
    ordering by its own double-precision cosine would have kept."""
    import numpy as np

    if not len(ids):
        return []
    q = np.asarray(query, dtype=np.float32).reshape(-1).astype(np.float64)
    m = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1).astype(np.float64)
    scores = m @ q
    pairs = list(zip(ids, (float(s) for s in scores), strict=True))
    if top is not None and len(pairs) > top:
        pairs = sorted(pairs, key=lambda t: (-t[1], t[0]))[:top]
    out = [(i, round(s, DIGITS)) for i, s in pairs]
    out.sort(key=lambda t: (-t[1], t[0]))
    return out
