"""The git shortcut of `reindex` (issue 29, ccmemory.app.gitdelta) leaves the index exactly as a
full rebuild would, over random sequences of file and git operations in a real repository:
add, edit, delete, rename, corrupt, duplicate, hand-written files without `author:`, commits,
branch checkouts, merges into main, reverting hand edits, untracked and git-ignored files."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccmemory.app import gitdelta, sync
from ccmemory.core.vault import Vault, render
from ccmemory.index.base import Filters
from ccmemory.index.sqlite import SQLiteIndex
from tests.conftest import init_git, make_memory
from tests.test_index_conformance import backend  # noqa: F401 (the fixture: both backends)
from tests.test_sync_property import WORDS, apply_op

AUTHOR = "alice@example.com"

git_op = st.one_of(
    st.tuples(st.just("commit")),
    st.tuples(st.just("checkout"), st.sampled_from(["main", "b1", "b2"])),
    st.tuples(st.just("merge"), st.sampled_from(["b1", "b2"])),
    # main moved without a checkout (a push from another worktree): HEAD may stay where it is
    st.tuples(st.just("move-main"), st.sampled_from(["b1", "b2"])),
    st.tuples(st.just("revert")),
    st.tuples(st.just("ignored"), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
    st.tuples(st.just("handwritten"), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
    st.tuples(st.just("authored"), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
)
file_op = st.one_of(
    st.tuples(
        st.just("create"),
        st.sampled_from(["decision", "fact"]),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
        st.integers(0, 50),
        st.booleans(),
    ),
    st.tuples(st.just("edit"), st.integers(0, 50), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
    st.tuples(st.just("rename"), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("corrupt"), st.integers(0, 50)),
    st.tuples(st.just("duplicate"), st.integers(0, 50)),
)
step = st.lists(st.one_of(file_op, git_op), min_size=1, max_size=4)


def _git(root: Path, *args: str) -> int:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).returncode


def _git_op(root: Path, operation: tuple[Any, ...], counter: list[int]) -> None:
    kind = operation[0]
    if kind == "commit":
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"c{counter[0]}")
    elif kind == "checkout":
        if _git(root, "checkout", "-q", operation[1]) != 0:
            _git(root, "checkout", "-q", "-b", operation[1])
    elif kind == "merge":
        if (
            _git(root, "checkout", "-q", "main") == 0
            and _git(root, "merge", "-q", "--no-edit", operation[1]) != 0
        ):
            _git(root, "merge", "--abort")
    elif kind == "move-main":
        _git(root, "update-ref", "refs/heads/main", f"refs/heads/{operation[1]}")
    elif kind == "revert":
        _git(root, "checkout", "-q", "HEAD", "--", ".ccmemory")
    else:  # a memory file git ignores, one without `author:` (written by hand) or with one
        counter[0] += 1
        author = None if kind == "handwritten" else AUTHOR
        m = make_memory("decision", " ".join(operation[1]) + f" {counter[0]}", author=author)
        folder = root / ".ccmemory" / "decisions"
        folder.mkdir(parents=True, exist_ok=True)  # a checkout that left it empty removed it
        (folder / f"{kind}-{counter[0]}.md").write_text(render(m), encoding="utf-8")


def _age(root: Path, step_no: int) -> None:
    """Files written in this step get an mtime of their own, a day old: no file is "racy" (read
    again by every reindex, which would hide a path the shortcut forgot), and an edit still
    changes the stat data, as a real edit a second later would."""
    stamp = (int(time.time()) - 86400 + step_no) * 1_000_000_000
    recent = time.time() - 3600
    for path in (root / ".ccmemory").rglob("*.md"):
        if not path.is_symlink() and path.stat().st_mtime > recent:
            os.utime(path, ns=(stamp, stamp))


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the reindexes that walked the whole vault."""
    walked = [0]
    real = sync.scan

    def counting(*args: Any, **kw: Any) -> Any:
        walked[0] += 1
        return real(*args, **kw)

    monkeypatch.setattr(sync, "scan", counting)
    return walked


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=1, max_size=8))
def test_git_shortcut_equals_full_rebuild(
    monkeypatch: pytest.MonkeyPatch, steps: list[list[tuple[Any, ...]]]
) -> None:
    walked = _walks(monkeypatch)
    walked[0] = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = init_git(Path(tmp) / "r", AUTHOR)
        (root / ".ccmemory" / "decisions").mkdir(parents=True)
        (root / ".gitignore").write_text(
            ".ccmemory/local/\n.ccmemory/decisions/ignored-*\n", encoding="utf-8"
        )
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "start")
        vault = Vault(root)
        inc = SQLiteIndex(Path(tmp) / "inc.db")
        counter = [0]
        sync.reindex(vault, inc, "p", local_author=AUTHOR)
        for step_no, ops in enumerate(steps, 1):
            for operation in ops:
                if operation[0] in {"create", "edit", "rename", "delete", "corrupt", "duplicate"}:
                    apply_op(vault, operation, counter)
                else:
                    _git_op(root, operation, counter)
            _age(root, step_no)
            sync.reindex(vault, inc, "p", local_author=AUTHOR)
            full = SQLiteIndex(Path(tmp) / "full.db")
            sync.reindex(vault, full, "p", full=True, local_author=AUTHOR)
            assert inc.dump("p") == full.dump("p"), ops
            assert inc.file_problems("p") == full.file_problems("p")
            full.close()
            (Path(tmp) / "full.db").unlink()
        # only the first reindex walked the vault: every later one answered from git
        assert walked[0] == 1 + len(steps)  # + each `--full` comparison
        inc.close()


