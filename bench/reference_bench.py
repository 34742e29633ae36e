"""Reference retrieval quality: hit@1/hit@3 per section on hand-written queries, and the
extraction comparison behind ccmemory/reference/extract.py.

    .venv/bin/python bench/reference_bench.py [--neo4j] [--extract]

Quality: tests/data/reference_tree (33 concept files written for this) is indexed into a fresh
SQLite index (and with --neo4j into the dev Neo4j server from scripts/neo4j-dev, which this
script starts and stops); each query in tests/data/reference_queries.json names the one section
that answers it. Modes: text (bm25 / Lucene), semantic (local MiniLM), hybrid (fusion.DEFAULT).
'tune' queries were looked at while building; 'heldout' ones were not used to change code.

--extract: readability-lxml + markdownify (the one kept) against trafilatura (needs
`pip install trafilatura`; not a dependency) on the saved pages in tests/data/reference_html:
for each page, which content markers survive and which boilerplate markers leak.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ccmemory.features.reference.search import search_reference  # noqa: E402

DATA = ROOT / "tests" / "data"

# content that must survive (headings, list items, code, table rows) / boilerplate that must not
PAGES: dict[str, tuple[list[str], list[str]]] = {
    "jwt-guide.html": (
        [
            "# JSON Web Tokens",
            "## Structure of a token",
            "## Registered claims",
            "### Clock skew",
            "| exp | Expiry time",
            "**Header**",
            "Accepting the `none` algorithm",
            'algorithms=["RS256"]',
            "import jwt\n\ndef verify",
            "```",
        ],
        [
            "Accept all cookies",
            "Sponsored",
            "Pricing",
            "Sign in",
            "newsletter",
            "All rights reserved",
            "You might also like",
            "dataLayer",
            "Share this article",
            "OAuth 2.0 flows",
            "12 min read",
        ],
    ),
    "sqlite-wal.html": (
        [
            "# Write-Ahead Logging in SQLite",
            "## Checkpoints",
            "| PASSIVE | no | no |",
            "PRAGMA journal_mode = WAL;",
            "```",
            "> WAL mode is persistent",
            "network filesystem",
        ],
        ["Donate", "Managed Postgres", "CC BY-SA", "1. Storage", "_paq", "Last edited", "[Home](/)"],
    ),
    # written after the extractor was chosen and tuned; run once, reported as they came out
    "heldout-wiki.html": (
        [
            "# Bloom filter",
            "## Algorithm description",
            "## Space and time advantages",
            "| 1% | 9.6 |",
            "set the bits at all resulting positions to 1",
            "def might_contain(bits, hashes, item):",
            "```",
        ],
        [
            "Jump to content",
            "Create account",
            "Random article",
            "Donate",
            "Contents",
            "[edit]",
            "Categories:",
            "Privacy policy",
            "wgPageName",
        ],
    ),
    "heldout-docs.html": (
        [
            "# Configuring retries",
            "## The retry policy",
            "## Non-idempotent requests",
            "client = Client(retry=RetryPolicy(attempts=4, backoff=0.5))",
            "```",
            "| `backoff` | 0.25 |",
            "POST requests are never retried",
        ],
        [
            "5.0 beta is out",
            "GitHub",
            "Installation",
            "Quickstart",
            "On this page",
            "Built with Sphinx",
            "¶",
            "DOCUMENTATION_OPTIONS",
        ],
    ),
    "release-notes.html": (
        [
            "# How we cut CI time in half",
            "## 1. Cache dependencies by lockfile hash",
            "| Median run | 42 min",
            "key: deps-${{ hashFiles('poetry.lock') }}",
            "```",
            "eight shards",
        ],
        ["Join 50,000 engineers", "Careers", "cheap-pills", "Great post", "Copyright 2026", "RSS"],
    ),
}


def readability_md(html: str) -> str:
    from ccmemory.features.reference.extract import html_to_markdown

    return html_to_markdown(html)[1]


def trafilatura_md(html: str) -> str:
    import trafilatura

    return (
        trafilatura.extract(
            html,
            output_format="markdown",
            include_tables=True,
            include_formatting=True,
            include_links=False,
            include_comments=False,
            favor_precision=True,
        )
        or ""
    )


def extract_report() -> list[str]:
    lines = [
        "| page | extractor | content kept | boilerplate leaked | missing | leaked | ms |",
        "|---|---|---|---|---|---|---|",
    ]
    tools = [("readability-lxml + markdownify", readability_md)]
    try:
        import trafilatura  # noqa: F401

        tools.append(("trafilatura", trafilatura_md))
    except ImportError:
        lines.append("| (trafilatura not installed: `pip install trafilatura` to compare) |||||||")
    for page, (keep, drop) in PAGES.items():
        html = (DATA / "reference_html" / page).read_text()
        for name, fn in tools:
            fn(html)  # warm imports
            t = time.perf_counter()
            md = fn(html)
            ms = (time.perf_counter() - t) * 1000
            missing = [k for k in keep if k not in md]
            leaked = [d for d in drop if d in md]
            lines.append(
                f"| {page} | {name} | {len(keep) - len(missing)}/{len(keep)} | {len(leaked)}/{len(drop)} |"
                f" {'; '.join(m.replace('|', '/').replace(chr(10), '⏎') for m in missing) or '-'} |"
                f" {'; '.join(leaked) or '-'} | {ms:.1f} |"
            )
    return lines


def quality(idx: Any, project: str, embedder: Any) -> dict[str, dict[str, tuple[float, float, int]]]:
    queries = json.loads((DATA / "reference_queries.json").read_text())["queries"]
    out: dict[str, dict[str, tuple[float, float, int]]] = {}
    for mode in ("text", "semantic", "hybrid"):
        out[mode] = {}
        for split in ("tune", "heldout"):
            qs = [q for q in queries if q["split"] == split]
            h1 = h3 = 0
            for q in qs:
                ids = [
                    h.chunk.id
                    for h in search_reference(
                        idx, project, q["q"], limit=3, mode=mode, embedder=embedder
                    ).hits
                ]
                h1 += bool(ids) and ids[0] == q["expect"]
                h3 += q["expect"] in ids
            out[mode][split] = (h1 / len(qs), h3 / len(qs), len(qs))
    return out


def index_tree(idx: Any, project: str, tmp: Path) -> int:
    from ccmemory.app.refsync import reindex_reference
    from ccmemory.core.vault import Vault

    repo = tmp / f"repo-{uuid.uuid4().hex[:6]}"
    shutil.copytree(DATA / "reference_tree", repo / ".ccmemory" / "reference")
    rep = reindex_reference(Vault(repo), idx, project, lambda _p: "curated")
    return sum(f["chunks"] for f in idx.ref_files(project)) if rep.files else 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--neo4j", action="store_true")
    ap.add_argument("--extract", action="store_true")
    args = ap.parse_args()
    from ccmemory.index.sqlite import SQLiteIndex
    from ccmemory.retrieval.embed import get_embedder

    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    embedder = get_embedder()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        backends: list[tuple[str, Any]] = [("sqlite", SQLiteIndex(tmp / "index.db"))]
        server = None
        if args.neo4j:
            sys.path.insert(0, str(ROOT))
            from tests.neo4j_server import _start

            server = _start()
            from ccmemory.index.neo4j import Neo4jIndex

            backends.append(("neo4j", Neo4jIndex(server.uri, server.user, server.password)))
        try:
            for name, idx in backends:
                project = "bench-" + uuid.uuid4().hex[:6]
                n = index_tree(idx, project, tmp)
                print(f"\n{name}: {n} chunks from 33 files")
                print("| mode | split | queries | hit@1 | hit@3 |")
                print("|---|---|---|---|---|")
                for mode, splits in quality(idx, project, embedder).items():
                    for split, (h1, h3, nq) in splits.items():
                        print(f"| {mode} | {split} | {nq} | {h1:.3f} | {h3:.3f} |")
                idx.ref_clear(project)
                idx.close()
        finally:
            if server is not None and server.started_here:
                import subprocess

                from tests.neo4j_server import NEO4J_DEV

                subprocess.run([sys.executable, str(NEO4J_DEV), "stop"], capture_output=True, timeout=300)
    if args.extract:
        print("\n" + "\n".join(extract_report()))


if __name__ == "__main__":
    main()
