"""Recall at the moment of work (issue 27): the hooks as Claude Code runs them (real subprocesses,
real git repositories, the real index), the file matching, and the warm socket."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccmemory.features.recall import engine, paths, warm
from ccmemory.features.recall.config import RecallSettings, recall_settings
from tests.capture_helpers import hook_env, run_hook

# --- matching files ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "strength"),
    [
        ("services/billing/export.py", "services/billing/export.py", paths.EXACT),
        ("./services/billing/export.py", "services/billing/export.py", paths.EXACT),
        ("services/billing/", "services/billing/export.py", paths.FOLDER),
        ("services/billing", "services/billing/sub/x.py", paths.FOLDER),
        ("services/bill", "services/billing/export.py", 0),  # not at a folder boundary
        ("src/**/*.tsx", "src/a/b/c.tsx", paths.GLOB),
        ("src/**/*.tsx", "src/c.tsx", paths.GLOB),
        ("src/*.tsx", "src/a/c.tsx", 0),  # * does not cross folders
        ("*.tf", "infra/terraform/rds.tf", paths.GLOB),  # a bare file glob matches anywhere
        ("infra/*.tf", "infra/terraform/rds.tf", 0),
        ("services/billing/export.py", "services/billing/export.pyc", 0),
    ],
)
def test_file_patterns(pattern: str, path: str, strength: int) -> None:
    assert paths.match(pattern, path) == strength


def test_tool_paths(tmp_path: Path) -> None:
    root = str(tmp_path)
    assert paths.tool_paths("Edit", {"file_path": f"{root}/a/b.py"}, root, root) == ["a/b.py"]
    assert paths.tool_paths("Read", {"file_path": "a/b.py"}, root, f"{root}/sub") == ["sub/a/b.py"]
    assert paths.tool_paths("Write", {"file_path": "/etc/passwd"}, root, root) == []  # outside the repo
    cmd = "pytest tests/billing -x && terraform plan --var-file=infra/prod.tfvars; curl https://x.io/a/b"
    assert paths.tool_paths("Bash", {"command": cmd}, root, root) == ["tests/billing", "infra/prod.tfvars"]
    assert paths.tool_paths("Bash", {"command": "ls -la && git status"}, root, root) == []
    assert paths.tool_paths("Glob", {"pattern": "**/*.py"}, root, root) == []
    assert paths.tool_paths("Edit", "not a mapping", root, root) == []  # type: ignore[arg-type]


def test_settings_bounds_and_env() -> None:
    s = recall_settings(
        {"recall": {"budget_tokens": float("nan"), "max_memories": 10**9, "files": "off"}}, {}
    )
    assert (s.budget_tokens, s.max_memories, s.files, s.enabled) == (300, 10, False, True)
    s = recall_settings({"recall": {"budget_tokens": -5}}, {"CCMEMORY_RECALL_BUDGET": "120"})
    assert s.budget_tokens == 120
    assert (s.max_memories, s.also_titles, s.pick_limit) == (3, 2, 6)  # the defaults
    s = recall_settings({"recall": {"also_titles": -3, "max_memories": 1}}, {})
    assert (s.also_titles, s.pick_limit) == (0, 2)
    s = recall_settings({"recall": {"also_titles": 99, "max_memories": 2}}, {})
    assert (s.also_titles, s.pick_limit) == (10, 12)  # enough picks for the lines and the titles
    assert recall_settings({"recall": "garbage"}, {"CCMEMORY_RECALL": "0"}).enabled is False


# --- a repository with memories -----------------------------------------------------------------------


def _cli(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", *args], cwd=repo, env=hook_env(), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "dev@example.com"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    subprocess.run(["git", "config", "user.name", "Dev"], cwd=repo, check=True)
    _cli(repo, "init", "--no-git-hooks")
    _cli(
        repo,
        "new",
        "gotcha",
        "The ERP gateway drops invoice batches above 500 documents",
        "--topic",
        "invoicing",
        "-f",
        "services/invoicing/",
        "--body",
        "Split the nightly export into batches of at most 500 invoices; larger ones time out after 60 s.",
    )
    _cli(
        repo,
        "new",
        "decision",
        "Invoices reach the ERP through a nightly Celery job",
        "--topic",
        "invoicing",
        "--body",
        "The beat schedule runs the exporter at 02:00 UTC.",
    )
    _cli(
        repo,
        "new",
        "correction",
        "Terraform state for the database lives in the shared S3 backend",
        "-f",
        "infra/terraform/*.tf",
        "--body",
        "Never apply the RDS module from a laptop with local state.",
    )
    _cli(repo, "new", "fact", "The staging cluster has three nodes", "--body", "Sized for the load tests.")
    _cli(repo, "reindex")
    return repo


def _payload(repo: Path, session: str = "s-1", **extra: object) -> dict[str, object]:
    return {"session_id": session, "cwd": str(repo), "permission_mode": "default", **extra}


def _context(proc: subprocess.CompletedProcess[bytes], event: str) -> str:
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout.strip():
        return ""
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == event
    return str(out["additionalContext"])


def _prompt(repo: Path, text: str, session: str = "s-1", **env: str) -> str:
    payload = _payload(repo, session, hook_event_name="UserPromptSubmit", prompt=text)
    proc = run_hook("UserPromptSubmit", payload, repo, hook_env(CCMEMORY_NO_WORKER="1", **env))
    return _context(proc, "UserPromptSubmit")


def _edit(repo: Path, path: str, session: str = "s-1", tool: str = "Edit", **env: str) -> str:
    key = "command" if tool == "Bash" else "file_path"
    value = path if tool == "Bash" else str(repo / path)
    payload = _payload(repo, session, hook_event_name="PreToolUse", tool_name=tool, tool_input={key: value})
    return _context(run_hook("PreToolUse", payload, repo, hook_env(**env)), "PreToolUse")


def test_prompt_recall_injects_the_gotcha_once_per_session(vault: Path) -> None:
    text = _prompt(vault, "speed up the nightly invoice export to the ERP")
    assert "[gotcha] The ERP gateway drops invoice batches above 500 documents" in text
    listed = [ln for ln in text.splitlines() if ln.startswith("- [")]
    assert listed[0].startswith("- [gotcha]"), listed  # what to check before acting comes first
    assert "Split the nightly export into batches of at most 500" in text  # the gist, on one line
    assert "terraform" not in text.lower() and "staging" not in text.lower()
    assert len(text) // 4 <= 300
    # the same session is not told twice; another session is
    assert "ERP gateway" not in _prompt(vault, "the invoice export to the ERP is slow again")
    assert "ERP gateway" in _prompt(vault, "speed up the nightly invoice export to the ERP", session="s-2")
    tele = [json.loads(x) for x in (vault / ".ccmemory/local/telemetry.jsonl").read_text().splitlines()]
    kinds = [(e["k"], e.get("source")) for e in tele]
    assert ("recalled", "prompt") in kinds and ("injected", "prompt") in kinds
    assert all("prompt" not in e or e["prompt"] == "prompt" for e in tele)  # no prompt text logged


def test_a_changed_memory_is_shown_again(vault: Path) -> None:
    assert "ERP gateway" in _prompt(vault, "speed up the nightly invoice export to the ERP")
    path = next((vault / ".ccmemory" / "gotchas").glob("*.md"))
    path.write_text(path.read_text().replace("at most 500", "at most 400"))
    _cli(vault, "reindex")
    again = _prompt(vault, "speed up the nightly invoice export to the ERP")
    assert "at most 400" in again


@pytest.mark.parametrize(
    "chatter", ["ok thanks", "run the tests again", "continue", "looks good, commit it", "yes"]
)
def test_chatter_injects_nothing(vault: Path, chatter: str) -> None:
    assert _prompt(vault, chatter) == ""


@pytest.mark.parametrize(
    ("prompt", "asked"),
    [
        ("run the tests again", False),  # two content words, not a question
        ("commit this please", False),
        ("why did we drop LaunchDarkly?", True),  # two content words, asked as a question
        ("which MQTT broker are we on", True),
        ("speed up the nightly invoice export to the ERP", True),
        ("is gRPC faster than REST in general?", False),  # says it is about things in general
        ("write a limerick about the invoice exporter", False),
        ("thanks!", False),
        # textbook questions: a comparison, a language's feature...
        ("what's the difference between an ERP batch and a stream?", False),
        ("terraform for_each vs count, which one should I use for buckets?", False),
        ("how does a FHIR transaction bundle differ from a batch bundle?", False),
        ("how do I turn a naive datetime into an aware one in python?", False),
        ("is datetime.utcnow deprecated in python 3.12?", False),
        # ...or what a kind of thing is (a concept), question or not
        ("what's an ERP gateway, conceptually?", False),
        ("explain what a dead-letter queue is", False),
        ("message queues vs streams for invoices, quick summary", False),
        ("explain the difference between an ERP batch and a stream", False),  # asked, not as a question
        # ...unless they say it is about us, or are instructions
        ("why do we batch invoices vs stream them to the ERP?", True),
        ("how does the team want errors returned in Go?", True),
        ("benchmark msgpack vs json for the invoice payloads", True),
        ("rewrite the invoice exporter in Rust", True),
        ("explain why the nightly invoice export failed", True),
        ("what's a safe batch size for the ERP gateway?", True),  # a value, not a concept
        ("what is an invoice hold in our ERP?", True),
        # the register of a general explanation or of common practice, unless about us
        ("generally, is polling or a webhook better for invoice status?", False),
        ("explain ERP gateway back-pressure in plain English", False),
        ("describe a saga to me like I'm five", False),
        ("explain invoice matching to a junior dev", False),
        ("what do most people pick for invoice numbering schemes?", False),
        ("do we generally batch invoices before the ERP cut-off?", True),
        ("what's a good rule of thumb for ERP batch sizes", False),
        ("best practices for retrying invoice exports?", False),
        ("when would you pick a message queue over polling for invoices?", False),
        ("what are common mistakes people make with idempotency keys", False),
        ("explain exactly-once delivery, outbox vs two-phase commit", False),
        ("polling vs webhooks for invoice status, what are the tradeoffs", False),
        ("what's new in Python 3.13 for dataclasses", False),
        ("how does HTTP/2 multiplexing work under the hood?", False),
        ("gRPC or REST for the ERP gateway, which would you pick?", False),
        ("what usually breaks the nightly invoice export?", True),  # "usually" alone is ours
        # how a named thing works, how two compare, pros and cons, ELI5, "what is X and why"...
        ("how does gRPC deadline propagation work?", False),
        ("how does invoice caching work in the Django ORM layer?", False),  # words after "work"
        ("how does ERP retry backoff work, with the jitter and the caps?", False),
        ("how do Avro and Protobuf compare for the ERP events", False),
        ("SFTP or AS2 for the ERP drop, pros and cons?", False),
        ("ELI5 the outbox pattern", False),
        ("what is EDI 810 and why do ERPs still use it?", False),
        ("what does prefetch_count do in RabbitMQ?", False),
        # a question about a product of the stack, as its subject ("what does X do?")
        ("what does Flyway's baselineOnMigrate actually do?", False),
        ("how long can a Kafka consumer stay in a rebalance?", False),
        ("what is a dead-letter exchange in RabbitMQ?", False),
        # ...unless it names the project's thing, or asks about a decision's trade-offs
        ("what's celery using as the broker in prod?", True),  # the project's state
        ("is invoice search still on elasticsearch?", True),
        ("how do invoice events get from the gateway into bigquery?", True),  # not its subject
        ("how does our Kafka consumer commit ERP offsets?", True),
        ("how does the nightly invoice export work?", True),
        ("how does our ERP retry work?", True),
        ("how does ERP retry work in this repo?", True),
        ("how does the exporter work out the invoice currency?", True),
        ("what were the trade-offs of batching invoices to the ERP?", True),
        ("what's the ERP gateway written in, and how do I run its tests?", True),
        ("what does erp_batch_max do in production?", True),
        ("why would the ERP gateway return a 409 for a new invoice?", True),
        # steering the session, not a new question
        ("ok, run the tests again", False),
        ("run the export integration tests one more time please", False),
        ("rerun the linter", False),
        ("rerun the March invoice export with the corrected currency mapping", True),
        ("run the invoice export against staging", True),
    ],
)
def test_which_prompts_may_need_a_memory(prompt: str, asked: bool) -> None:
    assert engine.speaks_to_project(prompt) is asked


def test_a_general_question_on_a_project_topic_injects_nothing(vault: Path) -> None:
    assert "ERP gateway" in _prompt(vault, "how big can an invoice batch to the ERP gateway be?")
    assert (
        _prompt(vault, "how big can invoice batches to an ERP gateway be, in general?", session="s-2") == ""
    )


def test_superseded_memories_are_never_recalled(vault: Path) -> None:
    old = json.loads(_cli(vault, "search", "nightly Celery job", "--json"))[0]["id"]
    _cli(
        vault,
        "new",
        "decision",
        "Invoices reach the ERP through its event API in real time",
        "--topic",
        "invoicing",
        "--supersedes",
        old,
        "--body",
        "The nightly Celery job is gone.",
    )
    _cli(vault, "reindex")
    text = _prompt(vault, "change how invoices reach the ERP job schedule")
    assert old not in text


def test_switches_and_budget(vault: Path) -> None:
    prompt = "speed up the nightly invoice export to the ERP"
    assert _prompt(vault, prompt, session="a", CCMEMORY_RECALL="0") == ""
    assert _prompt(vault, prompt, session="b", CCMEMORY_RECALL_BUDGET="30") == ""  # no line fits
    (vault / ".ccmemory" / "config.yaml").write_text("recall:\n  prompts: false\n")
    assert _prompt(vault, prompt, session="c") == ""
    assert "ERP gateway" in _edit(vault, "services/invoicing/exporter.py", session="c")  # files still on


def test_after_a_compaction_the_session_may_be_shown_its_memories_again(vault: Path) -> None:
    """A compaction (or /clear) drops what recall injected from Claude's context: the session's
    "already shown" list is reset by SessionStart with source compact or clear, not by a resume."""
    prompt = "speed up the nightly invoice export to the ERP"
    assert "ERP gateway" in _prompt(vault, prompt, session="s-c")
    assert "ERP gateway" not in _prompt(vault, prompt, session="s-c")

    def start(source: str) -> None:
        payload = _payload(vault, "s-c", hook_event_name="SessionStart", source=source)
        assert run_hook("SessionStart", payload, vault, hook_env(CCMEMORY_NO_WORKER="1")).returncode == 0

    start("resume")
    assert "ERP gateway" not in _prompt(vault, prompt, session="s-c")
    start("compact")
    assert "ERP gateway" in _prompt(vault, prompt, session="s-c")
    assert "ERP gateway" not in _prompt(vault, prompt, session="s-c")
    start("clear")
    assert "ERP gateway" in _prompt(vault, prompt, session="s-c")


def test_file_recall_before_an_edit(vault: Path) -> None:
    text = _edit(vault, "services/invoicing/exporter.py")
    assert "ERP gateway drops invoice batches" in text and "services/invoicing/exporter.py" in text
    assert _edit(vault, "services/invoicing/exporter.py") == ""  # once per session
    assert "Terraform state" in _edit(vault, "infra/terraform/rds.tf")
    assert _edit(vault, "web/src/App.tsx", session="s-9") == ""
    assert "Terraform state" in _edit(
        vault, "terraform plan -var-file=infra/terraform/prod.tf", "s-3", "Bash"
    )
    assert _edit(vault, "git status", "s-4", "Bash") == ""


def test_every_memory_naming_a_file_is_recalled_what_changes_the_edit_first(vault: Path) -> None:
    """A question (open or answered), an insight and a reference that name a file are recalled
    with it, after the memories that change how it is edited (the issue's "inject those
    memories"); superseded ones never."""
    path = "services/invoicing/exporter.py"
    for args in (
        ["reference", "ERP gateway interface spec", "--field", "uri=docs/erp/interface.md"],
        [
            "question",
            "Why does the exporter retry only twice?",
            "--field",
            "answer=The ERP bans clients after three.",
        ],
        [
            "insight",
            "Most export failures happen on the first of the month",
            "--field",
            "implications=Batch smaller then.",
        ],
    ):
        _cli(vault, "new", *args, "--body", "See the exporter.", "--file", path)
    _cli(vault, "reindex")
    text = _edit(vault, path, "s-files", "Read")
    lines = [ln for ln in text.splitlines() if ln.startswith("- ")]
    assert lines[0].startswith("- [gotcha] The ERP gateway drops invoice batches"), lines
    shown = "\n".join(lines)
    for title in (
        "ERP gateway interface spec",
        "Why does the exporter retry only twice?",
        "Most export failures happen on the first of the month",
    ):
        assert title in shown, lines
    assert [t for t in engine.FILE_TYPES if t not in engine.RECALL_TYPES] == [
        "insight",
        "reference",
        "question",
    ]


def test_a_one_word_command_recalls_the_memory_that_names_it(vault: Path) -> None:
    """A command's words are never chatter and say in an identifier or two what a prompt says in
    a sentence: one content word is enough to ask ("just e2e" is "e2e"), at a lower bar than a
    prompt's; a prompt of one word still asks nothing."""
    _cli(
        vault,
        "new",
        "fact",
        "The e2e suite needs the seeded staging database",
        "--body",
        "Run `make seed` before `just e2e`, or every checkout test fails on a missing tenant.",
    )
    _cli(vault, "reindex")
    assert engine.worth_asking("just e2e", command=True) and not engine.worth_asking("just e2e")
    assert not engine.worth_asking("", command=True)
    g = engine.DEFAULT_GATE
    assert g.bar(2, vectors=True, command=True) == pytest.approx(g.bar(2, vectors=True) * g.command_bar)
    assert g.bar(2, vectors=False, command=True) == g.bar(2, vectors=False)  # full text: the same bar
    assert g.command_bar < 1 and g.needs_terms(command=True) < g.needs_terms()
    assert "The e2e suite needs the seeded staging database" in _edit(vault, "just e2e", "s-8", "Bash")
    assert _prompt(vault, "e2e", session="s-9") == ""


def test_a_command_recalls_what_applies_to_its_words(vault: Path) -> None:
    """A shell command that names no file a memory lists is matched by its words (program,
    subcommand, arguments, an assignment's name), gated like a prompt; a command that only looks
    (ls, cat, git status) recalls nothing by words."""
    text = _edit(vault, "celery -A erp_gateway worker --loglevel=info", "s-5", "Bash")
    assert "ERP gateway drops invoice batches" in text
    assert _edit(vault, "cat services/readme.txt | grep erp gateway", "s-6", "Bash") == ""
    assert _edit(vault, "ls -la && git log --oneline", "s-7", "Bash") == ""
    assert paths.command_words("TESTCONTAINERS_RYUK_DISABLED=true go test ./svc/...") == (
        "testcontainers ryuk disabled go test svc"
    )
    assert paths.command_words("cd infra/terraform && terraform apply") == "cd infra terraform apply"
    assert paths.command_words("cd infra/terraform") == ""


def _prompt_imports(vault: Path, prompt: str) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """The UserPromptSubmit hook run with `-X importtime`: (the process, the modules it imported)."""
    payload = _payload(vault, hook_event_name="UserPromptSubmit", prompt=prompt)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ccmemory", "hook", "UserPromptSubmit"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=vault,
        env=hook_env(CCMEMORY_NO_WORKER="1"),
    )
    return proc, {ln.split("|")[-1].strip() for ln in proc.stderr.decode().splitlines()}


