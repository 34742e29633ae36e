"""Train the general-question detector of prompt recall (issue 27) from the labelled recall sets.

    .venv/bin/python bench/train_general.py            # leave-one-set-out report, then write the model
    .venv/bin/python bench/train_general.py --dry-run  # the report only

A prompt that a recall set labels *chatter* (it expects no memory) and that the cheap checks of
``ccmemory.text.chatter`` let through is mostly a general question about the stack ("how does a
RabbitMQ quorum queue elect a new leader?", "what does helm upgrade --atomic do?"): MiniLM puts
it as close to a same-topic memory as a real question about the project. A linear model over the
prompt's own vector (the one the search embeds anyway) tells the two apart better than rules:
positives are those chatter prompts, negatives the task and question prompts that expect a
memory. Recall raises its bar for a prompt the model scores high (``engine.Gate.general_above``,
``general_raise``), with vectors only.

The data are the prompts of the tuning recall sets (``recall_rank.TUNING_WHOLE`` and
recall-harbor's two splits): never a held-out set. The report gives, for each set, what a model
trained on the *other* sets scores on it (leave one set out), which is the honest estimate of
how it carries to an unseen project. The model is written to
``ccmemory/data/general-prompts.json`` with the embedder's name (vectors of another embedder are
never scored with it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "bench" / "memories")]

import devset  # type: ignore[import-not-found]  # noqa: E402
import recall_rank as rr  # type: ignore[import-not-found]  # noqa: E402

from ccmemory.features.recall import engine  # noqa: E402
from ccmemory.features.recall.general import MODEL_PATH  # noqa: E402
from ccmemory.retrieval.embed import LocalMiniLM  # noqa: E402

L2 = 1.0  # ridge penalty (per sample); 0.3-3 gave the same leave-one-set-out figures
STEPS, RATE = 1500, 2.0


def labelled(name: str) -> list[tuple[str, int]]:
    """(prompt, 1 for chatter / 0 for a prompt that expects a memory) of one recall set, the
    prompts recall would rank (``engine.speaks_to_project``)."""
    rr.select(name)
    out = []
    for line in (devset.SET_DIR / "recall.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        _split, kind, targets, prompt = (p.strip() for p in line.split("|", 3))
        if kind not in ("task", "question", "chatter") or not engine.speaks_to_project(prompt):
            continue
        if kind == "chatter":
            out.append((prompt, 1))
        elif targets != "-":
            out.append((prompt, 0))
    return out


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression, classes weighted equally, by gradient descent."""
    w, b = np.zeros(x.shape[1]), 0.0
    pos = float(y.mean())
    weight = np.where(y == 1, 0.5 / pos, 0.5 / (1 - pos))
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) * weight
        w -= RATE * (x.T @ g / len(y) + L2 * w / len(y))
        b -= RATE * float(g.mean())
    return w, b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="report only; do not write the model")
    args = ap.parse_args(argv)
    sets = ["recall-harbor", *rr.TUNING_WHOLE]
    data = {name: labelled(name) for name in sets}
    embedder = LocalMiniLM()
    vec = {
        name: np.asarray(embedder.embed([p for p, _ in rows], kind="query")) for name, rows in data.items()
    }
    lab = {name: np.array([y for _, y in rows]) for name, rows in data.items()}
    print(f"{'left out':18s} {'chatter':>8s} {'memory':>7s}  share scored above 0.5 / 0.7 / 0.8")
    for name in sets:
        rest = [n for n in sets if n != name]
        w, b = fit(np.vstack([vec[n] for n in rest]), np.concatenate([lab[n] for n in rest]))
        p = 1 / (1 + np.exp(-(vec[name] @ w + b)))
        y = lab[name]
        cells = " ".join(
            f"{(p[y == 1] > t).mean():.2f}/{(p[y == 0] > t).mean():.2f}" for t in (0.5, 0.7, 0.8)
        )
        print(f"{name:18s} {int(y.sum()):8d} {int((y == 0).sum()):7d}  chatter/memory {cells}")
    w, b = fit(np.vstack(list(vec.values())), np.concatenate(list(lab.values())))
    model: dict[str, Any] = {
        "about": "general-question detector of prompt recall: bench/train_general.py",
        "embedder": embedder.name,
        "sets": sets,
        "prompts": {
            "chatter": int(sum(v.sum() for v in lab.values())),
            "memory": int(sum((v == 0).sum() for v in lab.values())),
        },
        "bias": round(b, 6),
        "weights": [round(float(v), 6) for v in w],
    }
    if not args.dry_run:
        MODEL_PATH.write_text(json.dumps(model) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_PATH.relative_to(ROOT)} ({len(w)} weights, {model['prompts']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
