"""`ccmemory hook <event>`: the Claude Code hook handlers (docs/architecture.md, "Hooks";
plugin/hooks/hooks.json registers them).

Contract kept here:
- stdin is the hook's JSON; garbage, empty input, a missing transcript, a full disk or any
  exception is logged to `.ccmemory/local/logs/hooks.log` and the hook exits 0. Nothing blocks.
- Exit code is always 0. SessionStart, UserPromptSubmit and PreToolUse may print structured
  JSON with `hookSpecificOutput.additionalContext` (the session-start digest; recall: the
  memories that apply to the prompt or to the file a tool is about to touch, ccmemory.features.recall);
  every other event prints nothing. Recall that fails is logged and skipped.
- `CCMEMORY_DISABLE=1` makes every hook a no-op. No `.ccmemory/` in the project: no-op.
- PostToolUse / UserPromptSubmit: append one redacted line to the session spool and return.
  Imports on that path: os, sys, time, `_json` (the C half of json, see capture/fastjson.py) and
  ccmemory.{redact, capture.paths, capture.spool, capture.events}: not even `re` unless a value
  looks like it may hold a secret; nothing heavy (no click, yaml, frontmatter, anthropic, numpy).
- UserPromptSubmit (previous segment), PreCompact, Stop, SessionEnd queue a durable extraction job
  and start the detached worker if it is not running; SessionEnd only does that and exits, well
  inside its ~1.5 s budget.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # `typing` and `pathlib` cost milliseconds: only for the type checker
if TYPE_CHECKING:
    from typing import Any

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "Stop",
    "SessionEnd",
)
MAX_STDIN = 8 * 1024 * 1024
_T0 = time.perf_counter()  # reset at main()'s entry: SessionStart records its own latency (TTC)
PRE_CUT = 16 * 1024  # tool command/error text redacted before the 500-character cut (events.py)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _log(root: str | None, event: str, message: str) -> None:
    """One redacted line in hooks.log. Never raises (the disk may be full)."""
    if root is None:
        return
    try:
        from ccmemory.core.redact import redact

        logs = os.path.join(root, ".ccmemory", "local", "logs")
        os.makedirs(logs, exist_ok=True)
        line = f"{_now()} {os.getpid()} {event}: {redact(message)}".replace("\n", " | ")
        with open(os.path.join(logs, "hooks.log"), "a", encoding="utf-8") as fh:
            fh.write(line[:4000] + "\n")
    except Exception:
        pass


def _read_payload() -> tuple[dict[str, Any] | None, str]:
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN)
    except Exception as exc:
        return None, f"cannot read stdin: {type(exc).__name__}"
    if not raw.strip():
        return None, "empty stdin"
    from ccmemory.core.fastjson import loads

    try:
        data = loads(raw.decode("utf-8"))
    except ValueError as exc:  # includes UnicodeDecodeError
        return None, f"stdin is not JSON ({exc.__class__.__name__}, {len(raw)} bytes)"
    if not isinstance(data, dict):
        return None, f"stdin JSON is a {type(data).__name__}, not an object"
    return data, ""


def _root_for(payload: dict[str, Any] | None) -> str | None:
    from ccmemory.features.capture.paths import find_root_str

    for candidate in (
        (payload or {}).get("cwd"),
        os.environ.get("CLAUDE_PROJECT_DIR"),
        os.getcwd(),
    ):
        if isinstance(candidate, str) and candidate:
            try:
                root = find_root_str(candidate)
            except OSError:
                root = None
            if root is not None:
                return root
    return None


def main(argv: list[str]) -> int:
    """Entry point: argv = [event] (the words after `ccmemory hook`). Always returns 0."""
    global _T0
    _T0 = time.perf_counter()
    from ccmemory.core import settings  # stdlib `os` only: the fast path stays lean

    if settings.DISABLE.get():
        return 0
    event = argv[0] if argv else ""
    root: str | None = None
    try:
        payload, problem = _read_payload()
        root = _root_for(payload)
        if root is None:
            return 0  # not a ccmemory project: do nothing
        if os.path.islink(os.path.join(root, ".ccmemory", "local")):
            return 0  # a committed symlink: never write spool, jobs or logs through it (docs/security.md)
        if payload is None:
            _log(root, event or "?", problem)
            return 0
        if event not in EVENTS:
            event = str(payload.get("hook_event_name") or event)
        handler = _HANDLERS.get(event)
        if handler is None:
            _log(root, event or "?", "unknown hook event, ignored")
            return 0
        handler(root, payload)
    except BaseException as exc:  # a hook must never break the session
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            return 0
        import traceback

        _log(root, event or "?", f"{type(exc).__name__}: {exc} :: {traceback.format_exc(limit=3)}")
    return 0


# --- handlers --------------------------------------------------------------------------------


def _session(payload: dict[str, Any]) -> str:
    sid = payload.get("session_id")
    return sid if isinstance(sid, str) and sid else "unknown-session"


def _local(root: str) -> Any:
    from pathlib import Path

    from ccmemory.features.capture.paths import LocalPaths

    return LocalPaths(Path(root))


def post_tool_use(root: str, payload: dict[str, Any]) -> None:
    from ccmemory.core import spool
    from ccmemory.core.redact import redact
    from ccmemory.features.capture.events import tool_event

    name = str(payload.get("tool_name") or "?")
    inp, resp = payload.get("tool_input"), payload.get("tool_response")
    # redact BEFORE tool_event cuts the command/error to 500 characters: a token straddling the
    # cut would otherwise survive in part (the pre-cut bound keeps redact's cost bounded)
    if isinstance(inp, dict) and isinstance(inp.get("command"), str):
        inp = {**inp, "command": redact(inp["command"][:PRE_CUT])}
    if isinstance(resp, str):
        resp = redact(resp[:PRE_CUT])
    ev = tool_event(payload.get("tool_use_id"), name, inp, resp)
    for key in ("file", "cmd", "error"):
        if isinstance(ev.get(key), str):
            ev[key] = redact(ev[key])
    ev["ts"] = _now()
    from ccmemory.features.capture.paths import spool_path_str

    spool.append(spool_path_str(root, _session(payload)), ev)


def user_prompt_submit(root: str, payload: dict[str, Any]) -> None:
    from ccmemory.core import spool
    from ccmemory.core.redact import redact
    from ccmemory.features.capture import jobs

    paths = _local(root)
    session = _session(payload)
    path = paths.spool(session)
    before = spool.size(path)
    queued = None
    if before > 0:  # the previous segment ends where this prompt starts
        queued = jobs.enqueue(
            paths,
            session=session,
            spool_to=before,
            trigger="UserPromptSubmit",
            transcript_path=payload.get("transcript_path"),
            cwd=payload.get("cwd"),
        )
    prompt = payload.get("prompt")
    text = redact(prompt) if isinstance(prompt, str) else ""
    if text.strip():
        spool.append(path, {"k": "prompt", "text": text, "ts": _now()})
    if queued is not None:
        jobs.spawn_worker(paths)
    if text.strip():
        _recall(root, "UserPromptSubmit", lambda: _recall_run().prompt(root, session, text))


def pre_tool_use(root: str, payload: dict[str, Any]) -> None:
    """Memories whose `files:` cover the file the tool is about to touch (nothing is spooled:
    PostToolUse records the call once it ran)."""
    name = payload.get("tool_name")
    inp = payload.get("tool_input")
    if not isinstance(name, str) or not isinstance(inp, dict):
        return
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    session = _session(payload)
    _recall(root, "PreToolUse", lambda: _recall_run().tool(root, session, name, inp, cwd))


def _recall_run() -> Any:
    from ccmemory.features.recall import run

    return run


def _recall(root: str, event: str, produce: Any) -> None:
    """Print the recall text as this event's additionalContext; log (never raise) a failure."""
    try:
        text = produce()
    except Exception as exc:
        _log(root, event, f"recall skipped: {type(exc).__name__}: {exc}")
        return
    if not text:
        return
    import json

    from ccmemory.core.redact import redact

    out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": redact(text)}}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


