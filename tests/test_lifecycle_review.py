"""Review support: memory-level diff, check --base (duplicates, contradictions, secrets), staleness."""

from __future__ import annotations

import json
from pathlib import Path

from ccmemory.core.model import Relation
from ccmemory.features.lifecycle.secrets import find_secrets
from ccmemory.features.lifecycle.staleness import MemoryFiles, compute
from tests.conftest import git
from tests.lifecycle_util import add_memory, cli, commit_all, search


def test_diff_lists_memory_level_changes_without_touching_the_worktree(repo: Path) -> None:
    keep, rel_keep = add_memory(repo, "Kept decision about the quokka")
    gone, _ = add_memory(repo, "Removed decision about the numbat")
    old, _ = add_memory(repo, "Old decision about the dunnart")
    moved, rel_moved = add_memory(repo, "Moved fact about the bilby", "fact")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feat")
    new, rel_new = add_memory(repo, "New decision about the dunnart", supersedes=[old])
    p = repo / rel_keep
    p.write_text(p.read_text().replace("Kept decision about the quokka", "Kept decision about the quokka v2"))
    (repo / _path_of(repo, gone)).unlink()
    (repo / ".ccmemory/facts/sub").mkdir()
    git(repo, "mv", rel_moved, ".ccmemory/facts/sub/moved.md")
    bad = repo / ".ccmemory/decisions/2026-11-21-broken.md"
    bad.write_text("---\ntitle: [unclosed\n---\nbody\n")
    commit_all(repo, "feature")
    (repo / "untracked-note.txt").write_text("dirty")
    status_before = git(repo, "status", "--porcelain")

    data = json.loads(cli(repo, "diff", "--format", "json").stdout)
    assert [r["id"] for r in data["added"]] == [new]
    assert [r["id"] for r in data["edited"]] == [keep] and "title" in data["edited"][0]["detail"]
    assert [r["id"] for r in data["removed"]] == [gone]
    assert [r["id"] for r in data["moved"]] == [moved]
    assert [r["id"] for r in data["superseded"]] == [old] and new in data["superseded"][0]["detail"]
    assert [r["path"] for r in data["invalid"]] == [".ccmemory/decisions/2026-11-21-broken.md"]

    md = cli(repo, "diff", "main..feat", "--format", "markdown").stdout
    assert md.startswith("## Memory changes")
    assert "### Added" in md and "New decision about the dunnart" in md and rel_new in md
    assert "### Newly superseded" in md
    text = cli(repo, "diff", "main").stdout
    assert f"+ [decision] New decision about the dunnart  {new}" in text
    assert git(repo, "status", "--porcelain") == status_before
    # the other direction: what main lacks
    back = json.loads(cli(repo, "diff", "feat..main", "--json").stdout)
    assert [r["id"] for r in back["removed"]] == [new]


def _path_of(repo: Path, mid: str) -> str:
    for p in (repo / ".ccmemory").rglob("*.md"):
        if mid in p.read_text():
            return p.relative_to(repo).as_posix()
    raise AssertionError(mid)


