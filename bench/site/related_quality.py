"""The site's related lists (issue 29): the bounded "more like this" search against the whole-query
search it replaced, on a sample of a vault's memories.

    PYTHONPATH=. .venv/bin/python bench/site/related_quality.py VAULT_ROOT --sample 1000

For each sampled memory both lists are computed through `SiteGenerator._related` (the new one) and
through the search of its whole title and topics (the old one: `Service.search` with no groups);
prints the mean Jaccard overlap of the top-5 lists, the share of memories whose old first item is
still in the new list, the share of new lists with fewer items than the old, and the time per
memory of each way (after one untimed pass over 20 memories for the caches).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from ccmemory.app.service import Service  # noqa: E402
from ccmemory.index.base import IndexedMemory  # noqa: E402
from ccmemory.surfaces.site.generator import RELATED, SiteGenerator  # noqa: E402


def old_related(
    svc: Service, memories: list[IndexedMemory], by_id: dict[str, IndexedMemory], superseded: set[str]
) -> dict[str, list[str]]:
    """The lists as the site made them before: one search of the whole title and topics."""
    f = svc.filters(include_superseded=True)
    out: dict[str, list[str]] = {}
    for m in memories:
        hits = svc.search(
            " ".join([m.title, *m.topics]), f, limit=RELATED + 6, mode="text", expand=False
        ).hits
        out[m.id] = [
            h.memory.id
            for h in hits
            if h.memory.id != m.id and h.memory.id in by_id and h.memory.id not in superseded
        ][:RELATED]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--sample", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-old", action="store_true", help="time the new lists only")
    args = ap.parse_args()
    with Service.open(args.root) as svc:
        f = svc.filters(include_superseded=True)
        memories = svc.view.query(f, limit=max(svc.view.count(f), 1))
        by_id = {m.id: m for m in memories}
        superseded = svc.view.superseded_ids(f)
        sample = random.Random(args.seed).sample(memories, min(args.sample, len(memories)))
        gen = SiteGenerator(svc)
        warm = sample[:20]
        gen._related(warm, by_id, superseded)
        t = time.perf_counter()
        new = gen._related(sample, by_id, superseded)
        new_s = time.perf_counter() - t
        result: dict[str, object] = {
            "memories": len(memories),
            "sample": len(sample),
            "new_ms_per_memory": round(1000 * new_s / len(sample), 2),
        }
        if not args.skip_old:
            old_related(svc, warm, by_id, superseded)
            t = time.perf_counter()
            old = old_related(svc, sample, by_id, superseded)
            old_s = time.perf_counter() - t
            jac, first, shorter = [], 0, 0
            for m in sample:
                a, b = set(old[m.id]), {x.id for x in new[m.id]}
                jac.append(len(a & b) / len(a | b) if a | b else 1.0)
                first += bool(old[m.id]) and old[m.id][0] in b
                shorter += len(b) < len(a)
            with_old = sum(1 for m in sample if old[m.id])
            result.update(
                old_ms_per_memory=round(1000 * old_s / len(sample), 2),
                mean_jaccard_top5=round(sum(jac) / len(jac), 3),
                old_first_kept=round(first / max(with_old, 1), 3),
                new_shorter_share=round(shorter / len(sample), 3),
            )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
