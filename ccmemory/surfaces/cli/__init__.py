"""The `ccmemory` command. Subcommands load lazily so the CLI starts fast.

`ccmemory hook <event>` is dispatched before click is even imported: Claude Code runs it on every
tool call, so its import path must stay as light as bare Python.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "hook":
        if any(a in ("--help", "-h") for a in args[1:2]):
            sys.stdout.write(HOOK_HELP)
            return 0
        try:
            from ccmemory.surfaces.hooks import main as hook_main  # type: ignore[import-not-found,unused-ignore]
        except ImportError:  # never break a Claude Code session
            return 0
        result: int = hook_main(args[1:])
        return result
    from ccmemory.surfaces.cli.app import cli

    code = 0
    try:
        cli.main(args=args, prog_name="ccmemory", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if argv is None:  # the process's own command, not a caller in process (tests, benches)
        exit_now(code)
    return code


HOOK_HELP = """Usage: ccmemory hook EVENT

  What Claude Code runs for its hooks (plugin/hooks/hooks.json): reads the hook's JSON payload
  on stdin and prints the hook's JSON answer (SessionStart: the digest; UserPromptSubmit and
  PreToolUse: the memories that apply; the others spool the session for capture). EVENT is the
  hook's name: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, Stop,
  SessionEnd. It always exits 0 and never blocks the session: a bad payload, a missing index or
  any error is logged to .ccmemory/local/logs/hooks.log and the session goes on.
  CCMEMORY_DISABLE=1 turns every hook off.
"""


def exit_now(code: int) -> None:
    """End the process at once when nothing can be lost by it; else return (Python then exits as
    usual). The interpreter's own teardown (freeing the model's session, a mapped vector matrix,
    every module) took ~40 ms of a ~0.4 s cold `ccmemory search` at 100k memories (issue 29).
    Nothing is lost when no other non-daemon thread runs (Python would wait for it; daemon threads
    it stops either way), the atexit handlers have run (logging's flush among them) and standard
    output and error are flushed."""
    import atexit
    import os
    import threading

    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    run_handlers = getattr(atexit, "_run_exitfuncs", None)  # CPython's; it clears what it ran
    if run_handlers is None:
        return
    try:
        run_handlers()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # a closed pipe and the like: Python's own exit reports it, as before
        return
    os._exit(code)
