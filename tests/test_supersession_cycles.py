"""Supersession cycles written by hand (A supersedes B, B supersedes A) and a memory superseding
itself: `check` reports them, and no member of a cycle disappears from search and context (the
rule, `ccmemory.index.derive.superseded`, is shared by both backends: test_index_conformance).
Real git repository, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from ccmemory.index.derive import superseded, supersession_cycles
from tests.conftest import RunCli


def _new(run_cli: RunCli, repo: Path, title: str, *args: str) -> tuple[str, Path]:
    out = json.loads(
        run_cli(repo, "new", "decision", title, "--body", f"{title} body.", "--json", *args).stdout
    )
    return out["id"], repo / out["path"]


def _add_supersedes(path: Path, target: str) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    at = next(n for n, ln in enumerate(lines) if ln.startswith("title:"))
    lines.insert(at + 1, f"supersedes: [{target}]")
    path.write_text("\n".join(lines), encoding="utf-8")


def _rel(repo: Path, path: Path) -> str:
    return path.relative_to(repo).as_posix()


def test_cycle_and_self_supersession_are_reported_and_hide_nothing(repo: Path, run_cli: RunCli) -> None:
    a, a_path = _new(run_cli, repo, "Queue on Redis streams")
    b, b_path = _new(run_cli, repo, "Queue on RabbitMQ", "--supersedes", a)
    _add_supersedes(a_path, b)  # the hand edit that closes the cycle
    s, s_path = _new(run_cli, repo, "Cache on Memcached")
    _add_supersedes(s_path, s)
    old, _ = _new(run_cli, repo, "Deploy with Fabric")
    new, _ = _new(run_cli, repo, "Deploy with Ansible", "--supersedes", old)

    proc = run_cli(repo, "check", check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    a_line = next(ln for ln in out.splitlines() if ln.startswith(_rel(repo, a_path)))
    b_line = next(ln for ln in out.splitlines() if ln.startswith(_rel(repo, b_path)))
    assert "supersession cycle with" in a_line and _rel(repo, b_path) in a_line
    assert "supersession cycle with" in b_line and _rel(repo, a_path) in b_line
    assert f"{_rel(repo, s_path)}:" in out and "supersedes itself" in out

    run_cli(repo, "reindex")
    listed = run_cli(repo, "search", "queue", "--json").stdout
    ids = {r["id"] for r in json.loads(listed)}
    assert {a, b} <= ids  # neither member of the cycle vanished
    cache = {r["id"] for r in json.loads(run_cli(repo, "search", "Memcached", "--json").stdout)}
    assert s in cache  # a memory naming itself is not superseded
    deploy = {r["id"] for r in json.loads(run_cli(repo, "search", "deploy", "--json").stdout)}
    assert new in deploy and old not in deploy  # an ordinary supersession still hides the old one
    trace = run_cli(repo, "trace", s).stdout
    assert "SUPERSEDED_BY" not in trace and "SUPERSEDES" not in trace


def test_shared_rule() -> None:
    edges = [("a", "b"), ("b", "a"), ("c", "d"), ("d", "e"), ("e", "f"), ("f", "d"), ("g", "g"), ("g", "h")]
    assert supersession_cycles(edges) == [["a", "b"], ["d", "e", "f"]]
    assert superseded(edges) == {"d", "h"}
    assert superseded([("x", "y"), ("y", "z")]) == {"y", "z"}
    assert supersession_cycles([]) == [] and superseded([]) == set()
