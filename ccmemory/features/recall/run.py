"""Recall for one hook call: settings, candidates (warm process or the index), session state,
rendering, telemetry. Returns the ``additionalContext`` text ("" when nothing applies).

Called by ``ccmemory.surfaces.hooks`` for UserPromptSubmit (``prompt``) and PreToolUse (``tool``). Never
raises for a problem in the index or the state file: the caller logs what it gets and the
session goes on without recall.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ccmemory.features.recall import engine

if TYPE_CHECKING:
    from ccmemory.features.recall.config import RecallSettings

PROMPT_HEADER = "ccmemory recall — memories that apply to this prompt (full text: MCP `get` with the id):"
FILE_HEADER = "ccmemory recall — memories about {what} (full text: MCP `get` with the id):"


class Context:
    """What one hook call needs: the repository's settings and, lazily, its index."""

    def __init__(self, root: str, session: str) -> None:
        from ccmemory.features.recall.config import load_raw, recall_settings

        self.root, self.session = root, session
        self.raw: dict[str, Any] = load_raw(root)
        self.settings: RecallSettings = recall_settings(self.raw)
        self._index: Any = None

    @property
    def project(self) -> str:
        from ccmemory.core import settings as env
        from ccmemory.core.projectname import default_project

        return str(env.PROJECT.get() or self.raw.get("project") or default_project(self.root))

    def local_index(self) -> Any:
        """The SQLite index, or None when the project uses another backend (a hook does not
        connect to a server: the warm process does that) or has no index yet."""
        import os

        from ccmemory.core import settings as env

        backend = str(env.BACKEND.get() or self.raw.get("backend") or "sqlite").lower()
        db = os.path.join(self.root, ".ccmemory", "local", "index.db")
        if backend != "sqlite" or not os.path.isfile(db):
            return None
        if self._index is None:
            from pathlib import Path

            from ccmemory.index.sqlite import SQLiteIndex

            self._index = SQLiteIndex(Path(db))
            if self._index.moved_aside:  # corrupt: moved aside (never deleted), reopened empty
                raise RuntimeError(
                    f"the index {db} was unreadable and was moved to {self._index.moved_aside}; "
                    "run `ccmemory reindex` to rebuild it from the memory files"
                )
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None


def _nothing_to_ask(root: str) -> bool:
    """No local index and no warm process: nothing to recall from (and nothing imported)."""
    import os

    from ccmemory.features.recall.warm import socket_path

    local = os.path.join(root, ".ccmemory", "local")
    return not os.path.isfile(os.path.join(local, "index.db")) and not os.path.exists(socket_path(root))


def prompt(root: str, session: str, text: str) -> str:
    """The recall text for a user prompt ("" for none)."""
    if _nothing_to_ask(root):
        return ""
    ctx = Context(root, session)
    try:
        s = ctx.settings
        if not (s.enabled and s.prompts and s.budget_tokens > 0 and engine.speaks_to_project(text)):
            return ""
        picks = _text_picks(ctx, text, s.pick_limit)
        if picks is None:
            return ""
        return _inject(ctx, picks, PROMPT_HEADER, "prompt")
    finally:
        ctx.close()


def tool(
    root: str, session: str, tool_name: str, tool_input: Mapping[str, Any] | None, cwd: str | None
) -> str:
    """The recall text before a tool call: the memories whose files it touches, and for a shell
    command the memories that apply to its words ("" for none)."""
    from ccmemory.features.recall.paths import command_words, tool_paths

    touched = tool_paths(tool_name, tool_input, root, cwd)
    command = tool_input.get("command") if tool_name == "Bash" and isinstance(tool_input, Mapping) else None
    words = command_words(command) if isinstance(command, str) else ""
    by_words = engine.worth_asking(words, command=True)
    if not (touched or by_words) or _nothing_to_ask(root):
        return ""
    ctx = Context(root, session)
    try:
        if touched:
            _follow_up(ctx, tool_name, touched)
        s = ctx.settings
        if not (s.enabled and s.files and s.budget_tokens > 0):
            return ""
        limit = s.pick_limit
        picks = _file_picks(ctx, touched, limit) if touched else []
        if picks is None:
            return ""
        if by_words:
            picks = engine.combine(picks, _text_picks(ctx, words, limit, command=True) or [], limit)
        if touched:
            what = touched[0] if len(touched) == 1 else f"{touched[0]} and {len(touched) - 1} more"
        else:
            what = f"`{words[:60]}`"
        return _inject(ctx, picks, FILE_HEADER.format(what=what), "file")
    finally:
        ctx.close()


def _file_picks(ctx: Context, touched: list[str], limit: int) -> list[engine.Pick] | None:
    from ccmemory.features.recall import warm

    picks = warm.ask(ctx.root, {"op": "files", "paths": touched, "limit": limit})
    if picks is None:
        index = ctx.local_index()
        if index is None:
            return None
        picks = engine.file_picks(index, ctx.project, touched, limit=limit)
    return picks


def _text_picks(ctx: Context, text: str, limit: int, *, command: bool = False) -> list[engine.Pick] | None:
    """Prompt-style recall of `text` (the warm process ranks with vectors, else full text);
    ``command``: `text` is a shell command's words."""
    from ccmemory.features.recall import warm

    request: dict[str, Any] = {"op": "prompt", "text": text, "limit": limit}
    if command:
        request["command"] = True
    picks = warm.ask(ctx.root, request)
    if picks is None:
        index = ctx.local_index()
        if index is None:
            return None
        picks = engine.prompt_picks(index, ctx.project, text, limit=limit, command=command)
    return picks


def _inject(ctx: Context, picks: list[engine.Pick], header: str, source: str) -> str:
    """Drop what the session was already shown, render within budget, remember, log."""
    from ccmemory.features.recall.state import SessionState

    state = SessionState(ctx.root, ctx.session)
    s = ctx.settings
    fresh = [p for p in picks if state.is_new(p.memory.id, _ver(p))]
    out = engine.show(fresh, s, header, check_first=source == "prompt")
    if not out.ids:
        return ""
    shown = {p.memory.id: _ver(p) for p in fresh if p.memory.id in out.ids}
    files = {p.memory.id: list(p.memory.files or [])[:50] for p in fresh if p.memory.id in out.ids}
    state.record(shown, out.tokens, files)
    _telemetry(ctx, out, source)
    return out.text


def _follow_up(ctx: Context, tool_name: str, touched: list[str]) -> None:
    """An edit of a file that a memory shown earlier in the session names (telemetry only;
    a broken state file is the caller's to log, never the tool call's to fail)."""
    from ccmemory.features.recall.follow import EDIT_TOOLS, edited

    if tool_name in EDIT_TOOLS:
        import contextlib

        with contextlib.suppress(OSError, ValueError):  # telemetry only: recall goes on
            edited(ctx.root, ctx.session, ctx.raw, tool_name, touched)


def _ver(p: engine.Pick) -> str:
    from ccmemory.features.recall.state import version

    m = p.memory
    return version(m.type, m.title, m.body)


def _telemetry(ctx: Context, out: engine.Rendered, source: str) -> None:
    import os

    from ccmemory.core import telemetry

    if not telemetry.config_from(ctx.raw).enabled:
        return
    local = os.path.join(ctx.root, ".ccmemory", "local")
    telemetry.emit(local, "recalled", out.ids, session=ctx.session, source=source)
    telemetry.emit(local, "injected", (), session=ctx.session, count=out.tokens, source=source)