def test_check_base_flags_duplicates_and_contradictions_as_warnings(repo: Path) -> None:
    cur, _ = add_memory(repo, "Store auth tokens in httpOnly cookies")
    conflicted, _ = add_memory(repo, "Deploy with blue green releases", body="Blue green deploys only.")
    fact, _ = add_memory(
        repo,
        "The API rate limit is per user",
        "fact",
        body="The public API limits requests per user account.",
    )
    corr, _ = add_memory(
        repo,
        "Migrations are not run automatically",
        "correction",
        fields={
            "wrong_belief": "database migrations run automatically on deploy",
            "right_belief": "run them",
        },
    )
    commit_all(repo, "curated")
    git(repo, "checkout", "-q", "-b", "feat")
    add_memory(repo, "Store auth tokens in httpOnly cookie")  # near-identical title
    add_memory(repo, "Canary releases", relations=[Relation("CONFLICTS_WITH", conflicted, "we changed")])
    add_memory(
        repo,
        "Rate limiting is per API key",
        "correction",
        fields={"wrong_belief": "the public API limits requests per user account", "right_belief": "per key"},
    )
    add_memory(
        repo, "Deploy notes", "insight", body="Remember: database migrations run automatically on deploy."
    )
    ok, _ = add_memory(repo, "An unrelated decision about logging format", body="Use JSON lines for logs.")
    replaced, _ = add_memory(repo, "Store auth tokens in httpOnly cookies!", supersedes=[cur])
    commit_all(repo, "feature memories")

    proc = cli(repo, "check", "--base", "main", "--json")
    assert proc.returncode == 0  # warnings only
    findings = json.loads(proc.stdout)
    msgs = [f["message"] for f in findings if f["level"] == "warning"]
    assert any(f"duplicates curated decision {cur}" in m and "similar title" in m for m in msgs)
    assert any(f"contradicts curated decision {conflicted}" in m and "CONFLICTS_WITH" in m for m in msgs)
    assert any(f"contradicts curated fact {fact}" in m and "wrong belief" in m for m in msgs)
    assert any(f"contradicts curated correction {corr}" in m for m in msgs)
    by_path = {f["path"] for f in findings}
    assert _path_of(repo, ok) not in by_path  # nothing against an unrelated memory
    assert _path_of(repo, replaced) not in by_path  # an explicit supersede is not a duplicate
    assert cli(repo, "check", "--base", "main", "--strict", check=False).returncode == 1


def test_check_fails_on_secrets_and_names_the_line(repo: Path) -> None:
    add_memory(repo, "Clean memory")
    commit_all(repo, "base")
    _, rel = add_memory(repo, "Connect to the staging database", body="Use STAGING_URL")
    # hand-edited after writing (every writer redacts, issue 19): what a pull request can add
    path = repo / rel
    path.write_text(
        path.read_text(encoding="utf-8").replace("STAGING_URL", "postgres://app:s3cr3tPass@db/staging"),
        encoding="utf-8",
    )
    proc = cli(repo, "check", "--base", "main", check=False)
    assert proc.returncode == 1
    line = next(ln for ln in proc.stdout.splitlines() if "possible secret" in ln)
    assert line.startswith(f"{rel}:") and "s3cr3tPass" not in proc.stdout
    assert cli(repo, "check", check=False).returncode == 1  # also without --base


def test_builtin_secret_patterns() -> None:
    samples = {
        "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
        "github_token": "ghp_" + "a1B2" * 9,
        "slack_token": "xoxb-123456789012-abcdefghij",
        "anthropic_key": "sk-ant-api03-" + "x" * 30,
        "private_key": "-----BEGIN OPENSSH PRIVATE KEY-----",
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    }
    for kind, value in samples.items():
        assert find_secrets(f"some text {value} more"), kind
    assert not find_secrets("postgres://user:<password>@host/db and a plain sentence about sk tokens")


