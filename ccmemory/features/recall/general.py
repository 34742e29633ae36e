"""How much a prompt reads as a general question about the stack rather than one about the project.

"How does a RabbitMQ quorum queue elect a new leader?" sits as close, by cosine, to the project's
memory about its RabbitMQ queues as a real question about them does; the words that tell them
apart are spread over the whole prompt. A linear model over the prompt's vector (the one the
search embedded: no extra cost) scores it: trained by ``bench/train_general.py`` on the prompts of
the tuning recall sets (chatter that the cheap checks of ``ccmemory.text.chatter`` let through,
against task and question prompts that expect a memory), and valid only for the embedder it was
trained with (None for any other: Voyage vectors are never scored with MiniLM weights).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

MODEL_PATH = Path(__file__).resolve().parents[2] / "data" / "general-prompts.json"


@lru_cache(maxsize=1)
def _model() -> tuple[str, Any, float] | None:
    """(embedder name, weights as a numpy vector, bias), or None when the model file is missing
    or unreadable (recall then works without it)."""
    try:
        data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
        import numpy as np

        weights = np.asarray(data["weights"], dtype=np.float32)
        return str(data["embedder"]), weights, float(data["bias"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def general_score(vector: Any, embedder: str) -> float | None:
    """The probability that a prompt with this (unit) query ``vector`` of ``embedder`` is a
    general question, not one about the project; None when no model fits the embedder."""
    model = _model()
    if model is None or vector is None or model[0] != embedder:
        return None
    _name, weights, bias = model
    if getattr(vector, "shape", None) != weights.shape:
        return None
    z = float(vector @ weights) + bias
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
