"""ccmemory diff."""

from __future__ import annotations

import click

from ccmemory.surfaces.cli.errors import cli_error


@click.command("diff")
@click.argument("revs", required=False, metavar="[BASE..HEAD]")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="markdown suits a pull request description.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def diff_cmd(revs: str | None, fmt: str, as_json: bool) -> None:
    """Memory-level changes between two revisions: added, edited, moved, removed, newly superseded
    and invalid memory files. Reads git objects only (the working tree is not looked at).

    BASE..HEAD compares the two; BASE...HEAD (and a single BASE) compares HEAD with its merge base;
    without an argument: MAIN...HEAD, what a pull request into the main branch would add.
    """
    from ccmemory.core.config import load_config
    from ccmemory.core.gitstate import GitError
    from ccmemory.core.vault import Vault, VaultNotFound
    from ccmemory.features.lifecycle.diff import memory_diff, render_json, render_markdown, render_text

    try:
        vault = Vault.open()
        d = memory_diff(vault.root, revs, load_config(vault.root).main_branch)
    except (VaultNotFound, GitError, ValueError) as exc:
        raise cli_error(exc) from None
    if as_json:
        fmt = "json"
    render = {"text": render_text, "markdown": render_markdown, "json": render_json}[fmt]
    click.echo(render(d), nl=False)
