"""What per-row activation quantisation costs against per-batch quantisation, finely interleaved.

    .venv/bin/python bench/quant_cost_bench.py [--n 2000] [--chunk 100] [--kinds title,33w,60w]

Both graphs (``LocalMiniLM()``: per row, a vector is a pure function of its text;
``LocalMiniLM(per_row=False)``: one scale per batch) embed the same texts in chunks of
``--chunk``, alternating chunk by chunk, so both see the same machine state; the sums of the
chunk times are compared. Texts as in bench/first_build_bench.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from first_build_bench import memories


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--kinds", default="title,33w,60w")
    args = ap.parse_args()
    from ccmemory.retrieval.embed import LocalMiniLM

    graphs = {"per-row": LocalMiniLM(), "per-batch": LocalMiniLM(per_row=False)}
    for g in graphs.values():
        g.load()
        g.embed(["warm up"])
    for kind in args.kinds.split(","):
        texts = [f"{t}\n{b}".strip() for t, b in memories(kind, args.n)]
        total = dict.fromkeys(graphs, 0.0)
        before = os.getloadavg()[0]
        for i, start in enumerate(range(0, len(texts), args.chunk)):
            chunk = texts[start : start + args.chunk]
            names = list(graphs) if i % 2 == 0 else list(reversed(graphs))
            for name in names:
                t0 = time.perf_counter()
                graphs[name].embed(chunk)
                total[name] += time.perf_counter() - t0
        print(
            f"{kind}: {len(texts)} texts, "
            + ", ".join(f"{k} {len(texts) / v:.1f}/s ({v:.1f} s)" for k, v in total.items())
            + f"; per-row / per-batch time {total['per-row'] / total['per-batch']:.2f}x"
            + f"; load {before:.2f} -> {os.getloadavg()[0]:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
