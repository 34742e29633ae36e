"""One call run in a daemon thread, its answer (or exception) handed to whoever waits for it.

Used where a process can overlap waiting work with its own: git processes while a hook imports
(recent files, the staleness walk), a server's text query while the vector query runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def in_background(fn: Callable[..., T], *args: Any, name: str = "ccmemory-background") -> Callable[[], T]:
    """Start ``fn(*args)`` in a daemon thread now; the returned function waits for its value (an
    exception in the thread is raised there, in the caller's thread)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # handed to the caller, not lost in the thread
            box["error"] = exc

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()

    def result() -> T:
        thread.join()
        if "error" in box:
            raise box["error"]
        value: T = box["value"]
        return value

    return result
