"""`ccmemory cache URL|FILE.pdf` against a real HTTP server on 127.0.0.1 and PDFs written by the
test; `search --reference`, `check` and the MCP tools over the real stdio client."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import frontmatter
import pytest

from ccmemory.core.vault import Vault
from ccmemory.features.reference.cache import CacheError, cache_url, web_name
from ccmemory.features.reference.fetch import FetchError, check_url
from tests._mcp_client import SyncClient
from tests._pdf import make_pdf, make_scanned_pdf
from tests._webserver import Route, serve
from tests.conftest import RunCli

HTML = Path(__file__).parent / "data" / "reference_html"
LOCAL = {"allow_private": True}  # the test server is on 127.0.0.1
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def html(name: str) -> Route:
    return 200, {"Content-Type": "text/html; charset=utf-8"}, (HTML / name).read_bytes()


@pytest.fixture
def site() -> Iterator[tuple[str, dict[str, Route]]]:
    leak = (
        (HTML / "sqlite-wal.html")
        .read_text()
        .replace("<h2>Limitations</h2>", f"<h2>Limitations</h2><p>Demo token: {SECRET}</p>")
    )
    routes: dict[str, Route] = {
        "/docs/jwt": html("jwt-guide.html"),
        "/handbook/wal": (200, {"Content-Type": "text/html"}, leak.encode()),
        "/blog/ci": html("release-notes.html"),
        "/moved": (302, {"Location": "/docs/jwt"}, b""),
        "/to-file": (302, {"Location": "file:///etc/passwd"}, b""),
        "/to-creds": (301, {"Location": "http://user:pw@127.0.0.1/docs/jwt"}, b""),
        "/loop": (302, {"Location": "/loop"}, b""),
        "/image": (200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + b"0" * 100),
        "/big": (
            200,
            {"Content-Type": "text/html"},
            b"<html><body>" + b"<p>x</p>" * 5000 + b"</body></html>",
        ),
        "/latin1": (
            200,
            {"Content-Type": "text/html"},
            "<html><head><meta charset='iso-8859-1'><title>Caf\u00e9</title></head><body><article>"
            "<h1>Caf\u00e9 cr\u00e8me</h1><p>Cr\u00e8me br\u00fbl\u00e9e is served at the caf\u00e9 every"
            " day of the week, with espresso.</p></article></body></html>".encode("latin-1"),
        ),
        "/notes.md": (200, {"Content-Type": "text/markdown"}, b"# Notes\n\n## Part\n\nplain markdown page\n"),
        "/paper.pdf": (
            200,
            {"Content-Type": "application/pdf"},
            make_pdf([[(20, "Remote Paper"), (10, "Served over HTTP as a PDF.")]]),
        ),
    }
    with serve(routes) as base:
        yield base, routes


def read(repo: Path, rel: str) -> frontmatter.Post:
    return frontmatter.loads((repo / rel).read_text())


def test_cache_url_keeps_content_drops_boilerplate_and_updates_in_place(
    repo: Path, site: tuple[str, dict[str, Route]], run_cli: RunCli
) -> None:
    base, routes = site
    out = run_cli(repo, "cache", f"{base}/docs/jwt", "--allow-private-hosts", "--json")
    res = json.loads(out.stdout)
    assert res["created"] is True and res["path"].startswith(
        ".ccmemory/reference/cached/web/127-0-0-1-docs-jwt-"
    )
    post = read(repo, res["path"])
    assert post["source"] == f"{base}/docs/jwt" and str(post["title"]).startswith("JSON Web Tokens")
    assert str(post["cached_at"]).endswith("Z") or "T" in str(post["cached_at"])
    body = post.content
    for kept in (
        "## Structure of a token",
        "### Clock skew",
        "| exp | Expiry time",
        'algorithms=["RS256"]',
        "1. Accepting the `none` algorithm.",
        "- **Header**",
    ):
        assert kept in body, kept
    assert "```" in body and "import jwt\n\ndef verify" in body  # the code block, blank line kept
    for dropped in (
        "Accept all cookies",
        "Sponsored",
        "Pricing",
        "newsletter",
        "dataLayer",
        "All rights reserved",
        "You might also like",
    ):
        assert dropped not in body, dropped

    found = json.loads(
        run_cli(repo, "search", "--reference", "--mode", "text", "clock skew leeway", "--json").stdout
    )
    assert found[0]["citation"].endswith("#clock-skew") and found[0]["heading_path"][-1] == "Clock skew"
    assert found[0]["citation"].startswith("ccmemory://reference/cached/web/")
    stats = json.loads(run_cli(repo, "stats", "--json").stdout)
    assert stats["reference"]["files"] == 1 and stats["reference"]["sections"] >= 5
    mixed = run_cli(repo, "search", "--reference", "--type", "decision", "clock skew", check=False)
    assert mixed.returncode == 2 and "--type cannot be combined with --reference" in mixed.stderr

    # same URL (a different fragment too) again: same file, replaced
    routes["/docs/jwt"] = (
        200,
        {"Content-Type": "text/html"},
        b"<html><head><title>JWT v2</title></head><body>"
        b"<article><h1>JWT v2</h1><p>Rewritten guide about token lifetimes and rotation of keys"
        b" used by every issuer in the fleet.</p></article></body></html>",
    )
    res2 = json.loads(
        run_cli(repo, "cache", f"{base}/docs/jwt#top", "--allow-private-hosts", "--json").stdout
    )
    assert res2["path"] == res["path"] and res2["created"] is False
    assert "Rewritten guide" in read(repo, res["path"]).content
    assert len(list((repo / ".ccmemory/reference/cached/web").iterdir())) == 1
    gone = json.loads(
        run_cli(repo, "search", "--reference", "--mode", "text", "clock skew leeway", "--json").stdout
    )
    assert not gone or not gone[0]["citation"].endswith("#clock-skew")


def test_cache_redacts_secrets_and_follows_one_redirect(
    repo: Path, site: tuple[str, dict[str, Route]]
) -> None:
    base, _ = site
    vault = Vault(repo)
    res = cache_url(vault, f"{base}/handbook/wal", fetch_kw=LOCAL)
    text = (repo / res.path).read_text()
    assert SECRET not in text and "[REDACTED:" in text and res.redactions >= 1
    assert "PRAGMA journal_mode = WAL;" in text and "| PASSIVE | no | no |" in text
    assert "Managed Postgres" not in text and "Donate" not in text
    moved = cache_url(vault, f"{base}/moved", fetch_kw=LOCAL)
    assert moved.path == f".ccmemory/reference/cached/web/{web_name(base + '/moved')}"
    assert "Registered claims" in (repo / moved.path).read_text()
    latin = cache_url(vault, f"{base}/latin1", fetch_kw=LOCAL)
    assert "Crème brûlée" in (repo / latin.path).read_text(encoding="utf-8")
    md = cache_url(vault, f"{base}/notes.md", fetch_kw=LOCAL)
    assert md.title == "Notes" and "plain markdown page" in (repo / md.path).read_text()
    pdf = cache_url(vault, f"{base}/paper.pdf", fetch_kw=LOCAL)
    assert pdf.pages == 1 and "# Remote Paper" in (repo / pdf.path).read_text()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/to-file", "not allowed"),
        ("/to-creds", "credentials"),
        ("/loop", "more than 5 redirects"),
        ("/image", "'image/png' is not cached"),
        ("/missing", "HTTP 404"),
    ],
)
def test_cache_refuses_unsafe_or_unusable_pages(
    repo: Path, site: tuple[str, dict[str, Route]], path: str, message: str
) -> None:
    base, _ = site
    with pytest.raises(CacheError, match=message):
        cache_url(Vault(repo), base + path, fetch_kw=LOCAL)
    assert not (repo / ".ccmemory/reference/cached/web").exists() or not any(
        (repo / ".ccmemory/reference/cached/web").iterdir()
    )


def test_size_cap_and_url_checks(repo: Path, site: tuple[str, dict[str, Route]]) -> None:
    base, _ = site
    with pytest.raises(CacheError, match="byte limit"):
        cache_url(Vault(repo), f"{base}/big", fetch_kw={**LOCAL, "max_bytes": 10_000})
    for bad, why in [
        ("file:///etc/passwd", "only http"),
        ("ftp://example.com/x", "only http"),
        ("javascript:alert(1)", "only http"),
        ("https://alice:secret@example.com/page", "credentials"),
        ("https://token@example.com/page", "credentials"),
        ("http:///nohost", "no host"),
    ]:
        with pytest.raises(FetchError, match=why):
            check_url(bad)
    assert check_url(" https://example.com/a?b=1 ") == "https://example.com/a?b=1"


def test_cache_never_writes_outside_cached(
    repo: Path, site: tuple[str, dict[str, Route]], tmp_path: Path
) -> None:
    base, _ = site
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    ref = repo / ".ccmemory" / "reference"
    ref.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, ref / "cached")
    with pytest.raises(CacheError, match="symbolic link"):
        cache_url(Vault(repo), f"{base}/docs/jwt", fetch_kw=LOCAL)
    assert list(outside.iterdir()) == []


def test_cache_pdf_pages_headings_and_scanned(repo: Path, run_cli: RunCli) -> None:
    pages = [
        [
            (20, "Consensus in Replicated Logs"),
            (10, "A short paper about replication."),
            (14, "1 Introduction"),
            (10, "Replicated logs keep copies of the same commands on several machines"),
            (10, "so that losing one machine loses no data."),
            (14, "2 Leader election"),
        ],
        [
            (10, "A node becomes leader after a majority of votes in one term."),
            (14, "3 Log compaction"),
            (10, "Snapshots replace the prefix of the log that every node applied."),
        ],
    ]
    (repo / "papers").mkdir()
    (repo / "papers/raft.pdf").write_bytes(make_pdf(pages))
    res = json.loads(run_cli(repo, "cache", "papers/raft.pdf", "--json").stdout)
    assert res["pages"] == 2 and res["path"].startswith(".ccmemory/reference/cached/pdf/raft-")
    post = read(repo, res["path"])
    assert post["source"] == "papers/raft.pdf" and post["title"] == "Consensus in Replicated Logs"
    assert "*(page 1)*" in post.content and "*(page 2)*" in post.content
    assert "# Consensus in Replicated Logs" in post.content and "## 3 Log compaction" in post.content
    found = json.loads(
        run_cli(
            repo, "search", "--reference", "--mode", "text", "snapshot of the log prefix", "--json"
        ).stdout
    )
    assert found[0]["citation"].endswith("#3-log-compaction")
    assert found[0]["heading_path"] == ["Consensus in Replicated Logs", "3 Log compaction"]

    (repo / "papers/scan.pdf").write_bytes(make_scanned_pdf(3))
    bad = run_cli(repo, "cache", "papers/scan.pdf", check=False)
    assert bad.returncode != 0 and "no text layer" in bad.stderr and "scanned" in bad.stderr
    notpdf = repo / "papers/fake.pdf"
    notpdf.write_text("hello")
    assert "not a PDF" in run_cli(repo, "cache", "papers/fake.pdf", check=False).stderr


def test_check_reports_reference_problems(repo: Path, run_cli: RunCli, tmp_path: Path) -> None:
    ref = repo / ".ccmemory" / "reference" / "concepts"
    ref.mkdir(parents=True)
    (ref / "ok.md").write_text("---\ntitle: Fine\n---\n# Fine\n\nSee [missing](nope.md).\n")
    (ref / "bad.md").write_text("---\ntitle: [oops\n---\n# Bad\n")
    (ref / "memoryish.md").write_text("---\ntype: decision\n---\n# x\n\ny\n")
    (ref / "leak.md").write_text(f"# Leak\n\ntoken {SECRET}\n")
    target = tmp_path / "target.md"
    target.write_text("# outside\n")
    os.symlink(target, ref / "link.md")
    out = run_cli(repo, "check", check=False)
    lines = out.stdout
    assert out.returncode == 1
    assert "concepts/bad.md:1: frontmatter is not valid YAML" in lines.replace(
        ".ccmemory/reference/", ""
    ).replace("line 2: ", "")
    assert "memoryish.md:1: warning: 'type' in a reference file" in lines
    assert "ok.md:1: warning: section fine links to missing .ccmemory/reference/concepts/nope.md" in lines
    assert "leak.md:1: possible secret in a reference file" in lines
    assert "link.md:1: symlink not followed" in lines
    assert "outside" not in lines


@pytest.fixture
def mcp(repo: Path) -> Iterator[SyncClient]:
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as c:
        yield c


def test_mcp_reference_tools(repo: Path, mcp: SyncClient, site: tuple[str, dict[str, Route]]) -> None:
    base, _ = site
    cfg = repo / ".ccmemory" / "config.yaml"
    cfg.write_text(cfg.read_text() + "reference:\n  allow_private_hosts: true\n")
    names = {t.name for t in mcp.list_tools()}
    assert {"query_reference", "list_references", "cache_url", "cache_pdf", "index_reference"} <= names
    cached = mcp.call("cache_url", {"url": f"{base}/blog/ci"})
    assert cached["path"].startswith(".ccmemory/reference/cached/web/") and cached["created"] is True
    ref = repo / ".ccmemory" / "reference" / "concepts"
    ref.mkdir(parents=True)
    (ref / "wal.md").write_text(
        "---\ntitle: WAL\n---\n# WAL\n\n## Checkpoints\n\nCopy pages back into the main file.\n"
    )
    idx = mcp.call("index_reference")
    assert idx["added"] == 1 and idx["files"] == 2
    res = mcp.call("query_reference", {"query": "shard the test suite by timing", "mode": "text"})
    top = res["results"][0]
    assert top["citation"].endswith("#2-split-the-test-suite-by-timing-data")
    assert top["heading_path"] == ["How we cut CI time in half", "2. Split the test suite by timing data"]
    assert "eight shards" in top["text"]
    files = mcp.call("list_references")["files"]
    assert {f["tree_path"] for f in files} == {"concepts/wal.md", cached["path"].split("reference/", 1)[1]}
    section = mcp.read("ccmemory://reference/concepts/wal.md#checkpoints")
    assert section.startswith("## Checkpoints") and "Copy pages" in section
    assert mcp.error("cache_url", {"url": "file:///etc/passwd"})["code"] == "cache_failed"
    assert "credentials" in mcp.error("cache_url", {"url": "https://a:b@example.com/x"})["message"]
    (repo / "docs").mkdir()
    (repo / "docs/leases.pdf").write_bytes(
        make_pdf([[(20, "Leases"), (14, "Clock drift"), (10, "Holders must allow for drift between hosts.")]])
    )
    pdf = mcp.call("cache_pdf", {"path": "docs/leases.pdf"})
    assert pdf["pages"] == 1 and pdf["path"].startswith(".ccmemory/reference/cached/pdf/leases-")
    hit = mcp.call("query_reference", {"query": "drift between hosts", "mode": "text"})["results"][0]
    assert hit["heading_path"] == ["Leases", "Clock drift"]
    (repo / "scan.pdf").write_bytes(make_scanned_pdf())
    assert "no text layer" in mcp.error("cache_pdf", {"path": "scan.pdf"})["message"]
    assert mcp.error("cache_pdf", {"path": "../../etc/passwd"})["code"] == "invalid_argument"


@pytest.mark.neo4j
def test_end_to_end_on_neo4j(
    repo: Path, run_cli: RunCli, site: tuple[str, dict[str, Route]], neo4j_server: Any
) -> None:
    """A new user on the team backend: cache a page and a PDF, write a concept by hand, get the
    right sections back from `search --reference` and MCP `query_reference`."""
    import uuid

    base, _ = site
    env = {
        "CCMEMORY_BACKEND": "neo4j",
        "CCMEMORY_NEO4J_URI": neo4j_server.uri,
        "CCMEMORY_NEO4J_USER": neo4j_server.user,
        "CCMEMORY_NEO4J_PASSWORD": neo4j_server.password,
        "CCMEMORY_PROJECT": "ref-e2e-" + uuid.uuid4().hex[:8],
    }
    run_cli(repo, "cache", f"{base}/docs/jwt", "--allow-private-hosts", env=env)
    (repo / "paper.pdf").write_bytes(
        make_pdf(
            [
                [
                    (20, "Leases"),
                    (14, "1 Clock drift"),
                    (10, "Lease holders must allow for clock drift between hosts."),
                ]
            ]
        )
    )
    run_cli(repo, "cache", "paper.pdf", env=env)
    concept = repo / ".ccmemory/reference/concepts/cors.md"
    concept.parent.mkdir(parents=True)
    concept.write_text("# CORS\n\n## Preflight\n\nThe browser sends OPTIONS before a non-simple request.\n")
    out = run_cli(repo, "reindex", env=env).stdout
    assert "reference: 3 files" in out
    try:
        for query, anchor in [
            ("leeway for clock skew on exp", "#clock-skew"),
            ("drift between lease holders", "#1-clock-drift"),
            ("OPTIONS request before the real one", "concepts/cors.md#preflight"),
        ]:
            hits = json.loads(
                run_cli(repo, "search", "--reference", "--mode", "text", query, "--json", env=env).stdout
            )
            assert hits and hits[0]["citation"].endswith(anchor), (query, hits[:2])
        with SyncClient.stdio(repo, env={**env, "CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as c:
            res = c.call("query_reference", {"query": "OPTIONS request before the real one", "mode": "text"})
            assert res["results"][0]["id"] == "concepts/cors.md#preflight"
            assert len(c.call("list_references")["files"]) == 3
    finally:
        from ccmemory.index.neo4j import Neo4jIndex

        idx = Neo4jIndex(
            neo4j_server.uri, neo4j_server.user, neo4j_server.password, scope="alice@example.com"
        )
        idx.ref_clear(env["CCMEMORY_PROJECT"])
        idx.drop_project(env["CCMEMORY_PROJECT"])
        idx.close()


def test_pdf_bookmarks_give_headings_when_fonts_do_not(tmp_path: Path) -> None:
    from ccmemory.features.reference.pdf import pdf_to_markdown

    pages = [
        [(10, "Introduction"), (10, "Body text about the problem."), (10, "Method"), (10, "We measured it.")],
        [(10, "The method text continues on the second page.")],
    ]
    path = tmp_path / "same-size.pdf"
    path.write_bytes(make_pdf(pages))
    assert "#" not in pdf_to_markdown(path).markdown  # one font size: no heading to recover
    path.write_bytes(make_pdf(pages, outline=[("Introduction", 0), ("Method", 0), ("Appendix", 1)]))
    md = pdf_to_markdown(path).markdown
    assert "*(page 1)*\n\n# Introduction\n\nBody text about the problem.\n\n# Method\n\nWe measured it." in md
    assert "*(page 2)*\n\n# Appendix\n\nThe method text continues" in md  # a bookmark not on the page


def test_private_and_metadata_addresses_are_refused_by_default(
    repo: Path, run_cli: RunCli, site: tuple[str, dict[str, Route]]
) -> None:
    from ccmemory.features.reference.fetch import check_host

    base, _ = site
    out = run_cli(repo, "cache", f"{base}/docs/jwt", check=False)
    assert out.returncode == 1 and "non-public address (127.0.0.1)" in out.stderr
    assert "--allow-private-hosts" in out.stderr
    for url in (
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
        "http://[::1]:8080/",
        "http://localhost/",
    ):
        with pytest.raises(FetchError, match="non-public address"):
            check_host(url)
    assert not (repo / ".ccmemory/reference/cached").exists()
