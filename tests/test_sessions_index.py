"""The local session index (issue 28: session records "indexed with the memories", search over
single prompts): where it lives per backend, rebuilt by reindex, kept level on write, prune and
archive, unreadable records skipped by name, query text never FTS syntax, no secret in it, the
same ranking as the in-memory BM25F, `sessions search --prompts` and the MCP `search_prompts`."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from tests.capture_helpers import SECRETS, assert_no_secrets, make_repo, secret_text
from tests.conftest import RunCli
from tests.session_transcripts import write_transcript

SESSIONS = Path(".ccmemory/local/sessions")
INDEX = Path(".ccmemory/local/index.db")


def _import(run_cli: RunCli, repo: Path, folder: Path, env: dict[str, str] | None = None) -> list[str]:
    out = json.loads(run_cli(repo, "import", "--provider", "rules", "--json", str(folder), env=env).stdout)
    return list(out["session_records"])


def _history(tmp_path: Path, run_cli: RunCli, env: dict[str, str] | None = None) -> Path:
    repo = make_repo(tmp_path)
    t = tmp_path / "t"
    write_transcript(
        t / "a.jsonl",
        "sess-a",
        [
            {"prompt": "speed up the image thumbnail cache"},
            {"prompt": "now add a test for the cache eviction"},
        ],
        day="2026-01-10",
    )
    write_transcript(
        t / "b.jsonl",
        "sess-b",
        [{"prompt": "translate the error messages to German " + secret_text()}],
        branch="i18n",
        day="2026-02-11",
    )
    write_transcript(
        t / "c.jsonl", "sess-c", [{"prompt": "fix the flaky login test on CI"}], day="2026-03-12"
    )
    assert sorted(_import(run_cli, repo, t, env)) == ["sess-a", "sess-b", "sess-c"]
    return repo


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _indexed(repo: Path) -> set[str]:
    return {r[0] for r in _rows(repo / INDEX, "SELECT id FROM sessions WHERE error IS NULL")}


def test_records_are_indexed_in_the_memory_index_file_and_secrets_never_reach_it(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = _history(tmp_path, run_cli)
    assert _indexed(repo) == {"sess-a", "sess-b", "sess-c"}  # by the import, as each record was written
    # the memory index lives in the same file, its own tables untouched
    run_cli(repo, "reindex", "--no-embed")
    names = {r[0] for r in _rows(repo / INDEX, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"memories", "memory_fts", "sessions", "session_prompts", "session_fts"} <= names
    assert not (repo / ".ccmemory/local/sessions.db").exists()
    # a secret in a prompt was redacted when the record was written: not in any table or page
    dump = "\n".join(sqlite3.connect(repo / INDEX).iterdump())
    assert "translate the error messages" in dump
    assert_no_secrets(dump, "the session index")
    raw = b"".join(p.read_bytes() for p in (repo / ".ccmemory/local").glob("index.db*"))
    for name, value in SECRETS.items():
        assert value.encode() not in raw, name


def test_search_prompts_cli_returns_single_prompts_best_first(tmp_path: Path, run_cli: RunCli) -> None:
    repo = _history(tmp_path, run_cli)
    out = json.loads(run_cli(repo, "sessions", "search", "--prompts", "cache eviction test", "--json").stdout)
    assert [(h["session"], h["prompt"]) for h in out][:1] == [("sess-a", 2)]
    assert out[0]["text"] == "now add a test for the cache eviction"
    assert out[0]["start"].startswith("2026-01-10") and out[0]["branch"] == "main"
    assert [h["score"] for h in out] == sorted((h["score"] for h in out), reverse=True)
    german = json.loads(run_cli(repo, "sessions", "search", "--prompts", "German", "--json").stdout)
    assert german[0]["session"] == "sess-b" and german[0]["branch"] == "i18n"
    assert len(german[0]["text"]) <= 300 and german[0]["text"].endswith("…")
    assert_no_secrets(json.dumps(german), "sessions search --prompts")
    since = json.loads(
        run_cli(repo, "sessions", "search", "--prompts", "test", "--since", "2026-03-01", "--json").stdout
    )
    assert [h["session"] for h in since] == ["sess-c"]
    text = run_cli(repo, "sessions", "search", "--prompts", "thumbnail").stdout
    assert text.startswith("sess-a  #1  2026-01-10") and "speed up the image thumbnail cache" in text
    assert "No prompt matches." in run_cli(repo, "sessions", "search", "--prompts", "kubernetes").stdout


def test_query_text_never_becomes_fts_syntax(tmp_path: Path, run_cli: RunCli) -> None:
    repo = _history(tmp_path, run_cli)
    for q in ['"login', "login*", "login OR NOT (", "NEAR(login test)", "col:login", "-login ^", '""', "AND"]:
        for extra in ([], ["--prompts"]):
            proc = run_cli(repo, "sessions", "search", *extra, "--text-only", "--json", "--", q)
            rows = json.loads(proc.stdout)
            if "login" in q:
                first = rows[0]["session"] if extra else rows[0]["id"]
                assert first == "sess-c", (q, rows)


def test_reindex_rebuilds_from_the_records_and_names_an_unreadable_one(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = _history(tmp_path, run_cli)
    for p in (repo / ".ccmemory/local").glob("index.db*"):
        p.unlink()
    (repo / SESSIONS / "broken.json").write_text("{not json", encoding="utf-8")
    proc = run_cli(repo, "reindex", "--no-embed")
    assert "sessions/broken.json:1: session record skipped" in proc.stderr
    assert _indexed(repo) == {"sess-a", "sess-b", "sess-c"}
    # --full swaps a fresh memory index in: the session tables are rebuilt after it
    data = json.loads(run_cli(repo, "reindex", "--full", "--no-embed", "--json").stdout)
    assert data["sessions"]["indexed"] == 3
    assert [s["file"] for s in data["sessions"]["skipped"]] == ["broken.json"]
    assert _indexed(repo) == {"sess-a", "sess-b", "sess-c"}
    # incremental: nothing changed, nothing read again
    data = json.loads(run_cli(repo, "reindex", "--no-embed", "--json").stdout)
    assert data["sessions"]["indexed"] == 0 and data["sessions"]["unchanged"] == 4
    rows = json.loads(run_cli(repo, "sessions", "search", "--text-only", "flaky login", "--json").stdout)
    assert rows[0]["id"] == "sess-c"


def test_prune_archive_and_records_written_by_hand_keep_the_index_level(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = _history(tmp_path, run_cli)
    old = time.time() - 400 * 86400
    os.utime(repo / SESSIONS / "sess-a.json", (old, old))
    run_cli(repo, "sessions", "prune", "--max-age", "300")
    assert _indexed(repo) == {"sess-b", "sess-c"}
    run_cli(repo, "sessions", "archive", "--older-than", "0")
    assert _indexed(repo) == set()
    assert json.loads(run_cli(repo, "sessions", "search", "--text-only", "login", "--json").stdout) == []
    # a record that arrives without the worker (copied in) is picked up by the next search
    rec = {
        "id": "sess-d",
        "prompts": ["rotate the signing keys"],
        "summary": "Asked: rotate the signing keys.",
    }
    (repo / SESSIONS / "sess-d.json").write_text(json.dumps(rec), encoding="utf-8")
    rows = json.loads(run_cli(repo, "sessions", "search", "--text-only", "signing keys", "--json").stdout)
    assert [r["id"] for r in rows] == ["sess-d"]


def test_with_neo4j_the_sessions_stay_in_a_local_file_of_their_own(tmp_path: Path, run_cli: RunCli) -> None:
    env = {"CCMEMORY_BACKEND": "neo4j"}
    repo = _history(tmp_path, run_cli, env)
    own = repo / ".ccmemory/local/sessions.db"
    assert own.is_file() and not (repo / INDEX).exists()
    rows = json.loads(
        run_cli(repo, "sessions", "search", "--text-only", "flaky login", "--json", env=env).stdout
    )
    assert rows[0]["id"] == "sess-c"  # no server needed: the index is local
    hits = json.loads(run_cli(repo, "sessions", "search", "--prompts", "thumbnail", "--json", env=env).stdout)
    assert hits[0]["session"] == "sess-a"
    assert {r[0] for r in _rows(own, "SELECT id FROM sessions")} == {"sess-a", "sess-b", "sess-c"}
    assert not (repo / INDEX).exists()


def test_a_memory_schema_change_drops_the_session_tables_and_a_search_rebuilds_them(
    tmp_path: Path, run_cli: RunCli
) -> None:
    from ccmemory.index.sqlite import SQLiteIndex

    repo = _history(tmp_path, run_cli)
    run_cli(repo, "reindex", "--no-embed")
    con = sqlite3.connect(repo / INDEX)
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    con.commit()
    con.close()
    SQLiteIndex(repo / INDEX).close()  # an index from another version: every table dropped
    assert "sessions" not in {r[0] for r in _rows(repo / INDEX, "SELECT name FROM sqlite_master")}
    rows = json.loads(run_cli(repo, "sessions", "search", "--text-only", "thumbnail cache", "--json").stdout)
    assert rows[0]["id"] == "sess-a" and _indexed(repo) == {"sess-a", "sess-b", "sess-c"}


def test_the_index_ranks_exactly_as_the_in_memory_bm25f_on_the_dev_set(tmp_path: Path) -> None:
    from ccmemory.features.capture.sessionrec import from_transcript
    from ccmemory.features.sessions import index, search, store
    from ccmemory.index.sessions_sqlite import session_fields

    bench = Path(__file__).resolve().parent.parent / "bench" / "sessions" / "dev"
    repo = make_repo(tmp_path)
    for f in sorted(bench.rglob("*.jsonl")):
        if not f.name.startswith("queries"):
            from_transcript(repo, f)
    queries = [
        json.loads(line)["query"] for line in (bench / "queries.jsonl").read_text().splitlines() if line
    ]
    recs = store.all_records(repo)
    assert len(recs) >= 30 and all(session_fields(r) == search._fields(r) for r in recs)
    with index.ready(repo) as idx:
        for q in [*queries, "pytest", "the"]:
            want = [(r["id"], s) for r, s in search.rank(q, recs, limit=50)]
            assert idx.rank_sessions(q, limit=50) == want, q
        since = sorted(str(r.get("end") or r.get("start")) for r in recs)[len(recs) // 2]
        some = [r for r in recs if str(r.get("end") or r.get("start")) >= since]
        assert 0 < len(some) < len(recs)
        for q in queries[:10]:
            want = [(r["id"], s) for r, s in search.rank(q, some, limit=50)]
            assert idx.rank_sessions(q, since=since, limit=50) == want, q


def test_the_mcp_sessions_tool_searches_prompts(tmp_path: Path, run_cli: RunCli) -> None:
    from tests._mcp_client import SyncClient
    from tests._mcp_client import make_repo as mcp_repo

    repo = mcp_repo(tmp_path / "repo")
    t = tmp_path / "t"
    write_transcript(t / "a.jsonl", "mcp-a", [{"prompt": "speed up the image thumbnail cache"}])
    write_transcript(
        t / "b.jsonl", "mcp-b", [{"prompt": "translate the error messages to German " + secret_text()}]
    )
    _import(run_cli, repo, t)
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": "full"}) as client:
        tool = next(x for x in client.list_tools() if x.name == "sessions")
        assert len(json.dumps(tool.model_dump(mode="json", exclude_none=True))) < 1200
        found = client.call("sessions", {"action": "search_prompts", "query": "German error messages"})
        assert found["prompts"][0]["session"] == "mcp-b" and found["prompts"][0]["prompt"] == 1
        assert found["prompts"][0]["text"].startswith("translate the error messages to German")
        assert_no_secrets(json.dumps(found), "the MCP search_prompts action")
        assert client.error("sessions", {"action": "search_prompts"})["code"] == "invalid_argument"
