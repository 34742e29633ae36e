"""ccmemory promote."""

from __future__ import annotations

import click

from ccmemory.surfaces.cli.common import emit_json, notice
from ccmemory.surfaces.cli.errors import cli_error


@click.command("promote")
@click.option("--branch", "-b", help="The branch whose memories to promote (default: the current one).")
@click.option("--dry-run", "-n", is_flag=True, help="Only list what would be promoted.")
@click.option("--json", "as_json", is_flag=True)
def promote_cmd(branch: str | None, dry_run: bool, as_json: bool) -> None:
    """Make a branch's memories curated now, without merging its code.

    Commits the branch's .ccmemory/ changes (relative to where it forked from the main branch)
    onto the main branch with git plumbing: your working tree, index and current branch are not
    touched. Only committed changes are promoted. Refuses, changing nothing, when main changed the
    same memory files differently.
    The usual way to promote is simply merging the branch (or its pull request).
    """
    from ccmemory.core.config import load_config
    from ccmemory.core.gitstate import GitError
    from ccmemory.core.vault import Vault, VaultNotFound
    from ccmemory.features.lifecycle.promote import PromoteError, promote

    try:
        vault = Vault.open()
        config = load_config(vault.root)
        res = promote(vault.root, branch, configured_main=config.main_branch, dry_run=dry_run)
    except (VaultNotFound, PromoteError, GitError, ValueError) as exc:
        raise cli_error(exc) from None
    from ccmemory.core import gitstate

    if res.branch == gitstate.current_branch(vault.root):
        dirty = gitstate.git(vault.root, "status", "--porcelain", "--", ".ccmemory/", check=False)
        n_dirty = sum(1 for line in dirty.splitlines() if line.strip().endswith(".md"))
        if n_dirty:
            notice(f"{n_dirty} uncommitted memory file change(s) are not included: commit them first")
    reindexed = None
    if res.new_main:
        from ccmemory.app.service import Service

        with Service(vault, config) as svc:
            reindexed = svc.reindex().status_changed
    if as_json:
        emit_json(
            {
                "branch": res.branch,
                "main": res.main,
                "old": res.old_main,
                "new": res.new_main,
                "dry_run": dry_run,
                "changes": [{"change": c, "path": p} for c, p in res.changes],
                "status_changed": reindexed,
            }
        )
        return
    if not res.changes:
        click.echo(f"nothing to promote: {res.main} already has every memory change of {res.branch}")
        return
    for c, p in res.changes:
        click.echo(f"  {c} {p}")
    if dry_run:
        click.echo(f"would promote {res.memories} memory file(s) from {res.branch} into {res.main}")
        return
    assert res.new_main is not None
    click.echo(
        f"promoted {res.memories} memory file(s) from {res.branch} into {res.main} "
        f"(commit {res.new_main[:10]}); the index is updated.\n"
        f"Your working tree and current branch are unchanged. Share it with `git push origin {res.main}`."
    )