def test_staleness_from_code_changes(repo: Path) -> None:
    src = repo / "src"
    src.mkdir()
    (src / "auth.py").write_text("\n".join(f"line {i}" for i in range(10)) + "\n")
    (src / "db.py").write_text("x = 1\n")
    (src / "gone.py").write_text("y = 1\n")
    commit_all(repo, "code")
    stale_big, _ = add_memory(repo, "Auth design wallaroo", files=["src/auth.py"])
    small, _ = add_memory(repo, "DB design wallaroo", files=["src/db.py"])
    removed, _ = add_memory(repo, "Gone design wallaroo", files=["src/gone.py"])
    folder, _ = add_memory(repo, "Src folder wallaroo", files=["src/"])
    commit_all(repo, "memories")
    (src / "auth.py").write_text("\n".join(f"new line {i}" for i in range(60)) + "\n")
    (src / "db.py").write_text("x = 2\n")
    git(repo, "rm", "-q", "src/gone.py")
    commit_all(repo, "refactor")
    uncommitted, _ = add_memory(repo, "Fresh wallaroo", files=["src/auth.py"])

    mems = [
        MemoryFiles(i, _path_of(repo, i), (f,))
        for i, f in (
            (stale_big, "src/auth.py"),
            (small, "src/db.py"),
            (removed, "src/gone.py"),
            (folder, "src/"),
            (uncommitted, "src/auth.py"),
        )
    ]
    found = compute(repo, mems, threshold=50)
    assert set(found) == {stale_big, removed, folder}
    assert found[stale_big].lines == 70  # 10 deleted + 60 added
    assert found[removed].missing == ["src/gone.py"]
    # re-confirming the memory (committing it again) clears the mark
    p = repo / _path_of(repo, stale_big)
    p.write_text(p.read_text().replace("Auth design wallaroo", "Auth design wallaroo (checked)"))
    commit_all(repo, "re-confirm")
    assert stale_big not in compute(repo, mems, threshold=50)

    # surfaced in check, search and context
    chk = cli(repo, "check")
    assert chk.returncode == 0 and "may be stale" in chk.stdout and "src/gone.py" in chk.stdout
    cli(repo, "reindex", "--no-embed")
    hits = search(repo, "wallaroo")
    assert "no longer exist" in hits[removed]["stale"]
    assert "stale" not in hits[small] and "stale" not in hits[stale_big]
    ctx = json.loads(cli(repo, "context", "--json").stdout)["text"]
    assert "Gone design wallaroo" in ctx and "(may be stale)" in ctx


def test_stale_threshold_is_configurable(repo: Path) -> None:
    (repo / "a.py").write_text("a\n")
    commit_all(repo, "code")
    _mid, _ = add_memory(repo, "About a.py", files=["a.py"])
    commit_all(repo, "memory")
    (repo / "a.py").write_text("a\nb\nc\n")
    commit_all(repo, "tiny change")
    cfg = repo / ".ccmemory" / "config.yaml"
    cfg.write_text(cfg.read_text() + "\nstale_lines: 2\n")
    assert "may be stale" in cli(repo, "check").stdout
    cfg.write_text(cfg.read_text().replace("stale_lines: 2", "stale_lines: 3"))
    assert "may be stale" not in cli(repo, "check").stdout


def test_staleness_answer_is_kept_per_head_commit(repo: Path, monkeypatch) -> None:
    from ccmemory.features.lifecycle import staleness

    (repo / "a.py").write_text("a\n")
    commit_all(repo, "code")
    mid, _ = add_memory(repo, "About a.py", files=["a.py"])
    commit_all(repo, "memory")
    (repo / "a.py").write_text("".join(f"{i}\n" for i in range(60)))
    commit_all(repo, "big change")
    mems = [MemoryFiles(mid, _path_of(repo, mid), ("a.py",))]
    walks: list[int] = []
    real = staleness._changes_after
    monkeypatch.setattr(staleness, "_changes_after", lambda *a, **k: walks.append(1) or real(*a, **k))
    first = compute(repo, mems, threshold=50)
    assert set(first) == {mid} and first[mid].lines == 61 and len(walks) == 1
    again = compute(repo, mems, threshold=50)
    assert again == first and len(walks) == 1  # same HEAD, same memories: no walk
    assert compute(repo, mems, threshold=70) == {} and len(walks) == 2  # another threshold (61 < 70)
    (repo / "b.txt").write_text("b\n")
    commit_all(repo, "unrelated")  # a new HEAD: walked again (same answer)
    assert compute(repo, mems, threshold=50) == first and len(walks) == 3
    cache = repo / ".ccmemory" / "local" / staleness.CACHE_FILE
    assert cache.is_file()
    cache.write_text("{not json")  # a damaged file is a miss, then rewritten
    assert compute(repo, mems, threshold=50) == first and len(walks) == 4
    assert compute(repo, mems, threshold=50) == first and len(walks) == 4


