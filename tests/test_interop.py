"""Import and export (issue 30): JSON round trip, agent rule files in, curated rules out."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.capture_helpers import read_memory
from tests.conftest import RunCli, git, init_git

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

RULES = """\
# Kestrel service

The service turns falconry bookings into invoices for the regional aviaries.

## Testing
- Always run `pytest -x` before pushing.
- Never mock the ledger database in integration tests because the migrations then break silently.
- The CI runs on Python 3.12.
  It also builds the docs.

## Style
1. Use ruff for linting and formatting.
2. Keep handlers under 40 lines.

```bash
make test   # not a rule: code
```
"""


def _memories(root: Path) -> list[Path]:
    return sorted((root / ".ccmemory").rglob("*.md"))[1:]  # [0] is .ccmemory/README.md


def _vault(tmp_path: Path, run_cli: RunCli, name: str) -> Path:
    root = init_git(tmp_path / name)
    run_cli(root, "init", "--no-git-hooks")
    return root


def test_json_round_trip_is_lossless(tmp_path: Path, run_cli: RunCli) -> None:
    src = _vault(tmp_path, run_cli, "src")
    first = json.loads(
        run_cli(
            src,
            "new",
            "decision",
            "Bookings go through the queue",
            "-t",
            "queue",
            "-f",
            "svc/booking.py",
            "--field",
            "rationale=bursts",
            "--json",
        ).stdout
    )
    run_cli(
        src,
        "new",
        "correction",
        "Invoices are in cents",
        "--supersedes",
        first["id"],
        "--field",
        "wrong_belief=euros",
        "--field",
        "right_belief=cents",
        "--body",
        "Multi\n\nline *body*.",
    )
    hand = src / ".ccmemory" / "facts" / "hand-written.md"
    hand.parent.mkdir(parents=True, exist_ok=True)
    hand.write_text(
        "---\nid: 01JD3K8X9QF2B7M4R6T0VWYZAC\ntype: fact\ntitle: Falcons weigh 1 kg\n"
        "created: 2026-01-02T03:04:05Z\ncustom_key: kept\n---\nBody.\n"
    )
    exported = run_cli(src, "export", "--to", "json").stdout
    data = json.loads(exported)
    assert data["format"] == "ccmemory-export" and data["version"] == 1 and len(data["memories"]) == 3
    dst = _vault(tmp_path, run_cli, "dst")
    (tmp_path / "export.json").write_text(exported)
    out = json.loads(run_cli(dst, "import", str(tmp_path / "export.json"), "--json").stdout)
    assert len(out["written"]) == 3 and out["errors"] == []
    assert run_cli(dst, "export", "--to", "json").stdout == exported.replace(
        '"project": "src"', '"project": "dst"'
    )
    again = json.loads(run_cli(dst, "import", str(tmp_path / "export.json"), "--json").stdout)
    assert again["written"] == [] and again["already_there"] == 3
    hits = json.loads(run_cli(dst, "search", "invoices cents", "--json").stdout)
    assert hits[0]["title"] == "Invoices are in cents"  # indexed after the import


def test_json_round_trip_keeps_links_to_files_without_id_and_by_path(tmp_path: Path, run_cli: RunCli) -> None:
    """Hand-written files (no `id:` yet, provisional ids) linked by path: the import gives them
    ULIDs, every link still names its memory, and the superseded one stays superseded."""
    src = _vault(tmp_path, run_cli, "src")
    folder = src / ".ccmemory" / "decisions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "use-postgres.md").write_text("---\ntype: decision\ntitle: Use Postgres\n---\nPostgres 15.\n")
    (folder / "pooling.md").write_text(
        "---\nid: 01JD3K8X9QF2B7M4R6T0VWYZAC\ntype: decision\ntitle: Pool connections\n"
        "created: 2026-01-02T03:04:05Z\n---\nPgBouncer in front of Postgres.\n"
    )
    (folder / "pg16.md").write_text(
        "---\ntype: decision\ntitle: Upgrade to Postgres 16\nsupersedes: [decisions/use-postgres.md]\n"
        "relations:\n  - {type: DEPENDS_ON, target: ../decisions/pooling.md}\n---\nPostgres 16 now.\n"
    )
    exported = run_cli(src, "export", "--to", "json").stdout
    by_title = {m["title"]: m for m in json.loads(exported)["memories"]}
    pg16 = by_title["Upgrade to Postgres 16"]
    assert pg16["supersedes"] == [by_title["Use Postgres"]["id"]]  # the id the path names
    assert pg16["relations"] == [{"type": "DEPENDS_ON", "target": "01JD3K8X9QF2B7M4R6T0VWYZAC"}]
    # an export written before targets were resolved: the path of a file without id still works
    older = exported.replace(
        json.dumps(by_title["Use Postgres"]["id"]) + "\n", '"decisions/use-postgres.md"\n'
    )
    assert older.count("decisions/use-postgres.md") == 1
    for name, text in (("new", exported), ("old", older)):
        dst = _vault(tmp_path, run_cli, f"dst-{name}")
        (tmp_path / f"{name}.json").write_text(text)
        out = json.loads(run_cli(dst, "import", str(tmp_path / f"{name}.json"), "--json").stdout)
        assert len(out["written"]) == 3 and out["errors"] == [], name
        mems = {m.title: m for m in (read_memory(dst / p) for p in out["written"])}
        assert mems["Upgrade to Postgres 16"].supersedes == [mems["Use Postgres"].id], name
        assert all(re.fullmatch(r"[0-9A-Z]{26}", m.id) for m in mems.values()), name
        hits = json.loads(run_cli(dst, "search", "postgres", "--json", "--mode", "text").stdout)
        assert sorted(h["title"] for h in hits) == ["Pool connections", "Upgrade to Postgres 16"], name
        findings = json.loads(run_cli(dst, "check", "--json").stdout)
        assert findings == [], (name, findings)
        again = json.loads(run_cli(dst, "import", str(tmp_path / f"{name}.json"), "--json").stdout)
        assert again["written"] == [] and again["already_there"] == 3, name


def test_a_hostile_export_is_reported_entry_by_entry(tmp_path: Path, run_cli: RunCli) -> None:
    dst = _vault(tmp_path, run_cli, "dst")
    good = {
        "id": "01JD3K8X9QF2B7M4R6T0VWYZAC",
        "type": "fact",
        "title": f"Key {SECRET}",
        "created": "2026-01-02T03:04:05Z",
        "body": f"token {SECRET}",
    }
    doc = {
        "format": "ccmemory-export",
        "version": 1,
        "project": "x",
        "memories": [
            good,
            {**good, "id": "../../../../tmp/evil", "title": "traversal"},
            {**good, "id": "01JD3K8X9QF2B7M4R6T0VWYZAD", "type": "nonsense"},
            {**good, "id": "01JD3K8X9QF2B7M4R6T0VWYZAE", "confidence": "very"},
            "not a mapping",
            {**good, "id": "01JD3K8X9QF2B7M4R6T0VWYZAF", "created": "sometime last spring"},
        ],
    }
    (tmp_path / "e.json").write_text(json.dumps(doc))
    out = json.loads(run_cli(dst, "import", str(tmp_path / "e.json"), "--json").stdout)
    assert len(out["written"]) == 1 and {e["entry"] for e in out["errors"]} == {2, 3, 4, 5, 6}
    written = (dst / out["written"][0]).read_text()
    assert SECRET not in written and "[REDACTED" in written
    assert not (tmp_path / "evil").exists() and not Path("/tmp/evil.md").exists()
    (tmp_path / "other.json").write_text('{"format": "something-else"}')
    other = run_cli(dst, "import", "--from", "json", str(tmp_path / "other.json"), "--json")
    assert "not a ccmemory export" in json.loads(other.stdout)["errors"][0]["reason"]
    # JSON nested deeper than Python's parser recurses: one line naming the file, no traceback,
    # whichever importer the file is sniffed for
    deep = '{"format": "ccmemory-export", "version": 1, "memories": [' + "[" * 100_000 + "]" * 100_000 + "]}"
    (tmp_path / "deep.json").write_text(deep)
    for kind in ("json", "auto", "mem0"):
        bad = run_cli(dst, "import", "--from", kind, str(tmp_path / "deep.json"), check=False)
        said = bad.stdout + bad.stderr
        assert "nested too deeply" in said or "recursion depth" in said, (kind, said)
        assert "Traceback" not in bad.stderr and "deep.json" in bad.stderr + bad.stdout, (kind, bad.stderr)


def test_rule_files_import_once_and_a_changed_rule_supersedes(tmp_path: Path, run_cli: RunCli) -> None:
    root = _vault(tmp_path, run_cli, "r")
    (root / "AGENTS.md").write_text(RULES.replace("Python 3.12", f"Python 3.12 ({SECRET})"))
    dry = json.loads(run_cli(root, "import", "AGENTS.md", "--dry-run", "--json").stdout)
    got = {(p["type"], p["title"]) for p in dry["would_write"]}
    assert got == {
        ("fact", "The service turns falconry bookings into invoices for the regional aviaries"),
        ("preference", "Always run pytest -x before pushing"),
        (
            "gotcha",
            "Never mock the ledger database in integration tests because the migrations then break silently",
        ),
        ("fact", "The CI runs on Python 3.12 ([REDACTED:github_token])"),
        ("preference", "Use ruff for linting and formatting"),
        ("preference", "Keep handlers under 40 lines"),
    }
    assert _memories(root) == []  # the dry run wrote nothing
    out = json.loads(run_cli(root, "import", "AGENTS.md", "--json").stdout)
    assert len(out["written"]) == 6
    ci = read_memory(next(p for p in _memories(root) if "the-ci-runs" in p.name))
    assert ci.extra["imported_from"] == "AGENTS.md:8" and "builds the docs" in ci.body
    assert ci.topics == ["Testing"] and ci.source == "import" and SECRET not in ci.body
    assert json.loads(run_cli(root, "import", "AGENTS.md", "--json").stdout)["written"] == []
    assert "would_write" not in json.loads(run_cli(root, "import", "AGENTS.md", "--dry-run", "--json").stdout)
    (root / "AGENTS.md").write_text(
        RULES.replace("Keep handlers under 40 lines", "Keep handlers under 30 lines")
    )
    changed = json.loads(run_cli(root, "import", "AGENTS.md", "--json").stdout)
    assert len(changed["written"]) == 2 and len(changed["superseded"]) == 2  # the CI line lost its secret too


def test_export_writes_the_curated_rules_block_and_import_skips_it(tmp_path: Path, run_cli: RunCli) -> None:
    root = _vault(tmp_path, run_cli, "x")
    run_cli(root, "new", "gotcha", "Falcon weights are in grams", "--body", "Never kilograms.")
    old = json.loads(run_cli(root, "new", "preference", "Use tabs", "--json").stdout)
    run_cli(root, "new", "preference", "Use four spaces", "--supersedes", old["id"])
    run_cli(root, "new", "fact", "The aviary has nine falcons")  # not a rule type
    git(root, "add", "-A")
    git(root, "commit", "-qm", "rules")
    run_cli(root, "reindex")
    run_cli(root, "new", "decision", "Still on a branch-less draft")  # developmental: left out
    (root / "CLAUDE.md").write_text("# Mine\n\nMy own notes stay.\n")
    run_cli(root, "export", "--to", "claude-md")
    text = (root / "CLAUDE.md").read_text()
    assert text.startswith("# Mine\n\nMy own notes stay.\n")
    assert "Falcon weights are in grams" in text and "Use four spaces" in text
    assert "Use tabs" not in text and "nine falcons" not in text and "branch-less" not in text
    run_cli(root, "export", "--to", "claude-md")
    assert (root / "CLAUDE.md").read_text() == text  # regenerated in place: same bytes
    out = json.loads(run_cli(root, "import", "CLAUDE.md", "--json").stdout)
    assert [Path(p).name for p in out["written"]] and all("my-own-notes" in p for p in out["written"])
    cursor = run_cli(root, "export", "--to", "cursor").stdout
    assert ".cursor/rules/ccmemory.mdc" in cursor
    assert (root / ".cursor/rules/ccmemory.mdc").read_text().startswith("---\ndescription:")


ADR_TOOLS_1 = """\
# 1. Store bookings in PostgreSQL

