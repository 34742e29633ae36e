"""The Claude Code plugin: manifest, hooks, MCP entry, commands, skill, marketplace, wrapper."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.capture_helpers import make_repo

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "plugin"
WRAPPER = PLUGIN / "scripts" / "hook.sh"
MCP_WRAPPER = PLUGIN / "scripts" / "mcp.sh"
EVENTS = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop", "SessionEnd"}


def test_manifest_marketplace_and_components() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "ccmemory"
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert market["plugins"][0]["source"] == "./plugin" and market["owner"]["name"]
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == EVENTS
    for event, groups in hooks.items():
        cmd = groups[0]["hooks"][0]
        assert cmd["type"] == "command"
        assert cmd["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/scripts/hook.sh" {event}'
    mcp = json.loads((PLUGIN / ".mcp.json").read_text())
    assert mcp["mcpServers"]["ccmemory"] == {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/mcp.sh", "args": []}
    assert os.access(MCP_WRAPPER, os.X_OK)
    for name in ("decision", "correction", "exception", "remember"):
        text = (PLUGIN / "commands" / f"{name}.md").read_text()
        assert text.startswith("---\ndescription:") and "$ARGUMENTS" in text
    skill = (PLUGIN / "skills" / "ccmemory" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: ccmemory\ndescription:")
    assert os.access(WRAPPER, os.X_OK)


def test_wrapper_without_ccmemory_prints_hint_and_exits_zero(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for event in sorted(EVENTS):
        proc = subprocess.run(
            [str(WRAPPER), event], input=b'{"session_id": "x"}', capture_output=True, env=env, timeout=10
        )
        assert proc.returncode == 0
        if event == "SessionStart":
            assert b"was not found" in proc.stdout and proc.stdout.count(b"\n") == 1
            # the hint installs this project (from a clone), not the index's `ccmemory` placeholder
            assert (
                b"pipx install /path/to/ccmemory" in proc.stdout
                and b"pipx install ccmemory" not in proc.stdout
            )
        else:
            assert proc.stdout == b""


def test_wrapper_runs_the_installed_hook(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    bindir = Path(sys.executable).parent
    assert (bindir / "ccmemory").exists(), "run `pip install -e .` first"
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    payload = {
        "session_id": "w1",
        "cwd": str(repo),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(repo / "x.py")},
        "tool_response": {},
        "tool_use_id": "toolu_w",
    }
    proc = subprocess.run(
        [str(WRAPPER), "PostToolUse"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        cwd=repo,
        timeout=30,
    )
    assert proc.returncode == 0 and proc.stdout == b""
    line = json.loads((repo / ".ccmemory/local/spool/w1.jsonl").read_text())
    assert line["id"] == "toolu_w" and line["file"].endswith("x.py")


def test_the_plugin_finds_the_command_init_recorded_when_it_is_not_on_path(tmp_path: Path) -> None:
    """A clone's .venv that is not on PATH (issue 33): `ccmemory init` records its command in the
    personal folder, and the hook and MCP wrappers run it from there."""
    repo = make_repo(tmp_path)
    home = tmp_path / "personal"
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CCMEMORY_HOME": str(home)}
    mcp = subprocess.run([str(MCP_WRAPPER), "--help"], capture_output=True, env=bare, timeout=10)
    assert mcp.returncode == 1 and b"cannot start the MCP server" in mcp.stderr
    subprocess.run(
        [sys.executable, "-m", "ccmemory", "init"],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**os.environ, "CCMEMORY_HOME": str(home), "PYTHONPATH": str(ROOT)},
    )
    assert (home / "bin-path").read_text().strip() == str(Path(sys.executable).parent / "ccmemory")
    payload = {
        "session_id": "w2",
        "cwd": str(repo),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(repo / "y.py")},
        "tool_response": {},
        "tool_use_id": "toolu_y",
    }
    proc = subprocess.run(
        [str(WRAPPER), "PostToolUse"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=bare,
        cwd=repo,
        timeout=30,
    )
    assert proc.returncode == 0 and proc.stdout == b""
    assert json.loads((repo / ".ccmemory/local/spool/w2.jsonl").read_text())["id"] == "toolu_y"
    mcp = subprocess.run([str(MCP_WRAPPER), "--help"], capture_output=True, env=bare, timeout=30)
    assert mcp.returncode == 0 and b"MCP" in mcp.stdout
