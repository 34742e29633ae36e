"""Secrets × entry points (issue 19, docs/security.md): no secret kind reaches a memory file, the
index, a site page or the capture spool, whichever way it comes in, and `check` does not report
ccmemory's own `[REDACTED:…]` markers.

Entry points: CLI `new` (title, body, --topic, --file, --field), MCP `record_fact` (every
free-text argument incl. topics, files, session) and `memory_supersede` (which copies topics and
files forward), the write choke point itself (`Vault.write_new`, used by capture and import), the
PostToolUse hook (a token straddling the 500-character cut) and the site (a hand-written file).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccmemory.core.redact import find_secrets, redact
from tests.capture_helpers import hook_env, run_hook
from tests.conftest import RunCli, make_memory
from tests.secret_samples import ALL, ALL_TEXT, CASES, NEW_CASES


def leaks(text: str) -> list[str]:
    return [kind for _, secret, kind in ALL if secret in text]


@pytest.mark.parametrize(
    ("text", "secret", "kind"), NEW_CASES, ids=[f"{c[2]}-{i}" for i, c in enumerate(NEW_CASES)]
)
def test_new_patterns(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out and f"[REDACTED:{kind}]" in out
    assert not find_secrets(out) or all(f.kind != kind for f in find_secrets(out))


@pytest.mark.parametrize(
    "text",
    [
        "curl -u $USER:$PASS https://x",
        "mysql -p db",
        "psql --password $PGPASSWORD",
        "Authorization: Basic <base64>",
        "https://example.com/search?q=tokens&page=2",
    ],
)
def test_new_patterns_leave_placeholders(text: str) -> None:
    assert redact(text) == text


# --- the choke point: every field ----------------------------------------------------------------


def test_write_new_redacts_every_field(repo: Path) -> None:
    from ccmemory.core.model import Relation
    from ccmemory.core.vault import Vault

    m = make_memory(
        "decision",
        title=f"Rotate {CASES[0][1]}",
        body=ALL_TEXT,
        author="ci GITHUB_TOKEN=ghp_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu",
        session="sess npm_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu",
        branch="feat/AKIAZ7Q4XJ2M5N8P3R6T",
        topics=[t for t, _, _ in ALL],
        files=["config/.env?access_token=Zq8Xk2Lm9NwR7d9Kq2mX&x=1"],
        relations=[Relation("RELATES_TO", "01JD0000000000000000000001", ALL_TEXT)],
        fields={"rationale": ALL_TEXT, "options_considered": [t for t, _, _ in ALL]},
        extra={"notes": ALL_TEXT},
    )
    path = Vault(repo).write_new(m)
    text = path.read_text(encoding="utf-8")
    assert leaks(text) == []
    assert "AKIAZ7Q4XJ2M5N8P3R6T" not in path.name
    parsed = Vault(repo).read(path)  # still a valid memory file
    assert parsed.relations[0].target == "01JD0000000000000000000001"


# --- CLI new, site, check ------------------------------------------------------------------------


def test_cli_new_redacts_and_check_accepts_its_markers(repo: Path, run_cli: RunCli) -> None:
    out = run_cli(
        repo,
        "new",
        "decision",
        f"Use {CASES[0][1]} for deploys",
        "--body",
        ALL_TEXT,
        "--topic",
        "deploy token ghp_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu",
        "--file",
        "x?access_token=Zq8Xk2Lm9NwR7d9Kq2mX&y=1",
        "--field",
        f"rationale={ALL_TEXT}",
        "--json",
    ).stdout
    rel = json.loads(out)["path"]
    text = (repo / rel).read_text(encoding="utf-8")
    assert leaks(text) == []
    assert text.count("[REDACTED:") >= len(ALL)
    proc = run_cli(repo, "check", "--json", check=False)
    assert [f for f in json.loads(proc.stdout) if "secret" in f["message"]] == []  # own markers
    found = json.loads(run_cli(repo, "search", "deploys", "--json", "--mode", "text").stdout)
    assert found and leaks(json.dumps(found)) == []


def test_site_pages_never_show_a_hand_written_secret(repo: Path, run_cli: RunCli) -> None:
    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault
    from ccmemory.surfaces.site.generator import SiteGenerator

    folder = repo / ".ccmemory" / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    body = ALL_TEXT.replace("\n", "\n\n")
    (folder / "leak.md").write_text(
        "---\nid: 01JD0000000000000000000003\ntype: fact\ntitle: Hand written leak\n"
        "created: 2026-11-20T14:03:11Z\n---\n\n" + body + "\n",
        encoding="utf-8",
    )
    proc = run_cli(repo, "check", "--json", check=False)
    assert proc.returncode == 1 and any("possible secret" in f["message"] for f in json.loads(proc.stdout))
    with Service(Vault(repo)) as svc:
        gen = SiteGenerator(svc, repo / "build", related=False)
        gen.generate(repo / "site")
    pages = "".join(p.read_text(encoding="utf-8") for p in (repo / "build").rglob("*.md"))
    assert "Hand written leak" in pages
    assert leaks(pages) == []


# --- MCP -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, object]]:
    from tests._mcp_client import SyncClient, make_repo

    repo = make_repo(tmp_path_factory.mktemp("mcp-secrets") / "repo")
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as client:
        yield repo, client


def _all_files(repo: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in (repo / ".ccmemory").rglob("*.md"))


def test_mcp_record_and_supersede_redact_every_argument(mcp: tuple[Path, object]) -> None:
    repo, client = mcp
    short = [t for t, _, _ in ALL if len(t) <= 60]  # topics are at most 60 characters
    long = [t for t, _, _ in ALL if 60 < len(t) <= 300]
    assert len(short) + len(long) >= len(ALL) - 1  # every kind but the multi-line PEM goes in a list
    args = {
        "title": f"Staging uses {CASES[0][1]}",
        "body": ALL_TEXT,
        "topics": short[:20],
        "files": [*short[20:], *long],
        "session": "npm_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu",
    }
    # `//registry.npmjs.org/:_authToken …` is an absolute path outside the repository: refused, and
    # the refusal names it redacted
    err = client.error("record_fact", args)  # type: ignore[attr-defined]
    assert err["code"] == "invalid_argument" and "not inside the repository" in err["message"]
    assert leaks(json.dumps(err)) == []
    # inside the repository, every entry is stored (redacted)
    rec = client.call("record_fact", {**args, "files": [f"s/{f}" for f in args["files"]]})  # type: ignore[attr-defined]
    assert leaks(_all_files(repo)) == []
    client.call(  # type: ignore[attr-defined]
        "memory_supersede",
        {"old_id": rec["id"], "title": "Staging moved", "body": "curl -u ops:Tr0ub4dor-horses https://x"},
    )
    assert leaks(_all_files(repo)) == []
    got = client.call("search", {"query": "staging"})  # type: ignore[attr-defined]
    assert leaks(json.dumps(got)) == []


# --- hooks: redact before the cut ----------------------------------------------------------------


@pytest.mark.parametrize("offset", [480, 490, 495, 499])
def test_hook_redacts_before_cutting_a_long_command(tmp_path: Path, offset: int) -> None:
    from tests.capture_helpers import make_repo

    repo = make_repo(tmp_path)
    token = "ghp_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu"
    cmd = "x" * (offset - len("GITHUB_TOKEN=")) + f" GITHUB_TOKEN={token} make deploy"
    payload = {
        "session_id": "s-1",
        "cwd": str(repo),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": cmd},
        "tool_response": {"stdout": "", "interrupted": False},
        "tool_use_id": "toolu_1",
    }
    assert run_hook("PostToolUse", payload, repo, hook_env()).returncode == 0
    spool = (repo / ".ccmemory/local/spool/s-1.jsonl").read_text(encoding="utf-8")
    for n in range(8, len(token)):  # no 8+ character piece of the token survives
        assert token[:n] not in spool
