"""The published site: build from a real git repository, check pages, links, offline assets and
hostile memory text; then load it in headless Chromium (search, no script execution, screenshot)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from ccmemory.core.model import Memory, Relation, new_id
from ccmemory.core.vault import Vault
from ccmemory.surfaces.site.history import file_histories
from ccmemory.surfaces.site.safe import markdown_renderer, safe_href, url_scheme
from tests._webserver import serve_folder

try:  # the tests folder may or may not be a package
    from tests import site_cdp
except ImportError:  # pragma: no cover
    import site_cdp  # type: ignore[no-redef]

REPO_ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO_ROOT / "test-artifacts"

HOSTILE_TITLE = (
    '<script>window.__pwned=5;document.title="PWNED"</script><img src=x onerror="window.__pwned=6"> Hostile'
)
HOSTILE_BODY = """\
Hostile fixture with the word zanzibar.

<script>window.__pwned = 1; document.title = "PWNED"</script>
<img src=x onerror="window.__pwned = 2">

[click](javascript:alert(1)) [click2](JaVaScRiPt:window.__pwned=3) [tab](java\tscript:alert(1))
[ent](&#106;avascript:alert(1)) [pct](%6Aavascript:alert(1))
[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) [vb](vbscript:msgbox(1))
![pic](javascript:alert(1)) ![remote](https://tracker.example.com/pixel.gif)
<a href="javascript:alert(1)">raw anchor</a>
</textarea><svg onload="window.__pwned=4"></svg><iframe src="javascript:alert(1)"></iframe>
[protocol-relative](//evil.example.com/x) [safe](https://example.com/safe)

```html
</code></pre><script>window.__pwned=8</script>
```
"""


def git(root: Path, *args: str, who: str = "alice") -> str:
    return subprocess.run(
        ["git", "-c", f"user.name={who.title()}", "-c", f"user.email={who}@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def cli(cwd: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "ccmemory", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def mem(mtype: str, title: str, day: int, body: str, **kw: Any) -> Memory:
    return Memory(
        id=new_id(),
        type=mtype,
        title=title,
        created=datetime(2026, 10, day, 9, 0, 0, tzinfo=UTC),
        body=body,
        **kw,
    )


class Vaultfix:
    """The fixture repository: several commits by different people, a rename, an edit, a
    supersession, relations both ways, open and answered questions, an uncommitted memory and a
    hostile memory."""

    def __init__(self, root: Path):
        from ccmemory.app.vaultinit import init_vault

        self.root = root
        root.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
        git(root, "config", "commit.gpgsign", "false")
        init_vault(root)
        v = Vault(root)
        self.cookies = mem(
            "decision",
            "Store sessions in signed cookies",
            1,
            "Sessions are signed cookies; the word marmalade marks this body.",
            topics=["auth"],
            author="alice@example.com",
        )
        self.port = mem(
            "fact",
            "Redis listens on port 6380",
            2,
            "Not the default port.",
            topics=["infra"],
            fields={"category": "environment"},
        )
        self.redis = mem(
            "decision",
            "Store sessions in Redis",
            5,
            "Replaces [the cookie decision](2026-10-01-store-sessions-in-signed-cookies.md): cookies grew "
            "too large. See also [the port](ccmemory://memory/PORTID) and [a file](../../src/app.py).",
            topics=["auth", "infra"],
            supersedes=[self.cookies.id],
            relations=[Relation("DEPENDS_ON", self.port.id, "needs the <b>Redis</b> port")],
            fields={"rationale": "cookies hit the 4 kB limit"},
            author="bob@example.com",
        )
        self.redis.body = self.redis.body.replace("PORTID", self.port.id)
        self.failed = mem(
            "failed_approach",
            "In-process session cache",
            6,
            "Lost sessions on every deploy.",
            fields={"approach": "LRU in memory", "outcome": "lost sessions", "lesson": "use Redis"},
        )
        self.open_q = mem(
            "question",
            "Should sessions expire after 30 days?",
            7,
            "Nobody decided yet.",
            fields={"question": "30 days?", "answer": ""},
        )
        self.answered = mem(
            "question",
            "Which Redis version?",
            8,
            "Asked in review.",
            fields={"question": "which?", "answer": "Redis 7"},
        )
        self.hostile = mem(
            "decision",
            HOSTILE_TITLE,
            9,
            HOSTILE_BODY,
            topics=['<b onmouseover="window.__pwned=9">x</b>'],
            fields={"rationale": '"><script>window.__pwned=7</script>'},
            relations=[Relation("RELATES_TO", self.cookies.id, "<script>window.__pwned=10</script>")],
            confidence=0.9,
        )
        self.draft = mem(
            "decision",
            "Adopt the OAuth device flow",
            10,
            "Still a draft on a branch.",
            confidence=0.4,
        )
        self.paths: dict[str, Path] = {}
        for m in (self.cookies, self.port):
            self.paths[m.id] = v.write_new(m)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "First memories", who="alice")
        for m in (self.redis, self.failed, self.open_q, self.answered):
            self.paths[m.id] = v.write_new(m)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "Redis <b>decision</b>", who="bob")
        # an edit and a rename in a third commit
        p = self.paths[self.cookies.id]
        p.write_text(p.read_text().replace("marks this body.", "marks this body. Edited."))
        renamed = p.parent.parent / "facts" / "2026-10-02-redis-port.md"
        git(root, "mv", str(self.paths[self.port.id]), str(renamed))
        self.paths[self.port.id] = renamed
        self.paths[self.hostile.id] = v.write_new(self.hostile)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "Edit, rename, hostile fixture", who="carol")
        self.paths[self.draft.id] = v.write_new(self.draft)  # uncommitted: developmental

    def rel(self, m: Memory) -> str:
        return self.paths[m.id].relative_to(self.root).as_posix()


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Vaultfix:
    return Vaultfix(tmp_path_factory.mktemp("site") / "repo")


@pytest.fixture(scope="module")
def built(fx: Vaultfix) -> dict[str, Any]:
    out = fx.root.parent / "public"
    proc = cli(fx.root, "site", "build", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert Path(info["site_dir"]) == out.resolve()
    return info


def site(built: dict[str, Any]) -> Path:
    return Path(built["site_dir"])


def page(built: dict[str, Any], rel: str) -> str:
    return (site(built) / rel).read_text(encoding="utf-8")


def content(text: str) -> str:
    """The part of a built page that ccmemory generated (between the ccm-page div markers)."""
    start = text.index('<div class="ccm-page">')
    return text[start : text.index("</article>", start)]


# --- unit: link policy and rendering ---------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "&#106;avascript:alert(1)",
        "&#x6A;avascript:alert(1)",
        "%6Aavascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "data:image/png;base64,AAAA",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "//evil.example.com/x",
        "\\\\evil.example.com\\x",
    ],
)
def test_dangerous_urls_are_refused(url: str) -> None:
    assert safe_href(url) is None


@pytest.mark.parametrize(
    "url", ["https://example.com/a?b=1#c", "http://x.org", "mailto:a@b.c", "#top", "a/b.md"]
)
def test_ordinary_urls_are_kept(url: str) -> None:
    assert safe_href(url) == url


def test_renderer_escapes_html_and_neutralises_links() -> None:
    out = markdown_renderer()(HOSTILE_BODY)
    assert "<script" not in out and "<img" not in out and "<svg" not in out and "<iframe" not in out
    assert "&lt;script&gt;" in out
    assert not re.search(r"href=\"\s*(javascript|data|vbscript)", out, re.I)
    assert 'href="https://example.com/safe"' in out
    assert "tracker.example.com" not in out.split('href="')[0]  # images are never loaded
    assert "<h1" not in markdown_renderer()("# Title\n")  # the page owns the h1


def test_history_follows_renames_with_one_git_call(fx: Vaultfix) -> None:
    hist = file_histories(fx.root, [fx.rel(fx.port), fx.rel(fx.cookies), fx.rel(fx.draft)])
    port = hist[fx.rel(fx.port)]
    assert [c.status for c in port] == ["R", "A"]
    assert [c.author for c in port] == ["Carol", "Alice"]
    assert re.search(r"-redis-listens-on-port-6380-[0-9a-z]{4}\.md$", port[1].path), port[1].path
    assert [c.subject for c in hist[fx.rel(fx.cookies)]] == [
        "Edit, rename, hostile fixture",
        "First memories",
    ]
    assert hist[fx.rel(fx.draft)] == []


# --- the built site ----------------------------------------------------------------------------------


def test_build_writes_all_pages_outside_the_tree(fx: Vaultfix, built: dict[str, Any]) -> None:
    s = site(built)
    for rel in ("index.html", "timeline.html", "questions.html", "topics/index.html", "log/decisions.html"):
        assert (s / rel).is_file(), rel
    all_mems = (fx.cookies, fx.port, fx.redis, fx.failed, fx.open_q, fx.answered, fx.hostile, fx.draft)
    for m in all_mems:
        assert (s / "memories" / f"{m.id}.html").is_file()
    assert built["memories"] == len(all_mems)
    # nothing was written into the repository's tracked tree
    status = git(fx.root, "status", "--porcelain", "--untracked-files=all")
    assert [line for line in status.splitlines() if fx.rel(fx.draft) not in line] == []


def test_home_page_counts_review_and_failed(fx: Vaultfix, built: dict[str, Any]) -> None:
    home = content(page(built, "index.html"))
    assert "8 memories" in home
    counts = home[home.index('id="counts"') : home.index('id="recent"')]
    assert re.search(r"Decisions</a></td><td>3</td><td>1</td><td>4</td>", counts)
    review = home[home.index('id="review"') : home.index('id="failed"')]
    assert "Adopt the OAuth device flow" in review  # developmental, confidence 0.4
    assert "Store sessions in Redis" not in review
    failed = home[home.index('id="failed"') :]
    assert "In-process session cache" in failed


def test_logs_timeline_questions_topics(fx: Vaultfix, built: dict[str, Any]) -> None:
    log = content(page(built, "log/decisions.html"))
    order = [log.index(t) for t in ("OAuth device flow", "Store sessions in Redis", "signed cookies")]
    assert order == sorted(order)  # newest first
    assert "Redis listens" not in log
    questions = content(page(built, "questions.html"))
    assert "30 days" in questions and "Which Redis version" not in questions
    timeline = content(page(built, "timeline.html"))
    assert 'id="m-2026-10"' in timeline and "Redis listens" in timeline
    topics = content(page(built, "topics/index.html"))
    auth_href = re.search(r'href="([^"]+)">auth</a>', topics)
    assert auth_href
    auth = content(page(built, "topics/" + auth_href.group(1)))
    assert "Store sessions in Redis" in auth and "signed cookies" in auth and "Redis listens" not in auth


def test_memory_page_metadata_relations_chain_history(fx: Vaultfix, built: dict[str, Any]) -> None:
    redis = content(page(built, f"memories/{fx.redis.id}.html"))
    assert "ccm-curated" in redis
    assert "cookies hit the 4 kB limit" in redis  # a type field in the metadata table
    assert f'href="{fx.cookies.id}.html"' in redis  # body link to a memory file, rewritten
    assert f'href="{fx.port.id}.html"' in redis  # ccmemory:// link, rewritten
    assert 'class="ccm-inert-link"' in redis  # ../../src/app.py is not on the site
    assert "depends on" in redis and "needs the &lt;b&gt;Redis&lt;/b&gt; port" in redis
    assert "Supersession chain" in redis
    assert "Bob &lt;bob@example.com&gt;" in redis and "added: Redis &lt;b&gt;decision&lt;/b&gt;" in redis
    cookies = content(page(built, f"memories/{fx.cookies.id}.html"))
    assert "ccm-superseded" in cookies and "Superseded by" in cookies
    assert "superseded by" in cookies and "relates to" in cookies  # reverse edges, derived
    chain = cookies[cookies.index('id="supersession"') :]
    assert chain.index("signed cookies") < chain.index("Store sessions in Redis")
    assert "Carol" in cookies and "Alice" in cookies  # edited after it was added
    port = content(page(built, f"memories/{fx.port.id}.html"))
    assert "depended on by" in port and "renamed" in port and "Alice" in port
    draft = content(page(built, f"memories/{fx.draft.id}.html"))
    assert "ccm-developmental" in draft and "Not committed yet" in draft
    assert "Related memories" in redis  # the product's ranking (text mode)


def test_search_index_has_memory_bodies(fx: Vaultfix, built: dict[str, Any]) -> None:
    index = json.loads(page(built, "search/search_index.json"))
    docs = [d for d in index["docs"] if "marmalade" in d["text"]]
    assert docs and all(d["location"].startswith(f"memories/{fx.cookies.id}.html") for d in docs)
    # listings are excluded so a word finds the memory, not every page that lists it
    assert not any(d["location"].startswith(("index.html", "timeline.html", "log/")) for d in index["docs"])


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def html_files(s: Path) -> list[Path]:
    return sorted(s.rglob("*.html"))


def test_hostile_memory_cannot_inject_markup(fx: Vaultfix, built: dict[str, Any]) -> None:
    s = site(built)
    for f in html_files(s):
        text = f.read_text(encoding="utf-8")
        if '<div class="ccm-page">' in text:
            mine = _Collector()
            mine.feed(content(text))
            allowed = {
                "div",
                "h1",
                "h2",
                "h3",
                "h4",
                "h5",
                "h6",
                "p",
                "span",
                "a",
                "table",
                "thead",
                "tbody",
                "tr",
                "th",
                "td",
                "ul",
                "ol",
                "li",
                "code",
                "pre",
                "strong",
                "em",
                "del",
                "blockquote",
                "hr",
                "br",
                "input",
            }  # input: mistune's task-list checkboxes
            assert {t for t, _ in mine.tags} <= allowed, (f, {t for t, _ in mine.tags} - allowed)
        c = _Collector()
        c.feed(text)
        for tag, attrs in c.tags:
            for name, value in attrs.items():
                assert not name.startswith("on"), (f, tag, name, value)
                if name in ("href", "src", "action", "formaction", "xlink:href", "srcset"):
                    assert url_scheme(value) in (None, "http", "https", "mailto"), (f, name, value)
                    if tag in ("img", "script", "link", "source"):
                        assert url_scheme(value) is None, (f, tag, value)  # nothing from other origins
        for code in c.scripts:
            assert "__pwned" not in code and "PWNED" not in code, f
    text = page(built, f"memories/{fx.hostile.id}.html")
    assert "&lt;script&gt;window.__pwned = 1; document.title = " in text  # shown, not run
    assert "<title>&lt;script&gt;" in text
    assert "tracker.example.com/pixel.gif" in text and '<img src="https://tracker' not in text
    index = page(built, "search/search_index.json")
    assert "<script" not in index and "<img" not in index and "<svg" not in index


def test_hostile_project_name_is_escaped(fx: Vaultfix, tmp_path: Path) -> None:
    out = tmp_path / "named"
    evil = '<img src=x onerror="window.__pwned=11">'
    proc = cli(
        fx.root, "site", "build", "--out", str(out), "--no-related", env_extra={"CCMEMORY_PROJECT": evil}
    )
    assert proc.returncode == 0, proc.stderr
    for rel in ("index.html", f"memories/{fx.port.id}.html"):
        c = _Collector()
        c.feed((out / rel).read_text(encoding="utf-8"))
        assert not [t for t, a in c.tags if t == "img" or any(k.startswith("on") for k in a)], rel
    assert "&lt;img src=x" in (out / "index.html").read_text(encoding="utf-8")


def test_no_broken_internal_links(built: dict[str, Any]) -> None:
    s = site(built)
    checked = 0
    for f in html_files(s):
        c = _Collector()
        c.feed(f.read_text(encoding="utf-8"))
        for _tag, attrs in c.tags:
            for name in ("href", "src"):
                url = attrs.get(name)
                if not url or url_scheme(url) is not None or url.startswith(("#", "//")):
                    continue
                path = unquote(urlsplit(url).path)
                if not path:
                    continue
                # root-absolute links (MkDocs' 404 page) resolve against the site root
                target = (s / path.lstrip("/") if path.startswith("/") else f.parent / path).resolve()
                if target.is_dir():
                    target = target / "index.html"
                assert target.is_file(), f"{f.relative_to(s)}: broken link {url}"
                assert s.resolve() in target.parents, f"{f.relative_to(s)}: link leaves the site: {url}"
                checked += 1
    assert checked > 200


def test_site_is_offline(built: dict[str, Any]) -> None:
    s = site(built)
    for f in [*s.rglob("*.html"), *s.rglob("*.css")]:
        text = f.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, f
        for m in re.finditer(r'<(?:script|link|img)\b[^>]*?(?:src|href)="(https?:)?//', text):
            raise AssertionError(f"{f}: external asset {m.group(0)}")
    assert (s / "search" / "search_index.js").is_file()  # the offline plugin's file:// search


def test_out_refuses_a_folder_it_did_not_build(fx: Vaultfix, tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    proc = cli(fx.root, "site", "build", "--out", str(out))
    assert proc.returncode != 0 and "not empty" in proc.stderr
    assert (out / "keep.txt").read_text() == "mine"


def test_default_build_goes_under_local_and_rebuild_is_incremental(fx: Vaultfix) -> None:
    first = cli(fx.root, "site", "build", "--json", "--no-related")
    assert first.returncode == 0, first.stderr
    info = json.loads(first.stdout)
    local = (fx.root / ".ccmemory" / "local").resolve()
    assert local in Path(info["site_dir"]).parents
    assert (Path(info["site_dir"]) / "index.html").is_file()
    from ccmemory.app.service import Service
    from ccmemory.surfaces.site import SiteGenerator

    with Service(Vault(fx.root)) as svc:
        gen = SiteGenerator(svc, related=False)
        _, _, changed = gen.generate(Path(info["site_dir"]))
    assert changed == 0


# --- in the browser ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(built: dict[str, Any]) -> Iterator[str]:
    with serve_folder(site(built)) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[site_cdp.Browser]:
    with site_cdp.open_browser() as b:
        yield b


def search_in_page(b: site_cdp.Browser, words: str) -> list[str]:
    b.wait_for("document.querySelector('[data-md-component=search-query]') !== null")
    b.eval("document.querySelector('[data-md-component=search-query]').focus()")
    b.type_text(words)
    b.wait_for("document.querySelectorAll('.md-search-result__item').length > 0", timeout=20)
    items: list[str] = b.eval(
        "Array.from(document.querySelectorAll('.md-search-result__item a')).map(a => a.href)"
    )
    return items


@pytest.mark.browser
def test_browser_search_finds_a_memory_by_a_body_word(
    fx: Vaultfix, served: str, browser: site_cdp.Browser
) -> None:
    browser.goto(f"{served}/index.html")
    assert "memory" in browser.eval("document.title")
    assert browser.eval("document.querySelectorAll('.ccm-badge.ccm-curated').length") > 0
    hrefs = search_in_page(browser, "marmalade")
    assert any(f"memories/{fx.cookies.id}.html" in h for h in hrefs), hrefs
    shot = browser.screenshot(ARTIFACTS / "site-search.png")
    assert shot.stat().st_size > 10_000


@pytest.mark.browser
def test_browser_hostile_memory_runs_no_script(fx: Vaultfix, served: str, browser: site_cdp.Browser) -> None:
    browser.goto(f"{served}/memories/{fx.hostile.id}.html")
    browser.wait_for("document.readyState === 'complete'")
    assert browser.eval("typeof window.__pwned") == "undefined"
    assert browser.eval("document.title").startswith("<script>window.__pwned=5")  # text, not run
    assert "<script>" in browser.eval("document.querySelector('h1#memory').textContent")  # shown as text
    assert browser.eval("document.querySelectorAll('a[href^=\"javascript\" i]').length") == 0
    # the hostile title also shows up inside the search results (rendered by the theme's JS)
    hrefs = search_in_page(browser, "zanzibar")
    assert any(fx.hostile.id in h for h in hrefs), hrefs
    assert browser.eval("typeof window.__pwned") == "undefined"
    assert browser.eval("document.title") != "PWNED"
    browser.screenshot(ARTIFACTS / "site-hostile.png")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def fetch(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, ""
    except OSError:
        return 0, ""


def wait_until(check: Any, timeout: float, what: str) -> Any:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.mark.slow
def test_serve_rebuilds_when_a_memory_file_changes(tmp_path: Path) -> None:
    from ccmemory.app.vaultinit import init_vault

    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    init_vault(root)
    first = mem("fact", "The first fact", 1, "Served at once.")
    Vault(root).write_new(first)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccmemory", "site", "serve", "--port", str(port), "--no-related"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: fetch(f"{base}/memories/{first.id}.html")[0] == 200, 90, "the first build")
        assert "Served at once." in fetch(f"{base}/memories/{first.id}.html")[1]
        second = mem("gotcha", "A gotcha added while serving", 2, "Rebuilt by the watcher.")
        Vault(root).write_new(second)
        wait_until(lambda: fetch(f"{base}/memories/{second.id}.html")[0] == 200, 90, "the rebuild")
        assert "Rebuilt by the watcher." in fetch(f"{base}/memories/{second.id}.html")[1]
        assert "A gotcha added while serving" in fetch(f"{base}/log/gotchas.html")[1]
        # an edit to an existing file in an already-watched folder
        path = next((root / ".ccmemory" / "facts").glob("*.md"))
        path.write_text(path.read_text().replace("Served at once.", "Edited while serving."))
        wait_until(
            lambda: "Edited while serving." in fetch(f"{base}/memories/{first.id}.html")[1], 90, "the edit"
        )
        # nothing was written into the working tree but the memory files
        assert not (root / "site").exists() and not (root / "mkdocs.yml").exists()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode is not None


@pytest.mark.browser
def test_browser_search_works_from_file_urls(
    fx: Vaultfix, built: dict[str, Any], browser: site_cdp.Browser
) -> None:
    browser.goto((site(built) / "index.html").as_uri())
    hrefs = search_in_page(browser, "marmalade")
    assert any(f"memories/{fx.cookies.id}.html" in h for h in hrefs), hrefs


def test_project_documentation_builds_strict_and_offline(tmp_path: Path) -> None:
    out = tmp_path / "docs-site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(REPO_ROOT / "mkdocs.yml"),
            "-d",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("index", "usage", "file-format", "site", "architecture"):
        assert (out / f"{name}.html").is_file()
    text = (out / "index.html").read_text(encoding="utf-8")
    assert not re.search(r'<(?:script|link)\b[^>]*?(?:src|href)="(https?:)?//', text)
    assert (REPO_ROOT / "site" / "mkdocs.base.yml").is_file()  # the build did not touch site/


def test_missing_chromium_fails_under_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site_cdp, "find_chromium", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="scripts/install-browser"):
        site_cdp.chromium()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        site_cdp.chromium()


def test_out_accepts_an_empty_or_previous_site_folder(fx: Vaultfix, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert cli(fx.root, "site", "build", "--out", str(out), "--no-related").returncode == 0
    (out / "stale.html").write_text("old")
    again = cli(fx.root, "site", "build", "--out", str(out), "--no-related")
    assert again.returncode == 0, again.stderr
    assert not (out / "stale.html").exists() and (out / "index.html").is_file()
