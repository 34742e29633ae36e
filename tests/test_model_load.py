"""How the local model loads, made faster for a cold process (issue 29) without changing a
vector: the embedding lookups of the integer graph gather int8 rows (int8graph VERSION 4)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ccmemory.retrieval import embed as E
from ccmemory.retrieval import int8graph

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


def saved(models: Path) -> list[Path]:
    return sorted(models.glob("*-ort-*.onnx"))


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
