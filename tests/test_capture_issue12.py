"""Issue 12: what gets remembered must be right. The five scenarios of the issue, end to end:
explicit commands never dropped (a reversal supersedes), no upside-down correction, every
substantive segment reaches the LLM, `import` re-runnable, gotchas/exceptions in context."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from click.testing import CliRunner

from ccmemory.app.service import Service
from ccmemory.core.vault import Vault
from ccmemory.features.capture.backfill import import_path
from ccmemory.features.capture.extract import Context, Planner, apply_plan
from ccmemory.features.capture.providers.choose import Choice
from ccmemory.features.capture.providers.testing import TestProvider
from ccmemory.features.capture.segment import build
from ccmemory.features.capture.settings import CaptureSettings
from ccmemory.features.capture.store import Store
from ccmemory.features.context import context_for
from ccmemory.surfaces.cli.cmd_import import command as import_command
from tests.capture_helpers import hook_env, make_repo, memory_files, read_memory, run_hook, wait_for_worker
from tests.replay import replay
from tests.test_capture_providers import anthropic_with, messages_response

FIRST = "Use Redis streams for the event bus because we already run Redis"
SECOND = "Use Kafka for the event bus instead of Redis streams because we need replay across consumers"


def ctx(repo: Path, key: str, session: str = "s1") -> Context:
    return Context(repo, session, "main", "dev@example.com", key, datetime(2026, 11, 21, 9, 0, tzinfo=UTC))


def rules_planner(repo: Path) -> Planner:
    return Planner(Store(Vault(repo), service=Service), Choice("rules", "r"), CaptureSettings(), None)


def transcript(turns: list[str], session: str = "s12") -> list[dict[str, Any]]:
    """Claude Code records: one user turn (typed prompt or slash-command wrapper) + a reply each."""
    out: list[dict[str, Any]] = []
    parent = None
    for i, text in enumerate(turns):
        if text.startswith("/"):
            name, _, args = text.partition(" ")
            text = (
                f"<command-message>{name[1:]} is running…</command-message>\n"
                f"<command-name>{name}</command-name>\n<command-args>{args}</command-args>"
            )
        ts = f"2026-11-20T10:{i:02d}:00Z"
        out.append(
            {
                "type": "user",
                "uuid": f"u{i}",
                "parentUuid": parent,
                "sessionId": session,
                "cwd": "/w",
                "timestamp": ts,
                "message": {"role": "user", "content": text},
            }
        )
        out.append(
            {
                "type": "assistant",
                "uuid": f"a{i}",
                "parentUuid": f"u{i}",
                "sessionId": session,
                "timestamp": ts.replace(":00Z", ":05Z"),
                "requestId": f"req_{i}",
                "message": {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "type": "message",
                    "content": [{"type": "text", "text": "Noted."}],
                },
            }
        )
        parent = f"a{i}"
    return out


def write_transcript(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


# --- 1. an explicit command is never dropped; a reversal supersedes ----------------------------


def test_scenario1_second_decision_supersedes_through_the_hooks(tmp_path: Path) -> None:
    """Both /decision commands of one session go through the real hooks and the worker (rules
    only): two files, the second supersedes the first, a second replay writes nothing."""
    repo = make_repo(tmp_path)
    src = write_transcript(tmp_path / "s.jsonl", transcript([f"/decision {FIRST}", f"/decision {SECOND}"]))
    env = hook_env(CCMEMORY_PROVIDER="rules")
    result = replay(src, repo, session="s12", env=env)
    assert set(result.codes) == {0}
    wait_for_worker(repo)
    files = memory_files(repo)
    mems = {read_memory(f).title: read_memory(f) for f in files}
    assert sorted(mems) == [
        "Use Kafka for the event bus instead of Redis streams",
        "Use Redis streams for the event bus",
    ]
    first = mems["Use Redis streams for the event bus"]
    second = mems["Use Kafka for the event bus instead of Redis streams"]
    assert second.supersedes == [first.id] and first.supersedes == []
    replay(src, repo, session="s12", env=env)
    wait_for_worker(repo)
    assert memory_files(repo) == files  # the exact replay is idempotent


@pytest.mark.parametrize("provider", ["rules", "test"])
def test_scenario1_both_commands_in_one_segment(tmp_path: Path, provider: str) -> None:
    repo = make_repo(tmp_path)
    choice = Choice("rules", "r") if provider == "rules" else Choice("test", "t", TestProvider())
    p = Planner(Store(Vault(repo), service=Service), choice, CaptureSettings(), None)
    seg = build(
        [{"k": "prompt", "text": f"/decision {FIRST}"}, {"k": "prompt", "text": f"/decision {SECOND}"}]
    )
    plan = p.plan(seg, ctx(repo, "j1"))
    assert [m["title"] for m in plan.memories] == [
        "Use Redis streams for the event bus",
        "Use Kafka for the event bus instead of Redis streams",
    ]
    assert plan.memories[1]["supersedes"] == [plan.memories[0]["id"]]
    assert len(apply_plan(plan, p.store)[0]) == 2


def test_negated_command_supersedes_and_a_restatement_is_related(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    p = rules_planner(repo)
    one = p.plan(build([{"k": "prompt", "text": "/decision Use Redis streams for events"}]), ctx(repo, "a"))
    apply_plan(one, p.store)
    old_id = one.memories[0]["id"]
    p = rules_planner(repo)
    two = p.plan(
        build([{"k": "prompt", "text": "/decision Do not use Redis streams for events"}]), ctx(repo, "b")
    )
    assert len(two.memories) == 1 and two.memories[0]["supersedes"] == [old_id]
    apply_plan(two, p.store)
    # the same words again in another session: written (the user's word is final), linked
    p = rules_planner(repo)
    three = p.plan(
        build([{"k": "prompt", "text": "/decision Do not use Redis streams for events"}]),
        ctx(repo, "c", "s2"),
    )
    assert len(three.memories) == 1 and three.memories[0]["supersedes"] == []
    assert [r["target"] for r in three.memories[0]["relations"]] == [two.memories[0]["id"]]
    apply_plan(three, p.store)
    # the same command of the same session seen again (a replay) is idempotent
    again = rules_planner(repo).plan(
        build([{"k": "prompt", "text": "/decision Do not use Redis streams for events"}]),
        ctx(repo, "d", "s2"),
    )
    assert again.memories == [] and again.skipped[0]["reason"].startswith("already written")


def test_automatic_duplicate_is_dropped_but_explicit_is_not(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    p = rules_planner(repo)
    apply_plan(
        p.plan(build([{"k": "prompt", "text": "No, use ruff instead of flake8."}]), ctx(repo, "a")), p.store
    )
    p = rules_planner(repo)
    dup = p.plan(build([{"k": "prompt", "text": "No, use ruff instead of flake8."}]), ctx(repo, "b"))
    assert dup.memories == [] and dup.skipped[0]["reason"].startswith("duplicate of")
    flip = p.plan(build([{"k": "prompt", "text": "No, use flake8 instead of ruff."}]), ctx(repo, "c"))
    assert len(flip.memories) == 1 and flip.memories[0]["supersedes"]  # a reversal is never a duplicate


def test_ccmemory_new_and_mcp_record_link_instead_of_dropping(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    env = hook_env()

    def new(title: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ccmemory", "new", "decision", title, "--body", "x"],
            cwd=repo,
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )

    first = new("Use Redis streams for the event bus")
    second = new("Use Kafka for the event bus instead of Redis streams")
    old = read_memory(repo / first.stdout.strip())
    newer = read_memory(repo / second.stdout.strip())
    assert newer.supersedes == [old.id] and "linked: supersedes" in second.stderr

    from ccmemory.app.service import Service
    from ccmemory.surfaces.mcp import ops

    with Service.open(repo) as svc:
        out = ops.record(svc, "decision", title="Use Kafka for the event bus instead of Redis streams")
    assert out["id"] and "linked" in out  # written, and linked to the same-words memory
    assert len(memory_files(repo)) == 3


def test_links_to_hand_written_files_name_them_by_path_never_by_provisional_id(tmp_path: Path) -> None:
    """MCP `record` (RELATES_TO) and capture (supersedes) link a file without `id:` by its path:
    its provisional id changes when the file gets a ULID, so it is never written."""
    from ccmemory.core.model import provisional_id
    from ccmemory.surfaces.mcp import ops

    repo = make_repo(tmp_path)
    sessions = repo / ".ccmemory/decisions/redis-sessions.md"
    events = repo / ".ccmemory/decisions/redis-events.md"
    sessions.parent.mkdir(parents=True)
    sessions.write_text("---\ntype: decision\ntitle: Use Redis for sessions\n---\nSessions live in Redis.\n")
    events.write_text(f"---\ntype: decision\ntitle: {FIRST}\n---\nWe already run Redis.\n")
    with Service.open(repo) as svc:
        svc.reindex()
        out = ops.record(
            svc, "decision", title="Use Redis for sessions", body="Sessions in Redis, with a TTL."
        )
    target = ".ccmemory/decisions/redis-sessions.md"
    assert out["linked"] == [f"relates to {target} (Use Redis for sessions): restates it"]
    assert [r.target for r in read_memory(repo / out["path"]).relations] == [target]
    p = rules_planner(repo)
    plan = p.plan(build([{"k": "prompt", "text": f"/decision {SECOND}"}]), ctx(repo, "a"))
    assert plan.memories[0]["supersedes"] == [provisional_id(".ccmemory/decisions/redis-events.md")]
    [written], _ = apply_plan(plan, p.store)
    assert read_memory(written).supersedes == [".ccmemory/decisions/redis-events.md"]
    for path in memory_files(repo):
        assert "DRAFT-" not in path.read_text(), path


# --- 2. a correction is never written upside down ----------------------------------------------


def test_scenario2_rules_correction_is_not_inverted_and_context_says_the_right_thing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    text = "No, don't use localStorage for the refresh token. Use an httpOnly cookie instead of localStorage."
    p = rules_planner(repo)
    plan = p.plan(build([{"k": "prompt", "text": text}]), ctx(repo, "j"))
    assert len(plan.memories) == 1
    corr = plan.memories[0]
    assert "httpOnly cookie" in corr["fields"]["right_belief"]
    assert "localStorage" not in corr["fields"]["right_belief"]
    assert "localStorage" in corr["fields"]["wrong_belief"]
    assert not corr["title"].startswith("Use localStorage")
    apply_plan(plan, p.store)
    from ccmemory.app.service import Service

    with Service.open(repo) as svc:
        context = context_for(svc, 800).text
    line = next(ln for ln in context.splitlines() if "[correction]" in ln)
    assert "→ an httpOnly cookie" in line and "→ localStorage" not in line


# --- 3. the model, not a regex, decides what matters -------------------------------------------


def test_scenario3_plain_statement_reaches_the_anthropic_model(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    reply = {
        "memories": [
            {
                "segment": 1,
                "type": "decision",
                "title": "Switch the event bus to Kafka for scale",
                "body": "The user decided to move events to Kafka because of scale.",
                "confidence": 0.9,
                "fields": {"rationale": "scale"},
            }
        ]
    }
    provider, rec = anthropic_with([httpx.Response(200, json=messages_response(json.dumps(reply)))])
    p = Planner(
        Store(Vault(repo), service=Service),
        Choice("anthropic", "recorded", provider),
        CaptureSettings(),
        None,
    )
    seg = build(
        [
            {"k": "prompt", "text": "Now we switch to Kafka for events, because of scale."},
            {"k": "assistant", "text": "OK."},
        ]
    )
    plan = p.plan(seg, ctx(repo, "j"))
    assert len(rec.requests) == 1 and plan.llm_called  # no pair check: nothing close exists
    sent = json.loads(rec.requests[0].content)
    assert "Now we switch to Kafka for events, because of scale." in sent["messages"][0]["content"]
    assert [m["title"] for m in plan.memories] == ["Switch the event bus to Kafka for scale"]


def test_llm_pair_check_decides_duplicate_and_supersedes(tmp_path: Path) -> None:
    """A close pair goes to the model in one follow-up call, through the SDK."""
    repo = make_repo(tmp_path)
    p = rules_planner(repo)
    apply_plan(p.plan(build([{"k": "prompt", "text": f"/decision {FIRST}"}]), ctx(repo, "a")), p.store)
    old_id = read_memory(memory_files(repo)[0]).id
    extract = {
        "memories": [{"segment": 1, "type": "decision", "title": "Use Kafka for the event bus", "body": "b"}]
    }
    pairs = {"pairs": [{"new": 1, "old": old_id, "relation": "supersedes"}]}
    provider, rec = anthropic_with(
        [
            httpx.Response(200, json=messages_response(json.dumps(extract))),
            httpx.Response(200, json=messages_response(json.dumps(pairs))),
        ]
    )
    p = Planner(
        Store(Vault(repo), service=Service),
        Choice("anthropic", "recorded", provider),
        CaptureSettings(),
        None,
    )
    plan = p.plan(build([{"k": "prompt", "text": "move the bus to kafka"}]), ctx(repo, "b"))
    assert len(rec.requests) == 2
    assert "SUPERSEDE-CHECK" in json.loads(rec.requests[1].content)["system"]
    assert plan.memories[0]["supersedes"] == [old_id]


# --- 4. import can be redone -------------------------------------------------------------------


def test_scenario4_rules_import_then_llm_import_calls_the_llm(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    src = write_transcript(
        tmp_path / "t.jsonl",
        transcript(
            ["Now we switch to Kafka for events, because of scale.", "Also add a health check endpoint."]
        ),
    )
    settings = CaptureSettings()
    store = Store(Vault(repo), service=Service)
    first = import_path(repo, src, choice=Choice("rules", "r"), settings=settings, store=store)
    assert first.segments == 2 and first.written == [] and first.llm_calls == 0
    again = import_path(repo, src, choice=Choice("rules", "r"), settings=settings, store=store)
    assert again.skipped_done == 2
    reply = {
        "memories": [
            {"segment": 1, "type": "decision", "title": "Use Kafka for events because of scale", "body": "b"}
        ]
    }
    provider, rec = anthropic_with([httpx.Response(200, json=messages_response(json.dumps(reply)))])
    llm = import_path(repo, src, choice=Choice("anthropic", "rec", provider), settings=settings, store=store)
    assert llm.skipped_done == 0 and llm.llm_calls == 1 and len(rec.requests) == 1  # two segments, one call
    assert len(llm.written) == 1 and llm.sessions["s12"]["llm_calls"] == 1
    assert llm.input_tokens == 812
    # an LLM import again: already done; --force: extracted again, no duplicate written
    provider2, rec2 = anthropic_with(
        [
            httpx.Response(200, json=messages_response(json.dumps(reply))),
            httpx.Response(200, json=messages_response('{"pairs": []}')),
        ]
    )
    done = import_path(
        repo, src, choice=Choice("anthropic", "rec", provider2), settings=settings, store=store
    )
    assert done.skipped_done == 2 and rec2.requests == []
    forced = import_path(
        repo, src, choice=Choice("anthropic", "rec", provider2), settings=settings, store=store, force=True
    )
    assert forced.llm_calls >= 1 and forced.written == [] and len(memory_files(repo)) == 1


def test_import_force_flag_on_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path)
    src = write_transcript(tmp_path / "t.jsonl", transcript(["No, use ruff instead of flake8."]))
    monkeypatch.chdir(repo)
    runs = []
    for args in ([], [], ["--force"]):
        res = CliRunner().invoke(import_command, [str(src), "--provider", "rules", "--json", *args])
        assert res.exit_code == 0, res.output
        runs.append(json.loads(res.output))
    assert len(runs[0]["written"]) == 1 and runs[1]["already_imported"] == 1
    assert runs[2]["already_imported"] == 0 and runs[2]["written"] == [] and len(memory_files(repo)) == 1


# --- 5. gotchas and exceptions in session-start context ----------------------------------------


def test_scenario5_context_injects_gotchas_and_exceptions_within_budget(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    env = hook_env()
    for args in (
        ["gotcha", "The test DB is shared: never run migrations against it"],
        ["exception", "No type hints in scripts/legacy", "--field", "justification=vendored code"],
        ["decision", "Use FastAPI for the web layer"],
    ):
        subprocess.run([sys.executable, "-m", "ccmemory", "new", *args], cwd=repo, env=env, check=True)
    from ccmemory.app.service import Service
    from ccmemory.core.tokens import estimate_tokens

    with Service.open(repo) as svc:
        res = context_for(svc, 400)
        tight = context_for(svc, 60)
    assert "[gotcha] The test DB is shared" in res.text
    assert "[exception] No type hints in scripts/legacy — because vendored code" in res.text
    assert res.text.index("[gotcha]") < res.text.index("[decision]")  # warnings before decisions
    assert estimate_tokens(tight.text) <= 60


def test_mcp_record_tools_over_stdio_supersede_instead_of_dropping(tmp_path: Path) -> None:
    """The real MCP client over stdio: the reversing record_decision is written and supersedes."""
    from tests._mcp_client import SyncClient

    repo = make_repo(tmp_path)
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as client:
        first = client.call("record_decision", {"title": "Use Redis streams for the event bus"})
        second = client.call(
            "record_decision",
            {"title": "Use Kafka for the event bus instead of Redis streams", "rationale": "replay"},
        )
        again = client.call(
            "record_decision", {"title": "Use Kafka for the event bus instead of Redis streams"}
        )
    assert second["supersedes"] == [first["id"]]
    assert "linked" in again and again["id"] not in (first["id"], second["id"])
    assert len(memory_files(repo)) == 3


def test_files_only_context_fallback_has_gotchas_and_exceptions() -> None:
    from ccmemory.features.capture.store import Existing, fallback_context

    mems = [
        Existing("01A", "gotcha", "The test DB is shared", "", Path("a.md"), [], []),
        Existing("01B", "exception", "No type hints in scripts/legacy", "", Path("b.md"), [], []),
        Existing("01C", "decision", "Use FastAPI", "", Path("c.md"), [], []),
    ]
    text, ids = fallback_context(mems, 200)
    assert "Gotchas" in text and "Exceptions" in text and ids.index("01A") < ids.index("01C")


def test_files_only_context_fallback_leaves_out_superseded_memories(tmp_path: Path) -> None:
    """When the index cannot be opened (a dead Neo4j), SessionStart falls back to the files: a
    memory replaced by another (by id, by a SUPERSEDES relation, or by a path target) is not
    listed beside its replacement, as the index would not list it."""
    repo = make_repo(tmp_path)
    mem = repo / ".ccmemory" / "decisions"
    mem.mkdir(parents=True)
    (mem / "cookies.md").write_text(
        "---\nid: 01J0000000000000000000000A\ntype: decision\ntitle: Use httpOnly cookies for tokens\n"
        "created: 2025-01-01T00:00:00Z\n---\nCookies.\n"
    )
    (mem / "memory-only.md").write_text(
        "---\nid: 01J0000000000000000000000B\ntype: decision\ntitle: Store tokens in memory only\n"
        "created: 2025-02-01T00:00:00Z\nsupersedes: [01J0000000000000000000000A]\n---\nNo cookies.\n"
    )
    (mem / "use-postgres.md").write_text("---\ntype: decision\ntitle: Use Postgres 12\n---\nOld.\n")
    (mem / "pg16.md").write_text(
        "---\nid: 01J0000000000000000000000C\ntype: decision\ntitle: Use Postgres 16\n"
        "created: 2025-03-01T00:00:00Z\nsupersedes: [decisions/use-postgres.md]\n---\nNew.\n"
    )
    (mem / "redis.md").write_text("---\ntype: decision\ntitle: Sessions in Redis\n---\nOld.\n")
    (mem / "memcached.md").write_text(
        "---\nid: 01J0000000000000000000000D\ntype: decision\ntitle: Sessions in Memcached\n"
        "created: 2025-04-01T00:00:00Z\nrelations: [{type: SUPERSEDES, target: .ccmemory/decisions/redis.md}]\n"
        "---\nNew.\n"
    )
    env = hook_env(
        CCMEMORY_BACKEND="neo4j",
        CCMEMORY_NEO4J_URI="bolt://127.0.0.1:1",
        CCMEMORY_NEO4J_PASSWORD="x",
        CCMEMORY_NO_WORKER="1",
    )
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    proc = run_hook("SessionStart", payload, repo, env)
    assert proc.returncode == 0, proc.stderr
    text = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    for current in ("Store tokens in memory only", "Use Postgres 16", "Sessions in Memcached"):
        assert current in text, text
    for replaced in ("Use httpOnly cookies", "Use Postgres 12", "Sessions in Redis"):
        assert replaced not in text, text
