"""The `ccmemory` command. Subcommands load lazily so the CLI starts fast.

`ccmemory hook <event>` is dispatched before click is even imported: Claude Code runs it on every
tool call, so its import path must stay as light as bare Python.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "hook":
        try:
            from ccmemory.surfaces.hooks import main as hook_main  # type: ignore[import-not-found,unused-ignore]
        except ImportError:  # never break a Claude Code session
            return 0
        result: int = hook_main(args[1:])
        return result
    from ccmemory.surfaces.cli.app import cli

    try:
        cli.main(args=args, prog_name="ccmemory", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0