Date: 2021-03-04

## Status

Accepted

Superseded by [3. Store bookings in CockroachDB](0003-store-bookings-in-cockroachdb.md)

## Context

We need transactions across bookings and invoices.

## Decision

We will store bookings in PostgreSQL 13.

## Consequences

One primary, read replicas later.
"""

MADR_2 = """\
---
status: accepted
date: 2022-05-06
---
# Use ruff for linting

## Context and Problem Statement

Three linters, slow CI.

## Considered Options

* flake8 with plugins
* ruff
* pylint

## Decision Outcome

Chosen option: "ruff", because it replaces the three and runs in under a second.
"""

ADR_TOOLS_3 = """\
# 3. Store bookings in CockroachDB

Date: 2023-07-08

## Status

Accepted

## Decision

Bookings move to CockroachDB for multi-region writes.
"""


def test_an_adr_folder_becomes_decisions_with_their_chain(tmp_path: Path, run_cli: RunCli) -> None:
    root = _vault(tmp_path, run_cli, "adr")
    folder = root / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-store-bookings-in-postgresql.md").write_text(ADR_TOOLS_1)
    (folder / "0002-use-ruff-for-linting.md").write_text(MADR_2)
    (folder / "0003-store-bookings-in-cockroachdb.md").write_text(ADR_TOOLS_3)
    (folder / "README.md").write_text("# Decisions\n")  # not a record
    out = json.loads(run_cli(root, "import", "docs/adr", "--json").stdout)
    assert out["kind"] == "adr" and len(out["written"]) == 3
    mems = {m.title: m for m in (read_memory(p) for p in _memories(root))}
    pg, ruff, crdb = (
        mems[t]
        for t in ("Store bookings in PostgreSQL", "Use ruff for linting", "Store bookings in CockroachDB")
    )
    assert pg.created.year == 2021 and ruff.created.isoformat().startswith("2022-05-06")
    assert crdb.supersedes == [pg.id] and pg.extra["adr_status"] == "accepted"
    assert ruff.fields["options_considered"] == ["flake8 with plugins", "ruff", "pylint"]
    assert "replaces the three" in ruff.fields["rationale"]
    assert pg.extra["imported_from"] == "docs/adr/0001-store-bookings-in-postgresql.md"
    hits = json.loads(run_cli(root, "search", "where are bookings stored", "--json").stdout)
    assert hits[0]["title"] == "Store bookings in CockroachDB"  # the superseded one is left out
    again = json.loads(run_cli(root, "import", "docs/adr", "--json").stdout)
    assert again["written"] == [] and again["unchanged"] == 3


def test_mcp_ingest_turns_a_passage_into_memories_once(tmp_path: Path, run_cli: RunCli) -> None:
    from tests._mcp_client import SyncClient

    root = _vault(tmp_path, run_cli, "ingest")
    passage = (
        "Design review, 12 November.\n\n"
        "We always round surcharges half-even per line item; never in float.\n\n"
        f"No, invoices are not stored in euros -> they are stored in cents (key {SECRET}).\n\n"
        "Coffee was good."
    )
    env = {"CCMEMORY_PROVIDER": "test", "CCMEMORY_MCP_TOOLS": "full", "CCMEMORY_MCP_REFRESH_SECONDS": "0"}
    with SyncClient.stdio(root, env=env) as client:
        dry = client.call("ingest", {"text": passage, "dry_run": True})
        assert dry["provider"] == "test" and dry["written"] == [] and _memories(root) == []
        assert {m["type"] for m in dry["memories"]} == {"preference", "correction"}
        done = client.call("ingest", {"text": passage})
        assert len(done["written"]) == 2
        again = client.call("ingest", {"text": passage})
        assert again["written"] == [] and all(s["reason"].startswith("duplicate") for s in again["skipped"])
        found = client.call("search", {"query": "invoices stored in cents"})
    assert found["results"][0]["type"] == "correction"
    for path in _memories(root):
        text = path.read_text()
        assert SECRET not in text and "source: import" in text


MCP_MEMORY = (
    "\n".join(
        json.dumps(x)
        for x in (
            {
                "type": "entity",
                "name": "Ledger service",
                "entityType": "service",
                "observations": ["Written in Go", "Owns the invoices table"],
            },
            {
                "type": "entity",
                "name": "Invoices table",
                "entityType": "table",
                "observations": ["Amounts in cents"],
            },
            {"type": "relation", "from": "Ledger service", "to": "Invoices table", "relationType": "owns"},
            {"type": "relation", "from": "Ledger service", "to": "Nowhere", "relationType": "calls"},
        )
    )
    + "\nnot json at all\n"
)

BASIC_NOTE = """\
---
title: Falcon feeding
type: note
permalink: falcon-feeding
tags: [falcons, feeding]
---
# Falcon feeding