def test_staleness_walk_started_early_is_used_only_for_the_same_question(repo: Path, monkeypatch) -> None:
    """SessionStart starts the walk in a thread for the memories of the newest stored answer
    (staleness.prefetch); `compute` takes that answer only when HEAD, threshold and memories match."""
    import threading

    from ccmemory.features.lifecycle import staleness

    (repo / "a.py").write_text("a\n")
    (repo / "b.py").write_text("b\n")
    commit_all(repo, "code")
    mid, _ = add_memory(repo, "About a.py", files=["a.py"])
    other, _ = add_memory(repo, "About b.py", files=["b.py"])
    commit_all(repo, "memories")
    mems = [MemoryFiles(mid, _path_of(repo, mid), ("a.py",))]
    walkers: list[str] = []
    real = staleness._changes_after
    monkeypatch.setattr(
        staleness,
        "_changes_after",
        lambda *a, **k: walkers.append(threading.current_thread().name) or real(*a, **k),
    )
    assert compute(repo, mems, threshold=50) == {}  # stored with what was asked
    (repo / "a.py").write_text("".join(f"{i}\n" for i in range(60)))
    commit_all(repo, "big change")  # a new HEAD: the stored answer no longer applies
    walkers.clear()
    staleness.prefetch(repo)
    got = compute(repo, mems, threshold=50)
    assert set(got) == {mid} and got[mid].lines == 61
    assert walkers == ["ccmemory-staleness"]  # walked once, in the early thread only
    # the same HEAD again: the stored answer, the early thread has nothing to do
    walkers.clear()
    staleness.prefetch(repo)
    assert compute(repo, mems, threshold=50) == got and walkers == []
    # other memories than the stored ones: the early walk is not used, compute walks itself
    (repo / "b.py").write_text("".join(f"{i}\n" for i in range(80)))
    commit_all(repo, "b changes")
    walkers.clear()
    staleness.prefetch(repo)
    both = [*mems, MemoryFiles(other, _path_of(repo, other), ("b.py",))]
    answer = compute(repo, both, threshold=50)
    assert set(answer) == {mid, other} and answer[other].lines == 81  # 80 added, 1 deleted
    assert walkers.count("MainThread") == 1  # the early thread walked for `mems` only
    assert walkers.count("ccmemory-staleness") <= 1
    # a damaged stored answer: the early thread does nothing, compute is still exact
    cache = repo / ".ccmemory" / "local" / staleness.CACHE_FILE
    cache.write_text('[{"key": "x", "threshold": "fifty", "mems": 7}]')
    (repo / "a.py").write_text("a\n")
    commit_all(repo, "a back")
    walkers.clear()
    staleness.prefetch(repo)
    again = compute(repo, both, threshold=50)
    assert walkers == ["MainThread"] and set(again) == {mid, other}


