"""LoCoMo turn-level evidence retrieval: full-text, semantic and hybrid, hit@1/5/10.

    .venv/bin/python bench/locomo/run.py [--data ../shared/bench/locomo/locomo10.json]
        [--cache ~/.cache/ccmemory-bench/vectors.sqlite] [--sweep] [--baseline]

Data: LoCoMo (snap-research/LoCoMo, CC BY-NC 4.0), read from where it lies, never copied.
Each turn of a conversation is one document (indexed per conversation); each question of
category 1-4 with at least one evidence id that names a real turn is one query; hit@k counts
a question when any of its evidence turns is among the first k results.

Text: SQLite FTS5 bm25 in an in-memory database, query words quoted and OR-ed
(``ccmemory.text.fusion.fts5_match``). Semantic: ``ccmemory.retrieval.embed.LocalMiniLM``, cosine.
Hybrid: ``ccmemory.text.fusion``. Tuning (``--sweep``) only looks at conversations 0-4; results
are reported on 0-4, 5-9 and all ten.

Vectors are cached in a SQLite file keyed by (embedder name, sha256 of the text), outside
the repository (they are derived from the non-commercial data).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ccmemory.retrieval.embed import LocalMiniLM
from ccmemory.text import fusion

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[2] / "shared" / "bench" / "locomo" / "locomo10.json"
DEFAULT_CACHE = Path.home() / ".cache" / "ccmemory-bench" / "vectors.sqlite"
KS = (1, 5, 10)
TUNE = range(0, 5)
HOLD = range(5, 10)


# --------------------------------------------------------------------------- data


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str
    session: int
    date: str


@dataclass
class Question:
    text: str
    category: int
    evidence: set[int]  # turn indices


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question] = field(default_factory=list)


_EVID = re.compile(r"D:?(\d+):(\d+)")


def normalise_evidence(raw: Iterable[str]) -> set[str]:
    """``["D8:6; D9:17", "D:11:26", "D30:05"]`` -> ``{"D8:6", "D9:17", "D11:26", "D30:5"}``."""
    out = set()
    for item in raw:
        for sess, turn in _EVID.findall(str(item)):
            out.add(f"D{int(sess)}:{int(turn)}")
    return out


def load(path: Path) -> tuple[list[Conversation], dict[str, int]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    convs = []
    stats = {"questions_1_4": 0, "no_valid_evidence": 0, "unmatched_ids": 0}
    for item in data:
        c = item["conversation"]
        turns: list[Turn] = []
        n = 1
        while f"session_{n}" in c:
            date = c.get(f"session_{n}_date_time", "")
            for t in c[f"session_{n}"]:
                dia = t["dia_id"]
                m = _EVID.fullmatch(dia)
                dia = f"D{int(m.group(1))}:{int(m.group(2))}" if m else dia
                turns.append(Turn(dia, t["speaker"], t["text"], t.get("blip_caption") or "", n, date))
            n += 1
        index = {t.dia_id: i for i, t in enumerate(turns)}
        conv = Conversation(item.get("sample_id", f"conv-{len(convs)}"), turns)
        for qa in item["qa"]:
            if qa["category"] not in (1, 2, 3, 4):
                continue
            stats["questions_1_4"] += 1
            ids = normalise_evidence(qa.get("evidence", []))
            stats["unmatched_ids"] += sum(1 for i in ids if i not in index)
            evidence = {index[i] for i in ids if i in index}
            if not evidence:
                stats["no_valid_evidence"] += 1
                continue
            conv.questions.append(Question(qa["question"], qa["category"], evidence))
        convs.append(conv)
    return convs, stats


# --------------------------------------------------------------------------- text retrieval


@dataclass(frozen=True)
class TextConfig:
    tokenizer: str = "porter unicode61"
    stopwords: bool = True
    speaker: bool = True  # speaker name as its own column
    caption: bool = True  # image caption as its own column
    context: int = 2  # neighbouring turns (each side, same session) as a context column
    w_text: float = 1.0
    w_speaker: float = 1.0
    w_caption: float = 1.0
    w_context: float = 0.5
    limit: int = 200


def text_scores(conv: Conversation, cfg: TextConfig) -> list[dict[int, float]]:
    """Per question: {turn index: -bm25} (higher = better) for the matching turns."""
    db = sqlite3.connect(":memory:")
    db.execute(
        f"CREATE VIRTUAL TABLE t USING fts5(body, speaker, caption, context, tokenize = '{cfg.tokenizer}')"
    )
    rows = []
    for i, turn in enumerate(conv.turns):
        ctx = []
        for j in range(i - cfg.context, i + cfg.context + 1):
            if j != i and 0 <= j < len(conv.turns) and conv.turns[j].session == turn.session:
                ctx.append(conv.turns[j].text)
        rows.append(
            (
                i + 1,
                turn.text,
                turn.speaker if cfg.speaker else "",
                turn.caption if cfg.caption else "",
                " ".join(ctx),
            )
        )
    db.executemany("INSERT INTO t(rowid, body, speaker, caption, context) VALUES (?,?,?,?,?)", rows)
    out = []
    sql = (
        f"SELECT rowid, bm25(t, {cfg.w_text}, {cfg.w_speaker}, {cfg.w_caption}, {cfg.w_context}) "
        "AS s FROM t WHERE t MATCH ? ORDER BY s LIMIT ?"
    )
    for q in conv.questions:
        match = fusion.fts5_match(q.text, stopwords=cfg.stopwords)
        if not match:
            out.append({})
            continue
        out.append({rowid - 1: -s for rowid, s in db.execute(sql, (match, cfg.limit))})
    db.close()
    return out


# --------------------------------------------------------------------------- semantic


class VectorCache:
    def __init__(self, path: Path, embedder: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS v (embedder TEXT, hash TEXT, vec BLOB, PRIMARY KEY (embedder, hash))"
        )
        self.embedder = embedder

    def embed(self, texts: Sequence[str], kind: str = "document") -> np.ndarray:
        name = self.embedder.name
        hashes = [hashlib.sha256(f"{kind}\0{t}".encode()).hexdigest() for t in texts]
        have: dict[str, np.ndarray] = {}
        for chunk in range(0, len(hashes), 500):
            part = hashes[chunk : chunk + 500]
            marks = ",".join("?" * len(part))
            for h, blob in self.db.execute(
                f"SELECT hash, vec FROM v WHERE embedder = ? AND hash IN ({marks})", [name, *part]
            ):
                have[h] = np.frombuffer(blob, dtype="<f4")
        todo = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in have}.items())
        if todo:
            t0 = time.perf_counter()
            vecs = self.embedder.embed([t for _, t in todo], kind)  # type: ignore[arg-type]
            print(
                f"  embedded {len(todo)} texts in {time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
            self.db.executemany(
                "INSERT OR REPLACE INTO v VALUES (?, ?, ?)",
                [(name, h, v.astype("<f4").tobytes()) for (h, _), v in zip(todo, vecs, strict=True)],
            )
            self.db.commit()
            for (h, _), v in zip(todo, vecs, strict=True):
                have[h] = v
        return np.stack([have[h] for h in hashes]).astype(np.float32)


DOC_FORMATS: dict[str, Callable[[Turn, Turn | None], str]] = {
    "text": lambda t, prev: t.text,
    "speaker": lambda t, prev: (
        f"{t.speaker}: {t.text}" + (f" [shares a photo of {t.caption}]" if t.caption else "")
    ),
    "prev": lambda t, prev: (
        (f"{prev.speaker}: {prev.text}\n" if prev else "")
        + f"{t.speaker}: {t.text}"
        + (f" [shares a photo of {t.caption}]" if t.caption else "")
    ),
}


@dataclass(frozen=True)
class SemConfig:
    doc: str = "speaker"
    query_prefix: str = ""
    neighbour: float = 0.0  # add this share of the mean cosine of same-session neighbours


def semantic_scores(conv: Conversation, cfg: SemConfig, cache: VectorCache) -> np.ndarray:
    """(n_questions, n_turns) cosine matrix."""
    docs = []
    for i, t in enumerate(conv.turns):
        prev = conv.turns[i - 1] if i > 0 and conv.turns[i - 1].session == t.session else None
        docs.append(DOC_FORMATS[cfg.doc](t, prev))
    d = cache.embed(docs, "document")
    q = cache.embed([cfg.query_prefix + qq.text for qq in conv.questions], "query")
    sims = q @ d.T
    if cfg.neighbour > 0:
        sims = sims + cfg.neighbour * neighbour_mean(sims, conv)
    return sims


def neighbour_mean(sims: np.ndarray, conv: Conversation) -> np.ndarray:
    """For each turn, the mean score of its previous and next turn in the same session."""
    sess = np.array([t.session for t in conv.turns])
    prev = np.zeros_like(sims)
    nxt = np.zeros_like(sims)
    same_prev = np.r_[False, sess[1:] == sess[:-1]]
    same_next = np.r_[sess[:-1] == sess[1:], False]
    prev[:, 1:] = sims[:, :-1]
    nxt[:, :-1] = sims[:, 1:]
    prev[:, ~same_prev] = 0
    nxt[:, ~same_next] = 0
    count = same_prev.astype(float) + same_next.astype(float)
    return (prev + nxt) / np.maximum(count, 1)


# --------------------------------------------------------------------------- fusion + eval


@dataclass(frozen=True)
class HybridConfig:
    method: str = "rrf"  # rrf | score
    k: float = 60.0
    w_text: float = 1.0
    w_sem: float = 1.0
    norm: str = "minmax"
    candidates: int = 100
    neighbour: float = 0.0  # add this share of the best same-session neighbour's fused score


def smooth(scores: dict[int, float], conv: Conversation, alpha: float) -> dict[int, float]:
    if alpha <= 0:
        return scores
    out = dict(scores)
    for i, s in scores.items():
        for j in (i - 1, i + 1):
            if 0 <= j < len(conv.turns) and conv.turns[j].session == conv.turns[i].session:
                out[j] = out.get(j, 0.0) + alpha * s
    return out


def recipe(cfg: HybridConfig) -> fusion.FusionRecipe:
    return fusion.FusionRecipe(
        method="rrf" if cfg.method == "rrf" else "score",
        rrf_k=cfg.k,
        text_weight=cfg.w_text,
        vector_weight=cfg.w_sem,
        normalisation=cfg.norm,  # type: ignore[arg-type]
        candidates=cfg.candidates,
    )


def hybrid_rank(
    text: dict[int, float], sem_row: np.ndarray, conv: Conversation, cfg: HybridConfig
) -> list[int]:
    """Fuse through ccmemory.text.fusion.FusionRecipe, exactly as the product does."""
    top = np.argsort(-sem_row)[: cfg.candidates]
    sem = {int(i): float(sem_row[i]) for i in top}
    fused = dict(recipe(cfg).fuse(text, sem))
    fused = smooth(fused, conv, cfg.neighbour)
    return fusion.ranking(fused)[:10]


def hits(rankings: list[list[int]], questions: list[Question]) -> np.ndarray:
    """(n_questions, len(KS)) 0/1 matrix."""
    out = np.zeros((len(questions), len(KS)))
    for qi, (r, q) in enumerate(zip(rankings, questions, strict=True)):
        for ki, k in enumerate(KS):
            out[qi, ki] = any(i in q.evidence for i in r[:k])
    return out


@dataclass
class Scored:
    text: list[list[dict[int, float]]]  # per conv, per question
    sem: list[np.ndarray]  # per conv


def evaluate(
    convs: list[Conversation], scored: Scored, hcfg: HybridConfig, which: Iterable[int]
) -> dict[str, np.ndarray]:
    res: dict[str, list[np.ndarray]] = {"text": [], "semantic": [], "hybrid": []}
    for ci in which:
        conv = convs[ci]
        t_r = [fusion.ranking(s)[:10] for s in scored.text[ci]]
        s_r = [list(np.argsort(-row)[:10]) for row in scored.sem[ci]]
        h_r = [
            hybrid_rank(scored.text[ci][qi], scored.sem[ci][qi], conv, hcfg)
            for qi in range(len(conv.questions))
        ]
        res["text"].append(hits(t_r, conv.questions))
        res["semantic"].append(hits(s_r, conv.questions))
        res["hybrid"].append(hits(h_r, conv.questions))
    return {m: np.concatenate(v).mean(axis=0) for m, v in res.items()}


def score_all(convs: list[Conversation], tcfg: TextConfig, scfg: SemConfig, cache: VectorCache) -> Scored:
    return Scored(
        [text_scores(c, tcfg) for c in convs],
        [semantic_scores(c, scfg, cache) for c in convs],
    )


def fmt(v: np.ndarray) -> str:
    return " | ".join(f"{x:.3f}" for x in v)


def table(convs: list[Conversation], scored: Scored, hcfg: HybridConfig) -> str:
    splits = {"conv 0-4 (tuning)": TUNE, "conv 5-9 (held out)": HOLD, "all ten": range(10)}
    lines = [
        "| retriever | split | questions | hit@1 | hit@5 | hit@10 |",
        "|---|---|---|---|---|---|",
    ]
    for mode in ("text", "semantic", "hybrid"):
        for name, rng in splits.items():
            r = evaluate(convs, scored, hcfg, rng)
            nq = sum(len(convs[i].questions) for i in rng)
            lines.append(f"| {mode} | {name} | {nq} | {fmt(r[mode])} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- sweep


def sweep(convs: list[Conversation], cache: VectorCache, base: tuple) -> None:
    """Greedy one-factor-at-a-time search on conversations 0-4 only."""
    tcfg, scfg, hcfg = base
    tune = [convs[i] for i in TUNE]

    def run(t: TextConfig, s: SemConfig, h: HybridConfig) -> dict[str, np.ndarray]:
        sc = score_all(tune, t, s, cache)
        return evaluate(tune, sc, h, range(len(tune)))

    def show(label: str, r: dict[str, np.ndarray]) -> None:
        print(
            f"{label:60s} text {fmt(r['text'])} | sem {fmt(r['semantic'])} | hyb {fmt(r['hybrid'])}",
            flush=True,
        )

    show("base", run(tcfg, scfg, hcfg))
    for name, values in [
        ("tokenizer", ["unicode61", "porter unicode61"]),
        ("stopwords", [False, True]),
        ("context", [0, 1, 2]),
        ("w_context", [0.1, 0.3, 0.5]),
        ("w_speaker", [0.0, 0.5, 1.0]),
    ]:
        for v in values:
            show(f"text {name}={v}", run(replace(tcfg, **{name: v}), scfg, hcfg))
    for doc in DOC_FORMATS:
        show(f"sem doc={doc}", run(tcfg, replace(scfg, doc=doc), hcfg))
    sc = score_all(tune, tcfg, scfg, cache)
    for method, k, wt, ws, nb in itertools.product(["rrf"], [10, 30, 60], [1.0], [0.5, 1.0, 1.5], [0.0, 0.3]):
        h = replace(hcfg, method=method, k=k, w_text=wt, w_sem=ws, neighbour=nb)
        show(f"hyb {h}", evaluate(tune, sc, h, range(len(tune))))
    for norm, ws, nb in itertools.product(["minmax", "zscore"], [0.5, 1.0, 2.0], [0.0, 0.3]):
        h = replace(hcfg, method="score", norm=norm, w_sem=ws, neighbour=nb)
        show(f"hyb {h}", evaluate(tune, sc, h, range(len(tune))))


# --------------------------------------------------------------------------- main

BASELINE = (
    TextConfig(stopwords=False, speaker=False, caption=False, context=0),
    SemConfig(doc="text"),
    HybridConfig(method="rrf", k=60, candidates=100),
)
#: The recipe picked on conversations 0-4 (see RESULTS.md); the product's fusion.DEFAULT.
BEST = (
    TextConfig(),
    SemConfig(doc="speaker"),
    HybridConfig(method="score", norm="minmax", w_text=1.0, w_sem=0.5, candidates=100),
)


def ablation_configs() -> list[tuple[str, tuple[TextConfig, SemConfig, HybridConfig]]]:
    t0, s0, h0 = BASELINE
    t1 = replace(t0, stopwords=True)
    t2 = replace(t1, speaker=True, caption=True)
    s2 = replace(s0, doc="speaker")
    t3 = replace(t2, context=2, w_context=0.5)
    h4 = replace(h0, k=5, w_sem=0.5)
    tb, sb, hb = BEST
    return [
        ("naive: bm25 porter, OR of all words; cosine on turn text; RRF k=60", (t0, s0, h0)),
        ("+ stopwords dropped from the bm25 query", (t1, s0, h0)),
        ("+ speaker (and image caption) indexed; vectors of 'Speaker: text'", (t2, s2, h0)),
        ("+ 2 neighbouring turns as a bm25 context column (weight 0.5)", (t3, s2, h0)),
        ("+ weighted RRF: k=5, vector weight 0.5", (t3, s2, h4)),
        ("= instead: min-max score fusion, vector weight 0.5 (BEST)", BEST),
        ("BEST but RRF k=60 equal weights", (tb, sb, replace(hb, method="rrf", k=60, w_sem=1.0))),
        ("BEST but z-score normalisation", (tb, sb, replace(hb, norm="zscore"))),
        ("BEST but vector weight 1.0", (tb, sb, replace(hb, w_sem=1.0))),
        ("BEST without image captions", (replace(tb, caption=False), sb, hb)),
        ("BEST with 3 context turns", (replace(tb, context=3), sb, hb)),
        ("BEST + cosine smoothed with neighbours (0.3)", (tb, replace(sb, neighbour=0.3), hb)),
        ("BEST + fused score spread to neighbours (0.1)", (tb, sb, replace(hb, neighbour=0.1))),
    ]


def ablation(convs: list[Conversation], cache: VectorCache) -> None:
    """Hybrid hit@1/5/10 of each step, on every split (the table in RESULTS.md)."""
    splits = (TUNE, HOLD, range(10))
    print("| configuration | 0-4 hit@1/5/10 | 5-9 hit@1/5/10 | all hit@1/5/10 |")
    print("|---|---|---|---|")
    for label, (t, s, h) in ablation_configs():
        scored = score_all(convs, t, s, cache)
        cells = [evaluate(convs, scored, h, rng)["hybrid"] for rng in splits]
        print(f"| {label} | " + " | ".join(" / ".join(f"{x:.3f}" for x in c) for c in cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--sweep", action="store_true", help="tune on conversations 0-4")
    ap.add_argument("--baseline", action="store_true", help="the naive configuration")
    ap.add_argument("--ablation", action="store_true", help="hybrid, step by step")
    ap.add_argument(
        "--harness",
        action="store_true",
        help="the old in-memory FTS5 harness (its own table and columns) instead of the product",
    )
    ap.add_argument(
        "--float-graph",
        action="store_true",
        help="run the model file as published (float inference) instead of the int8 rewrite",
    )
    ap.add_argument(
        "--embedder",
        default="minilm",
        help="minilm (the product default) or a candidate of bench/embedders.py (e5-small-q4)",
    )
    args = ap.parse_args()

    convs, stats = load(args.data)
    nq = sum(len(c.questions) for c in convs)
    print(f"data: {args.data} (LoCoMo, snap-research/LoCoMo, CC BY-NC 4.0)")
    print(
        f"{len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns, {nq} questions "
        f"(categories 1-4: {stats['questions_1_4']}, without a valid evidence turn: "
        f"{stats['no_valid_evidence']}, unmatched evidence ids: {stats['unmatched_ids']})"
    )
    embedder: Any = LocalMiniLM(integer=not args.float_graph)
    if args.embedder != "minilm":
        sys.path.insert(0, str(HERE.parent))
        import embedders

        embedder = embedders.get(args.embedder)
    print(f"embedder: {embedder.name}")
    cache = VectorCache(args.cache, embedder)
    if args.sweep:
        sweep(convs, cache, BEST)
        return
    if args.ablation:
        ablation(convs, cache)
        return
    if not args.harness and not args.baseline:
        product_table(convs, cache)
        return
    tcfg, scfg, hcfg = BASELINE if args.baseline else BEST
    print(f"text: {tcfg}\nsemantic: {scfg}\nhybrid: {recipe(hcfg)}")
    if not args.baseline:
        print(f"same as ccmemory.text.fusion.DEFAULT: {recipe(hcfg) == fusion.DEFAULT}")
    print()
    scored = score_all(convs, tcfg, scfg, cache)
    print(table(convs, scored, hcfg))


def product_table(convs: list[Conversation], cache: VectorCache) -> None:
    """hit@1/5/10 ranked by ccmemory.retrieval.search over a real index per conversation (bench/locomo/product.py)."""
    import product

    print(f"product ranking: ccmemory.retrieval.search.search, fusion.DEFAULT = {fusion.DEFAULT}\n")
    with product.tempdir() as tmp:
        indexed = product.build(convs, cache, DOC_FORMATS["speaker"], Path(tmp))
        splits = {"conv 0-4 (tuning)": TUNE, "conv 5-9 (held out)": HOLD, "all ten": range(10)}
        print("| retriever | split | questions | hit@1 | hit@5 | hit@10 |")
        print("|---|---|---|---|---|---|")
        res = {name: product.evaluate(indexed, rng, KS) for name, rng in splits.items()}
        for mode in product.MODES:
            for name, rng in splits.items():
                nq = sum(len(convs[i].questions) for i in rng)
                print(f"| {mode} | {name} | {nq} | {fmt(res[name][mode])} |")
        for ic in indexed:
            ic.close()


if __name__ == "__main__":
    main()