@pytest.mark.neo4j
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=1, max_size=5))
def test_git_shortcut_on_neo4j_equals_a_full_sqlite_rebuild(
    neo4j_server: Any, monkeypatch: pytest.MonkeyPatch, steps: list[list[tuple[Any, ...]]]
) -> None:
    """The same random operations, the shortcut on the Neo4j backend, compared after each step
    with a full rebuild on SQLite (the two dumps have the same shape and values)."""
    from tests.test_index_conformance import neo4j_index

    walked = _walks(monkeypatch)
    walked[0] = 0
    project = "p-" + uuid.uuid4().hex[:10]
    neo = neo4j_index(neo4j_server)
    with tempfile.TemporaryDirectory() as tmp:
        root = init_git(Path(tmp) / "r", AUTHOR)
        (root / ".ccmemory" / "decisions").mkdir(parents=True)
        (root / ".gitignore").write_text(
            ".ccmemory/local/\n.ccmemory/decisions/ignored-*\n", encoding="utf-8"
        )
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "start")
        vault = Vault(root)
        counter = [0]
        try:
            sync.reindex(vault, neo, project, local_author=AUTHOR)
            for step_no, ops in enumerate(steps, 1):
                for operation in ops:
                    if operation[0] in {"create", "edit", "rename", "delete", "corrupt", "duplicate"}:
                        apply_op(vault, operation, counter)
                    else:
                        _git_op(root, operation, counter)
                _age(root, step_no)
                sync.reindex(vault, neo, project, local_author=AUTHOR)
                full = SQLiteIndex(Path(tmp) / "full.db")
                sync.reindex(vault, full, project, full=True, local_author=AUTHOR)
                got, want = neo.dump(project), full.dump(project)
                got.pop("fts_total"), want.pop("fts_total")  # the server holds other projects too
                assert got == want, ops
                full.close()
                (Path(tmp) / "full.db").unlink()
            assert walked[0] == 1 + len(steps)
        finally:
            neo.clear(project)
            neo.close()