def test_hook_recall_path_stays_lean(vault: Path) -> None:
    proc, imported = _prompt_imports(vault, "speed up the invoice export to the ERP")
    assert proc.returncode == 0 and b"ERP gateway" in proc.stdout
    for heavy in (
        "numpy",
        "onnxruntime",
        "tokenizers",
        "anthropic",
        "click",
        "httpx",
        "mcp",
        "frontmatter",
        "ccmemory.app.service",
        "ccmemory.retrieval.embed",
        "neo4j",
    ):
        assert heavy not in imported, heavy


def test_chatter_is_told_apart_before_anything_heavy_loads(vault: Path) -> None:
    """The chatter check runs before ranking and needs neither the stemmer nor the index."""
    proc, imported = _prompt_imports(vault, "run the tests again")
    assert proc.returncode == 0 and not proc.stdout.strip()
    for heavy in ("snowballstemmer", "ccmemory.index.sqlite", "ccmemory.retrieval.search", "sqlite3"):
        assert heavy not in imported, heavy


def test_broken_index_never_blocks_the_prompt(vault: Path) -> None:
    db = vault / ".ccmemory" / "local" / "index.db"
    db.write_bytes(b"this is not a database" * 100)
    assert _prompt(vault, "speed up the nightly invoice export to the ERP") == ""
    log = (vault / ".ccmemory/local/logs/hooks.log").read_text()
    assert "recall skipped" in log and "moved to" in log and "ccmemory reindex" in log
    assert list((vault / ".ccmemory" / "local").glob("index.db.corrupt-*"))  # moved aside, not deleted


