"""Issue 14 through the real MCP client over stdio (`python -m ccmemory mcp`):

5 strict arguments: every tool answers a misspelled argument name with `invalid_argument` naming
  the closest valid parameter, instead of silently ignoring it;
6 `suggest_connections` without an id: the strongest missing links across the project;
3 the one resolver: the same ambiguous-prefix message as the CLI, slugs and paths as ids;
1 a hand-written file written behind the server's back is served (provisional id).
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccmemory.core.model import new_id, provisional_id
from ccmemory.core.vault import Vault
from tests._mcp_client import SyncClient, make_repo
from tests.conftest import cli_env, make_memory


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("strict") / "repo")


@pytest.fixture(scope="module")
def client(repo: Path) -> Iterator[SyncClient]:
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as c:
        yield c


def _misspell(name: str) -> str:
    """A plausible typo: drop the last letter of a plural, else add one ('types' -> 'type')."""
    return name[:-1] if name.endswith("s") and len(name) > 3 else name + "s"


def _valid_args(tool: Any) -> dict[str, Any]:
    """Arguments that satisfy the tool's required parameters (so only the typo can fail)."""
    schema = tool.input_schema
    args: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = schema["properties"][name]
        kind = prop.get("type") or next(
            (o.get("type") for o in prop.get("anyOf", []) if o.get("type")), "string"
        )
        if kind == "array":
            args[name] = ["x-topic"]
        elif kind == "integer":
            args[name] = prop.get("minimum", 1)
        else:
            args[name] = "a valid enough text"
    return args


def test_every_tool_rejects_a_misspelled_argument_naming_the_closest(client: SyncClient, repo: Path) -> None:
    tools = client.list_tools()
    assert len(tools) >= 25
    before = sorted(p.name for p in (repo / ".ccmemory").rglob("*.md"))
    checked = 0
    for tool in tools:
        props = sorted(tool.input_schema.get("properties", {}))
        args = _valid_args(tool)
        if not props:  # a tool without parameters: any argument is unknown
            err = client.error(tool.name, {"limit": 5})
            assert err["code"] == "invalid_argument" and "'limit'" in err["message"], tool.name
            checked += 1
            continue
        for name in props:
            typo = _misspell(name)
            if typo in props:
                continue
            want = difflib.get_close_matches(typo, props, n=1, cutoff=0.5)
            err = client.error(tool.name, {**args, typo: args.get(name, "x")})
            assert err["code"] == "invalid_argument", (tool.name, typo, err)
            assert f"unknown argument {typo!r} for tool {tool.name}" in err["message"], err
            assert want and f"did you mean {want[0]!r}" in err["message"], (tool.name, typo, err)
            assert name in err["hint"]
            checked += 1
    assert checked >= 100  # every parameter of every tool, misspelled once
    # nothing was written by any rejected record_* call
    assert sorted(p.name for p in (repo / ".ccmemory").rglob("*.md")) == before


def test_the_issue_example_search_type_instead_of_types(client: SyncClient) -> None:
    client.call("record_fact", {"title": "Redis runs on port 6380 here", "body": "redis"})
    client.call("record_decision", {"title": "Use redis for the session cache", "body": "redis"})
    err = client.error("search", {"query": "redis", "type": ["fact"]})
    assert err["code"] == "invalid_argument"
    assert "did you mean 'types'?" in err["message"]
    ok = client.call("search", {"query": "redis", "types": ["fact"], "mode": "text"})
    assert ok["results"] and {r["type"] for r in ok["results"]} == {"fact"}


def test_misspelled_keys_inside_relations_are_rejected(client: SyncClient, repo: Path) -> None:
    target = client.call("record_fact", {"title": "Postgres 16 is the database"})
    before = sorted((repo / ".ccmemory").rglob("*.md"))
    err = client.error(
        "record_decision",
        {
            "title": "Pool connections",
            "relations": [{"type": "DEPENDS_ON", "target": target["id"], "reasn": "x"}],
        },
    )
    assert err["code"] == "invalid_argument"
    assert (
        "relations[0].'reasn'" in err["message"] and "did you mean relations[0].'reason'?" in err["message"]
    )
    assert sorted((repo / ".ccmemory").rglob("*.md")) == before


