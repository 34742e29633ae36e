"""Issue 20: nobody waits for bulk embedding. Full-text search works as soon as the text phase is
committed; a search embeds at most one batch and says semantic search is warming up (CLI, --json,
MCP); the rest is embedded by the background worker; the session-start hook never embeds.

Real git repositories, the real local model, the real CLI, hook and MCP server as subprocesses.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ccmemory.app.service import SEARCH_EMBED_BATCH, Service
from ccmemory.core.vault import Vault
from ccmemory.retrieval import warming
from tests.conftest import RunCli, make_memory

WORDS = (
    "cookie session token cache migration pipeline webhook upload fixture release branch "
    "logging retry queue schema index tenant invoice export report worker"
).split()


def fill(repo: Path, n: int, start: int = 0) -> list[str]:
    """Write ``n`` memory files (distinct titles and bodies, numbered from ``start``) straight to
    the vault."""
    vault = Vault(repo)
    ids = []
    for i in range(start, start + n):
        a, b, c = WORDS[i % len(WORDS)], WORDS[(i * 7 + 3) % len(WORDS)], WORDS[(i * 11 + 5) % len(WORDS)]
        m = make_memory(
            "decision",
            f"Decision {i}: keep the {a} apart from the {b}",
            body=f"Memory {i} says the {a} and the {c} must not share state; see item {i * 13}.",
        )
        vault.write_new(m)
        ids.append(m.id)
    return ids


def missing(svc: Service) -> int:
    emb = svc.embedder()
    return len(svc.index.missing_vectors(svc.project, emb.name))


class Counting:
    """The real embedder, counting the document texts it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.documents = 0

    def embed(self, texts: Any, kind: str = "document") -> Any:
        if kind == "document":
            self.documents += len(texts)
        return self.inner.embed(texts, kind)


C = TypeVar("C", bound=Counting)


@contextmanager
def text_indexed(repo: Path, n: int, wrap: type[C]) -> Iterator[tuple[Service, C]]:
    """``n`` memories indexed as text only (no vector yet), the real embedder wrapped in ``wrap``."""
    fill(repo, n)
    with Service(Vault(repo)) as svc:
        svc.reindex()
        emb = wrap(svc.embedder())
        svc._embedder = emb
        yield svc, emb


