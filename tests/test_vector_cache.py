"""The per-user vector cache (issue 29): a second clone of an embedded vault embeds nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ccmemory.retrieval.vectorcache import VectorCache, default_path
from tests.conftest import RunCli, git, init_git


def _vec(seed: int, dim: int = 8) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


def test_vectors_come_back_by_embedder_and_text_hash(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path / "c" / "vectors.sqlite", 2**20)
    cache.put("emb-a", 8, [("h1", _vec(1)), ("h2", _vec(2))])
    got = cache.get("emb-a", 8, ["h1", "h2", "h3"])
    assert set(got) == {"h1", "h2"} and np.array_equal(got["h1"], _vec(1))
    # another embedder (or dimension) never sees them: vectors of two embedders are not mixed
    assert cache.get("emb-b", 8, ["h1"]) == {} and cache.get("emb-a", 16, ["h1"]) == {}
    assert cache.stats()["vectors"] == 2 and cache.problem is None
    assert (tmp_path / "c" / "vectors.sqlite").stat().st_mode & 0o077 == 0  # private to the user


def test_the_least_recently_used_go_first(tmp_path: Path) -> None:
    dim = 1024  # 4 KB a vector: a page of the file each, so the bound counts whole vectors
    cache = VectorCache(tmp_path / "vectors.sqlite", 2**30)
    cache.put("e", dim, [(f"old{i}", _vec(i, dim)) for i in range(40)])
    with cache._lock:  # age them: `used` is whole seconds
        cache._conn().execute("UPDATE vectors SET used = used - 100")
        full = cache._bytes_used(cache._conn())
    assert set(cache.get("e", dim, ["old0"])) == {"old0"}  # used again: young
    cache.max_bytes = full  # room for about the 40 there are
    cache.put("e", dim, [(f"new{i}", _vec(100 + i, dim)) for i in range(20)])
    names = [*(f"old{i}" for i in range(40)), *(f"new{i}" for i in range(20))]
    left = cache.get("e", dim, names)
    with cache._lock:
        assert cache._bytes_used(cache._conn()) <= full
    assert {f"new{i}" for i in range(20)} <= set(left) and "old0" in left  # the young stay
    assert 20 < len(left) < 60 and "old1" not in left  # the oldest went first


def test_a_broken_cache_file_is_a_problem_not_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    path.write_bytes(b"not a database at all" * 200)
    cache = VectorCache(path, 2**20)
    assert cache.get("e", 8, ["h"]) == {}
    cache.put("e", 8, [("h", _vec(1))])  # no exception
    assert cache.problem and str(path) in cache.problem


def test_the_cache_can_be_turned_off_or_moved(tmp_path: Path) -> None:
    assert default_path({"CCMEMORY_VECTOR_CACHE": "off"}) is None
    assert default_path({"CCMEMORY_VECTOR_CACHE": str(tmp_path / "v.db")}) == tmp_path / "v.db"
    assert default_path({"CCMEMORY_CACHE_DIR": str(tmp_path)}) == tmp_path / "vectors.sqlite"


@pytest.mark.slow
def test_a_second_clone_builds_with_zero_embedding_calls(tmp_path: Path, run_cli: RunCli) -> None:
    env = {"CCMEMORY_VECTOR_CACHE": str(tmp_path / "cache" / "vectors.sqlite")}
    first = init_git(tmp_path / "first")
    # no git hooks: a post-commit worker (started with the suite's cache off) would race the
    # reindex below to embed the last memory, and the cache would then miss it
    run_cli(first, "init", "--no-git-hooks", env=env)
    for title in ("Use Redis streams for the event bus", "Invoices are exported nightly to the ERP"):
        run_cli(first, "new", "decision", title, "--body", f"{title}, decided in review.", env=env)
    run_cli(first, "new", "gotcha", "The ERP drops batches over 500", env=env)
    git(first, "add", "-A")
    git(first, "commit", "-qm", "memories")
    run_cli(first, "reindex", env=env)  # `new` embeds what it writes; reindex embeds the rest
    assert VectorCache(Path(env["CCMEMORY_VECTOR_CACHE"]), 2**20).stats()["vectors"] == 3
    second = tmp_path / "second"
    subprocess.run(["git", "clone", "-q", str(first), str(second)], check=True)
    again = json.loads(run_cli(second, "reindex", "--json", env=env).stdout)
    assert again["added"] == 3 and again["embedded"] == 0 and again["vectors_from_cache"] == 3, again
    hits = json.loads(
        run_cli(second, "search", "message queue", "--mode", "semantic", "--json", env=env).stdout
    )
    assert hits and hits[0]["title"] == "Use Redis streams for the event bus"
    doctor = json.loads(run_cli(second, "doctor", "--json", env=env).stdout)["vector_cache"]
    assert doctor["enabled"] and doctor["vectors"] >= 3 and doctor["path"] == env["CCMEMORY_VECTOR_CACHE"]
    # turned off, a third clone embeds its own
    third = tmp_path / "third"
    subprocess.run(["git", "clone", "-q", str(first), str(third)], check=True)
    own = json.loads(run_cli(third, "reindex", "--json", env={"CCMEMORY_VECTOR_CACHE": "off"}).stdout)
    assert own["embedded"] == 3 and own["vectors_from_cache"] == 0