def _queue_segment(root: str, payload: dict[str, Any], trigger: str) -> None:
    from ccmemory.core import spool
    from ccmemory.features.capture import jobs

    paths = _local(root)
    session = _session(payload)
    end = spool.size(paths.spool(session))
    tpath = payload.get("transcript_path")
    if end == 0 and not (isinstance(tpath, str) and tpath):
        return
    jobs.enqueue(
        paths,
        session=session,
        spool_to=end,
        trigger=trigger,
        transcript_path=tpath if isinstance(tpath, str) else None,
        cwd=payload.get("cwd"),
    )
    if jobs.pending(paths):
        jobs.spawn_worker(paths)


def stop(root: str, payload: dict[str, Any]) -> None:
    # never blocks, so `stop_hook_active` loops cannot happen; nothing is printed
    _queue_segment(root, payload, "Stop")


def pre_compact(root: str, payload: dict[str, Any]) -> None:
    _queue_segment(root, payload, f"PreCompact:{payload.get('trigger') or 'auto'}")


def session_end(root: str, payload: dict[str, Any]) -> None:
    _queue_segment(root, payload, f"SessionEnd:{payload.get('reason') or 'other'}")


def _recall_forget(root: str, session: str) -> None:
    """After a compaction or a /clear, recall may show the session's memories again."""
    if not os.path.isdir(os.path.join(root, ".ccmemory", "local", "recall")):
        return
    from ccmemory.features.recall.state import SessionState

    try:
        SessionState(root, session).forget_shown()
    except OSError as exc:  # never fails the session start
        _log(root, "SessionStart", f"recall state not reset: {exc}")


