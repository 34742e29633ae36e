"""The site's Reference section: every reference file gets a page with one anchored section per
chunk; cached (untrusted) text is rendered inert; links between reference files and to memories
resolve to site pages."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from tests.conftest import RunCli, make_memory

EVIL = """---
title: Evil <script>alert(1)</script>
source: javascript:alert(2)
---
# Evil page

<script>alert(3)</script> <img src=x onerror=alert(4)>

[click](javascript:alert(5)) and [sessions](../../concepts/sessions.md#revocation) and
[the decision](../../../decisions/{mem}) ![pixel](http://tracker.example/p.gif)
"""


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_reference_section_is_built_and_inert(repo: Path, run_cli: RunCli) -> None:
    from ccmemory.core.vault import Vault

    vault = Vault(repo)
    mem = make_memory("decision", "Adopt server sessions")
    mem_file = vault.write_new(mem).name
    ref = repo / ".ccmemory" / "reference"
    (ref / "concepts").mkdir(parents=True)
    (ref / "concepts/sessions.md").write_text(
        "---\ntitle: Sessions\n---\n# Sessions\n\n## Revocation\n\nDelete the row.\n"
    )
    (ref / "cached/web").mkdir(parents=True)
    (ref / "cached/web/evil.md").write_text(EVIL.replace("{mem}", mem_file))
    run_cli(repo, "site", "build")
    site = repo / ".ccmemory" / "local" / "site-build" / "site"
    index = (site / "reference/index.html").read_text()
    assert "concepts/sessions.md" in index and "cached/web/evil.md" in index
    assert 'href="reference/index.html"' in (site / "index.html").read_text()  # in the nav
    sessions = (site / "reference/files/concepts/sessions.html").read_text()
    assert (
        'id="revocation"' in sessions and "ccmemory://reference/concepts/sessions.md#revocation" in sessions
    )

    evil = (site / "reference/files/cached/web/evil.html").read_text()
    page = evil[evil.index('class="ccm-page"') :]
    page = page[: page.index("</article>")]
    parser = Tags()
    parser.feed(page)
    assert not [t for t, _ in parser.tags if t in ("script", "img", "iframe")]
    assert not [a for _, a in parser.tags if any(k.startswith("on") for k in a)]
    hrefs = [a.get("href") or "" for t, a in parser.tags if t == "a"]
    assert not [h for h in hrefs if re.match(r"\s*javascript:", h, re.I)]
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in page and "Evil &lt;script&gt;" in page
    assert "../../concepts/sessions.html#revocation" in hrefs
    assert f"../../../../memories/{mem.id}.html" in hrefs
    assert any(h == "http://tracker.example/p.gif" for h in hrefs)  # an image becomes a link, never loaded
    for h in hrefs:
        if h.startswith("../") or (h and not h.startswith(("http", "#", "mailto"))):
            target = (site / "reference/files/cached/web" / h.split("#")[0]).resolve()
            assert target.is_file(), h
