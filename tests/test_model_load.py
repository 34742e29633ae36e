"""How the local model loads, made faster for a cold process (issue 29) without changing a
vector: the embedding lookups of the integer graph gather int8 rows (int8graph VERSION 4), the
session is saved optimized and reopened as it is (ccmemory.retrieval.ortcache), and it loads in
a thread while the index works. Every path gives the vectors of the normal path, bit for bit; a
damaged, foreign or unusable saved file falls back to it."""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ccmemory.retrieval import embed as E
from ccmemory.retrieval import int8graph, ortcache
from tests.conftest import RunCli, init_git

WORDS = (
    "database migration lock release branch payment webhook retry cookie token session cache index "
    "vector search fusion rank prior recency decision pattern insight gotcha postgres sqlite neo4j "
    "docker kubernetes deploy rollback feature flag test fixture flaky timeout latency p95 budget "
    "commit merge rebase conflict review approve schema column foreign key constraint trigger"
).split()


def varied_texts(n: int = 300) -> list[str]:
    """Memory-like texts of every length (a few past the 256-token truncation), code, markup,
    numbers, accents, CJK, emoji, punctuation only, blank and empty."""
    rng = random.Random(39)
    special = [
        "",
        " ",
        "\n\t",
        "?!...;;::",
        "Ünïcödé façade naïve café — “quotes” ‘and’ «guillemets»",
        "数据库迁移锁 在发布分支上 不能并发运行",
        "データベースの移行ロック",
        "🔒 lock 🚀 deploy ✅ done 🐛 bug",
        "def migrate(db):\n    with db.lock('schema'):\n        db.apply(PLAN)  # one at a time",
        "SELECT id FROM memories WHERE project = ? AND NOT EXISTS (SELECT 1 FROM vectors)",
        '<div class="x">&amp; &lt;tag&gt;</div>',
        "3.14159 2718 0x7fff 1e-9 -42 +7 2026-11-26T13:00:00Z",
        "a" * 3000,
        " ".join(["token"] * 600),
    ]
    texts = list(special)
    while len(texts) < n:
        k = rng.choice([1, 2, 3, 5, 8, 13, 30, 60, 120, 400])
        words = [rng.choice(WORDS) for _ in range(k)]
        if rng.random() < 0.3:
            words[0] = words[0].capitalize()
        sep = rng.choice([" ", " ", ", ", "\n"])
        texts.append(sep.join(words) + rng.choice(["", ".", "?", " — see #29"]))
    return texts


TEXTS = varied_texts()