def test_shortcut_falls_back_to_the_walk_when_it_cannot_be_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked = _walks(monkeypatch)
    root = init_git(tmp_path / "r", AUTHOR)
    (root / ".ccmemory" / "decisions").mkdir(parents=True)
    vault = Vault(root)
    vault.write_new(make_memory("decision", "Seed memory"))
    index = SQLiteIndex(tmp_path / "i.db")
    sync.reindex(vault, index, "p")  # no commit yet: walks, stores nothing to diff from
    assert walked[0] == 1
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    sync.reindex(vault, index, "p")  # the first commit: walks
    assert walked[0] == 2
    sync.reindex(vault, index, "p")  # nothing changed: git answers
    assert walked[0] == 2
    assert index.sync_state("p") is not None
    # an index state from another ccmemory version, a changed local author: walks
    state = index.sync_state("p")
    assert state is not None
    index.set_sync_state("p", {**state, "version": "0.0.0"})
    sync.reindex(vault, index, "p")
    assert walked[0] == 3
    sync.reindex(vault, index, "p", local_author="bob@example.com")
    assert walked[0] == 4
    # an index copied from a clone in another folder: walks
    state = index.sync_state("p")
    assert state is not None
    index.set_sync_state("p", {**state, "root": "/elsewhere"})
    sync.reindex(vault, index, "p", local_author="bob@example.com")
    assert walked[0] == 5
    # a symlink in the vault: the walk reports it, and the next reindex walks again
    (root / ".ccmemory" / "decisions" / "link.md").symlink_to(root / ".gitignore")
    report = sync.reindex(vault, index, "p", local_author="bob@example.com")
    assert walked[0] == 6 and [s.rel for s in report.skipped] == [".ccmemory/decisions/link.md"]
    sync.reindex(vault, index, "p", local_author="bob@example.com")
    assert walked[0] == 7
    # a commit that no longer exists (history rewritten and collected): walks
    (root / ".ccmemory" / "decisions" / "link.md").unlink()
    sync.reindex(vault, index, "p")
    state = index.sync_state("p")
    assert state is not None
    index.set_sync_state("p", {**state, "head": "0" * 40})
    sync.reindex(vault, index, "p")
    assert walked[0] == 9
    # `clear` forgets the state
    index.clear("p")
    assert index.sync_state("p") is None


def test_more_changes_than_the_cap_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walked = _walks(monkeypatch)
    monkeypatch.setattr(gitdelta, "MAX_PATHS", 3)
    root = init_git(tmp_path / "r", AUTHOR)
    (root / ".ccmemory" / "decisions").mkdir(parents=True)
    vault = Vault(root)
    vault.write_new(make_memory("decision", "Seed memory"))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    index = SQLiteIndex(tmp_path / "i.db")
    sync.reindex(vault, index, "p")
    for n in range(5):
        vault.write_new(make_memory("decision", f"Memory {n}"))
    report = sync.reindex(vault, index, "p")
    assert walked[0] == 2 and report.added == 5