# --- the warm process ---------------------------------------------------------------------------------


def test_warm_server_answers_and_a_stale_socket_is_ignored(vault: Path) -> None:
    import contextlib

    from ccmemory.app.service import Service

    svc = Service.open(vault)

    @contextlib.contextmanager
    def service():  # type: ignore[no-untyped-def]
        yield svc

    server = warm.WarmServer(str(vault), service)
    assert server.start()
    try:
        picks = warm.ask(
            str(vault), {"op": "prompt", "text": "speed up the nightly invoice export", "limit": 4}, 10
        )
        # the warm process answers in the search's order; the hook lists the gotcha first
        assert picks and any(p.memory.title.startswith("The ERP gateway") for p in picks[:3])
        files = warm.ask(str(vault), {"op": "files", "paths": ["infra/terraform/a.tf"], "limit": 4}, 10)
        assert files and files[0].memory.type == "correction"
        assert warm.ask(str(vault), {"op": "nonsense"}, 10) is None  # an error answer: fall back
        second = warm.WarmServer(str(vault), service)
        assert not second.start()  # a live server keeps its socket
    finally:
        server.close()
        svc.close()
    Path(server.path).write_bytes(b"")  # a stale file where the socket was
    started = time.monotonic()
    assert warm.ask(str(vault), {"op": "prompt", "text": "x y"}) is None
    assert time.monotonic() - started < 1.0
    assert "ERP gateway" in _prompt(vault, "speed up the nightly invoice export to the ERP")  # full text