def test_staleness_after_new_commits_reads_only_them_and_matches_a_full_walk(repo: Path, monkeypatch) -> None:
    """After HEAD moved by single-parent commits, the walk reads only those commits on top of the
    state stored for the previous HEAD (staleness._since); answer and stored state are exactly a
    full walk's (same counts, same key order). A merge or a HEAD that does not descend from the
    stored one walks in full."""
    import random

    from ccmemory.features.lifecycle import staleness

    rng = random.Random(29)

    def write(rel: str, lines: int) -> None:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("".join(f"{rel} {rng.random()}\n" for _ in range(lines)))

    for rel in ("a.py", "b.py", "src/c.py", "src/d.py", "gone.py"):
        write(rel, 5)
    commit_all(repo, "code")
    specs = {"a": ("a.py",), "b": ("b.py", "src/"), "d": ("src/d.py",), "g": ("gone.py", "a.py")}
    ids = {k: add_memory(repo, f"About {k} quokka", files=list(v))[0] for k, v in specs.items()}
    commit_all(repo, "memories")
    late = add_memory(repo, "Late quokka", files=["src/c.py"])[0]  # committed only later
    mems = [MemoryFiles(ids[k], _path_of(repo, k_id), specs[k]) for k, k_id in ids.items()]
    mems.append(MemoryFiles(late, _path_of(repo, late), ("src/c.py",)))
    revs: list[str] = []
    real = staleness._changes_after
    monkeypatch.setattr(staleness, "_changes_after", lambda *a: revs.append(a[4]) or real(*a))
    cache = repo / ".ccmemory" / "local" / staleness.CACHE_FILE

    def same_as_full_walk(threshold: int = 20) -> str:
        """compute() with the stored state, compared with a full walk; returns the revs read."""
        revs.clear()
        got = compute(repo, mems, threshold=threshold)
        read = revs[-1]
        head = git(repo, "rev-parse", "HEAD").strip()
        cleaned = staleness._cleaned(mems)
        full, walk = staleness._compute(
            repo, cleaned, sorted({f for m in cleaned for f in m.files}), threshold, head
        )
        assert {k: (v.lines, v.commits, list(v.changed.items()), v.missing) for k, v in got.items()} == {
            k: (v.lines, v.commits, list(v.changed.items()), v.missing) for k, v in full.items()
        }
        stored = json.loads(cache.read_text())[0]
        want = {p: [ln, c] for p, (ln, c) in sorted(walk[2].items())}
        assert stored["head"] == head and json.dumps(
            dict(sorted(stored["walk"]["frozen"].items()))
        ) == json.dumps(want)
        return read

    assert same_as_full_walk() == git(repo, "rev-parse", "HEAD").strip()  # nothing stored: full
    before = git(repo, "rev-parse", "HEAD").strip()
    write("a.py", 30)
    commit_all(repo, "a grows")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert same_as_full_walk() == f"{before}..{head}"  # only the new commit
    assert set(compute(repo, mems, threshold=20)) >= {ids["a"], ids["g"]}
    for step in range(3):  # several commits between two sessions, the late memory among them
        write("src/c.py", 10 + step)
        write("b.py", 7)
        commit_all(repo, f"step {step}")
    assert ".." in same_as_full_walk()
    p = repo / _path_of(repo, ids["a"])  # re-confirmed memory, and a file deleted
    p.write_text(p.read_text().replace("About a quokka", "About a quokka (checked)"))
    git(repo, "rm", "-q", "src/d.py")
    commit_all(repo, "reconfirm a, drop d")
    assert ".." in same_as_full_walk()
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    assert ".." not in same_as_full_walk(threshold=25)  # another threshold: nothing kept, a full walk
    # a merge: the walk from the stored state is not used
    git(repo, "checkout", "-q", "-b", "side")
    write("src/c.py", 40)
    commit_all(repo, "side work")
    git(repo, "checkout", "-q", "main")
    write("b.py", 12)
    commit_all(repo, "main work")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    assert ".." not in same_as_full_walk(threshold=25)
    write("a.py", 3)
    commit_all(repo, "after the merge")
    assert ".." in same_as_full_walk(threshold=25)
    git(repo, "reset", "-q", "--hard", "HEAD~2")  # HEAD does not descend from the stored one
    assert ".." not in same_as_full_walk(threshold=25)
    for m in mems:  # every memory committed again: the walk stops inside the new commits
        path = repo / m.path
        path.write_text(path.read_text() + "\n")
    write("b.py", 9)
    commit_all(repo, "all memories again")
    assert ".." in same_as_full_walk(threshold=25)
    entries = json.loads(cache.read_text())
    entries[0]["folder"] = [1, 2]  # counts written in another folder (a committed copy): not used
    cache.write_text(json.dumps(entries))
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty once more")
    assert ".." not in same_as_full_walk(threshold=25)
    cache.write_text(cache.read_text().replace('"frozen": {', '"frozen": {"x": 7, '))  # damaged state
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty again")
    assert ".." not in same_as_full_walk(threshold=25)


def test_diff_outside_git_says_so(tmp_path: Path) -> None:
    """`diff` in a vault that is not in a git repository said "'main' is not a commit"."""
    root = tmp_path / "plain"
    root.mkdir()
    cli(root, "init", "--no-git-hooks")
    proc = cli(root, "diff", check=False)
    assert proc.returncode == 1 and "is not a git repository" in proc.stderr, proc.stderr
