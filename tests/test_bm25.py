"""The one text analysis (ccmemory.text.analyzer) and the product-side BM25F (ccmemory.text.bm25)."""

from __future__ import annotations

import dataclasses
import math
import sqlite3
from pathlib import Path

import pytest

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.index.base import Filters
from ccmemory.index.sqlite import SCHEMA_VERSION, SQLiteIndex
from ccmemory.text import analyzer, bm25


def test_analysis_folds_splits_drops_stopwords_and_stems() -> None:
    assert analyzer.terms("The user's Sessions are STORED in Café_naïve; CELERY_BROKER_URL") == [
        "user",
        "session",
        "store",
        "cafe",
        "naiv",
        "celeri",
        "broker",
        "url",
    ]
    assert analyzer.analyse("Running runs ran") == "run run ran"
    assert analyzer.terms("x" * 65 + " ok") == ["ok"]  # hashes and blobs are not terms


def test_query_terms_are_plain_words_whatever_the_syntax() -> None:
    hostile = 'title:"login" AND NOT (session* OR -redis) NEAR/2 ^3 \\ ~ {} [] ; DROP TABLE x'
    got = analyzer.query_terms(hostile)
    assert got == ["titl", "login", "session", "redi", "near", "2", "3", "drop", "tabl", "x"]
    assert all(t.isalnum() for t in got)
    assert analyzer.query_terms("what is it that we were") == []  # only stopwords: nothing to match
    assert analyzer.query_terms("cache caches caching") == ["cach"]


def _c(mid: str, title: str = "", body: str = "", fields: str = "") -> bm25.Candidate:
    return bm25.Candidate(mid, analyzer.memory_fields(title, body, fields))


def _stats(cands: list[bm25.Candidate], docs: int) -> bm25.Stats:
    """As if the other ``docs - len(cands)`` memories were empty."""
    lens = [bm25.field_lengths(c.fields) for c in cands]
    df: dict[str, int] = {}
    for c in cands:
        for t in set(" ".join(c.fields).split()):
            df[t] = df.get(t, 0) + 1
    return bm25.Stats(docs, (sum(x[0] for x in lens), sum(x[1] for x in lens), sum(x[2] for x in lens)), df)


def test_bm25f_by_hand() -> None:
    a = _c("a", "redis sessions", "keep sessions in redis with a ttl")
    b = _c("b", "postgres", "we store invoices in postgres")
    got = bm25.rank(["session"], [a, b], _stats([a, b], docs=10))
    assert [m for m, _ in got] == ["a"]  # b does not hold the term
    # by hand: title tf 1 (len 2), body tf 1 (len 4); averages over 10 docs: 3/10 -> 1.0 (floor), 9/10 -> 1.0
    avg_t, avg_b = max(3 / 10, 1.0), max(9 / 10, 1.0)
    w = 4.0 / (1 - bm25.B + bm25.B * 2 / avg_t) + 1.0 / (1 - bm25.B + bm25.B * 4 / avg_b)
    idf = math.log(1 + (10 - 1 + 0.5) / (1 + 0.5))
    assert got[0][1] == pytest.approx(round(idf * (w / (bm25.K1 + w)) / idf, bm25.DIGITS))


