"""`ccmemory watch`: keep the index live while files and git change.

What is watched (watchdog, inotify on Linux):
- `.ccmemory/` recursively, except `local/` (the index itself lives there);
- the repository root, not recursively, to notice `.ccmemory/` being removed or recreated;
- git's HEAD (worktree git dir), `packed-refs` and `refs/` (common dir), so a branch switch, a
  merge, a pull or a promotion refreshes curated/developmental status.

Every relevant event only marks the index dirty. The main loop runs ONE incremental reindex once
events have been quiet for `debounce` seconds (or at the latest `max_delay` seconds after the first
of a burst), so an editor's save-by-rename (write temp file, rename over) or the hundreds of events
of a checkout or pull coalesce into a single reindex. While a git command holds `.git/index.lock`
(a checkout, merge or pull still writing files) the pass waits for it to finish (at most 30 s), so
even a slow checkout is indexed once, in its final state. The incremental reindex compares the whole
folder with the index (path, mtime, size, hash), so it cannot miss a file whatever events were
dropped or merged; it also runs every `reconcile` seconds regardless, so the index never goes stale
while the watcher is alive. If `.ccmemory/` disappears and comes back (a checkout of a branch
without it, `rm -rf` then restore), the watch is re-established on the new folder, the index is
reopened (it lived in the removed folder) and rebuilt.

Embedding is not done in the watch loop: after a pass that added or changed memories the watcher
hands it to the background worker (`ccmemory.retrieval.warming`, one per repository), so full-text search
sees a change at once and its vector follows.

One watcher per repository: an exclusive `fcntl.flock` on `.ccmemory/local/watch.lock` (with the
pid written in it); a second `ccmemory watch` refuses to start.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccmemory.core import gitstate
from ccmemory.core.errors import CcmemoryError
from ccmemory.core.layout import LOCAL_DIR, VAULT_DIR

LOCK_NAME = "watch.lock"
BUSY_CAP = 30.0  # seconds a pass may wait for a git command holding index.lock


class AlreadyWatching(CcmemoryError):
    pass


def acquire_lock(local: Path) -> int:
    """An exclusive, non-blocking lock for this repository; returns the fd to keep open."""
    local.mkdir(parents=True, exist_ok=True)
    path = local / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        try:
            pid = os.read(fd, 32).decode(errors="replace").strip() or "?"
        finally:
            os.close(fd)
        raise AlreadyWatching(
            f"another `ccmemory watch` (pid {pid}) is already watching this repository"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


@dataclass
class Pass:
    """One reindex the watcher ran, for its log line."""

    reason: str
    events: int
    report: Any  # sync.ReindexReport | None
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "reason": self.reason,
            "events": self.events,
            "seconds": round(self.seconds, 3),
        }
        if self.report is not None:
            data.update(self.report.as_dict())
        return data


@dataclass
class _Pending:
    dirty: bool = False
    first: float = 0.0
    last: float = 0.0
    events: int = 0
    git: bool = False
    reasons: set[str] = field(default_factory=set)


def _as_str(p: bytes | str) -> str:
    return os.fsdecode(p) if isinstance(p, bytes) else p


class Watcher:
    def __init__(
        self,
        root: Path,
        *,
        debounce: float = 0.3,
        max_delay: float = 2.0,
        reconcile: float = 60.0,
        embed: bool = True,
        on_pass: Callable[[Pass], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ):
        self.root = root.resolve()
        self.vault_dir = self.root / VAULT_DIR
        self.local = self.vault_dir / LOCAL_DIR
        self.debounce = debounce
        self.max_delay = max_delay
        self.reconcile = reconcile
        self.embed = embed
        self.on_pass = on_pass or (lambda p: None)
        self.on_notice = on_notice or (lambda m: None)
        self.stop_event = threading.Event()
        self._pending = _Pending()
        self._mutex = threading.Lock()
        self._svc: Any = None
        self._lock_fd: int | None = None
        self._vault_ident: tuple[int, int] | None = None
        self._vault_watch: Any = None
        self._attached = False
        self._observer: Any = None
        self.passes = 0
        self._last_pass = time.monotonic()
        self.git_paths: set[str] = set()
        self.git_prefixes: tuple[str, ...] = ()
        self.git_index_lock: Path | None = None

    # --- events ---------------------------------------------------------------------------------
    def _relevant(self, path: str) -> str | None:
        vault = str(self.vault_dir)
        if path == vault or path.startswith(vault + os.sep):
            if path.startswith(str(self.local) + os.sep) or path == str(self.local):
                return None
            return "files"
        if path in self.git_paths or path.startswith(self.git_prefixes):
            if path.endswith(".lock"):
                return None
            return "git"
        return None

    def notify(self, *paths: str) -> None:
        kinds = {k for k in (self._relevant(p) for p in paths if p) if k}
        if not kinds:
            return
        now = time.monotonic()
        with self._mutex:
            p = self._pending
            if not p.dirty:
                p.dirty, p.first, p.events = True, now, 0
            p.last = now
            p.events += 1
            p.reasons |= kinds

    def _handler(self) -> Any:
        from watchdog.events import FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                watcher.notify(_as_str(event.src_path), _as_str(getattr(event, "dest_path", "") or ""))

        return Handler()

    # --- lifecycle ----------------------------------------------------------------------------
    def _open_service(self) -> None:
        from ccmemory.app.service import Service
        from ccmemory.core.vault import Vault

        if self._svc is not None:
            with contextlib.suppress(Exception):
                self._svc.close()
        self._svc = Service(Vault(self.root))

    def _ident(self) -> tuple[int, int] | None:
        try:
            st = self.vault_dir.stat()
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _check_vault(self) -> None:
        """(Re)attach the recursive watch when `.ccmemory/` appears, disappears or is replaced."""
        ident = self._ident()
        if ident == self._vault_ident:
            return
        if self._vault_watch is not None:
            with contextlib.suppress(Exception):
                self._observer.unschedule(self._vault_watch)
            self._vault_watch = None
        self._vault_ident = ident
        if ident is None:
            self.on_notice(f"{VAULT_DIR}/ is gone; waiting for it to come back")
            return
        try:
            self._vault_watch = self._observer.schedule(self._handler(), str(self.vault_dir), recursive=True)
        except OSError as exc:  # removed again in between: the next tick retries
            self._vault_ident = None
            self.on_notice(f"cannot watch {self.vault_dir}: {exc}")
            return
        if self._attached:  # a new folder: the old index and lock files went with the old one
            self.on_notice(f"{VAULT_DIR}/ is back; reopening the index")
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None
            try:
                self._lock_fd = acquire_lock(self.local)
            except AlreadyWatching as exc:
                self.on_notice(f"{exc}; stopping")
                self.stop_event.set()
                return
            self._open_service()
        self._attached = True
        self.notify(str(self.vault_dir))

    def _git_busy(self) -> bool:
        return self.git_index_lock is not None and self.git_index_lock.exists()

    def _git_dirs(self) -> tuple[Path | None, Path | None]:
        if not gitstate.is_repo(self.root):
            return None, None
        gd = gitstate.git(self.root, "rev-parse", "--absolute-git-dir", check=False).strip()
        cd = gitstate.git(self.root, "rev-parse", "--git-common-dir", check=False).strip()
        gdir = Path(gd) if gd else None
        cdir = (self.root / cd).resolve() if cd and not Path(cd).is_absolute() else (Path(cd) if cd else None)
        return gdir, cdir

    def start(self) -> None:
        from watchdog.observers import Observer

        self._lock_fd = acquire_lock(self.local)
        self._observer = Observer()
        handler = self._handler()
        self._observer.schedule(handler, str(self.root), recursive=False)
        gdir, cdir = self._git_dirs()
        if gdir is not None and cdir is not None:
            self.git_paths = {str(gdir / "HEAD"), str(cdir / "packed-refs")}
            self.git_index_lock = gdir / "index.lock"
            self.git_prefixes = (str(cdir / "refs") + os.sep,)
            self._observer.schedule(handler, str(gdir), recursive=False)
            if cdir != gdir:
                self._observer.schedule(handler, str(cdir), recursive=False)
            if (cdir / "refs").is_dir():
                self._observer.schedule(handler, str(cdir / "refs"), recursive=True)
        self._observer.start()
        self._open_service()
        self._check_vault()
        self.reindex("start", 0)

    def stop(self) -> None:
        self.stop_event.set()

    def close(self) -> None:
        if self._observer is not None:
            with contextlib.suppress(Exception):
                self._observer.stop()
                self._observer.join(timeout=5)
        if self._svc is not None:
            with contextlib.suppress(Exception):
                self._svc.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def reindex(self, reason: str, events: int) -> Pass:
        started = time.perf_counter()
        report = None
        if self._ident() is not None and self._svc is not None:
            try:
                report = self._svc.reindex()
                if self.embed and (report.added or report.updated):
                    # the text is searchable now; vectors follow from the background worker
                    # (this loop never waits on the model)
                    from ccmemory.retrieval.warming import start_background_embedding

                    start_background_embedding(self.root)
            except Exception as exc:  # keep watching; the next pass retries
                self.on_notice(f"reindex failed: {type(exc).__name__}: {exc}")
        self.passes += 1
        self._last_pass = time.monotonic()
        p = Pass(reason, events, report, time.perf_counter() - started)
        self.on_pass(p)
        return p

    def tick(self) -> Pass | None:
        """One step of the loop: maybe re-attach, maybe reindex. Returns the pass if one ran."""
        self._check_vault()
        now = time.monotonic()
        busy = self._git_busy()
        with self._mutex:
            p = self._pending
            if busy:  # a checkout/merge/pull is still writing: wait for it (bounded)
                due = p.dirty and now - p.first >= BUSY_CAP
            else:
                due = p.dirty and (now - p.last >= self.debounce or now - p.first >= self.max_delay)
            if due:
                reason, events = "+".join(sorted(p.reasons)), p.events
                self._pending = _Pending()
        if due:
            return self.reindex(reason, events)
        if self.reconcile > 0 and now - self._last_pass >= self.reconcile:
            return self.reindex("reconcile", 0)
        return None

    def run(self, max_seconds: float | None = None) -> None:
        self.start()
        deadline = time.monotonic() + max_seconds if max_seconds else None
        try:
            while not self.stop_event.wait(0.1):
                self.tick()
                if deadline is not None and time.monotonic() >= deadline:
                    break
        finally:
            self.close()