@pytest.fixture
def no_spawn(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    started: list[Path] = []

    def record(root: Path) -> bool:
        started.append(root)
        return True

    monkeypatch.setattr(warming, "start_background_embedding", record)
    return started


def test_text_search_is_ready_before_embedding_finishes(repo: Path) -> None:
    fill(repo, 300)
    with Service(Vault(repo)) as svc:
        svc.reindex()
        seen: list[tuple[int, int, int]] = []

        def during(done: int, total: int) -> None:
            # another connection (another process in real use) sees the committed text index
            with Service(Vault(repo)) as other:
                hits = other.search("tenant invoice", mode="text", limit=3).hits
                seen.append((done, len(hits), missing(other)))

        done, problem = svc.embed_missing(progress=during)
    assert problem is None and done == 300
    first_done, first_hits, first_missing = seen[0]
    assert first_hits == 3  # answered while 300 - first_done vectors were still missing
    assert first_missing == 300 - first_done > 0
    assert seen[-1][2] == 0


def test_search_embeds_at_most_one_batch_and_says_it_is_warming_up(repo: Path, no_spawn: list[Path]) -> None:
    n = SEARCH_EMBED_BATCH * 3 + 5
    with text_indexed(repo, n, Counting) as (svc, counting):
        resp = svc.search("where is the tenant invoice kept", limit=5)
        assert counting.documents == SEARCH_EMBED_BATCH
        assert resp.vectors_pending == n - SEARCH_EMBED_BATCH == missing(svc)
        assert resp.mode == "hybrid" and resp.hits  # answered with what is ready
        assert any(f"warming up: {n - SEARCH_EMBED_BATCH} memories" in x for x in resp.notices)
        assert no_spawn == [repo]  # the rest goes to the background worker, started once
        resp2 = svc.search("cookie session", limit=5)
        assert counting.documents == 2 * SEARCH_EMBED_BATCH
        assert resp2.vectors_pending == n - 2 * SEARCH_EMBED_BATCH
        assert no_spawn == [repo]
        # once everything is embedded the notice goes away and nothing more is embedded
        svc.embed_missing()
        resp3 = svc.search("cookie session", limit=5)
        assert resp3.vectors_pending == 0
        assert not any("warming up" in x for x in resp3.notices)
        before = counting.documents
        svc.search("retry queue", limit=5)
        assert counting.documents == before


class CountingIndex:
    """Counts the O(vault) scans for missing vectors a Service makes (the real index below)."""

    def __init__(self, svc: Service) -> None:
        self.scans = 0
        inner = svc.index.missing_vectors

        def scan(*a: Any, **kw: Any) -> Any:
            self.scans += 1
            return inner(*a, **kw)

        svc.index.missing_vectors = scan  # type: ignore[method-assign]


class PerCall(Counting):
    """Also remembers the size of every document batch, to check what one search waited on."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.batches: list[int] = []

    def embed(self, texts: Any, kind: str = "document") -> Any:
        if kind == "document":
            self.batches.append(len(texts))
        return super().embed(texts, kind)

    def waited(self) -> list[int]:
        out, self.batches = self.batches, []
        return out


def test_warming_search_waits_on_one_batch_at_most_and_scans_once_per_write(
    repo: Path, no_spawn: list[Path]
) -> None:
    """No search call waits on more than one batch of embedding, and the bookkeeping is not a
    scan of the vault per call: the missing set is scanned once, then after a write, then after
    a background worker's progress; while a worker embeds, a search embeds nothing."""
    from ccmemory.retrieval import warming

    n = SEARCH_EMBED_BATCH * 4 + 3
    with text_indexed(repo, n, PerCall) as (svc, emb):
        idx = CountingIndex(svc)
        for i in range(3):
            resp = svc.search(f"tenant invoice {i}", limit=3)
            assert emb.waited() == [SEARCH_EMBED_BATCH]  # one batch, one embed call
            assert resp.vectors_pending == n - (i + 1) * SEARCH_EMBED_BATCH
        assert idx.scans == 1
        assert missing(svc) == n - 3 * SEARCH_EMBED_BATCH  # what the bookkeeping says is true
        idx.scans = 0

        # a write: the new memory's vector is missing too, found by one new scan
        svc.record(make_memory("fact", "The invoice export runs nightly", body="At 02:00 UTC."))
        resp = svc.search("invoice export", limit=3)
        assert idx.scans == 1 and emb.waited() == [SEARCH_EMBED_BATCH]
        left = n + 1 - 4 * SEARCH_EMBED_BATCH
        assert resp.vectors_pending == left == missing(svc)
        idx.scans = 0

        # a background worker holds the lock and says how many it still has: the search embeds
        # nothing, scans nothing and reports the worker's count
        local = repo / ".ccmemory" / "local"
        import fcntl
        import os

        fd = os.open(local / warming.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            warming.write_status(local, emb.name, 2)
            resp = svc.search("cookie session", limit=3)
            assert emb.waited() == [] and idx.scans == 0
            assert resp.vectors_pending == 2
            assert any("warming up: 2 memories" in x for x in resp.notices)
            # the worker finishes what is left (here: this test, as the worker would)
            svc2 = Service(Vault(repo))
            try:
                done, problem = svc2.embed_missing()
            finally:
                svc2.close()
            assert problem is None and done == left
            warming.write_status(local, emb.name, 0)
        finally:
            os.close(fd)
        # the worker's status changed since the last scan: scan once, nothing left, no embedding
        resp = svc.search("retry queue", limit=3)
        assert idx.scans == 1 and emb.waited() == []
        assert resp.vectors_pending == 0 and not any("warming up" in x for x in resp.notices)
        svc.search("schema index", limit=3)
        assert idx.scans == 1 and emb.waited() == []


def test_a_long_lived_process_starts_another_worker_for_later_writes(
    repo: Path, no_spawn: list[Path]
) -> None:
    """An MCP server runs for days: once a worker has finished, a later bulk write that leaves
    vectors missing gets a worker of its own (not one batch a search for ever); a worker that
    made no progress is not restarted on every search."""
    from ccmemory.retrieval import warming

    with text_indexed(repo, SEARCH_EMBED_BATCH * 2, Counting) as (svc, _):
        svc.search("tenant invoice", limit=3)
        svc.search("tenant invoice", limit=3)
        assert no_spawn == [repo]  # no progress seen: not started again
        with Service(Vault(repo)) as worker:  # the worker's work, as it would do it
            worker.embed_missing()
        warming.write_status(repo / ".ccmemory" / "local", svc.embedder().name, 0)
        assert svc.search("tenant invoice", limit=3).vectors_pending == 0
        fill(repo, SEARCH_EMBED_BATCH * 2, start=1000)
        assert svc.reindex().added == SEARCH_EMBED_BATCH * 2
        resp = svc.search("cookie session", limit=3)
        assert resp.vectors_pending == SEARCH_EMBED_BATCH
        assert no_spawn == [repo, repo]


def test_status_file_is_untrusted_input(repo: Path) -> None:
    from ccmemory.retrieval import warming

    local = repo / ".ccmemory" / "local"
    local.mkdir(parents=True, exist_ok=True)
    for raw in (
        b"",
        b"[1]",
        b'{"embedder": "m", "pending": -3}',
        b'{"embedder": "m", "pending": true}',
        b'{"embedder": "x", "pending": 3}',
        b"\xff\xfe",
        b'{"embedder": "m", "pending": "9"}',
    ):
        (local / warming.STATUS).write_bytes(raw)
        assert warming.read_status(repo, "m") is None, raw
    warming.write_status(local, "m", 12)
    assert warming.read_status(repo, "m") == 12


def test_small_vault_is_embedded_inline_without_background(repo: Path, no_spawn: list[Path]) -> None:
    fill(repo, SEARCH_EMBED_BATCH - 2)
    with Service(Vault(repo)) as svc:
        svc.reindex()
        resp = svc.search("tenant invoice", limit=3)
        assert resp.vectors_pending == 0 and missing(svc) == 0
        assert not any("warming up" in x for x in resp.notices)
    assert no_spawn == []


def wait_for(cond: Any, timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.5)
    return False


def test_cli_search_answers_at_once_and_the_background_worker_finishes(repo: Path, run_cli: RunCli) -> None:
    n = SEARCH_EMBED_BATCH * 4
    fill(repo, n)
    report = json.loads(run_cli(repo, "reindex", "--no-embed", "--json").stdout)
    assert report["added"] == n and report["embedded"] == 0
    proc = run_cli(repo, "search", "--json", "--", "tenant invoice")
    hits = json.loads(proc.stdout)
    assert hits  # full-text and the first batch of vectors answered
    assert "semantic search is still warming up" in proc.stderr
    status = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    pending = status[0]["semantic_warming_up"]["vectors_pending"]
    assert 0 < pending <= n - SEARCH_EMBED_BATCH
    with Service(Vault(repo)) as svc:
        assert wait_for(lambda: missing(svc) == 0), "the background worker did not embed the rest"
    log = (repo / ".ccmemory" / "local" / "githooks.log").read_text()
    assert "embedded" in log
    done = run_cli(repo, "search", "--json", "--", "tenant invoice")
    assert "warming up" not in done.stderr


def test_reindex_text_phase_then_embedding(repo: Path, run_cli: RunCli) -> None:
    fill(repo, 40)
    report = json.loads(run_cli(repo, "reindex", "--json").stdout)
    assert report["added"] == 40 and report["embedded"] == 40 and report["semantic"] is True
    with Service(Vault(repo)) as svc:
        assert missing(svc) == 0


def test_background_worker_embeds_what_is_missing_even_when_nothing_changed(repo: Path) -> None:
    from ccmemory.features.lifecycle import background

    fill(repo, 20)
    with Service(Vault(repo)) as svc:
        svc.reindex()  # text only: nothing new for the worker's reindex to find
        assert missing(svc) == 20
    assert background.run(repo) == 1
    with Service(Vault(repo)) as svc:
        assert missing(svc) == 0
        name = svc.embedder().name
    # its last count stays for long-lived searchers to notice (0: done)
    from ccmemory.retrieval import warming

    assert warming.read_status(repo, name) == 0


def test_watch_hands_embedding_to_the_background_worker(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real watcher (watchdog on a temp git repo): a new memory is searchable as full text as
    soon as its pass is done; the watch loop never loads the model or embeds; the background
    worker it starts computes the vectors."""
    from ccmemory.features.lifecycle.watcher import Watcher
    from ccmemory.retrieval import embed as embed_mod

    loads: list[str] = []
    real_get = embed_mod.get_embedder

    def spy_get(*a: Any, **kw: Any) -> Any:
        loads.append("get_embedder")
        return real_get(*a, **kw)

    monkeypatch.setattr(embed_mod, "get_embedder", spy_get)
    w = Watcher(repo, debounce=0.1, max_delay=0.5, reconcile=0)
    w.start()
    try:
        ids = fill(repo, 40)
        deadline = time.monotonic() + 30
        added = 0
        while added < 40 and time.monotonic() < deadline:
            p = w.tick()
            if p is not None and p.report is not None:
                added += p.report.added
            time.sleep(0.05)
        assert added == 40
        assert loads == []  # the watch loop never loaded the model, so it embedded nothing
        with Service(Vault(repo)) as svc:
            hits = svc.search("tenant invoice", mode="text", limit=50).hits
            assert {h.memory.id for h in hits} <= set(ids) and hits
    finally:
        w.close()
    with Service(Vault(repo)) as svc:
        assert wait_for(lambda: missing(svc) == 0), "the background worker did not embed them"
    log = (repo / ".ccmemory" / "local" / "githooks.log").read_text()
    assert sum(int(x) for x in re.findall(r"embedded (\d+)", log)) == 40


def test_session_start_hook_never_embeds(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_spawn: list[Path]
) -> None:
    from ccmemory.surfaces import hooks as hook

    fill(repo, 50)
    with Service(Vault(repo)) as svc:
        svc.reindex()
    calls: list[str] = []
    real = Service.embed_missing
    real_pending = Service._embed_pending

    def spy(self: Service, *a: Any, **kw: Any) -> Any:
        calls.append("embed_missing")
        return real(self, *a, **kw)

    def spy_pending(self: Service, *a: Any, **kw: Any) -> Any:
        calls.append("_embed_pending")  # the search path's inline batch
        return real_pending(self, *a, **kw)

    from ccmemory.retrieval import embed as embed_mod

    real_get = embed_mod.get_embedder

    def spy_get(*a: Any, **kw: Any) -> Any:
        calls.append("get_embedder")  # not even the model load
        return real_get(*a, **kw)

    monkeypatch.setattr(Service, "embed_missing", spy)
    monkeypatch.setattr(Service, "_embed_pending", spy_pending)
    monkeypatch.setattr(embed_mod, "get_embedder", spy_get)
    hook.session_start(str(repo), {"session_id": "s-1", "source": "startup", "cwd": str(repo)})
    out = json.loads(capsys.readouterr().out)
    assert "Decision" in out["hookSpecificOutput"]["additionalContext"]  # the path really ran
    assert calls == [] and no_spawn == []
    with Service(Vault(repo)) as svc:
        assert missing(svc) == 50


def test_mcp_search_reports_warming_up(repo: Path) -> None:
    from tests._mcp_client import SyncClient

    n = SEARCH_EMBED_BATCH * 3
    fill(repo, n)
    with Service(Vault(repo)) as svc:
        svc.reindex()
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as client:
        out = client.call("search", {"query": "tenant invoice", "limit": 3})
        assert out["results"]
        pending = out["semantic_warming_up"]["vectors_pending"]
        assert 0 < pending <= n - SEARCH_EMBED_BATCH
        assert any("warming up" in x for x in out["notices"])
        text_only = client.call("search", {"query": "tenant invoice", "mode": "text", "limit": 3})
        assert "semantic_warming_up" not in text_only
    with Service(Vault(repo)) as svc:
        assert wait_for(lambda: missing(svc) == 0)


def test_a_search_in_a_never_indexed_repository_builds_the_index(repo: Path, run_cli: RunCli) -> None:
    """Files copied or pulled without the git hooks and no `reindex` yet: the first search builds
    the index (once) and says so, instead of answering "no matching memories". A repository
    whose index holds memories is not rebuilt by a search that finds nothing."""
    fill(repo, 5)
    proc = run_cli(repo, "search", "--json", "--mode", "text", "--", "tenant invoice")
    assert json.loads(proc.stdout), proc.stderr
    assert "built it from 5 files" in proc.stderr
    again = run_cli(repo, "search", "--json", "--mode", "text", "--", "tenant invoice")
    assert json.loads(again.stdout) and "built it" not in again.stderr
    fill(repo, 1, start=50)  # a new file after the index exists: reindex's job, not search's
    none = run_cli(repo, "search", "--json", "--mode", "text", "--", "zzqx-no-such-word")
    assert json.loads(none.stdout) == [] and "built it" not in none.stderr
    with Service(Vault(repo)) as svc:
        assert svc.view.count(svc.filters()) == 5


def test_a_search_in_an_empty_vault_does_not_build(repo: Path, run_cli: RunCli) -> None:
    proc = run_cli(repo, "search", "--json", "--", "anything")
    assert json.loads(proc.stdout) == [] and "built it" not in proc.stderr