def test_one_common_word_is_not_a_full_match() -> None:
    """The calibrated score: a memory holding only the query's most common word scores far below
    one holding its rare words too (min-max of raw bm25 put the best of such matches at 1.0)."""
    docs = [_c(f"d{i}", f"deploy note {i}", "we deploy on tuesdays") for i in range(8)]
    target = _c("t", "wkhtmltopdf replaced", "we deploy the weasyprint renderer instead of wkhtmltopdf")
    got = dict(bm25.rank(["deploy", "wkhtmltopdf"], [*docs, target], _stats([*docs, target], docs=40)))
    others = max(v for k, v in got.items() if k != "t")
    assert got["t"] > 0.5 and others < 0.2 and got["t"] > 2.5 * others
    # the statistics are the project's: a term rare in the candidates but common in the project
    # weighs what the project says
    common = bm25.Stats(40, _stats([*docs, target], 40).lengths, {"deploy": 9, "wkhtmltopdf": 30})
    flipped = dict(bm25.rank(["deploy", "wkhtmltopdf"], [*docs, target], common))
    assert flipped["t"] < got["t"]
    assert all(0 <= v < 1 for v in got.values())
    # only the common word matched: still a weak match, not 1.0
    weak = dict(bm25.rank(["deploy", "wkhtmltopdf"], docs, _stats(docs, docs=40)))
    assert max(weak.values()) < 1.0


def test_a_word_no_memory_holds_lowers_the_confidence_not_the_order() -> None:
    """A query term with document frequency 0 counts against every score of the query (issue 27:
    a question whose rare word is not in the vault, answered by its one common word, must not
    look like a full match), by the same factor for all: the ranking does not change."""
    docs = [
        _c(f"d{i}", f"note {i}", "we use it" if i % 2 else "use it daily and use it well") for i in range(6)
    ]
    stats = _stats(docs, docs=20)
    known = bm25.rank(["use"], docs, stats)
    asked = bm25.rank(["use", "linter"], docs, stats)  # "linter": no memory holds it
    assert [m for m, _ in asked] == [m for m, _ in known]
    assert known[0][1] > 0.4 and asked[0][1] < 0.5 * known[0][1]
    ratio = {round(a / k, 6) for (_, a), (_, k) in zip(asked, known, strict=True)}
    assert len(ratio) == 1
    assert bm25.rank(["linter"], docs, stats) == []  # nothing known: nothing to rank


def test_title_outweighs_body_and_ties_break_by_id() -> None:
    t = _c("z", "invoice numbering", "")
    b = _c("a", "", "invoice numbering")
    got = bm25.rank(["invoic"], [t, b], _stats([t, b], docs=5))
    assert [m for m, _ in got] == ["z", "a"]
    same = [_c("b", "x invoice"), _c("a", "x invoice")]
    assert [m for m, _ in bm25.rank(["invoic"], same, _stats(same, 5))] == ["a", "b"]


def test_sqlite_text_search_uses_the_analysis(repo_index: SQLiteIndex) -> None:
    f = Filters(project="p")
    assert [m for m, _ in repo_index.text_search("where do we keep the SESSIONS?", f)] == ["m1"]
    assert [m for m, _ in repo_index.text_search('"sessions AND (NOT * :', f)] == ["m1"]  # no syntax
    assert repo_index.text_search("the of and", f) == []
    got = repo_index.text_search("caching invoices", f)
    assert {m for m, _ in got} == {"m1", "m2"} and all(0 < s < 1 for _, s in got)


def test_statistics_are_the_projects_own(repo_index: SQLiteIndex, tmp_path: Path) -> None:
    """Another project in the same file (counted apart) and a write (cache refreshed) both show."""
    f = Filters(project="p")
    alone = repo_index.text_search("redis caching invoices", f)
    from ccmemory.index.base import FileRecord

    other = [FileRecord(f"o{i}.md", 1, 1, f"o{i}", _mem(f"o{i}", "Redis", "redis redis")) for i in range(6)]
    repo_index.apply("q", other, [], lambda _p: "curated")
    assert repo_index.text_search("redis caching invoices", f) == alone
    repo_index.apply("p", other[:3], [], lambda _p: "curated")  # now redis is common in p too
    after = dict(repo_index.text_search("redis caching invoices", f))
    assert after["m1"] != dict(alone)["m1"]