def test_suggest_connections_without_an_id_finds_the_strongest_missing_links(client: SyncClient) -> None:
    a = client.call(
        "record_decision",
        {
            "title": "Pgbouncer pools Postgres connections",
            "body": "pgbouncer transaction pooling for postgres",
        },
    )
    b = client.call(
        "record_insight",
        {"title": "Pgbouncer transaction pooling breaks prepared statements", "body": "pgbouncer postgres"},
    )
    client.call("record_insight", {"title": "Frontend bundle size doubled", "body": "webpack chunks"})
    res = client.call("suggest_connections", {"limit": 5})
    assert "rule" in res and res["results"]
    top = res["results"][0]
    assert {top["from"]["id"], top["to"]["id"]} == {a["id"], b["id"]}
    assert top["from"]["id"] == b["id"]  # proposed on the newer memory, where relations are written
    assert "pgbouncer" in top["shared_words"] and top["suggested_relation"] in ("DEPENDS_ON", "RELATES_TO")
    scores = [r["score"] for r in res["results"]]
    assert scores == sorted(scores, reverse=True)
    # once linked, the pair is no longer suggested
    client.call(
        "record_fact",
        {"title": "Linking note", "relations": [{"type": "RELATES_TO", "target": a["id"]}]},
    )
    replaced = client.call(
        "memory_supersede",
        {
            "old_id": b["id"],
            "title": "Pgbouncer transaction pooling breaks prepared statements (v2)",
            "body": "pgbouncer postgres; see the pooling decision",
            "relations": [{"type": "DEPENDS_ON", "target": a["id"]}],
        },
    )
    again = client.call("suggest_connections", {"limit": 20})
    pairs = [{r["from"]["id"], r["to"]["id"]} for r in again["results"]]
    assert {a["id"], b["id"]} not in pairs and {a["id"], replaced["id"]} not in pairs
    # with an id it is the per-memory mode, as before
    one = client.call("suggest_connections", {"id": a["id"]})
    assert one["memory"]["id"] == a["id"]


def test_ambiguous_prefix_same_message_as_the_cli(client: SyncClient, repo: Path) -> None:
    vault = Vault(repo)
    ms = 1_760_000_000_000  # in the past: new_id keeps later ids after it
    ids = sorted(new_id(now_ms=ms) for _ in range(3))
    for i, mid in enumerate(ids):
        vault.write_new(make_memory(title=f"Twin memory {i}", id=mid))
    prefix = ids[0][:9]
    err = client.error("get_memory", {"id": prefix})
    assert err["code"] == "ambiguous" and f"'{prefix}' matches 3 memories:" in err["message"]
    assert client.error("trace_decision", {"id": prefix})["message"] == err["message"]
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", "show", prefix],
        cwd=repo,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stderr.strip() == f"Error: {err['message']}"
    # the unique prefix, the path and the slug all name one memory
    path = next(p for p in (repo / ".ccmemory").rglob("*.md") if "twin-memory-1" in p.name)
    rel = path.relative_to(repo).as_posix()
    for ref in (ids[1][:14], ids[1].lower(), rel, path.stem, "twin-memory-1"):
        assert client.call("get_memory", {"id": ref})["id"] == ids[1], ref


def test_hand_written_file_is_served_by_the_tools(client: SyncClient, repo: Path) -> None:
    folder = repo / ".ccmemory" / "decisions"
    (folder / "use-uv.md").write_text(
        "---\ntype: decision\ntitle: Use uv for environments\n---\nuv, not pip-tools.\n"
    )
    mid = provisional_id(".ccmemory/decisions/use-uv.md")
    got = client.call("get_memory", {"id": "use-uv"})
    assert got["id"] == mid and got["title"] == "Use uv for environments"
    found = client.call("search", {"query": "uv environments", "mode": "text"})
    assert mid in [r["id"] for r in found["results"]]
    linked = client.call(
        "record_decision",
        {
            "title": "Lock files with uv",
            "relations": [{"type": "DEPENDS_ON", "target": ".ccmemory/decisions/use-uv.md"}],
        },
    )
    # a provisional id is never written into another file: the path is (it outlives the fix)
    text = (repo / linked["path"]).read_text()
    assert "target: .ccmemory/decisions/use-uv.md" in text and mid not in text
    trace = client.call("trace_decision", {"id": linked["id"]})
    assert mid in json.dumps(trace)


def test_a_rejected_value_is_never_echoed(client: SyncClient) -> None:
    """Issue 32: a secret typed into the wrong field comes back as the field and the expected type,
    not as pydantic's `input_value=` quote of it."""
    secret = "ghp_" + "Q" * 36
    for args in ({"query": "x", "limit": secret}, {"query": "x", "limit": {"token": secret}}):
        err = client.error("search", args)
        assert err["code"] == "invalid_argument" and "limit" in err["message"]
        assert secret not in json.dumps(err) and "ghp_" not in json.dumps(err)
        assert "input_type=" in err["message"]