## Observations
- [decision] Feed the falcons at dawn only #schedule
- [tip] Thawed chicks work best
- [gotcha] Never feed right before a flight because they will not come back

## Relations
- relates_to [[Aviary layout]]
"""

BASIC_OTHER = """\
---
title: Aviary layout
permalink: aviary-layout
---
# Aviary layout

Nine mews along the east wall.
"""

MEM0 = {
    "results": [
        {
            "id": "m-1",
            "memory": "Prefers dark mode in every editor",
            "categories": ["preference"],
            "created_at": "2025-02-03T04:05:06Z",
        },
        {"id": "m-2", "memory": "Works on the kestrel booking service"},
        {"id": "m-3", "memory": ""},
    ]
}


def test_other_memory_tools_stores_come_in_once(tmp_path: Path, run_cli: RunCli) -> None:
    root = _vault(tmp_path, run_cli, "others")
    (tmp_path / "memory.json").write_text(MCP_MEMORY)
    notes = tmp_path / "basic"
    notes.mkdir()
    (notes / "falcon-feeding.md").write_text(BASIC_NOTE)
    (notes / "aviary-layout.md").write_text(BASIC_OTHER)
    (tmp_path / "mem0.json").write_text(json.dumps(MEM0))
    paths = [str(tmp_path / "memory.json"), str(notes), str(tmp_path / "mem0.json")]
    dry = json.loads(run_cli(root, "import", *paths, "--dry-run", "--json").stdout)
    assert [r["kind"] for r in dry] == ["mcp-memory", "basic-memory", "mem0"] and _memories(root) == []
    out = json.loads(run_cli(root, "import", *paths, "--json").stdout)
    assert [len(r["written"]) for r in out] == [2, 4, 2]
    assert out[0]["errors"] == [{"entry": 5, "reason": out[0]["errors"][0]["reason"]}]
    assert out[2]["errors"] == [{"entry": 3, "reason": "no memory text"}]
    mems = {m.title: m for m in (read_memory(p) for p in _memories(root))}
    ledger, table = mems["Ledger service (service)"], mems["Invoices table (table)"]
    assert "- Owns the invoices table" in ledger.body and ledger.topics == ["service"]
    assert [(r.type, r.target, r.reason) for r in ledger.relations] == [("RELATES_TO", table.id, "owns")]
    feeding, dawn = mems["Falcon feeding"], mems["Feed the falcons at dawn only"]
    assert dawn.type == "decision" and dawn.topics == ["schedule"] and dawn.relations[0].target == feeding.id
    assert mems["Never feed right before a flight because they will not come back"].type == "gotcha"
    assert "Thawed chicks work best" not in mems  # [tip] is not one of our types: it stays in the note
    assert feeding.relations[0].target == mems["Aviary layout"].id and feeding.topics == [
        "falcons",
        "feeding",
    ]
    dark = mems["Prefers dark mode in every editor"]
    assert (
        dark.type == "preference"
        and dark.created.year == 2025
        and dark.extra["imported_from"].endswith("#m-1")
    )
    again = json.loads(run_cli(root, "import", *paths, "--json").stdout)
    assert [len(r["written"]) for r in again] == [0, 0, 0] and [r["already_there"] for r in again] == [
        2,
        4,
        2,
    ]


def test_decisions_export_as_adrs_and_come_back(tmp_path: Path, run_cli: RunCli) -> None:
    src = _vault(tmp_path, run_cli, "adrsrc")
    first = json.loads(
        run_cli(
            src,
            "new",
            "decision",
            "Feed falcons twice a day",
            "--field",
            "rationale=they fly better",
            "--json",
        ).stdout
    )
    run_cli(
        src,
        "new",
        "decision",
        "Feed falcons once a day",
        "--supersedes",
        first["id"],
        "--field",
        "rationale=less waste",
        "--body",
        "Weights stayed stable.",
    )
    git(src, "add", "-A")
    git(src, "commit", "-qm", "decisions")
    run_cli(src, "reindex")
    assert "2 decision record(s) written" in run_cli(src, "export", "--to", "adr").stdout
    files = sorted((src / "docs" / "adr").iterdir())
    assert [f.name for f in files] == ["0001-feed-falcons-twice-a-day.md", "0002-feed-falcons-once-a-day.md"]
    assert "status: superseded by [0002](0002-feed-falcons-once-a-day.md)" in files[0].read_text()
    assert "status: accepted" in files[1].read_text() and "less waste" in files[1].read_text()
    assert "0 decision record(s) written" in run_cli(src, "export", "--to", "adr").stdout  # unchanged
    dst = _vault(tmp_path, run_cli, "adrdst")
    out = json.loads(run_cli(dst, "import", str(src / "docs" / "adr"), "--json").stdout)
    assert out["kind"] == "adr" and len(out["written"]) == 2
    mems = {m.title: m for m in (read_memory(p) for p in _memories(dst))}
    assert mems["Feed falcons once a day"].supersedes == [mems["Feed falcons twice a day"].id]
    assert mems["Feed falcons once a day"].fields["rationale"] == "less waste"
    files[0].write_text("# 1. Written by hand\n")  # not ccmemory's: never overwritten
    proc = run_cli(src, "export", "--to", "adr")
    assert "left alone" in proc.stderr and files[0].read_text() == "# 1. Written by hand\n"
