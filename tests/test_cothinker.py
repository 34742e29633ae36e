"""Concepts, hypotheses and knowledge gaps (issue 31): the file format and `check`, the round trip
file -> index (SQLite and a real Neo4j) -> MCP over stdio -> site, and hypotheses proposed from
recurring corrections (written only on `ccmemory suggest --accept`)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests._mcp_client import SyncClient, make_repo
from tests.capture_helpers import read_memory
from tests.conftest import RunCli


def _new(run_cli: RunCli, repo: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(run_cli(repo, "new", *args, "--body", "", "--json", env=env).stdout)
    return out


def _write(repo: Path, rel: str, text: str) -> Path:
    path = repo / ".ccmemory" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _check(run_cli: RunCli, repo: Path) -> list[dict[str, Any]]:
    """`check --json` findings about memory files, but for a hand-written file's missing id/created."""
    proc = run_cli(repo, "check", "--json", check=False)
    found: list[dict[str, Any]] = json.loads(proc.stdout)
    return [
        f
        for f in found
        if f["path"].startswith(".ccmemory/")
        and "config.yaml" not in f["path"]
        and not f["message"].startswith(("no 'id'", "no 'created'"))
    ]


# --- the file format and `ccmemory check` -----------------------------------------------------------


def test_check_validates_the_fields_and_a_status_its_evidence_does_not_bear_out(
    run_cli: RunCli, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    _write(
        repo,
        "hypotheses/bad-status.md",
        "---\ntype: hypothesis\ntitle: Caching halves latency\nstatement: caching halves latency\n"
        "status: proven\n---\nBody.\n",
    )
    _write(
        repo,
        "hypotheses/no-evidence.md",
        "---\ntype: hypothesis\ntitle: Pool size causes timeouts\nstatement: pool exhaustion\n"
        "prediction: timeouts stop at pool 50\nstatus: supported\n---\n",
    )
    _write(repo, "concepts/no-definition.md", "---\ntype: concept\ntitle: Tenant\nname: Tenant\n---\n")
    _write(
        repo,
        "knowledge-gaps/open.md",
        "---\ntype: knowledge_gap\ntitle: Does the CDN cache 404s\nquestion: does the CDN cache 404s?\n"
        "would_close: a curl against staging\n---\n",
    )
    _write(
        repo, "hypotheses/title-only.md", "---\ntype: hypothesis\ntitle: Cold starts come from imports\n---\n"
    )
    found = _check(run_cli, repo)
    by_file = {(f["path"].split("/")[-1], f["level"]): f for f in found}
    assert not [f for f in found if f["path"].endswith("title-only.md")]  # the title is the statement
    bad = by_file[("bad-status.md", "error")]
    assert bad["line"] == 5 and "status 'proven' is not one of: open, supported, refuted" in bad["message"]
    unsupported = by_file[("no-evidence.md", "warning")]
    assert unsupported["line"] == 6 and "no memory SUPPORTS this hypothesis" in unsupported["message"]
    assert "no 'definition'" in by_file[("no-definition.md", "warning")]["message"]
    assert not [f for f in found if f["path"].endswith("open.md")]
    assert run_cli(repo, "check", check=False).returncode == 1  # the bad status is an error

    # evidence recorded against the first version counts for the version that supersedes it
    (repo / ".ccmemory/hypotheses/bad-status.md").unlink()
    run_cli(repo, "check", "--fix")  # ids, so a newer version can name the old one
    hyp = read_memory(repo / ".ccmemory/hypotheses/no-evidence.md")
    _write(
        repo,
        "facts/pool-50.md",
        "---\ntype: fact\ntitle: Timeouts stopped at pool size 50\nrelations:\n"
        "  - {type: SUPPORTS, target: hypotheses/no-evidence.md}\n---\n",
    )
    _write(
        repo,
        "hypotheses/refuted.md",
        f"---\ntype: hypothesis\ntitle: Pool size causes timeouts (refuted)\nstatement: pool exhaustion\n"
        f"status: refuted\nsupersedes: [{hyp.id}]\n---\n",
    )
    found = _check(run_cli, repo)
    messages = {(f["path"].split("/")[-1], f["message"]) for f in found}
    assert not [m for p, m in messages if p == "no-evidence.md"]  # supported, with a SUPPORTS edge
    assert [m for p, m in messages if p == "refuted.md"] == [
        "status refuted but no memory REFUTES this hypothesis (or an earlier version): record the "
        "evidence with a relation {type: REFUTES, target: <its id>}"
    ]
    _write(
        repo,
        "insights/pool-80.md",
        "---\ntype: insight\ntitle: Timeouts came back at pool size 80\nrelations:\n"
        f"  - {{type: REFUTES, target: {hyp.id}}}\n---\n",
    )
    assert not [f for f in _check(run_cli, repo) if f["path"].endswith("refuted.md")]


# --- the round trip: files -> both backends -> MCP -> site ------------------------------------------


def _backend_env(request: pytest.FixtureRequest) -> dict[str, str]:
    if request.param == "sqlite":
        return {"CCMEMORY_TELEMETRY": "off"}
    server = request.getfixturevalue("neo4j_server")
    return {
        "CCMEMORY_BACKEND": "neo4j",
        "CCMEMORY_NEO4J_URI": server.uri,
        "CCMEMORY_NEO4J_USER": server.user,
        "CCMEMORY_NEO4J_PASSWORD": server.password,
        "CCMEMORY_PROJECT": "cothinker-" + uuid.uuid4().hex[:10],
        "CCMEMORY_TELEMETRY": "off",
    }


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def backend_env(request: pytest.FixtureRequest) -> dict[str, str]:
    return _backend_env(request)


def test_round_trip_through_the_index_mcp_and_site(
    run_cli: RunCli, tmp_path: Path, backend_env: dict[str, str]
) -> None:
    env = backend_env
    repo = make_repo(tmp_path / "repo")
    concept = _new(
        run_cli,
        repo,
        env,
        "concept",
        "Idempotency key",
        "--field",
        "name=Idempotency key",
        "--field",
        "definition=A client-chosen token that makes a retried payment request a no-op",
        "--field",
        "domain=payments",
        "--topic",
        "payments",
    )
    hyp1 = _new(
        run_cli,
        repo,
        env,
        "hypothesis",
        "Retries double-charge because the key is per attempt",
        "--field",
        "statement=Retries double-charge because the idempotency key is minted per attempt",
        "--field",
        "prediction=Reusing the first attempt's key makes duplicate charges stop",
        "--topic",
        "payments",
    )
    evidence = _new(
        run_cli,
        repo,
        env,
        "fact",
        "No duplicate charges since the key is reused across retries",
        "--relation",
        f"SUPPORTS:{hyp1['id']}:a week of payment logs",
    )
    hyp2 = _new(
        run_cli,
        repo,
        env,
        "hypothesis",
        "Retries double-charge because the key is per attempt (supported)",
        "--field",
        "statement=Retries double-charge because the idempotency key is minted per attempt",
        "--field",
        "status=supported",
        "--supersedes",
        hyp1["id"],
    )
    gap = _new(
        run_cli,
        repo,
        env,
        "knowledge_gap",
        "How long does the provider keep idempotency keys",
        "--field",
        "question=How long does the payment provider remember an idempotency key?",
        "--field",
        "would_close=The provider's API documentation or a support answer",
        "--topic",
        "payments",
    )
    # the files: the seed's fields, in the same format as every memory
    c = read_memory(repo / concept["path"])
    assert c.type == "concept" and c.fields == {
        "name": "Idempotency key",
        "definition": "A client-chosen token that makes a retried payment request a no-op",
        "domain": "payments",
    }
    assert concept["path"].startswith(".ccmemory/concepts/")
    h1 = read_memory(repo / hyp1["path"])
    assert h1.fields["status"] == "open" and h1.fields["prediction"].startswith("Reusing")
    assert hyp1["path"].startswith(".ccmemory/hypotheses/") and gap["path"].startswith(
        ".ccmemory/knowledge-gaps/"
    )
    e = read_memory(repo / evidence["path"])
    assert [(r.type, r.target, r.reason) for r in e.relations] == [
        ("SUPPORTS", hyp1["id"], "a week of payment logs")
    ]
    assert read_memory(repo / hyp2["path"]).supersedes == [hyp1["id"]]
    assert not [f for f in _check(run_cli, repo) if f["level"] == "error"]
    assert not [f for f in _check(run_cli, repo) if "SUPPORTS" in f["message"] or "no '" in f["message"]]

    run_cli(repo, "reindex", env=env)
    with SyncClient.stdio(repo, env=env) as client:
        got = client.call("get_memory", {"id": hyp2["id"]})
        assert got["fields"]["status"] == "supported"
        assert got["hypothesis"] == {
            "status": "supported",
            "evidence": {"supports": [evidence["id"]], "refutes": []},
        }
        first = client.call("get_memory", {"id": hyp1["id"]})
        assert first["superseded_by"] == [hyp2["id"]]
        assert {
            "relation": "SUPPORTED_BY",
            "from": evidence["id"],
            "reason": "a week of payment logs",
        } in first["incoming"]
        hits = client.call("search", {"query": "idempotency key", "types": ["concept"], "mode": "text"})
        assert [h["id"] for h in hits["results"]] == [concept["id"]]
        # recorded over MCP: an open hypothesis (title from the statement) and refuting evidence
        tools = {t.name for t in client.list_tools()}
        assert (
            "record" in tools and not {"record_concept", "record_hypothesis", "record_knowledge_gap"} & tools
        )
        hyp3 = client.call(
            "record",
            {
                "type": "hypothesis",
                "title": "Webhook retries arrive out of order",
                "fields": {
                    "statement": "Webhook retries arrive out of order",
                    "prediction": "Sequence numbers in webhook logs are not monotonic",
                },
            },
        )
        refute = client.call(
            "record_insight",
            {
                "title": "Webhook sequence numbers were monotonic for a month",
                "relations": [{"type": "REFUTES", "target": hyp3["id"], "reason": "30 days of logs"}],
            },
        )
        opened = client.call("query_open_questions", {})
        rows = {r["id"]: r for r in opened["results"]}
        assert set(rows) == {gap["id"], hyp3["id"]}  # hyp2 is supported, hyp1 superseded
        assert rows[gap["id"]]["would_close"] == "The provider's API documentation or a support answer"
        assert rows[hyp3["id"]]["status"] == "open"
        assert rows[hyp3["id"]]["evidence"] == {"supports": 0, "refutes": 1}
        only = client.call("query_open_questions", {"types": ["knowledge_gap"]})
        assert [r["id"] for r in only["results"]] == [gap["id"]]
        unknown = client.error(
            "record",
            {"type": "hypothesis", "title": "x is y", "fields": {"statement": "x", "status": "proven"}},
        )
        assert unknown["code"] == "invalid_argument" and "proven" in unknown["message"]
        assert not list((repo / ".ccmemory").rglob("*x-is-y*"))
    digest = run_cli(repo, "context", "--budget", "2000", env=env).stdout
    tested = digest[digest.index("## Open hypotheses (being tested)") :]
    assert "Webhook retries arrive out of order — test: Sequence numbers" in tested
    assert "(supported)" not in tested  # only open ones are being tested
    written = read_memory(repo / refute["path"])
    assert [(r.type, r.target) for r in written.relations if r.type == "REFUTES"] == [("REFUTES", hyp3["id"])]

    out = tmp_path / "public"
    proc = run_cli(repo, "site", "build", "--out", str(out), "--json", env=env)
    site = Path(json.loads(proc.stdout)["site_dir"])
    page = (site / "hypotheses.html").read_text(encoding="utf-8")
    assert "Retries double-charge because the key is per attempt (supported)" in page
    assert "Webhook retries arrive out of order" in page
    assert "How long does the provider keep idempotency keys" in page
    assert "The provider&#39;s API documentation" in page or "The provider's API documentation" in page
    row = page[page.index("(supported)") :]
    assert 'ccm-hyp-supported">supported<' in row[:600] and 'class="ccm-supports">1<' in row[:800]
    mem = (site / "memories" / f"{hyp2['id']}.html").read_text(encoding="utf-8")
    ev = mem[mem.index('id="evidence"') :]
    assert "supported by" in ev and "No duplicate charges since the key is reused across retries" in ev
    assert "Idempotency key" in (site / "log" / "concepts.html").read_text(encoding="utf-8")
    assert "How long does the provider" in (site / "log" / "knowledge-gaps.html").read_text(encoding="utf-8")


def test_the_lean_record_tool_takes_the_new_types(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": "", "CCMEMORY_TELEMETRY": "off"}) as lean:
        tools = {t.name: t for t in lean.list_tools()}
        assert len(tools) == 5  # the lean list stays five tools
        enum = tools["record"].input_schema["properties"]["type"]["enum"]
        assert {"concept", "hypothesis", "knowledge_gap"} <= set(enum)
        gap = lean.call(
            "record",
            {
                "type": "knowledge_gap",
                "title": "Which regions the CDN serves from",
                "fields": {
                    "question": "Which regions does the CDN serve from?",
                    "would_close": "the contract",
                },
            },
        )
        err = lean.error("record", {"type": "concept", "title": "Tenant", "fields": {"status": "open"}})
        assert "'status' not a field of concept" in err["message"] and "definition" in err["hint"]
        got = lean.call("get", {"id": gap["id"]})
        assert got["fields"]["would_close"] == "the contract" and got["type"] == "knowledge_gap"


# --- hypotheses proposed from recurring corrections ---------------------------------------------------


def _correction(repo: Path, n: int, day: int, session: str, title: str, wrong: str, right: str) -> None:
    from ccmemory.core.model import new_id

    _write(
        repo,
        f"corrections/2026-11-{day:02d}-ledger-{n}.md",
        f"---\nid: {new_id()}\ntype: correction\ntitle: {title}\n"
        f"created: 2026-11-{day:02d}T10:00:00Z\nsession: {session}\nfiles: [src/ledger.py]\n"
        f"wrong_belief: {wrong}\nright_belief: {right}\n---\n",
    )


def test_recurring_corrections_propose_a_hypothesis_written_only_on_accept(
    run_cli: RunCli, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    cents = ("Ledger amounts are integer cents", "amounts are floats", "amounts are integer cents")
    _correction(repo, 1, 3, "s-one", *cents)
    _correction(
        repo, 2, 3, "s-one", "Ledger amounts are stored as cents", "amounts are float euros", cents[2]
    )
    # the same file, another day, another mistake: shares the file, not the mistake
    _correction(
        repo, 4, 5, "s-zero", "Ledger rows are never deleted", "old rows get purged", "rows are archived"
    )
    run_cli(repo, "reindex")
    kinds = {s["kind"] for s in json.loads(run_cli(repo, "suggest", "--json").stdout)}
    assert "corrections" in kinds and "hypothesis" not in kinds  # one occasion per mistake: not recurring
    _correction(repo, 3, 9, "s-two", "Ledger amounts are cents, not floats", "amounts are floats", cents[2])
    run_cli(repo, "reindex")
    before = sorted(p.name for p in (repo / ".ccmemory").rglob("*.md"))
    items = json.loads(run_cli(repo, "suggest", "--json").stdout)
    hyp = next(s for s in items if s["kind"] == "hypothesis")
    assert len(hyp["evidence"]) == 3 and "corrected 3 times on 2 occasions" in hyp["why"]
    assert [s["kind"] for s in items].count("hypothesis") == 1  # the purge correction is not in it
    proposed = hyp["proposes"]
    assert proposed["type"] == "hypothesis" and proposed["fields"]["status"] == "open"
    assert "src/ledger.py" in proposed["fields"]["statement"] and proposed["fields"]["prediction"]
    assert sorted(p.name for p in (repo / ".ccmemory").rglob("*.md")) == before  # listing writes nothing
    made = json.loads(run_cli(repo, "suggest", "--accept", hyp["key"], "--json").stdout)
    m = read_memory(repo / made["path"])
    assert made["path"].startswith(".ccmemory/hypotheses/") and m.source == "rules"
    assert {r.target for r in m.relations if r.type == "CITES"} == set(hyp["evidence"])
    assert m.files == ["src/ledger.py"] and m.fields["status"] == "open"
    assert hyp["key"] not in {s["key"] for s in json.loads(run_cli(repo, "suggest", "--json").stdout)}
    assert not [f for f in _check(run_cli, repo) if f["path"] == made["path"] and f["level"] == "error"]


def test_capture_never_writes_a_hypothesis_on_its_own() -> None:
    from ccmemory.features.capture import extract

    assert "hypothesis" in extract.NOT_CAPTURED
    cand = {"type": "hypothesis", "title": "The cache causes it", "fields": {"statement": "the cache"}}
    assert extract.to_memory(cand, None, "01JD3K8X9QF2B7M4R6T0VWYZAC", "test") is None  # type: ignore[arg-type]
