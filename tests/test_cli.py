"""The CLI end to end in real git repositories, as a user and a script would use it."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.conftest import RunCli, git, init_git


def new(run_cli: RunCli, repo: Path, *args: str) -> dict[str, str]:
    out = run_cli(repo, "new", *args, "--json").stdout
    return json.loads(out)


def test_init_creates_vault_and_ignores_local(tmp_path: Path, run_cli: RunCli) -> None:
    root = init_git(tmp_path / "r")
    (root / ".gitignore").write_text("node_modules/")  # no trailing newline
    run_cli(root, "init")
    assert (root / ".ccmemory" / "config.yaml").is_file()
    assert (root / ".ccmemory" / "local" / "index.db").is_file()
    assert (root / ".gitignore").read_text() == "node_modules/\n.ccmemory/local/\n"
    run_cli(root, "init")  # idempotent
    assert (root / ".gitignore").read_text().count(".ccmemory/local/") == 1
    assert git(root, "check-ignore", ".ccmemory/local/index.db").strip() == ".ccmemory/local/index.db"


def test_new_search_show_trace_context(tmp_path: Path, run_cli: RunCli) -> None:
    root = init_git(tmp_path / "r")
    run_cli(root, "init")
    path = run_cli(
        root,
        "new",
        "decision",
        "Use httpOnly cookies",
        "--topic",
        "auth",
        "--body",
        "Session tokens live in httpOnly cookies, never in localStorage.",
    ).stdout.strip()
    assert path.startswith(".ccmemory/decisions/")
    assert re.search(r"/\d{4}-\d{2}-\d{2}-use-httponly-cookies-[0-9a-z]{4}\.md$", path), path
    text = (root / path).read_text()
    assert "type: decision" in text and "author: alice@example.com" in text and "branch: main" in text
    first = json.loads(run_cli(root, "search", "where do tokens live", "--json").stdout)
    assert first[0]["title"] == "Use httpOnly cookies"
    assert {"id", "type", "title", "score", "status", "path"} <= set(first[0])
    assert first[0]["status"] == "developmental"  # not committed to main yet
    old_id = first[0]["id"]
    newer = new(
        run_cli,
        root,
        "decision",
        "Use httpOnly SameSite=Strict cookies",
        "--topic",
        "auth",
        "--supersedes",
        old_id[:10],
        "--body",
        "Tokens live in SameSite=Strict cookies.",
    )
    # superseded memories are left out by default, shown on request
    hits = json.loads(run_cli(root, "search", "tokens cookies", "--json").stdout)
    assert [h["id"] for h in hits] == [newer["id"]]
    hits = json.loads(run_cli(root, "search", "tokens cookies", "--json", "--include-superseded").stdout)
    assert {h["id"] for h in hits} == {newer["id"], old_id}
    # show by id prefix and by path
    shown = json.loads(run_cli(root, "show", old_id[:14], "--json").stdout)
    assert shown["superseded_by"] == [newer["id"]]
    assert json.loads(run_cli(root, "show", newer["path"], "--json").stdout)["id"] == newer["id"]
    # the older file was never rewritten: the reverse edge is derived
    assert "supersed" not in (root / path).read_text()
    trace = json.loads(run_cli(root, "trace", old_id, "--json").stdout)
    assert [c["id"] for c in trace["chain"]] == [old_id, newer["id"]]
    assert trace["steps"][0]["relation"] == "SUPERSEDED_BY"
    ctx = json.loads(run_cli(root, "context", "--json", "--budget", "300").stdout)
    assert newer["id"] in ctx["ids"] and ctx["tokens"] <= 300
    # commit on main: status becomes curated after reindex (the post-commit hook is turned off here,
    # so this run is the one that sees the change; tests/test_lifecycle_hooks.py covers the hook)
    git(root, "add", "-A")
    git(root, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "memories")
    out = run_cli(root, "reindex").stdout
    assert "status changed 2" in out
    hits = json.loads(run_cli(root, "search", "tokens", "--json").stdout)
    assert hits[0]["status"] == "curated"


def test_hand_edit_rename_delete_then_reindex(repo: Path, run_cli: RunCli) -> None:
    made = new(run_cli, repo, "fact", "Deploys run from the release branch", "--body", "See the runbook.")
    path = repo / made["path"]
    path.write_text(path.read_text().replace("See the runbook.", "Deploys use the zebra pipeline."))
    out = run_cli(repo, "reindex", "--json").stdout
    assert json.loads(out)["updated"] == 1
    assert json.loads(run_cli(repo, "search", "zebra", "--json").stdout)[0]["id"] == made["id"]
    moved = path.with_name("renamed.md")
    path.rename(moved)
    run_cli(repo, "reindex")
    hit = json.loads(run_cli(repo, "search", "zebra", "--json").stdout)[0]
    assert hit["id"] == made["id"] and hit["path"].endswith("/renamed.md")  # a rename keeps the id
    moved.unlink()
    report = json.loads(run_cli(repo, "reindex", "--json").stdout)
    assert report["removed"] == 1
    assert json.loads(run_cli(repo, "search", "zebra", "--json").stdout) == []


BAD_FILES = {
    "malformed.md": ("---\nid: [oops\ntitle: x\n---\n", 3, "malformed YAML"),
    "nofm.md": ("just text\n", 1, "no YAML frontmatter"),
    "conflict.md": ("---\n<<<<<<< HEAD\nid: a\n=======\nid: b\n>>>>>>> x\n---\n", 2, "conflict markers"),
}


def test_reindex_reports_bad_files_and_indexes_the_rest(repo: Path, run_cli: RunCli) -> None:
    good = new(run_cli, repo, "fact", "Good memory about walruses")
    folder = repo / ".ccmemory" / "facts"
    for name, (text, _, _) in BAD_FILES.items():
        (folder / name).write_text(text)
    (folder / "binary.md").write_bytes(b"\x00\x01\x02")
    (folder / "big.md").write_bytes(b"---\n" + b"a" * (1024 * 1024 + 1))
    before = {p: p.read_bytes() for p in folder.iterdir()}
    proc = run_cli(repo, "reindex", "--json", check=False)
    assert proc.returncode == 1  # invalid files were left out: scripts can tell
    report = json.loads(proc.stdout)
    problems = {Path(e["path"]).name: e for e in report["errors"]}
    for name, (_, line, reason) in BAD_FILES.items():
        assert problems[name]["line"] == line and reason in problems[name]["reason"]
    assert "binary" in problems["binary.md"]["reason"]
    assert "1 MB" in problems["big.md"]["reason"]
    assert json.loads(run_cli(repo, "search", "walruses", "--json").stdout)[0]["id"] == good["id"]
    assert {p: p.read_bytes() for p in folder.iterdir()} == before  # nothing deleted or rewritten
    plain = run_cli(repo, "reindex", check=False)
    assert (
        plain.returncode == 1
        and "invalid file(s) left out" in plain.stderr
        and "--allow-invalid" in plain.stderr
    )
    assert "s files and index, " in plain.stdout and "s embedding)" in plain.stdout  # both phases timed
    # a memory whose file turns bad is dropped (with the error reported), not served stale
    good_path = repo / good["path"]
    good_path.write_text("---\nid: [broken\n---\n")
    report = json.loads(run_cli(repo, "reindex", "--json", "--allow-invalid").stdout)
    assert any(e["path"] == good["path"] for e in report["errors"])
    assert json.loads(run_cli(repo, "search", "walruses", "--json").stdout) == []


def test_check_names_path_and_line_and_exits_1(repo: Path, run_cli: RunCli) -> None:
    made = new(run_cli, repo, "decision", "A fine decision")
    assert run_cli(repo, "check").returncode == 0
    folder = repo / ".ccmemory" / "decisions"
    (folder / "bad.md").write_text(
        "---\nid: 01JD3K8X9QF2B7M4R6T0VWYZAC\ntype: decision\ntitle: t\ncreated: 2026-11-20T10:00:00Z\n"
        "confidence: 7\nrelations:\n  - {type: LIKES, target: 01JD3K8X9QF2B7M4R6T0VWYZAD}\n---\nbody\n"
    )
    dup = (repo / made["path"]).read_text()
    (folder / "zz-copy.md").write_text(dup)
    proc = run_cli(repo, "check", check=False)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert ".ccmemory/decisions/bad.md:6: confidence 7 is outside 0..1" in lines
    assert any(
        line.startswith(".ccmemory/decisions/bad.md:7: unknown relation type 'LIKES'") for line in lines
    )
    assert any(
        line.startswith(".ccmemory/decisions/zz-copy.md:2: duplicate id") and made["path"] in line
        for line in lines
    )
    # the index reports the duplicate too, naming both files
    report = json.loads(run_cli(repo, "reindex", "--json", "--allow-invalid").stdout)
    dup_err = [e for e in report["errors"] if "duplicate id" in e["reason"]]
    assert dup_err and dup_err[0]["path"].endswith("zz-copy.md") and made["path"] in dup_err[0]["reason"]


def test_dangling_relation_is_a_warning(repo: Path, run_cli: RunCli) -> None:
    from ccmemory.core.model import Relation
    from ccmemory.core.vault import Vault
    from tests.conftest import make_memory

    gone = "01JD3K8X9QF2B7M4R6T0VWYZAC"
    # `new` refuses a target that names no memory (the one policy, ccmemory/draft.py) ...
    refused = run_cli(
        repo, "new", "insight", "Depends on something gone", "--relation", f"DEPENDS_ON:{gone}", check=False
    )
    assert refused.returncode != 0 and gone in refused.stderr and "no memory written" in refused.stderr
    # ... so a link to a memory that is not here (yet) is written by hand, and `check` warns
    Vault(repo).write_new(
        make_memory("insight", "Depends on something gone", relations=[Relation("DEPENDS_ON", gone)])
    )
    proc = run_cli(repo, "check")
    assert "warning: links to unknown memory id 01JD3K8X9QF2B7M4R6T0VWYZAC" in proc.stdout


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "tokens*",
        "-tokens",
        "title:tokens",
        "tokens NEAR cookies",
        "tokens AND (cookies",
        "tokens OR",
        "NOT",
        "*",
        '""',
        "()",
        "x'); DROP TABLE memories; --",
        "^tokens",
        "{tokens}",
    ],
)
def test_query_syntax_is_plain_words(repo: Path, run_cli: RunCli, query: str) -> None:
    new(run_cli, repo, "decision", "Tokens in cookies", "--body", "tokens cookies near title")
    proc = run_cli(repo, "search", "--json", "--mode", "text", "--", query)
    hits = json.loads(proc.stdout)
    assert isinstance(hits, list)
    if "tokens" in query:
        assert [h["title"] for h in hits] == ["Tokens in cookies"]
    conn = sqlite3.connect(repo / ".ccmemory" / "local" / "index.db")
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def test_filters(repo: Path, run_cli: RunCli) -> None:
    a = new(run_cli, repo, "decision", "Redis for sessions", "--topic", "cache", "--file", "src/session.py")
    b = new(run_cli, repo, "correction", "Redis is version 7", "--topic", "ops", "--file", "deploy/redis.yml")

    def ids(*args: str) -> set[str]:
        return {h["id"] for h in json.loads(run_cli(repo, "search", "redis", "--json", *args).stdout)}

    assert ids() == {a["id"], b["id"]}
    assert ids("--type", "correction") == {b["id"]}
    assert ids("--topic", "CACHE") == {a["id"]}
    assert ids("--file", "deploy/") == {b["id"]}
    assert ids("--file", "src/session.py") == {a["id"]}
    assert ids("--status", "curated") == set()
    assert ids("--since", "1d") == {a["id"], b["id"]}
    assert ids("--until", "2020-01-01") == set()
    assert len(json.loads(run_cli(repo, "search", "redis", "--json", "--limit", "1").stdout)) == 1


def test_outside_a_vault_says_run_init(tmp_path: Path, run_cli: RunCli) -> None:
    proc = run_cli(tmp_path, "search", "x", check=False)
    assert proc.returncode != 0 and "ccmemory init" in proc.stderr


def test_outside_git_everything_is_curated(tmp_path: Path, run_cli: RunCli) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    run_cli(plain, "init", str(plain))
    run_cli(plain, "new", "fact", "No git here")
    assert json.loads(run_cli(plain, "search", "git", "--json").stdout)[0]["status"] == "curated"


def test_corrupt_index_is_rebuilt_from_files(repo: Path, run_cli: RunCli) -> None:
    new(run_cli, repo, "fact", "Penguins like ice")
    db = repo / ".ccmemory" / "local" / "index.db"
    for suffix in ("", "-wal", "-shm"):
        p = Path(str(db) + suffix)
        if p.exists():
            p.unlink()
    run_cli(repo, "reindex")
    assert json.loads(run_cli(repo, "search", "penguins", "--json").stdout)
    db.write_bytes(b"this is not a database" * 100)
    # the cache heals itself: the corrupt file is moved aside (kept) and rebuilt from the files
    found = json.loads(run_cli(repo, "search", "penguins", "--json").stdout)
    assert [m["title"] for m in found] == ["Penguins like ice"]
    aside = list(db.parent.glob("index.db.corrupt-*"))
    assert [p.read_bytes()[:22] for p in aside if not p.name.endswith(("-wal", "-shm"))] == [
        b"this is not a database"
    ]
    assert os.path.exists(repo / ".ccmemory" / "facts")


def test_a_mistyped_command_gets_did_you_mean(tmp_path: Path, run_cli: RunCli) -> None:
    typo = run_cli(tmp_path, "serach", "redis", check=False)
    assert typo.returncode == 2 and "No such command 'serach'. Did you mean 'search'?" in typo.stderr
    other = run_cli(tmp_path, "frobnicate", check=False)
    assert other.returncode == 2 and "Did you mean" not in other.stderr
    assert run_cli(tmp_path, "--help").returncode == 0


def test_init_files_honour_the_umask_and_keep_the_gitignore_mode(tmp_path: Path, run_cli: RunCli) -> None:
    """config.yaml and README.md are committed and shared: 0644 under umask 022, like any file an
    editor writes (issue 33: they were 0600); an existing .gitignore keeps its own mode."""
    import stat

    root = tmp_path / "r"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("node_modules/\n")
    (root / ".gitignore").chmod(0o664)
    old = os.umask(0o022)
    try:
        run_cli(root, "init", "--no-git-hooks")
    finally:
        os.umask(old)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(root / ".ccmemory" / "config.yaml") == 0o644
    assert mode(root / ".ccmemory" / "README.md") == 0o644
    assert mode(root / ".gitignore") == 0o664 and ".ccmemory/local/" in (root / ".gitignore").read_text()


def test_show_of_an_invalid_file_points_at_check(repo: Path, run_cli: RunCli) -> None:
    """`show` of a file the index left out names the file, line and reason, and `check` (issue 33)."""
    bad = repo / ".ccmemory" / "facts" / "2026-11-21-broken-yaml.md"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("---\nid: [broken\ntype: fact\n---\nbody\n")
    run_cli(repo, "reindex", "--allow-invalid")
    for ref in (".ccmemory/facts/2026-11-21-broken-yaml.md", "broken-yaml"):
        proc = run_cli(repo, "show", ref, check=False)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        assert ".ccmemory/facts/2026-11-21-broken-yaml.md:" in proc.stderr and "is invalid" in proc.stderr
        assert "ccmemory check" in proc.stderr and "reindex" not in proc.stderr
    plain = run_cli(repo, "show", "no-such-thing", check=False)
    assert plain.returncode != 0 and "is invalid" not in plain.stderr


def test_search_and_digest_say_a_memory_file_was_left_out(repo: Path, run_cli: RunCli) -> None:
    """A hand-edited memory with a value outside the schema is left out of the index: `search`
    (stderr, stdout unchanged) and the session digest say so instead of answering as if it did not
    exist; once fixed and reindexed, neither says anything."""
    run_cli(repo, "new", "gotcha", "Invoice exporter retries double-charge customers")
    made = run_cli(repo, "new", "gotcha", "Ledger rounding uses banker's rounding").stdout.strip()
    bad = repo / made
    text = bad.read_text()
    bad.write_text(text.replace("severity: significant", "severity: high"))
    assert "severity: high" in bad.read_text()
    run_cli(repo, "reindex", "--allow-invalid")
    found = run_cli(repo, "search", "ledger rounding invoice", "--mode", "text")
    assert f"1 memory file is invalid, so not indexed and not searched: {made}" in found.stderr
    assert "Invoice exporter" in found.stdout and "invalid" not in found.stdout
    as_json = run_cli(repo, "search", "ledger rounding", "--mode", "text", "--json")
    assert json.loads(as_json.stdout) == [] and made in as_json.stderr
    digest = run_cli(repo, "context").stdout
    assert "Note: 1 memory file is invalid" in digest and "ccmemory check" in digest
    assert made not in digest  # the count only: `check` names the files
    bad.write_text(text)
    run_cli(repo, "reindex")
    again = run_cli(repo, "search", "ledger rounding", "--mode", "text")
    assert "invalid" not in again.stderr and "Ledger rounding" in again.stdout
    assert "invalid" not in run_cli(repo, "context").stdout


def test_outside_git_init_and_new_say_what_does_not_apply(tmp_path: Path, run_cli: RunCli) -> None:
    """A folder that is not a git repository works, with a word on stderr (issue 33); stdout (the
    path `new` prints for scripts) is unchanged, and inside git nothing is said."""
    plain = tmp_path / "plain"
    plain.mkdir()
    init = run_cli(plain, "init")
    assert "not a git repository" in init.stderr and "promotion" in init.stderr
    made = run_cli(plain, "new", "fact", "The kiln runs at night")
    assert made.stdout.strip().startswith(".ccmemory/facts/") and "not a git repository" in made.stderr
    root = init_git(tmp_path / "r")
    run_cli(root, "init")
    inside = run_cli(root, "new", "fact", "The kiln runs at night")
    assert "not a git repository" not in inside.stderr + run_cli(root, "init").stderr
