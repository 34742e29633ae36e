"""Durable per-session spool: one JSON line per event, appended with O_APPEND and fsync.

Hooks run in parallel (Claude Code starts all matching hooks at once), so each event is written
with a single `write()` on an O_APPEND descriptor: lines never interleave. Readers take only
complete lines, so a line torn by a crash or a full disk is ignored, never half-parsed.
Stdlib only, no `json`/`re` on the append path: this is the PostToolUse fast path.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    StrPath = str | os.PathLike[str]

MAX_LINE = 64 * 1024


def append(path: StrPath, event: dict[str, Any], *, fsync: bool = True) -> int:
    """Append one event; return the spool's size after the write (the new end offset)."""
    from ccmemory.core.fastjson import dumps

    data = dumps(event)
    if len(data) > MAX_LINE:
        event = {**event, "truncated": True}
        for key in ("text", "error", "cmd"):
            if isinstance(event.get(key), str):
                event[key] = event[key][:4000]
        data = dumps(event)[:MAX_LINE]
        if not data.endswith("}"):
            return size(path)  # cannot shorten safely; drop rather than write invalid JSON
    line = (data + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(os.fspath(path)), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        # a torn previous line (crash mid-write) must not swallow this one
        end = os.lseek(fd, 0, os.SEEK_END)
        if end > 0 and _last_byte(path, end) != b"\n":
            line = b"\n" + line
        os.write(fd, line)
        if fsync:
            os.fsync(fd)
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def _last_byte(path: StrPath, end: int) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(end - 1)
        return fh.read(1)


def size(path: StrPath) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def read_range(path: StrPath, start: int, end: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """Events in [start, end) made of complete lines; returns (events, offset after the last
    complete line). Lines that are not JSON objects are skipped."""
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read() if end is None else fh.read(max(0, end - start))
    except FileNotFoundError:
        return [], start
    cut = data.rfind(b"\n")
    if cut < 0:
        return [], start
    import json

    events: list[dict[str, Any]] = []
    for raw in data[: cut + 1].splitlines():
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            events.append(obj)
    return events, start + cut + 1
