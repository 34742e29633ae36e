"""`cosine.exact_scores(..., top=n)`: Neo4j's HNSW passes send a superset of the exact top n and
the client keeps the n a server ordering by the unrounded cosine would have kept (issue 29)."""

from __future__ import annotations

from ccmemory.index.cosine import exact_scores


def test_top_keeps_the_best_by_unrounded_score_then_rounds() -> None:
    ids = ["z-best", "a-tied-after-rounding", "m-low"]
    vectors = [[0.1234564], [0.1234561], [0.05]]
    everything = exact_scores(ids, vectors, [1.0])
    # rounded to 6 places the two first tie, and the tie goes by id
    assert [i for i, _ in everything] == ["a-tied-after-rounding", "z-best", "m-low"]
    assert exact_scores(ids, vectors, [1.0], top=1) == [("z-best", 0.123456)]
    assert exact_scores(ids, vectors, [1.0], top=2) == everything[:2]
    assert exact_scores(ids, vectors, [1.0], top=5) == everything