def test_engine_gates_on_absolute_relevance() -> None:
    from ccmemory.index.base import IndexedMemory
    from ccmemory.retrieval.search import Hit

    def hit(mid: str, mtype: str, text: float, vec: float = 0.0) -> Hit:
        m = IndexedMemory(
            id=mid, type=mtype, title=mid, body="", created="", path="", status="curated", project="p"
        )
        return Hit(m, 1.0, {"text_score": text, "vector_score": vec})

    # min-max fused scores would make the weakest list's best look perfect: the gate does not
    assert engine.gate_hits([hit("a", "decision", 0.2, 0.3)], limit=3) == []
    picks = engine.gate_hits(
        [hit("a", "decision", 0.8), hit("b", "gotcha", 0.7), hit("c", "fact", 0.3)], limit=3
    )
    # the gate keeps what is relevant enough (c is below 0.6 of the best) in the search's order;
    # rendering a prompt's picks lists what to check before acting first
    assert [p.memory.id for p in picks] == ["a", "b"]
    shown = engine.render(picks, 300, "header", check_first=True)
    assert shown.ids == ["b", "a"] and engine.render(picks, 300, "header").ids == ["a", "b"]
    # an open question answers nothing to a task; an answered one is knowledge; asked whether it
    # was decided, "still open" is the answer
    open_q = hit("q", "question", 0.9)
    answered = hit("r", "question", 0.9)
    answered.memory.fields = {"answer": "Yes, since March."}
    assert [p.memory.id for p in engine.gate_hits([open_q, answered], limit=3)] == ["r"]
    asked = engine.gate_hits([open_q, answered], limit=3, question=True)
    assert [p.memory.id for p in asked] == ["q", "r"]
    assert engine.asked("did we ever decide on transfer codes?") and not engine.asked("add transfer codes")
    # the bar drops with the prompt's length (both signals are diluted by its other words), to a
    # floor; with full text alone it starts lower (no cosine to lift a paraphrase)
    g = engine.DEFAULT_GATE
    assert g.bar(3, vectors=True) == g.min_score and g.bar(3, vectors=False) == g.text_min_score
    assert g.bar(8, vectors=True) < g.min_score and g.bar(200, vectors=True) == g.floor
    assert g.bar(200, vectors=False) == g.text_floor < g.floor  # full text: a long prompt's share is small
    mid = [hit("m", "decision", 0.0, (g.bar(10, True) + g.min_score) / 2)]
    assert engine.gate_hits(mid, limit=3, terms=3) == []
    assert [p.memory.id for p in engine.gate_hits(mid, limit=3, terms=10)] == ["m"]
    # the bar decides whether anything is shown; once one hit clears it, a neighbour that comes
    # close (near x bar, and relative x best) is shown too, in the search's order: the gotcha to
    # check is often just under the bar, after a same-topic decision
    bar = g.bar(3, vectors=True)
    close = [
        hit("d", "decision", bar + 0.01),
        hit("g", "gotcha", 0.0, g.near * bar / g.check_first_boost + 0.01),
    ]
    assert [p.memory.id for p in engine.gate_hits(close, limit=3, terms=3)] == ["d", "g"]
    assert engine.gate_hits(close[1:], limit=3, terms=3) == []  # alone, the neighbour says nothing
    far = [close[0], hit("f", "fact", 0.0, g.near * bar - 0.01)]
    assert [p.memory.id for p in engine.gate_hits(far, limit=3, terms=3)] == ["d"]
    # a question about us ("why did we drop X?") has a lower bar with vectors, not with full text
    under = [hit("u", "decision", 0.0, g.ours_question * bar + 0.01)]
    assert engine.gate_hits(under, limit=3, terms=3) == []
    assert [p.memory.id for p in engine.gate_hits(under, limit=3, terms=3, ours=True)] == ["u"]
    text_under = [hit("u", "decision", g.ours_question * g.bar(3, vectors=False) + 0.01)]
    assert engine.gate_hits(text_under, limit=3, terms=3, vectors=False, ours=True) == []
    # with vectors, a prompt whose words the vault mostly does not hold needs more
    assert g.bar(3, vectors=True, unknown=g.unknown_share) == pytest.approx(bar * g.unknown_raise)
    assert g.bar(3, vectors=True, unknown=g.unknown_share - 0.01) == bar
    assert g.bar(3, vectors=False, unknown=1.0) == g.bar(3, vectors=False)
    just = [hit("j", "decision", 0.0, bar + 0.01)]
    assert engine.gate_hits(just, limit=3, terms=3, unknown=0.5) == []
    assert [p.memory.id for p in engine.gate_hits(just, limit=3, terms=3, unknown=0.2)] == ["j"]
    # with vectors, a prompt the general-question model scores high needs more (raised, not silenced)
    assert g.bar(3, vectors=True, general=g.general_above + 0.01) == pytest.approx(bar * g.general_raise)
    assert g.bar(3, vectors=True, general=g.general_above) == bar == g.bar(3, vectors=True, general=None)
    # ...and one it reads as about the project ("where do we keep the ERP credentials?") needs less
    assert g.bar(3, vectors=True, general=g.project_below - 0.01) == pytest.approx(bar * g.project_lower)
    assert g.bar(3, vectors=True, general=g.project_below) == bar
    assert g.bar(3, vectors=False, general=1.0) == g.bar(3, vectors=False)
    assert engine.gate_hits(just, limit=3, terms=3, general=0.9) == []
    assert engine.asked_about_us("why did we drop LaunchDarkly?")
    assert engine.asked_about_us("where does our Temporal cluster live?")
    assert not engine.asked_about_us("drop LaunchDarkly, we use Unleash now")  # not a question
    assert not engine.asked_about_us("what regex matches a US zip code?")  # a country, not us


