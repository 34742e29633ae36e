"""Reference sections that contradict a memory (issue 31): `ccmemory check` warnings (path:line of
the sentence in the reference file) and the dashboard's review page, on a small reference cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import init_git
from tests.dashboard_util import Running
from tests.lifecycle_util import add_memory, cli, commit_all

REFERENCE = """---
title: Web service patterns
source: https://example.com/patterns
---
# Web service patterns

## Backoff

Retry failed calls with exponential backoff and jitter. Keep the number of attempts small.

## Token storage

Store auth tokens in localStorage so the single-page app can read them.

## Caching

Do not cache thumbnails on the CDN.

## Connection pools

Increase the connection pool size when requests time out under load.

## Logging

Write logs as JSON lines to standard output.

## Refunds

The payments API supports batch refunds for up to 100 charges.
"""


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    from ccmemory.app.vaultinit import init_vault

    root = init_git(tmp_path / "repo")
    init_vault(root)
    ref = root / ".ccmemory" / "reference" / "web" / "patterns.md"
    ref.parent.mkdir(parents=True)
    ref.write_text(REFERENCE, encoding="utf-8")
    ids: dict[str, str] = {}

    def add(key: str, title: str, mtype: str, **fields: Any) -> None:
        sup = fields.pop("supersedes", [])
        ids[key], _ = add_memory(root, title, mtype, fields=fields, supersedes=sup)

    add("backoff", "Use fixed delays instead of exponential backoff", "decision", rationale="cascades")
    add("cdn", "Cache thumbnails on the CDN", "decision")
    add(
        "tokens",
        "Auth tokens live in httpOnly cookies",
        "correction",
        wrong_belief="auth tokens are stored in localStorage",
        right_belief="auth tokens are kept in httpOnly cookies",
        severity="significant",
    )
    add(
        "pool",
        "A bigger connection pool did not fix the timeouts",
        "failed_approach",
        approach="increase the connection pool size",
        outcome="still timing out",
        lesson="the slow query was the cause",
    )
    add("refunds", "The payments API does not support batch refunds", "fact", category="constraint")
    # agrees with the reference: no warning
    add("logs", "Write logs as JSON lines to standard output", "fact", category="convention")
    # opposed, but superseded by a later memory that agrees: no warning for either
    add("old", "Never retry failed calls", "decision")
    add("new", "Retry failed calls a few times", "decision", supersedes=[ids["old"]])
    commit_all(root, "memories and a reference page")
    return root, ids


def test_check_warns_at_the_reference_sentence(tmp_path: Path) -> None:
    root, ids = _project(tmp_path)
    proc = cli(root, "check", "--json")
    assert proc.returncode == 0  # warnings only
    items = [f for f in json.loads(proc.stdout) if "may contradict" in str(f.get("message"))]
    got = {(f["path"], f["line"]): f["message"] for f in items}
    ref = ".ccmemory/reference/web/patterns.md"
    want = {
        # line 9: "Retry failed calls with exponential backoff and jitter."
        (ref, 9): (ids["backoff"], "recommends what the memory turns away from (backoff, exponential)"),
        # line 13: "Store auth tokens in localStorage ..."
        (ref, 13): (ids["tokens"], "states the belief this correction says is wrong"),
        # line 17: "Do not cache thumbnails on the CDN."
        (ref, 17): (ids["cdn"], "one says to do 'cache thumbnails on the cdn', the other not to"),
        # line 21: "Increase the connection pool size ..."
        (ref, 21): (ids["pool"], "recommends an approach that failed here"),
        # line 29: "The payments API supports batch refunds ..."
        (ref, 29): (ids["refunds"], "the same subject with the opposite stance"),
    }
    assert set(got) == set(want), got
    for where, (mid, rule) in want.items():
        assert mid[:10] in got[where] and rule in got[where], got[where]
    assert all(f["level"] == "warning" for f in items)
    text = cli(root, "check").stdout
    assert f"{ref}:17: warning: reference section 'Web service patterns › Caching' may contradict" in text
    assert cli(root, "check", "--strict", check=False).returncode == 1


def test_the_review_page_lists_them_and_a_dismissal_hides_one(tmp_path: Path) -> None:
    from ccmemory.surfaces.dashboard.app import csrf_for

    root, ids = _project(tmp_path)
    cli(root, "reindex", "--no-embed")
    r = Running(root)
    try:
        review: Any = json.loads(r.request("GET", "/api/review")[2])
        conflicts = review["reference_conflicts"]
        assert sorted(c["memory"]["id"] for c in conflicts) == sorted(
            ids[k] for k in ("backoff", "tokens", "cdn", "pool", "refunds")
        )
        cdn = next(c for c in conflicts if c["memory"]["id"] == ids["cdn"])
        assert cdn["line"] == 17 and cdn["sentence"] == "Do not cache thumbnails on the CDN."
        html = r.request("GET", "/review")[2].decode("utf-8")
        assert "Reference sections that contradict a memory" in html
        assert "<code>.ccmemory/reference/web/patterns.md:17</code>" in html
        status, _, _ = r.request(
            "POST", f"/api/dismiss?key={cdn['key']}", headers={"X-CSRF-Token": csrf_for(r.server.token)}
        )
        assert status == 200
        after: Any = json.loads(r.request("GET", "/api/review")[2])
        assert ids["cdn"] not in {c["memory"]["id"] for c in after["reference_conflicts"]}
        assert len(after["reference_conflicts"]) == 4
    finally:
        r.close()


def test_a_quoted_sentence_is_redacted(tmp_path: Path) -> None:
    from ccmemory.app.vaultinit import init_vault
    from tests.capture_helpers import SECRETS

    root = init_git(tmp_path / "repo")
    init_vault(root)
    ref = root / ".ccmemory" / "reference" / "ops.md"
    ref.parent.mkdir(parents=True)
    secret = SECRETS["github"]
    ref.write_text(f"# Ops\n\nDo not store the deploy key in the vault; export {secret} instead.\n")
    add_memory(root, "Store the deploy key in the vault", "decision")
    proc = cli(root, "check", check=False)
    assert (
        "may contradict decision" in proc.stdout
        and "the same subject with the opposite stance" in proc.stdout
    )
    assert secret not in proc.stdout + proc.stderr
    assert secret not in cli(root, "check", "--json", check=False).stdout
