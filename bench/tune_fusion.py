"""Pick the fusion recipe on the tuning halves of both sets together, ranked through the product.

    .venv/bin/python bench/tune_fusion.py [--quick | --confidence | --shipped]

Tuning data: the dev sets' tuning queries (Ledgerly's tuning half and the Quillpad set,
bench/memories/tuning2; hit@3 pooled) and LoCoMo conversations 0-4 (hit@10), all ranked by
``ccmemory.retrieval.search.search`` over real SQLite indexes. Held-out halves and the blind set are
not looked at here: ``bench/memories/run.py`` and ``bench/locomo/run.py`` report them for the
recipe the product ships. The objective is the mean of the two tuning scores, subject to hybrid
being at least as good as each single signal on both.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE / "memories"), str(HERE / "locomo")]

import devset  # noqa: E402
import product  # noqa: E402
import run as devbench  # noqa: E402
from run import evaluate as dev_evaluate  # noqa: E402

from ccmemory.text import fusion  # noqa: E402


def candidates(quick: bool) -> list[fusion.FusionRecipe]:
    """The shipped recipe, then score fusion of the calibrated text score (``raw``, see
    ccmemory.text.bm25) with raw cosine or min-max cosine, then the min-max and RRF recipes of before."""
    out: list[fusion.FusionRecipe] = [fusion.DEFAULT]
    weights = (0.5, 1.0, 1.5, 2.0) if quick else (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)
    for w in weights:
        for vnorm in ("raw", "minmax"):
            out.append(
                fusion.FusionRecipe(
                    method="score", normalisation="raw", vector_normalisation=vnorm, vector_weight=w
                )
            )
    for w in (0.5, 1.0) if quick else (0.5, 1.0, 1.5):
        out.append(fusion.FusionRecipe(method="score", normalisation="minmax", vector_weight=w))
        out.append(fusion.FusionRecipe(method="rrf", rrf_k=5.0, vector_weight=w))
    return list(dict.fromkeys(out))


def confidence_grid() -> list[fusion.FusionRecipe]:
    """Min-max score fusion with the text list scaled by its best calibrated score
    (``text_confidence``, none = off) at three vector weights: the grid the shipped recipe
    was picked from (bench/RESULTS-retrieval.md, 2026-11-24)."""
    out = []
    for w in (0.5, 0.75, 1.0):
        for conf in (None, 0.3, 0.4, 0.5, 0.6, 0.7):
            out.append(
                fusion.FusionRecipe(
                    method="score", normalisation="minmax", vector_weight=w, text_confidence=conf
                )
            )
    return out


def parse(spec: str) -> list[fusion.FusionRecipe]:
    """Score recipes 'tnorm/vnorm:weight[@text_confidence]', comma-separated."""
    out = []
    for item in spec.split(","):
        norms, weight = item.split(":")
        weight, _, conf = weight.partition("@")
        tnorm, vnorm = norms.split("/")
        out.append(
            fusion.FusionRecipe(
                method="score",
                normalisation=tnorm,  # type: ignore[arg-type]
                vector_normalisation=vnorm,  # type: ignore[arg-type]
                vector_weight=float(weight),
                text_confidence=float(conf) if conf else None,
            )
        )
    return out


DEV_SETS = ("main", "tuning2")  # Ledgerly's tuning half and Quillpad (all tuning); never blind


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--confidence", action="store_true", help="only the text-confidence grid")
    ap.add_argument("--shipped", action="store_true", help="only the shipped recipe (fusion.DEFAULT)")
    ap.add_argument(
        "--recipes",
        help="only these score recipes, e.g. 'raw/raw:0.35,minmax/minmax:0.5@0.4'"
        " (text norm/vector norm:vector weight[@text confidence])",
    )
    args = ap.parse_args()
    loc = _locomo()
    convs, _ = loc.load(loc.DEFAULT_DATA)
    cache = loc.VectorCache(loc.DEFAULT_CACHE, loc.LocalMiniLM())
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        dev = []  # (set name, service, query embedder, tuning queries) per dev set
        for name in DEV_SETS:
            devset.select(name)
            root = Path(tmp) / name
            devset.make_repo(root)
            queries = [q for q in devset.load_queries() if q.split == "T"]
            svc, _idx = stack.enter_context(devbench.indexed(root, "sqlite"))
            dev.append((name, svc, devbench.CachedQueries(svc.embedder()), queries))
        devset.select("main")
        indexed = product.build(
            [convs[i] for i in loc.TUNE], cache, loc.DOC_FORMATS["speaker"], Path(tmp) / "loc"
        )

        def dev_score(recipe: fusion.FusionRecipe | None, mode: str) -> list[float]:
            """hit@1/3/5 pooled over every tuning query of the dev sets."""
            total, n = [0.0, 0.0, 0.0], 0
            for name, svc, emb, queries in dev:
                devset.select(name)  # evaluate() maps target keys through the selected set
                res = dev_evaluate(svc, emb, queries, recipe)[(mode, "T")]
                total = [t + r * len(queries) for t, r in zip(total, res, strict=True)]
                n += len(queries)
            return [t / n for t in total]

        base_dev = {m: dev_score(None, m) for m in ("text", "semantic")}
        base_loc = product.evaluate(indexed, range(len(indexed)), (1, 5, 10))
        nq = sum(len(q) for *_, q in dev)
        print(
            f"dev tuning queries: {nq} ({', '.join(DEV_SETS)}); singles dev hit@3 text"
            f" {base_dev['text'][1]:.3f} sem {base_dev['semantic'][1]:.3f}"
            f" | LoCoMo 0-4 hit@10 text {base_loc['text'][2]:.3f} sem {base_loc['semantic'][2]:.3f}"
        )
        best_dev = max(base_dev["text"][1], base_dev["semantic"][1])
        best_loc = max(base_loc["text"][2], base_loc["semantic"][2])
        rows = []
        grid = confidence_grid() if args.confidence else candidates(args.quick)
        if args.shipped:
            grid = [fusion.DEFAULT]
        for recipe in parse(args.recipes) if args.recipes else grid:
            d = dev_score(recipe, "hybrid")
            lo = product.evaluate(indexed, range(len(indexed)), (1, 5, 10), recipe, modes=("hybrid",))[
                "hybrid"
            ]
            ok = d[1] >= best_dev and lo[2] >= best_loc
            rows.append(((d[1] + lo[2]) / 2, ok, d, lo, recipe))
            print(
                f"{(d[1] + lo[2]) / 2:.4f} {'ok ' if ok else 'LOW'} dev@1/3 {d[0]:.3f} {d[1]:.3f}"
                f" loc@1/5/10 {lo[0]:.3f} {lo[1]:.3f} {lo[2]:.3f}  {recipe}",
                flush=True,
            )
        for ic in indexed:
            ic.close()
    rows.sort(key=lambda r: (not r[1], -r[0], -r[2][0], -r[3][0]))
    print("\nbest:", rows[0][4])


def _locomo():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("locomo_run", HERE / "locomo" / "run.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["locomo_run"] = mod
    spec.loader.exec_module(mod)
    return mod


if __name__ == "__main__":
    main()