def session_start(root: str, payload: dict[str, Any]) -> None:
    paths = _local(root)
    if payload.get("source") in ("compact", "clear") and isinstance(payload.get("session_id"), str):
        _recall_forget(root, str(payload["session_id"]))
    early = _context_surely_on(root)
    if early:  # git starts before the settings' imports and YAML (~30 ms sooner)
        _prefetch(paths.root)
    from ccmemory.features.capture import jobs
    from ccmemory.features.capture import settings as settings_mod

    if jobs.pending(paths):  # jobs left by a crashed or killed session
        jobs.spawn_worker(paths)
    settings = settings_mod.load(paths.root)
    if not settings.context_enabled or settings.context_budget_tokens <= 0:
        return
    if not early:
        _prefetch(paths.root)
    from ccmemory.app.service import Service
    from ccmemory.core.redact import redact
    from ccmemory.core.vault import Vault
    from ccmemory.features.capture.store import Store
    from ccmemory.features.context import session_start_context

    recent = _recent_sessions(root, payload, settings)
    budget = max(0, settings.context_budget_tokens - len(recent) // 4)
    store = Store(Vault(paths.root), service=Service)
    try:
        text, ids = session_start_context(store, budget) if budget > 0 else ("", [])
    finally:
        store.close()
    text = redact(text or "").strip()
    max_chars = budget * 4
    if len(text) > max_chars:
        text = text[: text.rfind("\n", 0, max_chars)] if "\n" in text[:max_chars] else ""
    text = "\n\n".join(t for t in (text, redact(recent).strip()) if t)
    if not text:
        return
    import json

    out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    # the seed's Time-to-Context: this hook's own time from its entry to the context written (the
    # interpreter's start-up before main() is not included)
    elapsed_ms = round((time.perf_counter() - _T0) * 1000, 1)
    from ccmemory.core import spool

    spool.append(
        paths.surfaced,
        {
            "ts": _now(),
            "session": _session(payload),
            "source": payload.get("source"),
            "ids": ids,
            "chars": len(text),
            "ms": elapsed_ms,
        },
        fsync=False,
    )


def _prefetch(root: Any) -> None:
    """Start the digest's git work in threads: the recent files and, after a new commit, the
    staleness walk; it runs while the service is imported and the index queried."""
    from ccmemory.features import recentfiles

    recentfiles.prefetch(root)  # first: the longer git work, and its module imports little
    from ccmemory.features.lifecycle import staleness

    staleness.prefetch(root)


def _context_surely_on(root: str) -> bool:
    """Whether the session-start context is on whatever the settings say in detail: neither
    CCMEMORY_CONTEXT nor CCMEMORY_CONTEXT_BUDGET set and no `context` anywhere in config.yaml (so
    the defaults hold: on, 600 tokens). Read without YAML (importing it costs ~15 ms), so that the
    git work can start before the settings are loaded; when this says no, the settings decide
    and the git work starts after them, only if the context is on."""
    from ccmemory.core import settings as env_settings

    if env_settings.CONTEXT.is_set() or env_settings.CONTEXT_BUDGET.is_set():
        return False
    from ccmemory.core.walk import read_regular

    path = os.path.join(root, ".ccmemory", "config.yaml")
    if not os.path.lexists(path):
        return True
    try:  # never follows a symlink, never blocks on a FIFO (docs/security.md)
        return b"context" not in read_regular(path, 256 * 1024)
    except OSError:
        return False


def _recent_sessions(root: str, payload: dict[str, Any], settings: Any) -> str:
    """The last sessions of this branch (ccmemory.features.sessions.digest); "" on any problem."""
    if not settings.sessions_enabled or settings.sessions_at_start <= 0:
        return ""
    try:
        from pathlib import Path

        from ccmemory.features.capture.paths import git_branch
        from ccmemory.features.sessions import digest

        return digest.text(
            Path(root),
            git_branch(Path(root)),
            count=settings.sessions_at_start,
            tokens=min(settings.sessions_at_start_tokens, settings.context_budget_tokens),
            exclude=_session(payload),
        )
    except Exception as exc:
        _log(root, "SessionStart", f"recent sessions skipped: {type(exc).__name__}: {exc}")
        return ""


_HANDLERS = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "PreToolUse": pre_tool_use,
    "PostToolUse": post_tool_use,
    "PreCompact": pre_compact,
    "Stop": stop,
    "SessionEnd": session_end,
}


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
