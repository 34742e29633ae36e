"""Rank fusion: pure functions, checked by hand-computed values."""

from __future__ import annotations

import sqlite3

import pytest

from ccmemory.text import fusion


def test_rrf_by_hand() -> None:
    fused = dict(fusion.rrf([["a", "b", "c"], ["c", "a"]], k=10))
    assert fused["a"] == pytest.approx(1 / 11 + 1 / 12)
    assert fused["b"] == pytest.approx(1 / 12)
    assert fused["c"] == pytest.approx(1 / 13 + 1 / 11)
    assert [key for key, _ in fusion.rrf([["a", "b", "c"], ["c", "a"]], k=10)] == ["a", "c", "b"]


def test_rrf_weights_change_the_winner() -> None:
    lists = [["t1", "s1"], ["s1", "t1"]]
    assert fusion.rrf(lists, k=1, weights=[2.0, 1.0])[0][0] == "t1"
    assert fusion.rrf(lists, k=1, weights=[1.0, 2.0])[0][0] == "s1"
    with pytest.raises(ValueError):
        fusion.rrf(lists, weights=[1.0])


def test_normalise() -> None:
    scores = {"a": 4.0, "b": 2.0, "c": 0.0}
    assert fusion.normalise(scores, "minmax") == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert fusion.normalise(scores, "max") == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert fusion.normalise(scores, "rank") == {"a": 1.0, "b": pytest.approx(2 / 3), "c": 1 / 3}
    z = fusion.normalise(scores, "zscore")
    assert z["b"] == pytest.approx(0.0) and z["a"] == pytest.approx(-z["c"])
    assert fusion.normalise({"x": 3.0, "y": 3.0}) == {"x": 1.0, "y": 1.0}
    assert fusion.normalise({}) == {}
    with pytest.raises(ValueError):
        fusion.normalise(scores, "nope")  # type: ignore[arg-type]


def test_score_fusion_missing_keys_get_zero() -> None:
    text = {"a": 10.0, "b": 5.0, "c": 0.0}  # -> 1, .5, 0
    vec = {"c": 0.9, "d": 0.1}  # -> 1, 0
    fused = dict(fusion.score_fusion([text, vec], weights=[1.0, 1.0]))
    assert fused == {"a": 1.0, "b": 0.5, "c": 1.0, "d": 0.0}


def test_query_terms_and_fts5_match() -> None:
    assert fusion.query_terms("Where do the login tokens live?") == ["login", "tokens", "live"]
    # all stopwords: keep them rather than send an empty query
    assert fusion.query_terms("who is it") == ["who", "is", "it"]
    assert fusion.query_terms("a b", stopwords=False) == ["a", "b"]
    assert fusion.fts5_match("") == ""
    assert fusion.fts5_match("tokens tokens cookies") == '"tokens" OR "cookies"'


def test_fts5_match_is_safe_fts_syntax() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    db.executemany(
        "INSERT INTO t(body) VALUES (?)",
        [("auth tokens live in cookies",), ("NEAR the AND gate",), ("unrelated",)],
    )
    assert fusion.fts5_match('""" * ^') == ""  # no words: the caller skips the query
    for hostile in ['tokens" OR body:*', "NEAR(a b) AND NOT -x", "col:val ^start *", "don't"]:
        db.execute("SELECT rowid FROM t WHERE t MATCH ?", (fusion.fts5_match(hostile),)).fetchall()
    rows = db.execute(
        "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t)",
        (fusion.fts5_match("where are the token cookies?"),),
    ).fetchall()
    assert rows[0][0] == 1


def test_recipe_fuse() -> None:
    recipe = fusion.FusionRecipe(method="rrf", rrf_k=60, text_weight=1.0, vector_weight=1.0)
    fused = recipe.fuse({"a": -1.0, "b": -2.0}, {"b": 0.9, "c": 0.5})
    assert fused[0][0] == "b"
    score = fusion.FusionRecipe(method="score", normalisation="minmax", text_weight=2.0)
    assert [k for k, _ in score.fuse({"a": 3.0, "b": 1.0}, {"b": 0.9, "a": 0.1})] == ["a", "b"]
    capped = fusion.FusionRecipe(candidates=1)
    assert {k for k, _ in capped.fuse({"a": 2.0, "b": 1.0}, {"c": 0.9, "d": 0.1})} == {"a", "c"}


def test_per_list_normalisation_keeps_raw_cosine() -> None:
    """With ``vector_normalisation='raw'`` a weak best vector match stays weak."""
    recipe = fusion.FusionRecipe(method="score", normalisation="minmax", vector_normalisation="raw")
    fused = dict(recipe.fuse({"a": 10.0, "b": 5.0}, {"b": 0.3, "c": 0.28}))
    assert fused["a"] == 1.0 and fused["b"] == 0.3 and fused["c"] == 0.28
    same = dict(fusion.FusionRecipe(method="score").fuse({"a": 10.0, "b": 5.0}, {"b": 0.3, "c": 0.28}))
    assert same["b"] == 1.0  # min-max would lift the weak match to the top of its list
    with pytest.raises(ValueError):
        fusion.score_fusion([{"a": 1.0}], method=["minmax", "raw"])


def test_text_confidence_scales_a_weak_text_list_only() -> None:
    """A text list whose best calibrated score covers little of the query counts less; a strong
    one counts fully; one list alone keeps its scores (text-only and semantic-only modes)."""
    recipe = fusion.FusionRecipe(
        method="score", normalisation="minmax", vector_weight=0.5, text_confidence=0.5
    )
    weak_text = {"one-word-match": 0.2, "other": 0.1}  # the best covers 20% of the query's idf
    strong_vec = {"paraphrase": 0.62, "other": 0.40}
    assert recipe.text_scale(weak_text, strong_vec) == pytest.approx(0.4)
    fused = dict(recipe.fuse(weak_text, strong_vec))
    assert fused["one-word-match"] == pytest.approx(0.4)  # 1.0 (min-max) x 0.4
    assert fused["paraphrase"] == pytest.approx(0.5)
    assert max(fused, key=lambda k: fused[k]) == "paraphrase"
    plain = dict(fusion.FusionRecipe(method="score", vector_weight=0.5).fuse(weak_text, strong_vec))
    assert max(plain, key=lambda k: plain[k]) == "one-word-match"  # what the scale prevents
    strong_text = {"keyword-hit": 0.8, "other": 0.1}
    assert recipe.text_scale(strong_text, strong_vec) == 1.0
    assert max(dict(recipe.fuse(strong_text, strong_vec)).items(), key=lambda kv: kv[1])[0] == "keyword-hit"
    assert (
        recipe.text_scale(weak_text, {}) == 1.0 and dict(recipe.fuse(weak_text, {}))["one-word-match"] == 1.0
    )
    assert fusion.UNCALIBRATED.text_scale(weak_text, strong_vec) == 1.0
