"""Hit@1/3/5 per mode and query kind on the dev sets, through the product's search (issue 27).

    .venv/bin/python bench/recall_rank.py                       # tuning split (T) of the tuning sets
    .venv/bin/python bench/recall_rank.py --set recall-harbor   # one set
    .venv/bin/python bench/recall_rank.py --set recall-wren --split H   # a tuning set whose lines are all H
    .venv/bin/python bench/recall_rank.py --set recall-fossa --split H --heldout   # held out: the lead, once

Sets: ``main`` (Ledgerly, ``queries.txt``), ``tuning2`` (Quillpad) and the recall dev sets
(``recall-harbor``: ``recall.txt``, lines ``split | kind | targets | payload``; the ``task`` and
``question`` lines are ranked as queries, their targets are memory keys). Each query runs
``ccmemory.retrieval.search.search`` (expansion on, ``limit`` 5, the clock fixed at ``run.NOW``) over a
SQLite index of the set's memory files.

Held-out data is refused unless ``--heldout`` is given: the set held out as a whole (``blind``),
and the split ``H`` of any set but harbor and those that became tuning data as a whole after their
held-out run (:data:`TUNING_WHOLE`; their every line is split H). A new recall set (``recall-fossa``)
is held out until it is listed there. Tuning runs must never pass it.

The index and its vectors are kept between runs under ``--cache`` (default
``/tmp/ccmemory-recall-rank``), one database per set: a rerun only reindexes the files (vectors
are cached by content hash), so it costs seconds, not an embedding pass.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE / "memories")]

import devset  # noqa: E402
import run as devbench  # noqa: E402

from ccmemory.app.service import Service  # noqa: E402
from ccmemory.app.sync import reindex  # noqa: E402
from ccmemory.core.config import load_config  # noqa: E402
from ccmemory.core.vault import Vault  # noqa: E402
from ccmemory.index.base import Filters  # noqa: E402
from ccmemory.index.sqlite import SQLiteIndex  # noqa: E402
from ccmemory.retrieval.search import MODES, search  # noqa: E402

KS = (1, 3, 5)
HELD_OUT_SETS = ("blind",)
#: sets whose every line is split H, held out (run once, reported) and tuning data since: quayside,
#: tern and wren since 2026-11-26, kite, lark and moth since 2026-11-26 (fifth session), newt, owl,
#: pike and quail since 2026-11-26 (sixth session: each was run once and reported in the fifth),
#: robin, swift and vole since their held-out runs in the sixth session, wasp since the seventh's,
#: xeme and yak since the eighth's (2026-11-27), zebu, auk and bison since the ninth's, civet, dhole
#: and eland since the tenth's; harbor's split H too
#: (its figures were read on 2026-11-26). A set not listed is held out.
TUNING_WHOLE = (
    "recall-quayside",
    "recall-tern",
    "recall-wren",
    "recall-kite",
    "recall-lark",
    "recall-moth",
    "recall-newt",
    "recall-owl",
    "recall-pike",
    "recall-quail",
    "recall-robin",
    "recall-swift",
    "recall-vole",
    "recall-wasp",
    "recall-xeme",
    "recall-yak",
    "recall-zebu",
    "recall-auk",
    "recall-bison",
    "recall-civet",
    "recall-dhole",
    "recall-eland",
)
TUNING_SETS = ("main", "tuning2", "recall-harbor")
QUERY_KINDS = ("task", "question")  # the recall.txt lines that are search queries


def held_out(name: str, split: str) -> bool:
    """Whether a set's split is held-out data (refused without ``--heldout``): a held-out set, or
    split H of a set not in :data:`TUNING_WHOLE` (a new set is held out until it is listed)."""
    return name in HELD_OUT_SETS or (split == "H" and name not in (*TUNING_WHOLE, "recall-harbor"))


def select(name: str) -> None:
    """devset.select, also for a recall set that has a recall.txt and no queries.txt."""
    folder = devset.HERE if name == "main" else devset.HERE / name
    if (folder / "queries.txt").is_file() or not (folder / "recall.txt").is_file():
        devset.select(name)
        return
    devset.SET_DIR, devset.FILES, devset.KEYS = folder, folder / "ccmemory", folder / "keys.json"
    devset.AUTHOR = f"dev@{name}.example"


def load(split: str) -> list[devset.Query]:
    """The selected set's queries of ``split``: queries.txt, or recall.txt's task/question lines."""
    recall = devset.SET_DIR / "recall.txt"
    if not recall.is_file():
        return [q for q in devset.load_queries() if q.split == split]
    out = []
    for line in recall.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        qsplit, kind, targets, payload = (p.strip() for p in line.split("|", 3))
        if qsplit == split and kind in QUERY_KINDS and targets and targets != "-":
            out.append(devset.Query(qsplit, kind, [t for t in targets.split(",") if t], payload))
    return out


@contextmanager
def cached_index(name: str, cache: Path) -> Iterator[Service]:
    """The selected set indexed into a SQLite database kept under ``cache`` (vectors survive)."""
    root = cache / name / "repo"
    if root.exists():
        shutil.rmtree(root)
    devset.make_repo(root)
    idx = SQLiteIndex(cache / name / "index.db")
    vault = Vault(root)
    cfg = load_config(root)
    cfg.project = f"recall-rank-{name}"
    svc = Service(vault, cfg, idx)
    try:
        idx.clear(cfg.project)
        reindex(vault, idx, cfg.project, main_branch="main")
        _, problem = svc.embed_missing()
        if problem:
            raise SystemExit(f"embedding failed: {problem}")
        yield svc
    finally:
        idx.close()


def evaluate(
    svc: Service,
    emb: Any,
    queries: Sequence[devset.Query],
    limit: int = 5,
    ranks: dict[str, dict[str, int | None]] | None = None,
    as_recall: bool = False,
) -> dict[tuple[str, str], list[int]]:
    """{(mode, kind): [queries, hits@1, hits@3, hits@5]}; kind "all" pools every query. ``ranks``
    collects {mode: {query: rank of the first target (1-based) or None}}. ``as_recall``: in hybrid
    mode each query ranks with the fusion recipe prompt recall would use for it
    (``engine.prompt_recipe``: long prompts that are not questions rank with
    ``fusion.LONG_PROMPT``), not the search's default."""
    from ccmemory.features.recall import engine

    ids = devset.keys()
    f = Filters(project=svc.project, viewer=svc.viewer)
    out: dict[tuple[str, str], list[int]] = {}
    for mode in MODES:
        for q in queries:
            recall = as_recall and mode == "hybrid"  # prompt recall ranks in text or hybrid mode only
            recipe = engine.prompt_recipe(q.text, engine.content_terms(q.text)) if recall else None
            resp = search(
                svc.index, q.text, f, limit=limit, mode=mode, embedder=emb, now=devbench.NOW, recipe=recipe
            )
            got = [h.memory.id for h in resp.hits]
            want = {ids[t] for t in q.targets}
            if ranks is not None:
                first = next((i for i, mid in enumerate(got, 1) if mid in want), None)
                ranks.setdefault(mode, {})[q.text] = first
            for kind in (q.kind, "all"):
                row = out.setdefault((mode, kind), [0] * (1 + len(KS)))
                row[0] += 1
                for i, k in enumerate(KS, 1):
                    row[i] += bool(want & set(got[:k]))
    return out


