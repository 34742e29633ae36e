"""What one Claude Code session has been shown: never the same memory twice, unless it changed.

One small JSON file per session under ``.ccmemory/local/recall/`` (never committed), written
atomically; a missing or damaged file means "nothing shown yet" (at worst a memory is shown
again, never lost). Memory versions are compared by a hash of type, title and body.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def version(mtype: str, title: str, body: str) -> str:
    return hashlib.sha256(f"{mtype}\0{title}\0{body}".encode()).hexdigest()[:16]


class SessionState:
    def __init__(self, root: str, session: str) -> None:
        name = _SAFE.sub("_", session)[:120] or "unknown-session"
        self.path = os.path.join(root, ".ccmemory", "local", "recall", f"{name}.json")
        self.shown: dict[str, str] = {}  # memory id -> version shown
        self.files: dict[str, list[str]] = {}  # memory id -> its files: entries (for "edited after")
        self.followed: set[str] = set()  # shown memories whose files were then edited
        self.cited: set[str] = set()  # shown memories whose id Claude then wrote in a reply
        self.tokens = 0  # tokens injected by recall in this session
        self.injections = 0
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
            if isinstance(data, dict):
                shown = data.get("shown")
                self.shown = {str(k): str(v) for k, v in shown.items()} if isinstance(shown, dict) else {}
                files = data.get("files")
                if isinstance(files, dict):
                    self.files = {
                        str(k): [str(f) for f in v] for k, v in files.items() if isinstance(v, list)
                    }
                self.followed = {str(i) for i in data.get("followed") or []}
                self.cited = {str(i) for i in data.get("cited") or []}
                self.tokens = int(data.get("tokens") or 0)
                self.injections = int(data.get("injections") or 0)
        except (OSError, ValueError, TypeError, AttributeError):
            pass

    def is_new(self, memory_id: str, ver: str) -> bool:
        return self.shown.get(memory_id) != ver

    def record(self, shown: dict[str, str], tokens: int, files: dict[str, list[str]] | None = None) -> None:
        """Remember what was injected now and save (errors are the caller's to log)."""
        self.shown.update(shown)
        self.files.update({k: v for k, v in (files or {}).items() if v})
        self.tokens += tokens
        self.injections += 1
        self.save()

    def forget_shown(self) -> None:
        """The conversation was compacted or cleared: what recall showed before is gone from
        Claude's context (a summary keeps little of it), so every memory may be shown again. The
        session's token and follow-up counts stay. Saves only when something was shown."""
        if self.shown:
            self.shown = {}
            self.save()

    def save(self) -> None:
        from pathlib import Path

        from ccmemory.core.atomic import atomic_write

        data = {
            "shown": self.shown,
            "files": self.files,
            "followed": sorted(self.followed),
            "cited": sorted(self.cited),
            "tokens": self.tokens,
            "injections": self.injections,
        }
        atomic_write(Path(self.path), json.dumps(data, sort_keys=True).encode("utf-8"), overwrite=True)