def test_reindex_follows_git_on_each_backend(
    backend: tuple[Any, str],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both backends take the shortcut and give the same answers: a hand edit, a commit on main
    (curated), a deletion; and the new index methods' limits."""
    index, project = backend
    walked = _walks(monkeypatch)
    root = init_git(tmp_path / "r", AUTHOR)
    (root / ".ccmemory" / "decisions").mkdir(parents=True)
    vault = Vault(root)
    a = vault.write_new(make_memory("decision", "Alpha memory", author=AUTHOR))
    b = vault.write_new(make_memory("decision", "Beta memory", author=AUTHOR))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    _git(root, "checkout", "-q", "-b", "feature")
    c = vault.write_new(make_memory("decision", "Gamma memory", author=AUTHOR))
    rel = {p: p.relative_to(root).as_posix() for p in (a, b, c)}
    sync.reindex(vault, index, project, local_author=AUTHOR)

    def by_path() -> dict[str, tuple[str, str]]:
        return {m.path: (m.title, m.status) for m in index.query(Filters(project=project), limit=100)}

    assert by_path()[rel[c]] == ("Gamma memory", "developmental")
    a.write_text(a.read_text(encoding="utf-8").replace("Alpha memory", "Alpha edited"), encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "two")
    _git(root, "checkout", "-q", "main")
    _git(root, "merge", "-q", "--no-edit", "feature")
    b.unlink()
    assert index.sync_state(project) is not None
    report = sync.reindex(vault, index, project, local_author=AUTHOR)
    assert walked[0] == 1 and index.sync_state(project) is not None
    assert by_path() == {rel[a]: ("Alpha edited", "curated"), rel[c]: ("Gamma memory", "curated")}
    assert report.removed == 1 and report.unchanged + report.updated + report.added == 2
    assert set(index.file_states(project, [rel[a], rel[b]])) == {rel[a]}
    assert index.refresh_status(project, lambda _p: "developmental", None, only=[rel[c]]) == 1
    assert by_path()[rel[c]][1] == "developmental" and by_path()[rel[a]][1] == "curated"


def test_main_moved_under_a_branch_keeps_git_authors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """main moves while HEAD stays (another worktree pushed): status is refreshed where main's
    tree changed, and a hand-written file's git author is kept, as a full rebuild has them."""
    walked = _walks(monkeypatch)
    root = init_git(tmp_path / "r", AUTHOR)
    (root / ".ccmemory" / "decisions").mkdir(parents=True)
    vault = Vault(root)
    vault.write_new(make_memory("decision", "Seed memory", author=AUTHOR))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    _git(root, "checkout", "-q", "-b", "feature")
    hand = root / ".ccmemory" / "decisions" / "hand.md"
    hand.write_text(render(make_memory("decision", "Hand written memory")), encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "two")
    index = SQLiteIndex(tmp_path / "i.db")
    sync.reindex(vault, index, "p", local_author="bob@example.com")
    _age(root, 1)
    _git(root, "update-ref", "refs/heads/main", "refs/heads/feature")
    report = sync.reindex(vault, index, "p", local_author="bob@example.com")
    assert walked[0] == 1 and report.status_changed == 1
    full = SQLiteIndex(tmp_path / "full.db")
    sync.reindex(vault, full, "p", full=True, local_author="bob@example.com")
    assert index.dump("p") == full.dump("p")
    (row,) = [m for m in index.dump("p")["memories"] if m[3] == "Hand written memory"]
    assert row[7] == AUTHOR and row[12] == "curated"  # author_git, status


def test_a_recorded_memory_deleted_before_the_next_reindex_leaves_the_index(
    backend: tuple[Any, str],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`Service.record` indexes its file at once; deleted before any reindex, the file was in
    neither git status listing, and the shortcut kept its memory for good (issue #29: an MCP
    client that records and deletes between two reindexes)."""
    from ccmemory.app.service import Service
    from ccmemory.core.config import Config

    index, project = backend
    walked = _walks(monkeypatch)
    root = init_git(tmp_path / "r", AUTHOR)
    (root / ".ccmemory" / "decisions").mkdir(parents=True)
    vault = Vault(root)
    vault.write_new(make_memory("decision", "Alpha memory", author=AUTHOR))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    sync.reindex(vault, index, project, local_author=AUTHOR)
    svc = Service(vault, Config(project=project, user_id=AUTHOR), index)
    kept = svc.record(make_memory("fact", "Kept memory", author=AUTHOR))
    gone = svc.record(make_memory("fact", "Short-lived memory", author=AUTHOR))
    assert kept.indexed and gone.indexed
    (root / gone.path).unlink()
    report = sync.reindex(vault, index, project, local_author=AUTHOR)
    assert walked[0] == 1  # the shortcut, not the walk
    titles = {m.title for m in index.query(Filters(project=project), limit=100)}
    assert titles == {"Alpha memory", "Kept memory"}
    assert report.removed == 1
