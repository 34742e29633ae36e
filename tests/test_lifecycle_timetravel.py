"""Time travel: search/show --at REV answer from the memories at REV, touching nothing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git
from tests.lifecycle_util import add_memory, cli, commit_all, reindex, search


def test_search_and_show_at_a_tag(repo: Path) -> None:
    v1_id, rel = add_memory(repo, "Release one decision about the bilby")
    commit_all(repo, "v1")
    git(repo, "tag", "v1.0")
    p = repo / rel
    p.write_text(p.read_text().replace("about the bilby", "about the bilby, revised after release"))
    later, _ = add_memory(repo, "Later decision about the bilby diet")
    commit_all(repo, "after v1")
    git(repo, "checkout", "-q", "-b", "feat")
    dev, _ = add_memory(repo, "Feature-only bilby idea", "insight")
    commit_all(repo, "feat")
    (repo / "scratch.txt").write_text("uncommitted")
    reindex(repo)
    assert set(search(repo, "bilby")) == {v1_id, later, dev}
    index_db = repo / ".ccmemory" / "local" / "index.db"
    db_before = index_db.stat().st_mtime_ns
    status_before = git(repo, "status", "--porcelain")
    head_before = git(repo, "rev-parse", "HEAD")

    at_tag = search(repo, "bilby", "--at", "v1.0")
    assert set(at_tag) == {v1_id}
    assert at_tag[v1_id]["title"] == "Release one decision about the bilby"
    assert at_tag[v1_id]["status"] == "curated"
    at_feat = search(repo, "bilby", "--at", "feat")
    assert at_feat[dev]["status"] == "developmental" and at_feat[later]["status"] == "curated"

    shown = json.loads(cli(repo, "show", v1_id, "--at", "v1.0", "--json").stdout)
    assert shown["title"] == "Release one decision about the bilby" and "revised" not in shown["text"]
    text = cli(repo, "show", v1_id[:8], "--at", "v1.0").stdout
    assert "Release one decision about the bilby" in text and "curated at v1.0" in text
    missing = cli(repo, "show", later, "--at", "v1.0", check=False)
    assert missing.returncode == 1 and "at v1.0" in missing.stderr
    bad = cli(repo, "search", "x", "--at", "no-such-rev", check=False)
    assert bad.returncode == 1 and "not a commit" in bad.stderr

    assert git(repo, "status", "--porcelain") == status_before
    assert git(repo, "rev-parse", "HEAD") == head_before
    assert index_db.stat().st_mtime_ns == db_before  # --at never wrote to the live index


def test_snapshot_reuses_cached_embeddings_from_the_live_index(repo: Path) -> None:
    import numpy as np

    from ccmemory.core.config import load_config
    from ccmemory.features.lifecycle.timetravel import build_snapshot
    from ccmemory.index.sqlite import SQLiteIndex

    add_memory(repo, "Embedded memory about the numbat")
    commit_all(repo, "one")
    git(repo, "tag", "t1")
    add_memory(repo, "Only in the snapshot? no, only later: the quoll")
    reindex(repo)
    config = load_config(repo)
    live = SQLiteIndex(repo / ".ccmemory" / "local" / "index.db")
    todo = live.missing_vectors(config.project, "fake-embedder")
    assert len(todo) == 2
    live.store_vectors("fake-embedder", 4, [(h, np.ones(4, dtype=np.float32)) for h, _ in todo])
    live.close()
    snap = build_snapshot(repo, "t1", config)
    assert snap.count == 1
    assert snap.index.missing_vectors(config.project, "fake-embedder") == []  # nothing to re-embed


def test_search_at_a_revision_without_memories_answers_nothing(repo: Path) -> None:
    """A revision from before the vault held any memory (a tag from before ccmemory was adopted):
    the snapshot is empty, and the search's "build a never-built index" step must not fill it from
    today's working tree."""
    (repo / "README").write_text("before ccmemory\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "before")
    git(repo, "tag", "v0")
    now, _ = add_memory(repo, "Today's decision about the quokka")
    commit_all(repo, "today")
    reindex(repo)
    assert set(search(repo, "quokka")) == {now}
    proc = cli(repo, "search", "quokka", "--json", "--mode", "text", "--at", "v0")
    assert json.loads(proc.stdout) == [], proc.stderr
    assert "built it from" not in proc.stderr