@pytest.fixture(scope="module")
def prepared_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache folder holding only the integer graph (converted once for the module)."""
    folder = tmp_path_factory.mktemp("prepared")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CCMEMORY_CACHE_DIR", str(folder))
        E.LocalMiniLM().load()
    for saved in (folder / "models").glob("*-ort-*.onnx"):
        saved.unlink()
    yield folder


@pytest.fixture(scope="module")
def reference(prepared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The vectors of the normal path: the session built (optimized) in this process, no saved file."""
    folder = tmp_path_factory.mktemp("reference")
    shutil.copytree(prepared_dir, folder, dirs_exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CCMEMORY_CACHE_DIR", str(folder))
        mp.setenv("CCMEMORY_OPTIMIZED_MODEL", "0")
        vectors = E.LocalMiniLM().embed(TEXTS)
    assert not list((folder / "models").glob("*-ort-*.onnx"))
    return vectors


@pytest.fixture
def cache(prepared_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder with the integer graph already in it; returns its models folder."""
    folder = tmp_path / "cache"
    shutil.copytree(prepared_dir, folder)
    monkeypatch.setenv("CCMEMORY_CACHE_DIR", str(folder))
    monkeypatch.delenv("CCMEMORY_OPTIMIZED_MODEL", raising=False)
    return folder / "models"


def saved(models: Path) -> list[Path]:
    return sorted(models.glob("*-ort-*.onnx"))


def no_build(*args: Any, **kw: Any) -> Any:
    raise AssertionError("built and saved again instead of reopening the saved file")


def test_saved_session_gives_bit_identical_vectors(
    cache: Path, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = E.LocalMiniLM()  # optimizes, saves, checks the file, then uses its own session
    a = first.embed(TEXTS)
    (path,) = saved(cache)
    assert path.stat().st_size > 10_000_000 and path.stat().st_mode & 0o777 == 0o600
    assert not list(cache.glob(".*.tmp"))
    monkeypatch.setattr(ortcache, "_build_and_save", no_build)
    second = E.LocalMiniLM()  # reopens the saved graph without optimizing
    b = second.embed(TEXTS)
    assert a.dtype == b.dtype == reference.dtype == np.float32
    assert np.array_equal(a, reference), "the session that saved the file differs from the normal one"
    assert np.array_equal(b, reference), "the reopened saved session differs from the normal one"
    assert (first.kernel, second.kernel) == (first.kernel, first.kernel)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_damaged_saved_file_falls_back_and_is_rebuilt(
    cache: Path, reference: Any, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    E.LocalMiniLM().load()
    (path,) = saved(cache)
    good = path.read_bytes()
    path.write_bytes(
        {"garbage": b"not an onnx file" * 100, "truncated": good[: len(good) // 2], "empty": b""}[damage]
    )
    model = E.LocalMiniLM()
    assert np.array_equal(model.embed(TEXTS[:40]), reference[:40])
    (again,) = saved(cache)
    assert again == path and again.stat().st_size == len(good)
    monkeypatch.setattr(ortcache, "_build_and_save", no_build)
    assert np.array_equal(E.LocalMiniLM().embed(TEXTS[:40]), reference[:40])  # the rebuilt file loads


def test_a_file_that_gives_other_outputs_is_never_published(
    cache: Path, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ortcache, "same_outputs", lambda a, b: False)
    model = E.LocalMiniLM()
    assert np.array_equal(model.embed(TEXTS[:20]), reference[:20])
    assert saved(cache) == [] and not list(cache.glob(".*.tmp"))


def test_key_covers_onnxruntime_kernel_cpu_threads_and_graph(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (graph,) = [p for p in cache.glob("minilm-int8-*.onnx") if "-ort-" not in p.name]
    base = dict(kernel="u8s8", threads=2, ort_version="1.20.0")
    path = ortcache.cached_path(graph, **base)  # type: ignore[arg-type]
    assert path is not None and path.parent == graph.parent and path.name.startswith(graph.stem + "-ort-")
    for change in ({"kernel": "u8u8"}, {"threads": 4}, {"ort_version": "1.21.0"}):
        assert ortcache.cached_path(graph, **{**base, **change}) != path  # type: ignore[arg-type]
    os.utime(graph, ns=(graph.stat().st_atime_ns, graph.stat().st_mtime_ns + 1))  # a rewritten graph
    assert ortcache.cached_path(graph, **base) != path  # type: ignore[arg-type]
    monkeypatch.setattr(ortcache, "cpu_signature", lambda: "another-cpu")
    assert ortcache.cached_path(graph, **base) != path  # type: ignore[arg-type]
    monkeypatch.setattr(ortcache, "cpu_signature", lambda: None)
    assert ortcache.cached_path(graph, **base) is None  # type: ignore[arg-type]


def test_another_onnxruntime_version_saves_its_own_file(
    cache: Path, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime

    E.LocalMiniLM().load()
    (mine,) = saved(cache)
    monkeypatch.setattr(onnxruntime, "__version__", "0.0.0-other")
    assert np.array_equal(E.LocalMiniLM().embed(TEXTS[:20]), reference[:20])
    assert len(saved(cache)) == 2 and mine in saved(cache)


def test_off_switch_and_unknown_cpu_build_in_process(
    cache: Path, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCMEMORY_OPTIMIZED_MODEL", "0")
    assert np.array_equal(E.LocalMiniLM().embed(TEXTS[:20]), reference[:20])
    assert saved(cache) == []
    monkeypatch.delenv("CCMEMORY_OPTIMIZED_MODEL")
    monkeypatch.setattr(ortcache, "cpu_signature", lambda: None)
    assert np.array_equal(E.LocalMiniLM().embed(TEXTS[:20]), reference[:20])
    assert saved(cache) == []


def test_prune_keeps_the_most_recently_used(tmp_path: Path) -> None:
    for i in range(ortcache.KEEP + 2):
        f = tmp_path / f"minilm-int8-rq-x-ort-{i}.onnx"
        f.write_bytes(b"x")
        os.utime(f, (1_000_000 + i, 1_000_000 + i))
    other = tmp_path / "minilm-int8-rq-x.onnx"  # the integer graph itself is never pruned
    other.write_bytes(b"x")
    ortcache._prune(tmp_path)
    left = sorted(p.name for p in tmp_path.glob("*-ort-*.onnx"))
    assert left == [f"minilm-int8-rq-x-ort-{i}.onnx" for i in range(2, ortcache.KEEP + 2)]
    assert other.exists()


def test_cpu_signature_is_stable_in_a_process() -> None:
    sig = ortcache.cpu_signature()
    assert sig is not None and sig == ortcache.cpu_signature()


# --------------------------------------------------------------------------- the integer graph


@pytest.mark.parametrize(("kernel", "n"), [("auto", len(TEXTS)), ("u8u8", 60)])
def test_rewriting_the_embedding_lookups_changes_no_vector(
    prepared_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel: str, n: int
) -> None:
    """VERSION 3 of the rewrite left the lookups that write ``axis=0`` out (the word table among
    them) dequantised, and onnxruntime folded the 30,522 x 384 float table at every load; VERSION 4
    gathers the int8 rows and scales them: the same products, so the same vectors."""
    monkeypatch.setenv("CCMEMORY_CACHE_DIR", str(tmp_path))
    unsigned = kernel == "u8u8"
    new, n_new = int8graph.rewrite(E.default_model_path(), unsigned=unsigned)
    with monkeypatch.context() as mp:
        mp.setattr(int8graph, "_axis0", lambda node: not node.attribute)  # VERSION 3's rule
        old, n_old = int8graph.rewrite(E.default_model_path(), unsigned=unsigned)
    assert n_new > n_old and new != old
    vectors = {}
    for label, graph in (("old", old), ("new", new)):
        with monkeypatch.context() as mp:  # bytes: the product's session options, no saved file
            mp.setattr(int8graph, "prepared", lambda *a, graph=graph, **kw: graph)
            model = E.LocalMiniLM(kernel=kernel)  # type: ignore[arg-type]
            vectors[label] = model.embed(TEXTS[:n])
        assert model.kernel == "u8u8" if unsigned else model.kernel in ("u8s8", "u8u8")
    assert np.array_equal(vectors["old"], vectors["new"])
    assert saved(tmp_path / "models") == []


# --------------------------------------------------------------------------- background load


def test_background_load_gives_the_same_vectors(cache: Path, reference: Any) -> None:
    model = E.LocalMiniLM()
    model.load_in_background()
    model.load_in_background()  # a second call starts nothing more
    assert np.array_equal(model.embed(TEXTS[:40]), reference[:40])
    assert model._loader is None and model._session is not None


def test_background_load_failure_is_raised_by_the_first_embedding(tmp_path: Path) -> None:
    model = E.LocalMiniLM(model_path=tmp_path / "nope.onnx")
    model.load_in_background()
    with pytest.raises(E.EmbedderUnavailable, match="embedding model file missing"):
        model.embed(["x"])
    with pytest.raises(E.EmbedderUnavailable, match="embedding model file missing"):
        model.embed(["x"])  # tried again, as without the background load


def test_background_load_leaves_numpy_imported_before_its_thread_starts(tmp_path: Path) -> None:
    """numpy must be whole in sys.modules when load_in_background returns: the caller reads the
    vector matrix (numpy) while the loader imports onnxruntime (numpy too), and two threads
    importing numpy at once can see it partially initialized (a CI failure of a cold search)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from ccmemory.retrieval.embed import LocalMiniLM\n"
        "assert 'numpy' not in sys.modules, 'numpy imported already'\n"
        "m = LocalMiniLM()\n"
        "m.load_in_background()\n"
        "np = sys.modules.get('numpy')\n"
        "print(np is not None and hasattr(np, 'ndarray') and hasattr(np, '__config__'))\n"
        "m.load()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"


# --------------------------------------------------------------------------- through the CLI


def test_cli_search_is_the_same_with_and_without_the_saved_session(
    tmp_path: Path, prepared_dir: Path, run_cli: RunCli
) -> None:
    """`ccmemory search` in hybrid mode (real subprocesses, no warm server): the process that
    saves the session, one that reopens it and one with the cache off print the same bytes."""
    from ccmemory.app.vaultinit import init_vault

    repo = init_git(tmp_path / "repo")
    init_vault(repo)
    folder = tmp_path / "cache"
    shutil.copytree(prepared_dir, folder)
    env = {"CCMEMORY_CACHE_DIR": str(folder), "CCMEMORY_SEARCH_WARM": "0"}
    for title, body in [
        ("Database migrations take a global lock", "One migration at a time; the others wait."),
        ("Payment webhooks are retried with backoff", "Stripe retries for three days."),
        ("Session tokens live in httpOnly cookies", "Page scripts cannot read them."),
        ("Flaky timeout in the fixture teardown", "The container stops before the test ends."),
    ]:
        run_cli(repo, "new", "decision", title, "-b", body, env=env)
    run_cli(repo, "reindex", env=env)  # embeds the memories (and saves the session)
    for stale in saved(folder / "models"):
        stale.unlink()
    args = ("search", "why do schema changes wait for each other", "--json", "--explain")
    first = run_cli(repo, *args, env=env)
    assert len(saved(folder / "models")) == 1
    second = run_cli(repo, *args, env=env)
    off = run_cli(repo, *args, env={**env, "CCMEMORY_OPTIMIZED_MODEL": "0"})
    hits = json.loads(off.stdout)
    assert hits and hits[0]["title"].startswith("Database migrations")
    assert all("vector_score" in h["explain"] for h in hits)  # really a hybrid answer
    assert first.stdout == second.stdout == off.stdout


# --------------------------------------------------------------------------- the MCP server


@pytest.mark.slow
def test_mcp_server_loads_the_model_at_start(tmp_path: Path, prepared_dir: Path) -> None:
    """A real `ccmemory mcp` over an empty vault (nothing to embed, no request sent) loads the
    model as its recall socket starts, so the first prompt's search does not pay for it: the
    saved session appears in its cache folder."""
    import subprocess
    import sys
    import time

    from ccmemory.features.recall import warm
    from tests._mcp_client import SyncClient
    from tests.capture_helpers import hook_env

    repo = init_git(tmp_path / "repo")
    folder = tmp_path / "cache"
    shutil.copytree(prepared_dir, folder)
    env = hook_env(CCMEMORY_CACHE_DIR=str(folder))
    init = [sys.executable, "-m", "ccmemory", "init", "--no-git-hooks"]
    subprocess.run(init, cwd=repo, env=env, check=True, capture_output=True)
    client = SyncClient.stdio(repo, env=env)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not saved(folder / "models"):
            time.sleep(0.2)
        assert saved(folder / "models"), "the server did not load the model at start"
        assert Path(warm.socket_path(str(repo))).exists()
    finally:
        client.close()


def test_rewritten_graphs_of_old_installations_are_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each installation of the model package has its own rewritten graph (its path is part of the
    key); writing a new one keeps the KEEP newest of its kind and leaves other kinds and
    onnxruntime's saved sessions alone."""
    monkeypatch.setenv("CCMEMORY_CACHE_DIR", str(tmp_path))
    models = tmp_path / "models"
    models.mkdir()
    old = []
    for i in range(int8graph.KEEP + 2):  # graphs of earlier virtualenvs, oldest first
        p = models / f"minilm-int8-rq-{i:020x}.onnx"
        p.write_bytes(b"old graph")
        os.utime(p, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
        old.append(p)
    other = models / f"minilm-int8-dq-{0:020x}.onnx"
    other.write_bytes(b"other kind")
    session = models / f"minilm-int8-rq-{0:020x}-ort-{1:020x}.onnx"
    session.write_bytes(b"saved session")
    keep_too = models / "notes.txt"
    keep_too.write_text("not ours")
    path = int8graph.prepared(E.default_model_path(), per_row=True, unsigned=False)
    assert isinstance(path, Path) and path.is_file() and path.stat().st_size > 10**6
    left = sorted(p for p in models.glob("minilm-int8-rq-*.onnx") if "-ort-" not in p.name)
    assert len(left) == int8graph.KEEP and path in left
    assert set(left) - {path} == set(old[-(int8graph.KEEP - 1) :])  # the newest old ones stay
    assert other.is_file() and session.is_file() and keep_too.is_file()
    # the graph in use is opened by the embedder as before
    vec = E.LocalMiniLM().embed(["prune old graphs"], "query")
    assert vec.shape == (1, 384)
