"""detect_issues over hand-written memory files, the no-vault and backend-down errors, and the
streamable HTTP transport."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccmemory.core.model import new_id
from tests._mcp_client import SyncClient, free_port, make_repo, start_http_server


def write(repo: Path, folder: str, name: str, text: str) -> None:
    path = repo / ".ccmemory" / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def memory(mid: str, mtype: str, title: str, extra: str = "") -> str:
    return (
        f"---\nid: {mid}\ntype: {mtype}\ntitle: {title}\ncreated: 2026-11-01T10:00:00Z\n{extra}---\nBody.\n"
    )


@pytest.fixture(scope="module")
def issues_repo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    repo = make_repo(tmp_path_factory.mktemp("issues") / "repo")
    ids = {k: new_id() for k in ("a", "b", "c", "d", "use", "dont", "orphan", "x", "y", "z", "broken")}
    write(
        repo,
        "decisions",
        "a.md",
        memory(
            ids["a"],
            "decision",
            "A needs B",
            f"topics: [core]\nrelations:\n  - {{type: DEPENDS_ON, target: {ids['b']}}}\n",
        ),
    )
    write(
        repo,
        "decisions",
        "b.md",
        memory(
            ids["b"],
            "decision",
            "B needs A",
            f"topics: [core]\nrelations:\n  - {{type: DEPENDS_ON, target: {ids['a']}}}\n",
        ),
    )
    write(
        repo, "decisions", "c.md", memory(ids["c"], "decision", "Tabs for indentation", "topics: [style]\n")
    )
    write(
        repo,
        "decisions",
        "d.md",
        memory(
            ids["d"],
            "decision",
            "Spaces for indentation",
            f"topics: [style]\nrelations:\n"
            f"  - {{type: CONFLICTS_WITH, target: {ids['c']}, reason: one style}}\n",
        ),
    )
    write(
        repo,
        "decisions",
        "use.md",
        memory(ids["use"], "decision", "Use an ORM for queries", "topics: [db]\n"),
    )
    write(repo, "decisions", "dont.md", memory(ids["dont"], "decision", "Don't use an ORM", "topics: [db]\n"))
    write(repo, "facts", "orphan.md", memory(ids["orphan"], "fact", "A lonely fact"))
    write(
        repo,
        "facts",
        "broken.md",
        memory(
            ids["broken"],
            "fact",
            "Links to a ghost",
            "topics: [g]\nrelations:\n  - {type: CITES, target: 01GHOSTGHOSTGHOSTGHOSTGHOS}\n",
        ),
    )
    write(repo, "facts", "bad.md", "---\nid: [unclosed\n---\nbody\n")
    # supersession cycle x -> y -> z -> x (hand-edited files can do this; tools cannot)
    write(
        repo,
        "decisions",
        "x.md",
        memory(ids["x"], "decision", "X", f"topics: [s]\nsupersedes: [{ids['z']}]\n"),
    )
    write(
        repo,
        "decisions",
        "y.md",
        memory(ids["y"], "decision", "Y", f"topics: [s]\nsupersedes: [{ids['x']}]\n"),
    )
    write(
        repo,
        "decisions",
        "z.md",
        memory(ids["z"], "decision", "Z", f"topics: [s]\nsupersedes: [{ids['y']}]\n"),
    )
    ids["repo"] = str(repo)
    return ids


@pytest.fixture(scope="module")
def client(issues_repo: dict[str, str]) -> Iterator[SyncClient]:
    with SyncClient.stdio(Path(issues_repo["repo"])) as c:
        yield c


def test_detect_issues_finds_each_kind(client: SyncClient, issues_repo: dict[str, str]) -> None:
    ids = issues_repo
    res = client.call("detect_issues", {"limit": 50})
    assert set(res["summary"]) == {
        "contradictions",
        "stale",
        "orphans",
        "cycles",
        "broken_links",
        "invalid_files",
    }
    pairs = [{m["id"] for m in c["members"]} for c in res["contradictions"]["items"]]
    assert {ids["c"], ids["d"]} in pairs
    assert {ids["use"], ids["dont"]} in pairs
    rules = " ".join(c["rule"] for c in res["contradictions"]["items"])
    assert "CONFLICTS_WITH" in rules and "heuristic" in rules
    assert [m["id"] for m in res["orphans"]["items"]] == [ids["orphan"]]
    cycles = {(c["relation"], frozenset(m["id"] for m in c["members"])) for c in res["cycles"]["items"]}
    assert ("DEPENDS_ON", frozenset({ids["a"], ids["b"]})) in cycles
    assert ("SUPERSEDES", frozenset({ids["x"], ids["y"], ids["z"]})) in cycles
    broken = res["broken_links"]["items"]
    assert [(b["from"]["id"], b["missing_target"]) for b in broken] == [
        (ids["broken"], "01GHOSTGHOSTGHOSTGHOSTGHOS")
    ]
    assert [p["path"] for p in res["invalid_files"]["items"]] == [".ccmemory/facts/bad.md"]
    assert res["summary"]["invalid_files"] == 1
    only = client.call("detect_issues", {"kinds": ["orphans"], "limit": 1})
    assert set(only) == {"orphans", "summary"} and len(only["orphans"]["items"]) == 1
    assert client.error("detect_issues", {"kinds": ["everything"]})["code"] == "invalid_argument"


def test_search_says_an_invalid_file_was_not_searched(client: SyncClient) -> None:
    """A memory file the index left out cannot be found: the search says so, naming it, rather
    than answering as if it did not exist (here through the real MCP client)."""
    for query in ("tabs indentation", "zzz nothing matches this"):
        res = client.call("search", {"query": query, "mode": "text"})
        assert res["notices"] == [
            "1 memory file is invalid, so not indexed and not searched: .ccmemory/facts/bad.md;"
            " `ccmemory check` says why"
        ]


def test_stale_developmental_age(client: SyncClient) -> None:
    # the hand-written decisions were created 2026-11-01 and are not in main: developmental
    res = client.call("query_stale_decisions", {"developmental_days": 0, "check_files": False, "limit": 50})
    assert res["results"] and all("developmental for" in " ".join(r["reasons"]) for r in res["results"])
    far = client.call("query_stale_decisions", {"developmental_days": 3650, "check_files": False})
    assert far["results"] == []


def test_no_vault_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "bare", init=False)
    with SyncClient.stdio(repo) as c:
        assert len(c.list_tools()) >= 25  # the server starts and lists its tools anyway
        err = c.error("search", {"query": "anything"})
        assert err["code"] == "no_vault" and "ccmemory init" in err["message"] + err["hint"]
        err = c.error("record_fact", {"title": "Cannot be written"})
        assert err["code"] == "no_vault"
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError, match="ccmemory init"):
            c.read("graph://stats")
        # `ccmemory init` while the server runs: the next call works
        subprocess.run([sys.executable, "-m", "ccmemory", "init"], cwd=repo, check=True, capture_output=True)
        assert c.call("record_fact", {"title": "Written after init"})["status"] == "developmental"
    assert len(list((repo / ".ccmemory" / "facts").iterdir())) == 1  # only the one written after init


def test_backend_down_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "down")
    env = {
        "CCMEMORY_BACKEND": "neo4j",
        "CCMEMORY_NEO4J_URI": "bolt://127.0.0.1:9",
        "CCMEMORY_NEO4J_PASSWORD": "x",
    }
    with SyncClient.stdio(repo, env=env) as c:
        err = c.error("search", {"query": "anything"})
        assert err["code"] == "index_unavailable" and "neo4j" in err["message"].lower()
        assert "untouched" in err["hint"]
        assert (
            c.error("record_decision", {"title": "Not while the index is down"})["code"]
            == "index_unavailable"
        )
    assert not (repo / ".ccmemory" / "decisions").exists()


def listening_addresses(port: int) -> list[str]:
    """IPv4/IPv6 addresses listening on `port`, from /proc/net (Linux)."""
    out: list[str] = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, hexport = local.rsplit(":", 1)
            if state == "0A" and int(hexport, 16) == port:
                if addr == "0100007F":
                    out.append("127.0.0.1")
                else:
                    out.append(addr)
    return out


def test_streamable_http_transport(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "http")
    port = free_port()
    proc = start_http_server(repo, port, "/mcp")
    try:
        assert listening_addresses(port) in ([], ["127.0.0.1"])  # loopback only ([] = no /proc)
        with SyncClient.http(f"http://127.0.0.1:{port}/mcp") as c:
            assert "search" in {t.name for t in c.list_tools()}
            rec = c.call("record_decision", {"title": "Serve MCP over HTTP too", "topics": ["transport"]})
            assert (repo / rec["path"]).is_file()
            hits = c.call("search", {"query": "serve MCP HTTP"})["results"]
            assert hits[0]["id"] == rec["id"]
            assert c.error("get_memory", {"id": "ZZZZZZZZ"})["code"] == "not_found"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_repo_option_and_env(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "elsewhere")
    outside = tmp_path / "outside"
    outside.mkdir()
    with SyncClient.stdio(outside, args=["--repo", str(repo)]) as c:
        rec = c.call("record_fact", {"title": "Served through --repo"})
        assert (repo / rec["path"]).is_file()
    with SyncClient.stdio(outside, env={"CCMEMORY_REPO": str(repo / ".ccmemory")}) as c:
        hits = c.call("search", {"query": "served through repo"})["results"]
        assert [h["id"] for h in hits] == [rec["id"]]
