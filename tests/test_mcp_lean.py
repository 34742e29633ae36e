"""The lean default tool list (issue 27), through the real MCP client over stdio."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccmemory.core.model import TYPES
from tests._mcp_client import SyncClient, make_repo

LEAN = {"record", "search", "get", "trace", "context"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("lean") / "repo")


@pytest.fixture(scope="module")
def client(repo: Path) -> Iterator[SyncClient]:
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": "", "CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as c:
        yield c


def _size(tools: list) -> int:  # type: ignore[type-arg]
    """Characters of the tool list as the client receives it (name, description, schemas)."""
    return len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in tools]))


def test_the_default_list_is_lean_and_small(client: SyncClient) -> None:
    tools = client.list_tools()
    assert {t.name for t in tools} == LEAN
    assert _size(tools) / 4 <= 4000, f"{_size(tools)} characters"


def test_full_mode_keeps_every_tool(repo: Path) -> None:
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": "full"}) as full:
        tools = full.list_tools()
    names = {t.name for t in tools}
    assert {f"record_{t}" for t, spec in TYPES.items() if spec.record_tool} <= names
    assert "record" in names and "get_memory" in names and len(names) >= 30
    (repo / ".ccmemory" / "config.yaml").write_text("mcp: {tools: full}\n")
    try:
        with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": ""}) as by_config:
            assert len(by_config.list_tools()) == len(names)
    finally:
        (repo / ".ccmemory" / "config.yaml").write_text("")


@pytest.mark.parametrize("mtype", sorted(TYPES))
def test_record_writes_every_type(client: SyncClient, repo: Path, mtype: str) -> None:
    spec = TYPES[mtype]
    fields = {f.name: ("yes" if f.kind != "list" else ["a", "b"]) for f in spec.own if f.min_length > 0}
    for f in spec.own:
        if f.kind == "enum" and f.name in fields:
            fields[f.name] = f.choices[0]
    out = client.call("record", {"type": mtype, "title": f"A {mtype} about the lean tools", "fields": fields})
    text = (repo / out["path"]).read_text(encoding="utf-8")
    assert f"type: {mtype}" in text and f"A {mtype} about the lean tools" in text


def test_record_refuses_a_field_of_another_type_naming_the_allowed_ones(
    client: SyncClient, repo: Path
) -> None:
    before = sorted(p.name for p in (repo / ".ccmemory").rglob("*.md"))
    secret = "ghp_" + "Z" * 36
    err = client.error(
        "record", {"type": "fact", "title": "Redis runs on 6380", "fields": {"rationale": secret}}
    )
    assert err["code"] == "invalid_argument" and "'rationale' not a field of fact" in err["message"]
    assert "category" in err["hint"] and secret not in json.dumps(err)
    assert sorted(p.name for p in (repo / ".ccmemory").rglob("*.md")) == before
    assert "did you mean" in client.error("search", {"query": "x", "type": ["fact"]})["message"]


def test_search_get_trace_context(client: SyncClient) -> None:
    old = client.call("record", {"type": "decision", "title": "Use Celery for background jobs"})
    new = client.call(
        "record",
        {"type": "decision", "title": "Use Dramatiq for background jobs", "supersedes": [old["id"]]},
    )
    hits = client.call("search", {"query": "background jobs", "mode": "text"})["results"]
    assert hits and hits[0]["id"] == new["id"]  # the superseded one is hidden
    got = client.call("get", {"id": new["id"]})
    assert got["id"] == new["id"] and old["id"] in json.dumps(got)  # its relations, both ways
    chain = client.call("trace", {"id": old["id"]})
    assert [m["id"] for m in chain["chain"]] == [old["id"], new["id"]]
    ctx = client.call("context", {"task": "add a background job"})
    assert new["id"] in json.dumps(ctx)


def test_recording_an_identical_memory_twice_answers_with_the_first(client: SyncClient, repo: Path) -> None:
    """Two clients (or a retry) recording the same type, title, body and fields: one file, and the second
    call answers with the existing memory (issue 33) instead of a second file linked "restates it".
    A different body is a new memory."""
    args = {
        "type": "fact",
        "title": "The numbat exporter runs at 03:00 UTC",
        "body": "Cron in infra/cron.yaml.",
    }
    first = client.call("record", args)
    again = client.call("record", {**args, "body": "  Cron in   infra/cron.yaml. "})
    assert again["duplicate"] is True and again["id"] == first["id"] and again["path"] == first["path"]
    assert len(list((repo / ".ccmemory").rglob("*numbat*"))) == 1
    other = client.call("record", {**args, "body": "Cron in infra/cron.yaml; moved to 04:00 in March."})
    assert other["id"] != first["id"] and "duplicate" not in other
    # the type's fields count: a retry with the same rationale is one file, a different one is new
    decision = {"type": "decision", "title": "Numbat exports go to S3", "fields": {"rationale": "cheap"}}
    d1 = client.call("record", decision)
    assert client.call("record", decision)["id"] == d1["id"]
    d3 = client.call("record", {**decision, "fields": {"rationale": "cheap and versioned"}})
    assert d3["id"] != d1["id"] and "duplicate" not in d3
