"""Hooks at 100k (issue 29): what SessionStart and PreToolUse read must not grow with the vault,
and must give what the whole reads gave.

- `file_links(f, matching)` (file-tied recall) reads only the links of the files `matching`
  accepts: the same rows, in the same order, as every link filtered afterwards;
- `_recent_files` (the SessionStart section "About files changed recently") has git leave the
  vault out, and still takes the last N commits whatever they touch."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.features.recall import paths as P
from ccmemory.features.recall.engine import FILE_TYPES, RECALL_TYPES, file_picks
from ccmemory.features.recentfiles import recent_files as _recent_files
from ccmemory.index import sqlite as sqlite_mod
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.sqlite import SQLiteIndex

FILES = [
    "src/a.py",
    "./src/a.py",
    "src//b.py",
    "src/",
    "src",
    "docs/*.md",
    "*.tf",
    "infra/**/main.tf",
    "src/sub/c.py",
    "lib/x[12].py",
    "README.md",
]
TOUCHED = [
    ["src/a.py"],
    ["src/b.py", "docs/guide.md"],
    ["infra/prod/eu/main.tf"],
    ["lib/x1.py", "src/sub/c.py"],
    ["nothing/here.py"],
]


def _index(tmp_path: Path) -> SQLiteIndex:
    rng = random.Random(29)
    start = parse_timestamp("2025-01-01T00:00:00Z")
    assert start is not None
    recs, status = [], {}
    for i in range(400):
        m = Memory(
            id=f"M{i:04d}",
            type=rng.choice(sorted({*RECALL_TYPES, "decision", "fact", "insight"})),
            title=f"memory {i}",
            body="body",
            created=start + timedelta(days=rng.randint(0, 50)),
            author=rng.choice(["a@x", "b@x"]),
            files=rng.sample(FILES, rng.randint(0, 3)),
        )
        recs.append(FileRecord(f"m{i}.md", 1, 1, f"h{i}", m))
        status[f"m{i}.md"] = "curated" if rng.random() < 0.7 else "developmental"
    idx = SQLiteIndex(tmp_path / "i.db")
    idx.apply("p", recs, [], lambda path: status[path])
    return idx


@pytest.mark.parametrize("max_names", [500, 1])  # an IN list, and the Python filter past the limit
def test_file_links_matching_equals_filtering_every_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_names: int
) -> None:
    monkeypatch.setattr(sqlite_mod, "_MAX_FILE_NAMES", max_names)
    idx = _index(tmp_path)
    filters = [
        Filters("p"),
        Filters("p", types=sorted(RECALL_TYPES)),
        Filters("p", viewer="a@x"),
        Filters("p", status="curated"),
    ]
    for touched in TOUCHED:

        def covers(pattern: str, touched: list[str] = touched) -> bool:
            return any(P.match(pattern, t) for t in touched)

        for f in filters:
            every = idx.file_links(f)
            assert every == sorted(every)
            assert idx.file_links(f, covers) == [r for r in every if covers(r[1])], (touched, f)
    # and the picks (strength, the path named, order) are those of matching every link
    for touched in TOUCHED:
        picks = file_picks(idx, "p", touched, limit=500)
        reference = _picks_over_every_link(idx, touched)
        assert [(p.memory.id, p.score, p.why) for p in picks] == reference


def _picks_over_every_link(idx: SQLiteIndex, touched: list[str]) -> list[tuple[str, float, str]]:
    from ccmemory.features.recall.engine import _TYPE_ORDER

    best: dict[str, tuple[int, str]] = {}
    for mem_id, pattern in idx.file_links(Filters("p", types=list(FILE_TYPES))):
        for path in touched:
            strength = P.match(pattern, path)
            if strength > best.get(mem_id, (0, ""))[0]:
                best[mem_id] = (strength, path)
    mems = sorted(
        idx.get("p", list(best)),
        key=lambda m: (
            m.type not in RECALL_TYPES,
            -best[m.id][0],
            _TYPE_ORDER.get(m.type, 99),
            m.created,
            m.id,
        ),
    )
    return [(m.id, float(best[m.id][0]), f"file {best[m.id][1]}") for m in mems]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _old_recent_files(root: Path, commits: int = 20) -> list[str]:
    """What `_recent_files` did before: every path from git, the vault dropped afterwards."""
    status = _git(root, "status", "--porcelain", "--no-renames")
    out = [line[3:].strip() for line in status.splitlines() if len(line) > 3]
    log = _git(root, "log", f"-n{commits}", "--name-only", "--format=")
    out += [line.strip() for line in log.splitlines() if line.strip()]
    return [f for f in dict.fromkeys(out) if not f.startswith(".ccmemory/")][:200]


def test_recent_files_equal_every_path_filtered(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "t@x")
    _git(root, "config", "user.name", "t")
    rng = random.Random(5)
    for i in range(30):
        # older commits touch code, the last ones mostly the vault: `-n20` must still take the
        # last 20 commits, not the last 20 that touch code
        for _ in range(rng.randint(1, 3)):
            code = i < 18 or rng.random() < 0.2
            rel = f"src/f{rng.randint(0, 40)}.py" if code else f".ccmemory/facts/m{rng.randint(0, 60)}.md"
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{i}\n", encoding="utf-8")
        if i < 18:
            (root / "top.txt").write_text(f"{i}\n", encoding="utf-8")
        if i == 25:
            (root / "sub").mkdir()
            (root / "sub" / ".ccmemory").mkdir()  # not the vault: kept
            (root / "sub" / ".ccmemory" / "x.md").write_text("x\n", encoding="utf-8")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"c{i}")
    (root / "src" / "f1.py").write_text("changed\n", encoding="utf-8")
    (root / ".ccmemory" / "facts" / "new.md").write_text("new\n", encoding="utf-8")
    (root / "untracked.py").write_text("u\n", encoding="utf-8")
    (root / "a dir").mkdir()
    (root / "a dir" / "n.txt").write_text("n\n", encoding="utf-8")
    (root / "src" / "new.py").write_text("n\n", encoding="utf-8")
    (root / ".gitignore").write_text("ignored.log\n", encoding="utf-8")
    (root / "ignored.log").write_text("i\n", encoding="utf-8")
    for p in (root / "sub" / ".ccmemory").iterdir():  # a tracked top-level folder deleted
        p.unlink()
    (root / "sub" / ".ccmemory").rmdir()
    (root / "sub").rmdir()
    _git(root, "add", "-N", "src/new.py")
    assert _recent_files(root) == _old_recent_files(root)
    assert {'"a dir/"', "untracked.py", "sub/.ccmemory/x.md", "src/f1.py"} <= set(_recent_files(root))
    for n in (1, 5, 29, 40):
        assert _recent_files(root, n) == _old_recent_files(root, n), n


def test_recent_files_of_a_vault_below_the_top(tmp_path: Path) -> None:
    top = tmp_path / "mono"
    root = top / "app"
    (root / ".ccmemory").mkdir(parents=True)
    _git(top, "init", "-q", "-b", "main")
    _git(top, "config", "user.email", "t@x")
    _git(top, "config", "user.name", "t")
    (root / ".ccmemory" / "m.md").write_text("m\n", encoding="utf-8")
    (top / "lib.py").write_text("l\n", encoding="utf-8")
    _git(top, "add", "-A")
    _git(top, "commit", "-q", "-m", "c")
    (top / "other.py").write_text("o\n", encoding="utf-8")
    (root / "x.py").write_text("x\n", encoding="utf-8")
    assert _recent_files(root) == _old_recent_files(root)
    assert "other.py" in _recent_files(root)


@pytest.mark.skipif(not hasattr(__import__("os"), "memfd_create"), reason="one status needs memfd_create")
def test_one_status_call_gives_the_two_calls_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`status_outside_vault` asks git once (the vault added to the global excludes, in memory):
    the same lines, in the same order, as the tracked status plus the untracked lines of the
    top-level entries, with staged, modified, deleted and renamed files, untracked ones at the top
    and below, and ignore rules from .gitignore, info/exclude and the user's global excludes file
    (core.excludesFile, relative or absolute, or the XDG default), one of which re-includes the vault."""
    from ccmemory.features import recentfiles

    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "t@x")
    _git(root, "config", "user.name", "t")
    for rel in (
        "src/a.py",
        "src/b.py",
        "src/old.py",
        "docs/d.md",
        "top.txt",
        "gone/x.py",
        ".ccmemory/facts/m.md",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{rel}\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "c")
    (root / "src" / "a.py").write_text("changed\n", encoding="utf-8")  # modified
    (root / "src" / "b.py").write_text("staged\n", encoding="utf-8")
    _git(root, "add", "src/b.py")  # staged
    _git(root, "mv", "src/old.py", "src/new.py")  # renamed (listed as D + A)
    (root / "top.txt").unlink()  # deleted
    _git(root, "rm", "-rq", "gone")  # a whole top-level folder deleted
    (root / "staged-then-removed.py").write_text("s\n", encoding="utf-8")
    _git(root, "add", "staged-then-removed.py")
    (root / "staged-then-removed.py").unlink()
    for rel in ("untracked.py", "newdir/n.txt", "src/u.py", "docs/skip.tmp", "g.glob", "l.local", "x.xdg"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("u\n", encoding="utf-8")
    (root / ".ccmemory" / "facts" / "stray.md").write_text("s\n", encoding="utf-8")  # the vault's own
    (root / ".gitignore").write_text("*.tmp\n", encoding="utf-8")
    (root / ".git" / "info" / "exclude").write_text("*.local\n", encoding="utf-8")
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.xdg", encoding="utf-8")  # no final newline
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    outside = ("--", ":/", ":(top,exclude).ccmemory")
    calls: list[str] = []
    real_one = recentfiles._status_one_call

    def two_calls(*_a: object) -> None:
        calls.append("two")

    def one_call(*a: object) -> str | None:
        calls.append("one")
        return real_one(*a)  # type: ignore[arg-type]

    def both() -> tuple[str, str]:
        monkeypatch.setattr(recentfiles, "_status_one_call", two_calls)
        two = recentfiles.status_outside_vault(root, outside)
        monkeypatch.setattr(recentfiles, "_status_one_call", one_call)
        one = recentfiles.status_outside_vault(root, outside)
        return one, two

    one, two = both()
    assert one == two and calls == ["two", "one"]
    assert "?? x.xdg" not in one and "?? l.local" not in one and "docs/skip.tmp" not in one  # ignored
    for line in (
        "M  src/b.py",
        " M src/a.py",
        "D  src/old.py",
        "A  src/new.py",
        " D top.txt",
        "D  gone/x.py",
    ):
        assert line in one.splitlines(), line
    assert "AD staged-then-removed.py" in one and "?? newdir/" in one and "?? src/u.py" in one
    assert ".ccmemory" not in one
    # core.excludesFile, absolute then relative to the top; the vault re-included by .gitignore
    (tmp_path / "global-ignore").write_text("*.glob\n", encoding="utf-8")
    _git(root, "config", "core.excludesFile", str(tmp_path / "global-ignore"))
    one, two = both()
    assert one == two and "g.glob" not in one and "?? x.xdg" in one
    (root / "my-ignore").write_text("*.py\n", encoding="utf-8")
    _git(root, "config", "core.excludesFile", "my-ignore")
    (root / ".gitignore").write_text("*.tmp\n!.ccmemory/\n", encoding="utf-8")
    one, two = both()
    assert one == two and "untracked.py" not in one and "?? g.glob" in one
    # an excludes file git cannot read as a plain file: the two calls
    _git(root, "config", "core.excludesFile", str(tmp_path))
    calls.clear()
    monkeypatch.setattr(recentfiles, "_status_one_call", real_one)
    assert recentfiles._status_one_call(root, ("status", "--porcelain", "--no-renames"), outside) is None


@pytest.mark.parametrize(
    ("config", "env", "order"),
    [
        ("project: p\n", {}, ["prefetch", "settings"]),  # defaults: git starts first
        ("project: p\ncontext:\n  budget_tokens: 300\n", {}, ["settings", "prefetch"]),
        ("project: p\ncontext:\n  enabled: false\n", {}, ["settings"]),  # off: no git work at all
        ("project: p\n", {"CCMEMORY_CONTEXT": "0"}, ["settings"]),
        ("project: p\n", {"CCMEMORY_CONTEXT_BUDGET": "300"}, ["settings", "prefetch"]),
    ],
)
def test_session_start_starts_git_before_the_settings_only_when_the_context_is_surely_on(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    config: str,
    env: dict[str, str],
    order: list[str],
) -> None:
    """SessionStart starts its git work (recent files, staleness walk) before loading the settings
    (their YAML import) when neither the environment nor config.yaml mentions the context, after
    them otherwise, and never when the context is off. The digest is the same either way."""
    from ccmemory.features.capture import settings as settings_mod
    from ccmemory.surfaces import hooks

    for key in ("CCMEMORY_CONTEXT", "CCMEMORY_CONTEXT_BUDGET"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    (repo / ".ccmemory" / "config.yaml").write_text(config, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "ccmemory", "new", "preference", "Tabs over spaces in the widget module"],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    seen: list[str] = []
    real_load, real_prefetch = settings_mod.load, hooks._prefetch
    monkeypatch.setattr(settings_mod, "load", lambda *a, **k: seen.append("settings") or real_load(*a, **k))
    monkeypatch.setattr(hooks, "_prefetch", lambda root: seen.append("prefetch") or real_prefetch(root))
    hooks.session_start(str(repo), {"session_id": "s", "source": "startup"})
    out = capsys.readouterr().out
    assert seen == order
    assert ("Tabs over spaces" in out) == ("prefetch" in order)


def test_parsed_settings_are_kept_with_their_exact_text(repo: Path) -> None:
    """config.yaml's parse is kept in .ccmemory/local/ with the text it came from (the YAML
    library stays unimported on the hooks' path): the same dict as a parse, a new parse when the
    text changes, nothing kept for what JSON cannot carry unchanged, a damaged copy is a miss."""
    import json

    from ccmemory.core import config
    from ccmemory.core.yamlio import load_yaml

    vault = repo / ".ccmemory"
    cfg = vault / "config.yaml"
    kept = vault / "local" / config._PARSED_FILE
    text = "project: p\ncontext:\n  budget_tokens: 300\nrecall: {enabled: no}\nstale_lines: 7.5\n"
    cfg.write_text(text, encoding="utf-8")
    first = config.read_config_file(vault)
    assert first == load_yaml(text) and first["recall"]["enabled"] is False
    assert json.loads(kept.read_text())["text"][-1] == text
    kept.write_text(kept.read_text().replace('"p"', '"from the copy"'))  # read back: the copy is used
    assert config.read_config_file(vault)["project"] == "from the copy"
    time.sleep(0.01)
    cfg.write_text(text, encoding="utf-8")  # the same text written again (a checkout): parsed again
    assert config.read_config_file(vault)["project"] == "p"
    cfg.write_text(text.replace("300", "400"), encoding="utf-8")  # another text: parsed again
    assert config.read_config_file(vault)["context"]["budget_tokens"] == 400
    assert json.loads(kept.read_text())["data"]["context"]["budget_tokens"] == 400
    for odd in ("project: p\nsince: 2026-01-02\n", "project: p\n1: one\n", "project: p\ntrue: x\n"):
        kept.unlink(missing_ok=True)
        cfg.write_text(odd, encoding="utf-8")
        assert config.read_config_file(vault) == load_yaml(odd) and not kept.exists(), odd
    cfg.write_text("project: p\n", encoding="utf-8")
    kept.write_text("{damaged")
    assert config.read_config_file(vault) == {"project": "p"}
    cfg.write_text("project: [unclosed\n", encoding="utf-8")  # an error is still an error
    with pytest.raises(ValueError, match="cannot read settings"):
        config.read_config_file(vault)
    # the SessionStart hook, run twice: the second imports no YAML library
    code = (
        "import io, sys\nfrom ccmemory.surfaces.hooks import main\n"
        f'sys.stdin = io.TextIOWrapper(io.BytesIO(b\'{{"cwd": "{repo}", "source": "startup"}}\'))\n'
        "main(['SessionStart'])\nprint('yaml' in sys.modules, file=sys.stderr)\n"
    )
    cfg.write_text("project: p\n", encoding="utf-8")
    kept.unlink(missing_ok=True)
    runs = [
        subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert [r.stderr.strip() for r in runs] == ["True", "False"]
