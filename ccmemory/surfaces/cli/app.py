"""The click group with lazily imported subcommands (module:attribute per command)."""

from __future__ import annotations

import importlib

import click

from ccmemory.core.errors import CcmemoryError
from ccmemory.surfaces.cli.errors import cli_error

# name -> "module:attribute". Each module imports only what its command needs.
COMMANDS: dict[str, str] = {
    "init": "ccmemory.surfaces.cli.cmd_core:init",
    "new": "ccmemory.surfaces.cli.cmd_core:new",
    "show": "ccmemory.surfaces.cli.cmd_core:show",
    "check": "ccmemory.surfaces.cli.cmd_core:check",
    "reindex": "ccmemory.surfaces.cli.cmd_core:reindex_cmd",
    "search": "ccmemory.surfaces.cli.cmd_search:search_cmd",
    "trace": "ccmemory.surfaces.cli.cmd_search:trace_cmd",
    "context": "ccmemory.surfaces.cli.cmd_search:context_cmd",
    "recall": "ccmemory.surfaces.cli.cmd_recall:recall_cmd",
    "stats": "ccmemory.surfaces.cli.cmd_search:stats_cmd",
    "suggest": "ccmemory.surfaces.cli.cmd_suggest:suggest_cmd",
    "demo": "ccmemory.surfaces.cli.cmd_demo:demo",
    "promote": "ccmemory.surfaces.cli.cmd_promote:promote_cmd",
    "watch": "ccmemory.surfaces.cli.cmd_watch:watch_cmd",
    "diff": "ccmemory.surfaces.cli.cmd_diff:diff_cmd",
    "site": "ccmemory.surfaces.cli.cmd_site:site",
    "import": "ccmemory.surfaces.cli.cmd_import:command",
    "export": "ccmemory.surfaces.cli.cmd_interop:export_cmd",
    "sessions": "ccmemory.surfaces.cli.cmd_sessions:sessions_cmd",
    "worker": "ccmemory.surfaces.cli.cmd_worker:command",
    "mcp": "ccmemory.surfaces.cli.cmd_mcp:mcp_cmd",
    "start": "ccmemory.surfaces.cli.cmd_neo4j:start_cmd",
    "stop": "ccmemory.surfaces.cli.cmd_neo4j:stop_cmd",
    "doctor": "ccmemory.surfaces.cli.cmd_doctor:doctor_cmd",
    "dashboard": "ccmemory.surfaces.cli.cmd_dashboard:dashboard_cmd",
    "report": "ccmemory.surfaces.cli.cmd_report:report_cmd",
    "cache": "ccmemory.surfaces.cli.cmd_cache:cache_cmd",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        cmd = getattr(importlib.import_module(module), attr)
        assert isinstance(cmd, click.Command)
        return cmd

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command name gets the closest ones as a hint ("did you mean 'search'?")."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
            if close:
                hint = " or ".join(repr(c) for c in close)
                ctx.fail(f"No such command {name!r}. Did you mean {hint}?")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        """Every CcmemoryError a command lets through is reported once, the same way: its
        message, its hint and the exit code of cli/errors.py (never a traceback)."""
        try:
            return super().invoke(ctx)
        except CcmemoryError as exc:
            raise cli_error(exc) from None
        except BrokenPipeError:  # `ccmemory search … | head`: the reader left, nothing to say
            raise
        except OSError as exc:  # a full disk, a read-only folder, a vanished file: one line
            where = f" ({exc.filename})" if exc.filename else ""
            raise click.ClickException(
                f"{exc.strerror or exc}{where}: the command stopped; memory files are written "
                "atomically, so none is half-written (free space or fix permissions, then run it again)"
            ) from None


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="ccmemory-vault")
def cli() -> None:
    """Persistent, reviewable memory for Claude Code.

    Memories are markdown files under .ccmemory/ in your git repository: review them in pull
    requests, edit them by hand, and merge them to make them curated. The index
    (.ccmemory/local/index.db) is a cache that `ccmemory reindex` rebuilds from the files.

    Start with `ccmemory init` in a repository, then `ccmemory new decision "..."`,
    `ccmemory search "..."` and `ccmemory context`.
    """
