"""Issue #15 (facade items): filters are copied with dataclasses.replace; context.py does not import
service.py at run time, nor (issue 26) the service any feature."""

from __future__ import annotations

import ast
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from ccmemory.features.context import ContextResult, estimate_tokens
from ccmemory.index.base import Filters

PKG = Path(__file__).resolve().parent.parent / "ccmemory"


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"), str(p))) for p in sorted(PKG.rglob("*.py"))]


def test_no_filters_copied_through_dunder_dict() -> None:
    """`Filters(**{**f.__dict__, ...})` drops a subclass and any field a later Filters gains a
    default for; every copy goes through dataclasses.replace."""
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Filters"
            ):
                continue
            if any(kw.arg is None and "__dict__" in ast.unparse(kw.value) for kw in node.keywords):
                found.append(f"{path.relative_to(PKG.parent)}:{node.lineno}")
    assert found == []


def test_context_does_not_import_service_at_run_time() -> None:
    tree = ast.parse((PKG / "features" / "context.py").read_text(encoding="utf-8"))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            guarded |= {id(n) for n in ast.walk(node)}
    runtime = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module == "ccmemory.app.service"
        and id(node) not in guarded
    ]
    assert runtime == []
    # and importing context alone does not pull the service (nor its index/search stack) in
    code = "import sys, ccmemory.features.context; print('ccmemory.app.service' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_service_imports_no_feature() -> None:
    """Issue 26: the service wires the lower layers only (`lint-imports` checks every module;
    this is the same rule where it was broken before: service -> context -> service)."""
    code = "import sys, ccmemory.app.service; print(sorted(m for m in sys.modules if m.startswith('ccmemory.features')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert ContextResult.__module__ == "ccmemory.features.context"
    assert estimate_tokens("") == 0 and estimate_tokens("abcde") == 2


def test_replace_keeps_every_field() -> None:
    import dataclasses

    f = Filters("p", types=["decision"], viewer="a@b", since=datetime(2026, 1, 1, tzinfo=UTC), topics=["x"])
    g = dataclasses.replace(f, ids=["01ABC"])
    assert (g.project, g.types, g.viewer, g.since, g.topics, g.ids) == (
        "p",
        ["decision"],
        "a@b",
        f.since,
        ["x"],
        ["01ABC"],
    )
    assert f.ids is None  # the original is untouched
