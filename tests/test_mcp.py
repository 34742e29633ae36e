"""The MCP server through the real SDK client over stdio: `python -m ccmemory mcp` in a temp git repo.

One server per module (start-up costs seconds); tests build on a shared repository, so each one
records the memories it needs and asserts only about those.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._mcp_client import SyncClient, make_repo

ALL_TOOLS = {
    "record",
    "record_decision",
    "record_correction",
    "record_exception",
    "record_insight",
    "record_question",
    "record_failed_approach",
    "record_fact",
    "record_preference",
    "record_reference",
    "search",
    "search_precedent",
    "search_semantic",
    "query_context",
    "query_by_topic",
    "timeline",
    "query_stale_decisions",
    "query_failed_approaches",
    "query_open_questions",
    "get_memory",
    "trace_decision",
    "query_patterns",
    "detect_issues",
    "suggest_connections",
    "memory_supersede",
    "get_metrics",
    "list_suggestions",
    "ingest",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("mcp") / "repo")


@pytest.fixture(scope="module")
def client(repo: Path) -> Iterator[SyncClient]:
    # refresh every call, so files written behind the server's back are seen at once
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as c:
        yield c


def memory_files(repo: Path) -> set[str]:
    return {
        p.relative_to(repo).as_posix() for p in (repo / ".ccmemory").rglob("*.md") if "local" not in p.parts
    }


def assert_cited(item: dict[str, Any]) -> None:
    assert item["uri"] == f"ccmemory://memory/{item['id']}"
    assert item["path"].startswith(".ccmemory/") and item["path"].endswith(".md")


# --- listing ---------------------------------------------------------------------------------------


def test_tools_are_listed_with_descriptions_and_bounds(client: SyncClient) -> None:
    tools = {t.name: t for t in client.list_tools()}
    assert set(tools) >= ALL_TOOLS
    for t in tools.values():
        assert t.description and len(t.description) > 30, t.name
    search = tools["search"].input_schema["properties"]
    assert search["limit"]["maximum"] == 50 and search["limit"]["default"] == 10
    assert set(search["mode"]["enum"]) == {"hybrid", "text", "semantic"}
    corr = tools["record_correction"].input_schema
    assert {"title", "wrong_belief", "right_belief"} <= set(corr["required"])
    assert tools["search"].annotations.read_only_hint is True
    assert tools["record_decision"].annotations.read_only_hint is False


# --- recording -------------------------------------------------------------------------------------

RECORDS: list[tuple[str, dict[str, Any], str, Any]] = [
    (
        "record_decision",
        {"rationale": "XSS can read localStorage", "revisit_trigger": "API moves"},
        "rationale",
        None,
    ),
    (
        "record_correction",
        {"wrong_belief": "tests use unittest", "right_belief": "tests use pytest"},
        "right_belief",
        None,
    ),
    (
        "record_exception",
        {"rule_broken": "no raw SQL", "justification": "bulk import speed", "scope": "one-time"},
        "scope",
        "one-time",
    ),
    (
        "record_insight",
        {"category": "realization", "implications": "cache invalidation"},
        "category",
        "realization",
    ),
    (
        "record_failed_approach",
        {"approach": "sqlite-vec", "outcome": "cannot load", "lesson": "numpy"},
        "lesson",
        None,
    ),
    ("record_fact", {"category": "command"}, "category", "command"),
    ("record_preference", {"scope": "project"}, "scope", "project"),
    (
        "record_reference",
        {"uri": "https://example.com/doc", "ref_type": "url"},
        "uri",
        "https://example.com/doc",
    ),
]


@pytest.mark.parametrize(("tool", "extra", "field", "value"), RECORDS, ids=[r[0] for r in RECORDS])
def test_record_writes_file_then_index(
    client: SyncClient, repo: Path, tool: str, extra: dict[str, Any], field: str, value: Any
) -> None:
    out = client.call(
        tool, {"title": f"Recorded by {tool} zebra", "body": "Body text.", "topics": ["rec"], **extra}
    )
    assert_cited(out)
    assert out["status"] == "developmental"  # not in main's tree yet
    assert out["indexed"] is True
    text = (repo / out["path"]).read_text(encoding="utf-8")
    assert f"id: {out['id']}" in text and "source: explicit" in text
    assert f"{field}:" in text
    if value is not None:
        assert str(value) in text
    found = client.call("get_memory", {"id": out["id"]})
    assert found["title"] == f"Recorded by {tool} zebra"
    assert found["type"] == tool.removeprefix("record_")


def test_record_question_defaults_title_and_open_questions(client: SyncClient) -> None:
    open_q = client.call("record_question", {"question": "Which queue should jobs use?", "topics": ["qq"]})
    answered = client.call(
        "record_question", {"question": "Which cache should we use?", "answer": "Redis", "topics": ["qq"]}
    )
    assert open_q["title"] == "Which queue should jobs use?"
    res = client.call("query_open_questions", {"topics": ["qq"]})
    ids = [r["id"] for r in res["results"]]
    assert open_q["id"] in ids and answered["id"] not in ids
    assert "answer" in res["rule"]


def test_record_redacts_secrets_and_private_text(client: SyncClient, repo: Path) -> None:
    secret = "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX"
    out = client.call(
        "record_fact",
        {
            "title": "Deploy key location",
            "body": f"Key is {secret}. <private>my home address</private> db postgres://u:pa55word@db/x",
        },
    )
    text = (repo / out["path"]).read_text(encoding="utf-8")
    assert secret not in text
    assert "my home address" not in text
    assert "pa55word" not in text
    assert out["redaction"] == "ccmemory.core.redact"


def test_record_errors_leave_no_file(client: SyncClient, repo: Path) -> None:
    before = memory_files(repo)
    err = client.error(
        "record_decision",
        {
            "title": "Links to nothing",
            "relations": [{"type": "DEPENDS_ON", "target": "01ZZZZZZZZZZZZZZZZZZZZZZZZ"}],
        },
    )
    assert err["code"] == "not_found" and "search" in err["hint"]
    err = client.error("record_decision", {"title": "Supersedes nothing", "supersedes": ["0000"]})
    assert err["code"] == "not_found"
    sdk = client.error(
        "record_correction",
        {"title": "Bad severity", "wrong_belief": "a", "right_belief": "b", "severity": "huge"},
    )
    assert sdk["code"] == "invalid_argument" and "severity" in sdk["message"]
    sdk = client.error("record_fact", {"title": "x"})  # too short
    assert "title" in sdk["message"]
    assert memory_files(repo) == before


# --- querying --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def auth(client: SyncClient) -> dict[str, dict[str, Any]]:
    d = client.call(
        "record_decision",
        {
            "title": "Store auth tokens in httpOnly cookies",
            "body": "Tokens live in httpOnly cookies so page scripts cannot read them.",
            "topics": ["auth", "security"],
            "files": ["src/auth/token.ts"],
            "rationale": "XSS can read localStorage",
        },
    )
    dep = client.call(
        "record_fact",
        {
            "title": "Gateway middleware stamps every response",
            "body": "The gateway middleware layer.",
            "topics": ["gateway"],
        },
    )
    c = client.call(
        "record_correction",
        {
            "title": "Refresh tokens rotate on every use",
            "wrong_belief": "refresh tokens are long-lived",
            "right_belief": "they rotate",
            "topics": ["auth"],
            "relations": [{"type": "DEPENDS_ON", "target": d["id"], "reason": "same cookie"}],
        },
    )
    d2 = client.call(
        "record_decision",
        {
            "title": "Cookie auth needs signed sessions",
            "topics": ["cookies-x"],
            "relations": [{"type": "DEPENDS_ON", "target": dep["id"]}],
            "supersedes": [],
        },
    )
    return {"decision": d, "fact": dep, "correction": c, "d2": d2}


def test_search_cites_and_paginates(client: SyncClient, auth: dict[str, dict[str, Any]]) -> None:
    res = client.call("search", {"query": "httpOnly cookies auth tokens"})
    assert res["results"], res
    for item in res["results"]:
        assert_cited(item)
    assert res["results"][0]["id"] in {auth["decision"]["id"], auth["correction"]["id"]}
    page1 = client.call("search", {"query": "auth tokens cookies", "limit": 1})
    assert len(page1["results"]) == 1 and page1["next_offset"] == 1
    page2 = client.call("search", {"query": "auth tokens cookies", "limit": 1, "offset": 1})
    assert page2["results"][0]["id"] != page1["results"][0]["id"]
    only = client.call("search", {"query": "auth tokens cookies", "types": ["correction"]})
    assert {r["type"] for r in only["results"]} == {"correction"}
    err = client.error("search", {"query": "auth", "since": "last tuesday"})
    assert err["code"] == "invalid_argument" and "7d" in err["hint"]
    assert client.error("search", {"query": "auth", "limit": 51})["code"] == "invalid_argument"


def test_search_precedent_is_full_text_on_precedent_types(
    client: SyncClient, auth: dict[str, dict[str, Any]]
) -> None:
    res = client.call("search_precedent", {"query": "httpOnly cookies"})
    assert res["mode_used"] == "text"
    assert {r["type"] for r in res["results"]} <= {"decision", "exception", "correction"}
    assert auth["decision"]["id"] in [r["id"] for r in res["results"]]
    facts = client.call("search_precedent", {"query": "middleware stamps", "types": ["fact"]})
    assert [r["id"] for r in facts["results"]][:1] == [auth["fact"]["id"]]


def test_search_semantic_is_honest(client: SyncClient, auth: dict[str, dict[str, Any]]) -> None:
    res = client.call("search_semantic", {"query": "where do login credentials live in the browser"})
    assert res["mode_requested"] == "semantic"
    if res["mode_used"] != "semantic":
        assert any("semantic search is off" in n for n in res["notices"])


def test_query_context_follows_relations(client: SyncClient, auth: dict[str, dict[str, Any]]) -> None:
    res = client.call(
        "query_context",
        {"task": "cookie auth signed sessions", "current_file": "src/auth/token.ts", "max_hops": 2},
    )
    why = {r["id"]: r["why"] for r in res["results"]}
    assert "about src/auth/token.ts" in why.get(auth["decision"]["id"], "") or auth["decision"]["id"] in why
    # the fact shares no words with the task: full-text alone reaches it only through
    # d2 -[DEPENDS_ON]-> fact; with embeddings on, it may also match the task by meaning
    assert auth["fact"]["id"] in why
    assert any("hop" in w for w in why.values()), why
    for r in res["results"]:
        assert_cited(r)
    assert res["cross_project"] == {"requested": False, "available": False}
    cross = client.call("query_context", {"task": "auth", "include_cross_project": True, "max_hops": 0})
    # no related_to in this project's config: available, empty, and it says why (issue 18)
    assert cross["cross_project"]["available"] is True and cross["cross_project"]["results"] == []
    assert "no related projects" in cross["cross_project"]["reason"]
    bare = client.call("query_context", {})
    assert bare["results"] and "session-start" in bare["results"][0]["why"]


def test_query_by_topic_and_timeline(client: SyncClient, auth: dict[str, dict[str, Any]]) -> None:
    res = client.call("query_by_topic", {"topics": ["Security"]})
    assert [r["id"] for r in res["results"]] == [auth["decision"]["id"]]
    assert res["total"] == 1 and "auth" in res["co_occurring_topics"]
    tl = client.call("timeline", {"around": auth["correction"]["id"], "window_days": 1, "limit": 50})
    pos = {r["id"]: r["position"] for r in tl["results"]}
    assert pos[auth["correction"]["id"]] == "this"
    assert pos[auth["decision"]["id"]] == "before" and pos[auth["d2"]["id"]] == "after"
    empty = client.call("timeline", {"since": "2001-01-01", "until": "2001-12-31"})
    assert empty["results"] == [] and empty["total"] == 0
    assert (
        client.error("timeline", {"since": "2030-01-01", "until": "2020-01-01"})["code"] == "invalid_argument"
    )
    assert client.error("timeline", {"around": "ZZZZZZZZ"})["code"] == "not_found"


def test_failed_approaches(client: SyncClient) -> None:
    a = client.call(
        "record_failed_approach",
        {"title": "Polling the queue every second", "approach": "busy polling", "outcome": "CPU at 100%"},
    )
    listed = client.call("query_failed_approaches", {"limit": 50})
    assert a["id"] in [r["id"] for r in listed["results"]]
    assert {r["type"] for r in listed["results"]} == {"failed_approach"}
    found = client.call("query_failed_approaches", {"query": "busy polling queue"})
    top = found["results"][0]
    assert top["id"] == a["id"] and top["outcome"] == "CPU at 100%"


def test_stale_decisions_rules(client: SyncClient, repo: Path) -> None:
    trig = client.call(
        "record_decision", {"title": "Use a single region", "revisit_trigger": "EU customers sign"}
    )
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src" / "billing.py").write_text("x = 1\n")
    filed = client.call("record_decision", {"title": "Billing rounds half-even", "files": ["src/billing.py"]})
    calm = client.call("record_decision", {"title": "Logs are JSON lines", "files": ["src/logs.py"]})
    env = {"GIT_COMMITTER_DATE": "2099-01-01T00:00:00Z", "GIT_AUTHOR_DATE": "2099-01-01T00:00:00Z"}
    import os

    subprocess.run(["git", "add", "src/billing.py"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "billing"], cwd=repo, check=True, env={**os.environ, **env})
    res = client.call("query_stale_decisions", {"limit": 50})
    reasons = {r["id"]: r["reasons"] for r in res["results"]}
    assert any("revisit_trigger" in x for x in reasons[trig["id"]])
    assert any("src/billing.py changed" in x for x in reasons[filed["id"]])
    assert calm["id"] not in reasons
    assert "revisit_trigger" in res["rules"]
    no_files = client.call("query_stale_decisions", {"check_files": False, "limit": 50})
    assert filed["id"] not in {r["id"] for r in no_files["results"]}


# --- graph -----------------------------------------------------------------------------------------


def test_trace_decision(client: SyncClient, auth: dict[str, dict[str, Any]]) -> None:
    down = client.call("trace_decision", {"id": auth["decision"]["id"], "direction": "downstream"})
    assert [s["to"] for s in down["steps"]] == [auth["correction"]["id"]]
    assert down["steps"][0]["relation"] == "DEPENDED_ON_BY"
    assert "DEPENDED_ON_BY" in down["readable"] and "Refresh tokens rotate" in down["readable"]
    up = client.call("trace_decision", {"id": auth["decision"]["id"], "direction": "upstream"})
    assert up["steps"] == [] and up["readable"].endswith("no relations")
    up2 = client.call("trace_decision", {"id": auth["correction"]["id"], "direction": "upstream"})
    assert up2["steps"][0]["relation"] == "DEPENDS_ON" and up2["steps"][0]["reason"] == "same cookie"
    for n in up2["nodes"].values():
        assert_cited(n)
    assert client.error("trace_decision", {"id": "nope-nope"})["code"] == "not_found"
    assert (
        client.error("trace_decision", {"id": auth["decision"]["id"], "direction": "sideways"})["code"]
        == "invalid_argument"
    )


def test_memory_supersede_writes_new_file_only(client: SyncClient, repo: Path) -> None:
    old = client.call(
        "record_decision", {"title": "Deploy on Fridays", "topics": ["deploy"], "files": ["ops/d.sh"]}
    )
    old_bytes = (repo / old["path"]).read_bytes()
    new = client.call(
        "memory_supersede",
        {
            "old_id": old["id"],
            "title": "Never deploy on Fridays",
            "body": "Weekend pages.",
            "reason": "outage",
        },
    )
    assert new["supersedes"] == [old["id"]] and new["superseded"]["id"] == old["id"]
    assert (repo / old["path"]).read_bytes() == old_bytes
    text = (repo / new["path"]).read_text(encoding="utf-8")
    assert f"supersedes: [{old['id']}]" in text and "topics: [deploy]" in text and "ops/d.sh" in text
    assert "](2" in text  # a relative markdown link to the old file
    got = client.call("get_memory", {"id": old["id"]})
    assert got["superseded_by"] == [new["id"]]
    hits = client.call("search", {"query": "deploy Fridays"})["results"]
    assert old["id"] not in [h["id"] for h in hits]
    with_old = client.call("search", {"query": "deploy Fridays", "include_superseded": True})["results"]
    assert old["id"] in [h["id"] for h in with_old]
    third = client.call(
        "memory_supersede", {"old_id": new["id"], "title": "Deploy any weekday", "body": "CI is solid."}
    )
    chain = client.call("trace_decision", {"id": third["id"]})["chain"]
    assert [c["id"] for c in chain] == [old["id"], new["id"], third["id"]]
    again = client.call("memory_supersede", {"old_id": old["id"], "title": "Deploy twice a day", "body": "x"})
    assert "already superseded" in again["notices"][0]
    patterns = client.call("query_patterns", {})
    chains = [[m["id"] for m in c["chain"]] for c in patterns["supersession_chains"]["items"]]
    assert [old["id"], new["id"], third["id"]] in chains
    err = client.error("memory_supersede", {"old_id": "ZZZZZZZZ", "title": "Nothing here", "body": "x"})
    assert err["code"] == "not_found"
    err = client.error(
        "memory_supersede",
        {"old_id": third["id"], "title": "Wrong field", "body": "x", "fields": {"wrong_belief": "a"}},
    )
    assert err["code"] == "invalid_argument" and "rationale" in err["message"]


def test_patterns_clusters_and_hotspots(client: SyncClient) -> None:
    for i in range(2):
        client.call(
            "record_exception",
            {
                "title": f"Skipped review {i}",
                "rule_broken": "Every PR needs review!",
                "justification": "hotfix",
            },
        )
        client.call(
            "record_correction",
            {
                "title": f"Timezone fix {i}",
                "wrong_belief": "local",
                "right_belief": "UTC",
                "topics": ["tz-hot"],
            },
        )
    res = client.call("query_patterns", {"min_size": 2})
    keys = {(c["by"], c["key"]): c["size"] for c in res["exception_clusters"]["items"]}
    assert keys[("rule_broken", "every pr needs review")] == 2
    hot = {(h["by"], h["key"]): h["count"] for h in res["correction_hotspots"]["items"]}
    assert hot[("topic", "tz-hot")] == 2
    assert client.error("query_patterns", {"min_size": 1})["code"] == "invalid_argument"


def test_suggest_connections(client: SyncClient) -> None:
    a = client.call("record_decision", {"title": "Kafka carries billing events", "topics": ["kafka-s"]})
    b = client.call(
        "record_insight", {"title": "Kafka billing events arrive out of order", "topics": ["kafka-s"]}
    )
    linked = client.call(
        "record_fact",
        {
            "title": "Kafka billing events retention is 7 days",
            "relations": [{"type": "RELATES_TO", "target": a["id"]}],
        },
    )
    res = client.call("suggest_connections", {"id": a["id"], "limit": 10})
    ids = [r["id"] for r in res["results"]]
    assert b["id"] in ids and linked["id"] not in ids and a["id"] not in ids
    sug = next(r for r in res["results"] if r["id"] == b["id"])
    assert sug["shared_topics"] == ["kafka-s"] and sug["suggested_relation"] in (
        "RELATES_TO",
        "DEPENDS_ON",
        "CITES",
    )
    assert "not rewritten" in res["how_to_link"]


def test_get_metrics_counts_real_data(client: SyncClient, repo: Path) -> None:
    client.call("record_decision", {"title": "Metrics need a decision"})
    client.call(
        "record_correction", {"title": "Metrics need a correction", "wrong_belief": "a", "right_belief": "b"}
    )
    m = client.call("get_metrics")
    files = memory_files(repo) - {".ccmemory/README.md"}
    assert m["memories"] == len(files)
    by_folder: dict[str, int] = {}
    for f in files:
        by_folder[f.split("/")[1]] = by_folder.get(f.split("/")[1], 0) + 1
    assert m["by_type"]["decision"] == by_folder["decisions"]
    assert m["by_type"]["correction"] == by_folder["corrections"] == m["corrections"]["count"]
    assert m["capture_sources"] == {"explicit": len(files)}
    assert m["by_status"] == {"developmental": len(files)}
    sup = sum(1 for f in files if "supersedes:" in (repo / f).read_text(encoding="utf-8"))
    assert m["supersession"]["supersedes_edges"] == sup
    assert m["open_questions"] == sum(
        1
        for f in files
        if f.split("/")[1] == "questions" and "answer:" not in (repo / f).read_text(encoding="utf-8")
    )
    assert sum(m["created_per_week"].values()) == len(files)
    assert m["not_measured"]


def test_get_memory_by_prefix_and_path(client: SyncClient, auth: dict[str, dict[str, Any]]) -> None:
    d = auth["decision"]
    by_prefix = client.call("get_memory", {"id": d["id"][:20]})
    by_path = client.call("get_memory", {"id": d["path"]})
    assert by_prefix["id"] == by_path["id"] == d["id"]
    assert by_prefix["fields"]["rationale"] == "XSS can read localStorage"
    inc = client.call("get_memory", {"id": d["id"]})["incoming"]
    assert inc == [{"relation": "DEPENDED_ON_BY", "from": auth["correction"]["id"], "reason": "same cookie"}]


# --- resources -------------------------------------------------------------------------------------


def test_resources(client: SyncClient, repo: Path, auth: dict[str, dict[str, Any]]) -> None:
    import json

    assert {"graph://schema", "graph://stats"} <= set(client.resources())
    assert {"graph://project/{name}", "ccmemory://memory/{id}"} <= set(client.templates())
    schema = json.loads(client.read("graph://schema"))
    assert schema["types"]["decision"]["folder"] == "decisions"
    assert schema["relations"]["SUPERSEDES"]["reverse"] == "SUPERSEDED_BY"
    stats = json.loads(client.read("graph://stats"))
    assert stats["memories"] == len(memory_files(repo)) - 1
    project = json.loads(client.read(f"graph://project/{repo.name}"))
    assert project["project"] == repo.name and "auth" in project["top_topics"]
    text = client.read(f"ccmemory://memory/{auth['decision']['id']}")
    assert text == (repo / auth["decision"]["path"]).read_text(encoding="utf-8")
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError, match="not served here"):
        client.read("graph://project/some-other-project")
    with pytest.raises(MCPError, match="no memory"):
        client.read("ccmemory://memory/ZZZZZZZZZZ")


def test_list_suggestions_answers_with_evidence(client: SyncClient) -> None:
    out = client.call("list_suggestions")
    assert isinstance(out["suggestions"], list)
    for s in out["suggestions"]:  # whatever the fixture vault holds: each one carries its evidence
        assert s["key"] and s["evidence"] and s["proposes"]["type"]
