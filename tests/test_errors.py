"""Issue #15: one error base (CcmemoryError: message, hint), mapped once to CLI exit codes
(ccmemory/cli/errors.py) and once to MCP error codes (ccmemory/errors.py)."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import ccmemory
from ccmemory.core.errors import MCP_CODES, CcmemoryError, ConfigError, mcp_error
from ccmemory.surfaces.cli import app
from ccmemory.surfaces.cli.errors import EXIT_CODES, exit_code
from tests.conftest import RunCli

# modules that need an optional extra this test run may not have
OPTIONAL = {"ccmemory.features.capture.providers.anthropic_api"}
# the CLI's rendering of a CcmemoryError for click (not an error class of its own)
RENDERING = {"ccmemory.surfaces.cli.errors.CliError"}


def _all_modules() -> list[object]:
    out = []
    for info in pkgutil.walk_packages(ccmemory.__path__, "ccmemory."):
        if info.name.endswith("__main__"):
            continue
        try:
            out.append(importlib.import_module(info.name))
        except ImportError:
            if info.name not in OPTIONAL:
                raise
    return out


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def test_every_exception_class_of_the_package_is_a_ccmemory_error() -> None:
    strays = []
    for module in _all_modules():
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__  # type: ignore[attr-defined]
                and not issubclass(obj, CcmemoryError)
                and f"{obj.__module__}.{name}" not in RENDERING
            ):
                strays.append(f"{obj.__module__}.{name}")
    assert strays == []


def test_both_tables_name_every_subclass_and_nothing_else() -> None:
    _all_modules()
    classes = {c for c in _subclasses(CcmemoryError) if c.__module__.startswith("ccmemory.")}
    names = [c.__name__ for c in classes] + ["CcmemoryError"]
    assert len(names) == len(set(names)), "the tables are keyed by class name: keep names unique"
    assert len(names) >= 20  # the thirteen-plus classes of the issue, and their subclasses
    assert set(EXIT_CODES) == set(names)
    assert set(MCP_CODES) == set(names)
    assert set(EXIT_CODES.values()) <= {1, 2, 3, 4, 5}
    assert all(code.replace("_", "").isalpha() and code.islower() for code in MCP_CODES.values())


def test_classes_keep_their_builtin_bases() -> None:
    """Code that caught the builtin keeps working."""
    from ccmemory.core.vault import YAMLLimit
    from ccmemory.core.walk import UnsafeFile
    from ccmemory.retrieval.embed import EmbedderUnavailable

    assert issubclass(UnsafeFile, OSError) and issubclass(YAMLLimit, ValueError)
    assert issubclass(ConfigError, ValueError) and issubclass(EmbedderUnavailable, RuntimeError)
    with pytest.raises(OSError, match="a symlink"):
        raise UnsafeFile("notes.md: a symlink")


def test_mcp_error_uses_the_table_and_a_classs_own_code() -> None:
    from ccmemory.app.resolve import AmbiguousRef
    from ccmemory.core.vault import VaultNotFound
    from ccmemory.index.base import IndexUnavailable
    from ccmemory.surfaces.mcp.ops import ToolFailure

    down = mcp_error(IndexUnavailable("neo4j at bolt://x: connection refused"))
    assert down["code"] == "index_unavailable" and "bolt://x" in down["message"] and "reindex" in down["hint"]
    assert mcp_error(VaultNotFound("no .ccmemory/ in /tmp")) == {
        "code": "no_vault",
        "message": "no .ccmemory/ in /tmp",
    }
    assert (
        mcp_error(ToolFailure("invalid_argument", "limit too big", "use 1..50"))["code"] == "invalid_argument"
    )
    assert mcp_error(AmbiguousRef("01AB", [], {}))["code"] == "ambiguous"
    assert mcp_error(ValueError("x"))["code"] == "internal"


def test_a_tool_that_lets_an_anticipated_error_through_gets_its_code() -> None:
    """The MCP layer's one catch: any CcmemoryError becomes a structured tool error."""
    from ccmemory.core.gitstate import GitError
    from ccmemory.surfaces.mcp.server import guarded

    @guarded
    def tool() -> dict[str, str]:
        raise GitError("git log failed: not a git repository", "run it inside the repository")

    result: Any = tool()  # guarded turns the exception into an MCP tool error result
    payload = json.loads(result.content[0].text)
    assert result.is_error and payload == {
        "error": {
            "code": "git_failed",
            "message": "git log failed: not a git repository",
            "hint": "run it inside the repository",
        }
    }


def test_bad_config_through_the_cli_gives_exit_2_and_the_hint(repo: Path, run_cli: RunCli) -> None:
    (repo / ".ccmemory/config.yaml").write_text("backend: postgres\n", encoding="utf-8")
    proc = run_cli(repo, "search", "anything", check=False)
    assert proc.returncode == 2, proc.stderr
    assert "unknown backend 'postgres'" in proc.stderr
    assert "Hint: set `backend:` in .ccmemory/config.yaml or CCMEMORY_BACKEND" in proc.stderr
    assert "Traceback" not in proc.stderr
    (repo / ".ccmemory/config.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    proc = run_cli(repo, "search", "anything", check=False)
    assert proc.returncode == 2 and "config.yaml: settings must be a YAML mapping" in proc.stderr


def test_no_vault_is_exit_1_naming_the_folder(tmp_path: Path, run_cli: RunCli) -> None:
    proc = run_cli(tmp_path, "search", "anything", check=False)
    assert proc.returncode == 1 and ".ccmemory" in proc.stderr and "Traceback" not in proc.stderr


def test_the_group_reports_what_a_command_lets_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that does not catch a CcmemoryError still gives its message, hint and code."""
    from ccmemory.surfaces.cli.cmd_neo4j import ComposeMissing

    @click.command("boom")
    @click.argument("which")
    def boom(which: str) -> None:
        if which == "docker":
            raise ComposeMissing("docker compose version failed")
        raise ConfigError("config.yaml: bad", "fix it")

    module = type(importlib)("ccmemory_test_boom")
    module.boom = boom  # type: ignore[attr-defined]
    monkeypatch.setitem(importlib.sys.modules, "ccmemory_test_boom", module)  # type: ignore[attr-defined]
    monkeypatch.setitem(app.COMMANDS, "boom", "ccmemory_test_boom:boom")
    runner = CliRunner()
    out = runner.invoke(app.cli, ["boom", "config"])
    assert out.exit_code == 2 and "Error: config.yaml: bad\nHint: fix it" in out.output
    out = runner.invoke(app.cli, ["boom", "docker"])
    assert out.exit_code == exit_code(ComposeMissing("x")) == 4
    assert "docker compose version failed" in out.output