def test_an_index_of_the_previous_schema_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
        f"INSERT INTO meta VALUES ('schema', '{SCHEMA_VERSION - 1}');"
        "CREATE TABLE files(project TEXT, path TEXT, mtime_ns INTEGER, size INTEGER, hash TEXT);"
        "INSERT INTO files VALUES ('p', 'a.md', 1, 1, 'h');"
        "CREATE VIRTUAL TABLE memory_fts USING fts5(title, body, fields, tokenize = 'porter unicode61');"
    )
    db.commit()
    db.close()
    idx = SQLiteIndex(path)
    try:
        assert idx.file_states("p") == {}  # dropped: the next sync re-reads every file
        sql = idx.db.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_fts'").fetchone()[0]
        assert "porter" not in sql
    finally:
        idx.close()


def _mem(mid: str, title: str, body: str) -> Memory:
    when = parse_timestamp("2025-01-01T00:00:00Z")
    assert when is not None
    return Memory(id=mid, type="fact", title=title, body=body, created=when)


@pytest.fixture
def repo_index(tmp_path: Path) -> SQLiteIndex:
    from ccmemory.index.base import FileRecord

    mem = _mem
    idx = SQLiteIndex(tmp_path / "i.db")
    recs = [
        FileRecord("m1.md", 1, 1, "h1", mem("m1", "Session store", "Sessions live in Redis; caching too.")),
        FileRecord("m2.md", 1, 1, "h2", mem("m2", "Invoice numbers", "Invoices are numbered per tenant.")),
        FileRecord("m3.md", 1, 1, "h3", mem("m3", "Deploys", "We deploy on Tuesdays.")),
    ]
    idx.apply("p", recs, [], lambda _p: "curated")
    return idx


def test_text_candidates_fast_path_equals_the_full_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prefix shortcut of SQLiteIndex._text_candidates never changes which candidates come back:
    with a tiny prefix and cap, ties at the boundary and filters that drop most of the prefix, the
    answer equals the plain 'filter every match, order by (bm25, id)' query."""
    import ccmemory.index.sqlite as sqlite_mod
    from ccmemory.index.base import FileRecord
    from ccmemory.index.sqlite import _BM25, fts_match_terms

    idx = SQLiteIndex(tmp_path / "i.db")
    recs = []
    for i in range(40):  # three bodies: many exact bm25 ties; types alternate so a filter drops half
        body = ("redis session session store", "redis session cache", "postgres cache")[i % 3]
        m = _mem(f"m{i:02d}", "Sessions" if i % 4 == 0 else "Notes", body)
        if i % 2:
            m = dataclasses.replace(m, type="gotcha")
        recs.append(FileRecord(f"m{i}.md", 1, 1, f"h{i}", m))
    idx.apply("p", recs[20:], [], lambda _p: "curated")  # the high ids get the low rowids
    idx.apply("p", recs[:20], [], lambda _p: "curated")
    monkeypatch.setattr(sqlite_mod, "_PREFIX", 7)
    monkeypatch.setattr(bm25, "CANDIDATE_CAP", 5)
    full_runs: list[str] = []
    idx.db.set_trace_callback(lambda sql: full_runs.append(sql) if "MATERIALIZED" in sql else None)
    calls = 0
    try:
        for query in ("session", "cache session", "store", "redis cache", "sessions notes"):
            for f in (Filters(project="p"), Filters(project="p", types=["gotcha"]), Filters(project="q")):
                where, params = idx._where(f)
                full = idx.db.execute(
                    f"SELECT m.rid, m.id FROM memory_fts JOIN memories m ON m.rid = memory_fts.rowid"
                    f" WHERE memory_fts MATCH ? AND {where} ORDER BY {_BM25}, m.id LIMIT 5",
                    [fts_match_terms(analyzer.query_terms(query)), *params],
                ).fetchall()
                got = idx._text_candidates(fts_match_terms(analyzer.query_terms(query)), f)
                assert [tuple(r) for r in got] == [tuple(r) for r in full], (query, f)
                calls += 1
        assert 0 < len(full_runs) < calls  # both paths were taken
    finally:
        idx.close()
