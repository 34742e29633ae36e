"""The first build with embeddings: the raw model against the product's own reindex path.

    .venv/bin/python bench/first_build_bench.py [--n 2000] [--kinds title,33w,60w] [--repeat 2]

For each kind of memory ("title": a title alone, about 8 words; "33w" and "60w": title and
body, about 33 and 60 words) the script writes ``--n`` memory files into a fresh git
repository, then alternates, ``--repeat`` times:

- raw: ``LocalMiniLM().embed(texts)`` on exactly the texts the index hands to the embedder
  (``Index.missing_vectors``), model already loaded — the model's own speed;
- raw-dq: the same with the per-batch-quantised graph (``per_row=False``), to show what the
  per-row quantisation that makes vectors batch-independent costs;
- product: ``ccmemory reindex``'s path in this process — a fresh ``Service`` on an empty
  index: ``Service.reindex()`` (the text phase, committed: full-text search works from here)
  then ``Service.embed_missing()`` (model load included, vectors committed every 128).

It prints texts/s, the product/raw ratio of each pair of neighbouring runs, and the load
average before and after each run (the machine may be shared: compare ratios, not seconds).
Next to wall-clock time it prints this process's CPU time (all threads, ``time.process_time``),
which moves much less with other processes' load than wall-clock time does.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WORDS = (
    "auth token cookie session cache build database migration pipeline flag search index rate "
    "limit release branch error logging payment webhook upload fixture dependency pin cli "
    "secret staging cluster queue retry backoff schema tenant invoice export report worker "
    "deploy rollback monitor alert latency budget replica lock transaction timeout parser "
    "config vault review merge commit hook lint format test coverage flaky race deadlock"
).split()
GLUE = "the a we it because so when after before never always should must not with into from".split()


def sentence(rng: random.Random, words: int) -> str:
    out = []
    for i in range(words):
        out.append(rng.choice(GLUE) if i % 3 == 1 else rng.choice(WORDS))
    return " ".join(out).capitalize() + "."


def memories(kind: str, n: int, seed: int = 20) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    body_words = {"title": 0, "33w": 25, "60w": 52}[kind]
    out = []
    for i in range(n):
        title = sentence(rng, rng.randint(6, 10)).rstrip(".") + f" {i}"
        body = ""
        if body_words:
            parts, left = [], body_words + rng.randint(-4, 4)
            while left > 0:
                k = min(left, rng.randint(8, 16))
                parts.append(sentence(rng, k))
                left -= k
            body = " ".join(parts)
        out.append((title, body))
    return out


def make_vault(root: Path, items: list[tuple[str, str]]) -> None:
    from ccmemory.app.vaultinit import init_vault
    from ccmemory.core.model import Memory, new_id
    from ccmemory.core.vault import Vault

    root.mkdir(parents=True)
    for cmd in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "b@example.com"],
        ["config", "user.name", "B"],
    ):
        subprocess.run(["git", *cmd], cwd=root, check=True)
    init_vault(root)
    vault = Vault(root)
    when = datetime(2026, 11, 1, tzinfo=UTC)
    for title, body in items:
        vault.write_new(Memory(id=new_id(), type="decision", title=title, created=when, body=body))


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--kinds", default="title,33w,60w")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-dq", action="store_true", help="skip the per-batch-quantised raw runs")
    args = ap.parse_args()

    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault
    from ccmemory.retrieval.embed import LocalMiniLM

    rq = LocalMiniLM()
    rq.load()
    dq = LocalMiniLM(per_row=False)
    if not args.no_dq:
        dq.load()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; n={args.n}; {time.strftime('%H:%M UTC', time.gmtime())}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="ccm-firstbuild-"))
    try:
        for kind in [k.strip() for k in args.kinds.split(",") if k.strip()]:
            root = tmp / kind
            make_vault(root, memories(kind, args.n))
            with Service(Vault(root)) as svc:
                svc.reindex()
                texts = [t for _, t in svc.index.missing_vectors(svc.project, rq.name)]
            words = statistics.mean(len(t.split()) for t in texts)
            rq.embed(texts[:32])
            rows: dict[str, list[float]] = {"raw": [], "raw-dq": [], "product": [], "text": []}
            ratios = []
            cpus: dict[str, list[float]] = {}
            for r in range(args.repeat):
                order = ["raw", "product"] if r % 2 == 0 else ["product", "raw"]
                if not args.no_dq:
                    order.insert(1, "raw-dq")
                got: dict[str, float] = {}
                for what in order:
                    before = load()
                    if what == "product":
                        shutil.rmtree(root / ".ccmemory" / "local", ignore_errors=True)
                        c0 = time.process_time()
                        t0 = time.perf_counter()
                        with Service(Vault(root)) as svc:
                            svc.reindex()
                            t1 = time.perf_counter()
                            done, problem = svc.embed_missing()
                        seconds = time.perf_counter() - t0
                        assert problem is None and done == len(texts), (done, problem)
                        rows["text"].append(t1 - t0)
                        extra = f" (text phase {t1 - t0:.2f} s, embedding {seconds - (t1 - t0):.2f} s)"
                    else:
                        emb = rq if what == "raw" else dq
                        c0 = time.process_time()
                        t0 = time.perf_counter()
                        emb.embed(texts)
                        seconds = time.perf_counter() - t0
                        extra = ""
                    cpu = time.process_time() - c0
                    cpus.setdefault(what, []).append(cpu)
                    extra += f"; CPU {cpu:.2f} s"
                    got[what] = seconds
                    rows[what].append(len(texts) / seconds)
                    print(
                        f"  [{kind} {words:.1f} words] {what:8s} {seconds:7.2f} s = "
                        f"{len(texts) / seconds:6.1f} /s{extra}; load {before} -> {load()}",
                        flush=True,
                    )
                ratios.append(got["product"] / got["raw"])
            med = {k: statistics.median(v) for k, v in rows.items() if v}
            print(
                f"{kind}: {len(texts)} memories, {words:.1f} words: raw {med['raw']:.1f}/s, "
                + (f"raw-dq {med['raw-dq']:.1f}/s, " if "raw-dq" in med else "")
                + f"product {med['product']:.1f}/s (whole first build {len(texts) / med['product']:.1f} s, "
                f"text phase {med['text']:.2f} s); product/raw time per pair: "
                + ", ".join(f"{x:.2f}x" for x in ratios)
                + "; CPU s (median): "
                + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in cpus.items()),
                flush=True,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
