"""Session search quality (issue 28): build session records from a set of synthetic transcripts in
a temporary repository, then ask each paraphrase query and check where the right session ranks.

Data: `bench/sessions/<split>/` (written blind by another author, see bench/sessions/README.md).
The loader accepts, per split, transcript files `*.jsonl` anywhere under the split folder and one
queries file (`queries.jsonl`, one JSON object a line, or `queries.json`, a list of objects); a
query object names its text (`query`, `q` or `text`) and its session (`session`, `session_id`,
`expected`, `answer` or `target`: a session id, or a transcript's file name / stem).

    python bench/sessions_bench.py [--split dev] [--data bench/sessions] [--json]

Reports hit@1 / hit@3 (the right session first / in the top 3) and the misses. The records are
built exactly as `ccmemory import` builds them (ccmemory.features.capture.sessionrec) and ranked by
the CLI's own search (ccmemory.features.sessions.service.search_sessions).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUERY_KEYS = ("query", "q", "text")
TARGET_KEYS = ("session", "session_id", "expected", "answer", "target")


def load_queries(split_dir: Path) -> list[dict[str, Any]]:
    for name in ("queries.jsonl", "queries.json"):
        path = split_dir / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        if name.endswith(".jsonl"):
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
            rows = data["queries"] if isinstance(data, dict) else data
        out = []
        for row in rows:
            q = next((row[k] for k in QUERY_KEYS if isinstance(row.get(k), str)), None)
            t = next((row[k] for k in TARGET_KEYS if isinstance(row.get(k), str)), None)
            if q and t:
                out.append({"query": q, "target": t})
        return out
    raise SystemExit(f"{split_dir}: no queries.jsonl or queries.json")


def transcripts(split_dir: Path) -> list[Path]:
    return sorted(p for p in split_dir.rglob("*.jsonl") if not p.name.startswith("queries"))


def _secret_shapes(root: Path) -> int:
    """Records in which the redactor still finds something (0 when redaction held)."""
    from ccmemory.core.redact import find_secrets
    from ccmemory.features.sessions.store import sessions_dir

    return sum(1 for p in sessions_dir(root).glob("*.json") if find_secrets(p.read_text(encoding="utf-8")))


def run(split_dir: Path, *, semantic: bool = True) -> dict[str, Any]:
    from ccmemory.app.vaultinit import init_vault
    from ccmemory.features.capture.sessionrec import from_transcript
    from ccmemory.features.sessions.service import search_sessions

    queries = load_queries(split_dir)
    files = transcripts(split_dir)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        init_vault(root)
        alias: dict[str, str] = {}
        t0 = time.perf_counter()
        for f in files:
            rec, _ = from_transcript(root, f)
            if rec is not None:
                for key in (f.name, f.stem, rec["id"]):
                    alias[key] = rec["id"]
        build_s = time.perf_counter() - t0
        leaks = _secret_shapes(root)
        hits1 = hits3 = 0
        misses = []
        notice = None
        t0 = time.perf_counter()
        for q in queries:
            want = alias.get(q["target"], q["target"])
            rows, notice = search_sessions(root, q["query"], limit=3, semantic=semantic)
            ids = [r["id"] for r in rows]
            hits1 += bool(ids[:1] == [want])
            hits3 += want in ids
            if want not in ids[:1]:
                misses.append({"query": q["query"], "want": want, "got": ids})
        search_ms = (time.perf_counter() - t0) * 1000 / max(1, len(queries))
    n = max(1, len(queries))
    return {
        "split": split_dir.name,
        "sessions": len(set(alias.values())),
        "queries": len(queries),
        "hit@1": round(hits1 / n, 3),
        "hit@3": round(hits3 / n, 3),
        "build_seconds": round(build_s, 2),
        "search_ms_per_query": round(search_ms, 1),
        "records_with_secret_shapes": leaks,
        "mode": "hybrid" if semantic and not notice else "text (BM25) only",
        "notice": notice,
        "misses": misses,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "sessions")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--text-only", action="store_true", help="BM25 only (no embedder)")
    args = ap.parse_args()
    split_dir = args.data / args.split
    if not split_dir.is_dir():
        print(f"{split_dir}: no such split (see bench/sessions/README.md)", file=sys.stderr)
        return 1
    res = run(split_dir, semantic=not args.text_only)
    if args.json:
        print(json.dumps(res, indent=2, ensure_ascii=False))
        return 0
    print(
        f"split {res['split']} ({res['mode']}): {res['sessions']} sessions, {res['queries']} queries: "
        f"hit@1 {res['hit@1']:.3f}, hit@3 {res['hit@3']:.3f} "
        f"(records built in {res['build_seconds']} s, {res['search_ms_per_query']} ms a query; "
        f"records with a secret shape left: {res['records_with_secret_shapes']})"
    )
    for m in res["misses"]:
        print(f"  miss@1: {m['query']!r} want {m['want']} got {m['got']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
