"""Import and export (issue 30): JSON round trip, agent rule files in, curated rules out."""

from __future__ import annotations

import json
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
