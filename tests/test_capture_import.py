"""`ccmemory import PATH`: a transcript file or a projects folder, twice without duplicates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccmemory.surfaces.cli.cmd_import import command
from tests.capture_helpers import (
    FIXTURES,
    assert_no_secrets,
    make_repo,
    memory_files,
    read_memory,
    secret_text,
)
from tests.test_hooks import SYNTHETIC


def projects_folder(tmp_path: Path) -> Path:
    """A ~/.claude/projects/<project>/ folder: fixture sessions, one with a v2.1 sub-agent dir."""
    folder = tmp_path / "claude" / "projects" / "-work-demo"
    folder.mkdir(parents=True)
    for src in sorted(FIXTURES.glob("*/*.jsonl")):
        shutil.copy(src, folder / src.name)
    records = [dict(r) for r in SYNTHETIC]
    records[4] = {
        **records[4],
        "message": {
            "role": "user",
            "content": f"No, we use pnpm instead of npm in this repo. {secret_text()}",
        },
    }
    (folder / "synthetic.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    sub = folder / "synthetic" / "subagents"
    sub.mkdir(parents=True)
    shutil.copy(
        FIXTURES / "d-kimuson_claude-code-viewer" / "agent-test-hash-123.jsonl", sub / "agent-1.jsonl"
    )
    return folder


def run_import(repo: Path, path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> dict:
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(command, [str(path), "--provider", "test", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_import_projects_folder_twice_creates_no_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path)
    folder = projects_folder(tmp_path)
    first = run_import(repo, folder, monkeypatch)
    assert first["files"] == 8  # seven fixture sessions + synthetic; agent files skipped
    files = memory_files(repo)
    assert sorted(p.parent.name for p in files) == ["corrections", "decisions"]
    for f in files:
        assert_no_secrets(f.read_text(), str(f))
        mem = read_memory(f)
        assert mem.source == "import" and mem.session == "syn"
        assert mem.created.year == 2026 and mem.created.day == 20  # the session's time
    second = run_import(repo, folder, monkeypatch)
    assert second["written"] == [] and second["already_imported"] == second["segments"]
    assert memory_files(repo) == files
    # even without the done-markers, ids and the duplicate check keep it clean
    shutil.rmtree(repo / ".ccmemory" / "local" / "jobs")
    third = run_import(repo, folder, monkeypatch)
    assert third["written"] == [] and memory_files(repo) == files


def test_import_single_file_with_progress_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path)
    src = tmp_path / "one.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in SYNTHETIC) + "\n")
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(command, [str(src), "--provider", "test"])
    assert result.exit_code == 0, result.output
    assert "Importing segments" in result.output
    assert "2 memory file(s) written" in result.output


def test_import_outside_a_vault_fails_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    src = FIXTURES / "simonw_claude-code-transcripts" / "sample_session.jsonl"
    result = CliRunner().invoke(command, [str(src)])
    assert result.exit_code != 0 and "ccmemory init" in result.output
