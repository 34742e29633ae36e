"""`ccmemory check` reads and parses each memory file once (issue 29: at 100k memories the YAML
parse is most of a check), with the same findings as when the lifecycle rules parse on their own."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ccmemory.core import vault as vault_mod
from ccmemory.core.vault import Vault
from ccmemory.features import checks
from ccmemory.features.checks import check_vault
from ccmemory.features.lifecycle import gitread, review
from ccmemory.features.lifecycle.review import lifecycle_findings, load_worktree
from ccmemory.surfaces.cli.app import cli as ccmemory_cli
from tests.conftest import git
from tests.lifecycle_util import add_memory, commit_all


def _pull_request(repo: Path) -> None:
    """main with curated memories; a branch adding a duplicate, a secret, a broken file and an
    edit of a curated memory, part committed and part not."""
    add_memory(repo, "Store auth tokens in httpOnly cookies", files=["src/auth.py"])
    _, edited = add_memory(repo, "Deploy with blue green releases", body="Blue green deploys only.")
    add_memory(
        repo,
        "Migrations are not run automatically",
        "correction",
        fields={
            "wrong_belief": "database migrations run automatically on deploy",
            "right_belief": "run them",
        },
    )
    commit_all(repo, "curated")
    git(repo, "checkout", "-q", "-b", "feat")
    add_memory(repo, "Store auth tokens in httpOnly cookies!", body="Cookies again.")
    _, secret = add_memory(repo, "Connect to the staging database", body="Use STAGING_URL")
    path = repo / secret
    path.write_text(
        path.read_text(encoding="utf-8").replace("STAGING_URL", "postgres://app:s3cr3tPass@db/staging"),
        encoding="utf-8",
    )
    commit_all(repo, "feature")
    (repo / edited).write_text((repo / edited).read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    (repo / ".ccmemory/decisions/2026-11-21-broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")


def test_check_hands_its_parsed_files_to_the_lifecycle_rules_unchanged(repo: Path) -> None:
    _pull_request(repo)
    vault = Vault(repo)
    work: dict[str, Any] = {}
    check_vault(vault, work)
    assert work == load_worktree(vault)
    assert len(work) == 5  # the broken file is left out by both
    for base in ("main", None):
        assert lifecycle_findings(vault, base, None, work) == lifecycle_findings(vault, base)
    # main's tree: the files whose bytes the working tree has unchanged are taken from its parse
    parsed = {rel: (digest, m) for rel, (_, digest, m) in work.items()}
    assert gitread.records_at(repo, "main", parsed) == gitread.records_at(repo, "main")


@pytest.mark.parametrize("args", [["check"], ["check", "--base", "main"]])
def test_check_parses_each_file_once(repo: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    _pull_request(repo)
    counts: Counter[str] = Counter()
    real = vault_mod.parse_text

    def counting(text: str, rel: str, *a: Any, **kw: Any) -> Any:
        counts[rel] += 1
        return real(text, rel, *a, **kw)

    monkeypatch.setattr(checks, "parse_text", counting)
    monkeypatch.setattr(review, "parse_text", counting)
    at_base: Counter[str] = Counter()

    def counting_base(text: str, rel: str, *a: Any, **kw: Any) -> Any:
        at_base[rel] += 1
        return real(text, rel, *a, **kw)

    monkeypatch.setattr(gitread, "parse_text", counting_base)
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(ccmemory_cli, args)
    assert result.exit_code == 1, result.output  # the secret
    assert "possible secret" in result.output
    if "--base" in args:
        assert "duplicates curated decision" in result.output
        # of main's three files only the one edited since is parsed from main's tree
        assert list(at_base.values()) == [1] and next(iter(at_base)).startswith(".ccmemory/decisions/")
        assert "blue-green" in next(iter(at_base))
    assert len(counts) == 6 and set(counts.values()) == {1}, counts