def report(name: str, res: dict[tuple[str, str], list[int]]) -> list[str]:
    kinds = sorted({k for _, k in res}, key=lambda k: (k == "all", k))
    lines = []
    for kind in kinds:
        for mode in ("text", "semantic", "hybrid"):
            n, *hits = res[(mode, kind)]
            cells = " | ".join(f"{h / n:.3f}" for h in hits)
            lines.append(f"| {name} | {kind} ({n}) | {mode} | {cells} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--set", action="append", help=f"a dev set (default: {', '.join(TUNING_SETS)} when present)"
    )
    ap.add_argument("--split", default="T", choices=("T", "H"))
    ap.add_argument("--heldout", action="store_true", help="allow held-out data (the lead's final run only)")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/ccmemory-recall-rank"))
    ap.add_argument(
        "--as-recall",
        action="store_true",
        help="rank each line with the fusion recipe prompt recall uses for it (engine.prompt_recipe)",
    )
    ap.add_argument("--dump", type=Path, help="write each query's target rank per mode (JSON) here")
    args = ap.parse_args()
    sets = args.set or [s for s in TUNING_SETS if s == "main" or (devset.HERE / s).is_dir()]
    if not args.heldout and any(held_out(s, args.split) for s in sets):
        raise SystemExit(
            "held-out data (blind, or a recall set not yet tuning data): pass --heldout (final run only)"
        )
    lines = ["| set | kind (queries) | mode | hit@1 | @3 | @5 |", "|---|---|---|---|---|---|"]
    pooled: dict[tuple[str, str], list[int]] = {}
    ranks: dict[str, dict[str, dict[str, int | None]]] = {}
    t0 = time.monotonic()
    try:
        for name in sets:
            select(name)
            queries = load(args.split)
            if not queries:
                print(f"{name}: no {args.split} queries", file=sys.stderr)
                continue
            with cached_index(name, args.cache) as svc:
                res = evaluate(
                    svc,
                    devbench.CachedQueries(svc.embedder()),
                    queries,
                    ranks=ranks.setdefault(name, {}),
                    as_recall=args.as_recall,
                )
            lines += report(name, res)
            for (mode, kind), row in res.items():
                if kind == "all":
                    acc = pooled.setdefault((mode, kind), [0] * len(row))
                    pooled[(mode, kind)] = [a + r for a, r in zip(acc, row, strict=True)]
    finally:
        devset.select("main")
    if len(sets) > 1 and pooled:
        lines += report("pooled", pooled)
    if args.dump:
        args.dump.write_text(json.dumps(ranks, indent=1, sort_keys=True) + "\n")
    print(f"split {args.split}, NOW={devbench.NOW:%Y-%m-%d}, {time.monotonic() - t0:.0f} s")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