def test_the_general_question_model_scores_the_search_s_own_vector() -> None:
    """The shipped model (bench/train_general.py) fits the default embedder, tells textbook
    questions from the project's prompts on prompts of no recall set, and never scores the
    vectors of another embedder."""
    from ccmemory.features.recall.general import general_score
    from ccmemory.retrieval.embed import LocalMiniLM

    emb = LocalMiniLM()
    general = ["what is the CAP theorem?", "how do I reverse a linked list in place?"]
    ours = ["where do we keep the ERP credentials?", "add a retry with backoff to the invoice exporter"]
    vectors = emb.embed([*general, *ours], kind="query")
    scores = [general_score(v, emb.name) or 0.0 for v in vectors]
    assert min(scores[:2]) > engine.DEFAULT_GATE.general_above > 0.5 > max(scores[2:])
    assert general_score(vectors[0], "voyage-3") is None  # another embedder's space
    assert general_score(vectors[0][:10], emb.name) is None  # not this model's vector


def test_recall_raises_the_bar_by_what_the_model_reads_in_the_prompt_s_vector(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search hands recall the vector it embedded; the model's score of it raises the bar
    (here a raise no hit can clear, to see the wiring) where the warm process ranks, never for
    full text alone."""
    from dataclasses import replace

    from ccmemory.app.service import Service
    from ccmemory.features.recall import general

    seen: list[tuple[int, str]] = []
    real = general.general_score

    def spy(vector: object, embedder: str) -> float | None:
        seen.append((len(vector), embedder))  # type: ignore[arg-type]
        return real(vector, embedder)

    monkeypatch.setattr(general, "general_score", spy)
    task = "speed up the nightly invoice export to the ERP"
    strict = replace(engine.DEFAULT_GATE, general_above=0.0, general_raise=100.0)
    svc = Service.open(vault)
    try:
        emb = svc.embedder()
        assert engine.prompt_picks(svc.index, svc.project, task, limit=3, embedder=emb)
        assert engine.prompt_picks(svc.index, svc.project, task, limit=3, embedder=emb, gate=strict) == []
        assert engine.prompt_picks(svc.index, svc.project, task, limit=3, gate=strict)  # full text
        # a shell command's words are not a user's prompt: the model never scores them
        words = "psql invoice export ERP nightly"
        assert engine.prompt_picks(
            svc.index, svc.project, words, limit=3, embedder=emb, gate=strict, command=True
        )
        before = len(seen)
        warm.answer(svc, {"op": "prompt", "text": words, "limit": 3, "command": True})
        warm.answer(svc, {"op": "prompt", "text": task, "limit": 3})
        assert len(seen) == before + 1  # the user's prompt only
        resp = svc.search(task, limit=3, mode="hybrid")
        assert resp.vector_model == emb.name and len(resp.query_vector) == 384
        assert svc.search(task, limit=3, mode="text").query_vector is None
    finally:
        svc.close()
    assert seen[:2] == [(384, emb.name), (384, emb.name)]


def test_long_prompts_that_are_not_questions_rank_with_their_own_recipe(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long task prompt's embedding averages all its words: prompt recall ranks it with
    fusion.LONG_PROMPT (both where the hook ranks and where the warm process does); questions,
    short prompts and plain searches keep the default recipe."""
    import ccmemory.retrieval.search as search_module
    from ccmemory.app.service import Service
    from ccmemory.text import fusion

    task = "speed up the nightly invoice export to the ERP gateway, it times out every Monday"
    question = "why does the nightly invoice export to the ERP gateway time out every Monday?"
    assert engine.prompt_recipe(task, engine.content_terms(task)) is fusion.LONG_PROMPT
    assert engine.prompt_recipe(question, engine.content_terms(question)) is None
    assert engine.prompt_recipe("fix the ERP export", engine.content_terms("fix the ERP export")) is None
    assert fusion.LONG_PROMPT.vector_weight < fusion.DEFAULT.vector_weight

    used: list[object] = []
    real = search_module.search

    def spy(*args: object, **kwargs: object) -> object:
        used.append(kwargs.get("recipe"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search_module, "search", spy)
    svc = Service.open(vault)
    try:
        picks = engine.prompt_picks(svc.index, svc.project, task, limit=3)
        warm.answer(svc, {"op": "prompt", "text": question, "limit": 3})
        warm.answer(svc, {"op": "prompt", "text": task, "limit": 3})
        svc.search(task, limit=3, mode="text")
        # the share of a prompt's words no memory holds, from the real index
        general = "how does kubernetes pick which pod to evict under memory pressure"
        assert engine.unknown_share(svc.index, svc.project, general) >= engine.DEFAULT_GATE.unknown_share
        assert engine.unknown_share(svc.index, svc.project, task) < engine.DEFAULT_GATE.unknown_share
    finally:
        svc.close()
    assert used == [fusion.LONG_PROMPT, None, fusion.LONG_PROMPT, None]
    assert any("ERP gateway" in p.memory.title for p in picks)


@pytest.mark.slow
def test_a_running_mcp_server_serves_hybrid_recall_to_the_hook(vault: Path) -> None:
    """While Claude Code's MCP server for the session runs, the hook gets hybrid candidates from
    it over the socket (the server loaded the embedder); when the server stops, the socket goes
    and the hook ranks by full text again."""
    from tests._mcp_client import SyncClient

    client = SyncClient.stdio(vault, env=hook_env())
    try:
        deadline = time.monotonic() + 90
        answer = None
        while time.monotonic() < deadline and answer is None:
            answer = warm.ask(
                str(vault), {"op": "prompt", "text": "nightly invoice export batches", "limit": 3}, 5
            )
            time.sleep(0.3)
        assert answer, "the MCP server did not serve recall"
        # a paraphrase sharing no word with the gotcha: only the vectors can find it
        picks = warm.ask(
            str(vault), {"op": "prompt", "text": "the accounting system rejects big uploads at night"}, 5
        )
        assert picks is not None
        text = _prompt(vault, "speed up the nightly invoice export to the ERP")
        assert "ERP gateway" in text
    finally:
        client.close()
    deadline = time.monotonic() + 10
    while Path(warm.socket_path(str(vault))).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(warm.socket_path(str(vault))).exists()


def test_recall_command_previews_and_reports_usage(vault: Path) -> None:
    out = _cli(vault, "recall", "speed up the nightly invoice export to the ERP", "--explain")
    assert "[gotcha] The ERP gateway drops invoice batches" in out and "relevance=" in out
    data = json.loads(_cli(vault, "recall", "--file", "infra/terraform/main.tf", "--json"))
    assert [m["type"] for m in data["memories"]] == ["correction"] and data["tokens"] <= 300
    assert data["memories"][0]["title_only"] is False
    config = vault / ".ccmemory" / "config.yaml"
    kept = config.read_text()
    assert "\nrecall:\n" in kept  # `init` writes the section
    config.write_text(kept.replace("\nrecall:\n", "\nrecall:\n  max_memories: 1\n"))
    data = json.loads(_cli(vault, "recall", "speed up the nightly invoice export to the ERP", "--json"))
    assert [m["title_only"] for m in data["memories"]] == [False, True] and "\n- also [" in data["text"]
    assert "injected, title only" in _cli(
        vault, "recall", "speed up the nightly invoice export to the ERP", "--explain"
    )
    config.write_text(kept)
    assert "nothing would be injected" in _cli(vault, "recall", "ok thanks")
    _prompt(vault, "speed up the nightly invoice export to the ERP")  # one real injection
    usage = json.loads(_cli(vault, "recall", "--usage", "--json"))
    assert usage["injections"] == 1 and usage["tokens"] > 0 and usage["sessions"][0]["session"] == "s-1"
    explain = _cli(vault, "context", "--explain")
    assert "(session start:" in explain and f"so far {usage['tokens']} tokens in 1 injections" in explain


def test_what_came_of_a_recalled_memory_edited_files_and_citations(vault: Path) -> None:
    """Recall remembers the files of what it showed: an edit of one of them in the same session
    is logged once as `followed`; a reply that names a shown id is logged once as `cited`
    (the capture worker passes the replies it reads). Neither counts for another session."""
    from ccmemory.features.capture.worker import _note_citations
    from ccmemory.features.recall import follow
    from ccmemory.features.recall.state import SessionState

    assert "ERP gateway" in _prompt(vault, "speed up the nightly invoice export to the ERP")
    gotcha = next(i for i, f in SessionState(str(vault), "s-1").files.items() if f == ["services/invoicing/"])
    # the file hook does not show the gotcha again, but the edit counts as a follow-up, once
    assert "ERP gateway" not in _edit(vault, "services/invoicing/export.py")
    _edit(vault, "services/invoicing/export.py")
    _edit(vault, "services/invoicing/batch.py", tool="Read")  # reading is not following
    _edit(vault, "services/invoicing/export.py", session="s-2")  # another session: shown anew
    assert SessionState(str(vault), "s-1").followed == {gotcha}
    assert SessionState(str(vault), "s-2").followed == set()

    reply = {"k": "assistant", "text": f"Per the gotcha `{gotcha}` I split the batches at 500."}
    _note_citations(vault, "s-1", [reply, {"k": "user", "text": gotcha}])
    _note_citations(vault, "s-1", [reply])  # read again on a later pass: still once
    assert follow.cited(str(vault), "s-3", {}, [reply["text"]]) == []  # never shown in s-3
    usage = json.loads(_cli(vault, "recall", "--usage", "--json"))
    assert (usage["edited_after"], usage["cited_after"]) == (1, 1) and usage["recalled"] >= 2
    assert "1 had their files edited in the session, 1 were cited" in _cli(vault, "recall", "--usage")


def test_the_session_start_digest_spreads_its_budget_over_sections(repo: Path) -> None:
    """Forty long corrections do not crowd out the gotchas, decisions and failed approaches:
    each section gets its first lines before any section gets more, and a long right belief is
    clipped (the full text is one `get` away)."""
    from ccmemory.app.service import Service
    from ccmemory.features.context import FIRST_PASS, GIST_CHARS, context_for
    from tests.conftest import make_memory

    svc = Service.open(repo)
    try:
        long = "the exporter retries each batch with backoff and " * 6
        for i in range(40):
            svc.record(
                make_memory("correction", f"Correction {i} about the exporter", fields={"right_belief": long})
            )
        svc.record(make_memory("gotcha", "The ERP gateway drops batches above 500 documents"))
        svc.record(make_memory("decision", "Invoices reach the ERP through a nightly job"))
        svc.record(
            make_memory("failed_approach", "Streaming invoices one by one", fields={"lesson": "Too slow."})
        )
        ctx = context_for(svc, 600)
    finally:
        svc.close()
    assert ctx.tokens <= 600
    for title in ("Project rules", "Gotchas and exceptions", "Recent decisions", "Failed approaches"):
        assert f"## {title}" in ctx.text, title
    lines = [ln for ln in ctx.text.splitlines() if ln.startswith("- [correction]")]
    assert FIRST_PASS <= len(lines) < 40
    assert all("…" in ln and len(ln) < 60 + GIST_CHARS + 40 for ln in lines)


def test_after_the_full_lines_the_next_picks_are_shown_by_title_and_id_only() -> None:
    """Progressive disclosure: ``max_memories`` memories with their gist, then ``also_titles`` more
    (they cleared the same gate) as a title and id at a fraction of a line's cost, within the same
    budget; never a title without a full line before it, never a memory twice."""
    body = "Split the export into batches of at most 500 invoices; larger ones time out. " * 2
    picks = [
        engine.Pick(engine.Recalled(f"M{i}", t, f"Memory {i} about invoices", body), 1.0 - i / 10, "prompt")
        for i, t in enumerate(["decision", "gotcha", "fact", "pattern", "decision", "fact"])
    ]
    full, titles = picks[:3], picks[3:5]
    out = engine.show(
        picks, RecallSettings(budget_tokens=300, max_memories=3, also_titles=2), "header", check_first=True
    )
    assert out.ids == ["M1", "M0", "M2", "M3", "M4"] and out.titled == ["M3", "M4"]
    lines = out.text.splitlines()
    assert lines[-2:] == [
        "- also [pattern] Memory 3 about invoices `M3`",
        "- also [decision] Memory 4 about invoices `M4`",
    ]
    assert all("Split the export" in ln for ln in lines[1:4])  # the full lines keep their gist
    assert out.tokens == engine.estimate_tokens(out.text) <= 300
    title_cost = engine.estimate_tokens(lines[-1] + "\n")
    assert title_cost * 2 < engine.estimate_tokens(lines[1] + "\n")  # the gist is most of a line
    # the budget is shared: a budget that fits the full lines and one title shows one title
    plain = engine.render(full, 300, "header", check_first=True)
    assert plain.titled == [] and plain.ids == ["M1", "M0", "M2"]
    spent = sum(engine.estimate_tokens(ln + "\n") for ln in plain.text.splitlines())  # as render counts
    tight = engine.render(full, spent + title_cost, "header", check_first=True, titles=titles)
    assert tight.titled == ["M3"]
    # no title without a full line; no memory twice; none asked for, none shown
    assert engine.render(full, 10, "header", titles=titles).ids == []
    assert engine.render(full[:1], 300, "h", titles=[full[0], titles[0]]).ids == ["M0", "M3"]
    assert engine.render(full, 300, "header", titles=[]).titled == []


def test_the_hook_shows_the_next_memory_by_title_only(vault: Path) -> None:
    """Through the real UserPromptSubmit hook: with one full line allowed, the next memory that
    applies comes as a title and id; the session then counts it as shown; also_titles: 0 turns
    it off."""
    prompt = "speed up the nightly invoice export to the ERP"
    (vault / ".ccmemory" / "config.yaml").write_text("recall:\n  max_memories: 1\n")
    text = _prompt(vault, prompt, session="t-1")
    listed = [ln for ln in text.splitlines() if ln.startswith("- ")]
    gotcha = "The ERP gateway drops invoice batches above 500 documents"
    decision = "Invoices reach the ERP through a nightly Celery job"
    assert len(listed) == 2 and not listed[0].startswith("- also") and listed[1].startswith("- also [")
    assert (gotcha in listed[0]) != (gotcha in listed[1]) and (decision in listed[0]) != (
        decision in listed[1]
    )
    assert " — " in listed[0] and " — " not in listed[1]  # the title line carries no gist
    again = _prompt(vault, prompt, session="t-1")
    assert gotcha not in again and decision not in again  # both count as shown in the session
    (vault / ".ccmemory" / "config.yaml").write_text("recall:\n  max_memories: 1\n  also_titles: 0\n")
    text = _prompt(vault, prompt, session="t-2")
    assert text.count("\n- ") == 1 and "- also" not in text
