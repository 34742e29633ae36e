"""How well does "cosine ≥ threshold" tell a re-explained correction/preference from an unrelated one?

    .venv/bin/python bench/reexplain_calibration.py

Data: bench/data/reexplain_pairs.jsonl, 36 pairs written for this check by the dashboard's author
(a new correction or preference, an older memory, label 1 = the new one re-tells what the old one
already said; same-topic contradictions are labelled 0). Even lines tune the threshold (best
accuracy, ties to the lower threshold), odd lines are held out. Small and hand-made: a sanity
check of the threshold, not a benchmark. Prints a markdown section for RESULTS-dashboard.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def accuracy(rows: list[tuple[float, int]], t: float) -> tuple[float, int, int]:
    """(accuracy, false positives, false negatives) of `score >= t`."""
    fp = sum(1 for s, y in rows if s >= t and not y)
    fn = sum(1 for s, y in rows if s < t and y)
    return sum(1 for s, y in rows if (s >= t) == bool(y)) / len(rows), fp, fn


def main() -> None:
    import numpy as np

    from ccmemory.retrieval.embed import get_embedder
    from ccmemory.surfaces.dashboard.metrics import REEXPLAIN_THRESHOLD

    pairs = [json.loads(x) for x in (ROOT / "bench/data/reexplain_pairs.jsonl").read_text().splitlines() if x]
    emb = get_embedder(choice="local")
    a = emb.embed([p["new"] for p in pairs], kind="document")
    b = emb.embed([p["old"] for p in pairs], kind="document")
    scores = [float(np.dot(x, y)) for x, y in zip(a, b, strict=True)]
    rows = [(s, int(p["label"])) for s, p in zip(scores, pairs, strict=True)]
    tune, held = rows[0::2], rows[1::2]
    grid = [round(0.30 + 0.01 * i, 2) for i in range(66)]
    best = max(grid, key=lambda t: (accuracy(tune, t)[0], -t))
    # the rule used: in the dashboard the score is the best match over *many* older memories, which
    # inflates false positives, so take the lowest threshold with no false positive on tuning
    safe = min(t for t in grid if accuracy(tune, t)[1] == 0)
    print(f"## Re-explanation threshold ({emb.name}, {len(rows)} hand-made pairs)\n")
    print("| threshold | tuning accuracy (18) | held-out accuracy (18) | held-out false +/− |")
    print("|---|---|---|---|")
    for t in sorted({best, safe, REEXPLAIN_THRESHOLD, 0.75, 0.8}):
        ta, hb = accuracy(tune, t), accuracy(held, t)
        mark = " (best on tuning)" if t == best else ""
        mark += " (lowest with no tuning false positive)" if t == safe else ""
        mark += " (used)" if t == REEXPLAIN_THRESHOLD else ""
        print(f"| {t:.2f}{mark} | {ta[0]:.2f} | {hb[0]:.2f} | {hb[1]} / {hb[2]} |")
    pos = sorted(s for s, y in rows if y)
    neg = sorted(s for s, y in rows if not y)
    print(
        f"\ncosine of label-1 pairs: min {pos[0]:.2f}, median {pos[len(pos) // 2]:.2f}; "
        f"label-0 pairs: median {neg[len(neg) // 2]:.2f}, max {neg[-1]:.2f}"
    )


if __name__ == "__main__":
    main()
