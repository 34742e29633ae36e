"""One Service per MCP server, opened lazily and refreshed now and then."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ccmemory.core import settings as env_settings
from ccmemory.core.vault import VaultNotFound
from ccmemory.index.base import IndexUnavailable
from ccmemory.surfaces.mcp.common import ToolFailure

if TYPE_CHECKING:
    from ccmemory.app.service import Service

# --- the backend: one Service per server, refreshed now and then -----------------------------------


class Backend:
    """Opens the Service for the repository lazily, so the server starts (and lists its tools)
    even where `.ccmemory/` does not exist yet; every call re-checks and reports it clearly."""

    def __init__(self, start: Path | None = None, refresh_seconds: float | None = None):
        self.start = start
        if refresh_seconds is None:
            refresh_seconds = env_settings.MCP_REFRESH_SECONDS.value()
        self.refresh_seconds = refresh_seconds
        self._svc: Service | None = None
        self._config_stamp: tuple[int, int] | None = None
        self._refreshed = 0.0
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def service(self, *, refresh: bool = True) -> Iterator[Service]:
        with self._lock:
            try:
                svc = self._open()
                due = refresh and 0 <= self.refresh_seconds <= time.monotonic() - self._refreshed
                # another process's reindex (a git hook's) leaves the index level: not waited for
                # long, the next call refreshes
                if due and svc.reindex_unless_busy(wait=1.0) is not None:
                    self._refreshed = time.monotonic()
                yield svc
            except ToolFailure:
                raise
            except VaultNotFound as exc:
                raise ToolFailure(
                    "no_vault",
                    str(exc),
                    "run `ccmemory init` in the repository, or start the server with --repo PATH "
                    "(or CCMEMORY_REPO) pointing at a repository that has .ccmemory/",
                ) from None
            except IndexUnavailable as exc:
                self._drop()
                raise ToolFailure(
                    "index_unavailable",
                    f"the memory index is unavailable: {exc}",
                    "memory files are untouched; check the backend (`ccmemory doctor`), or run "
                    "`ccmemory reindex` to rebuild the local index",
                ) from None

    def _open(self) -> Service:
        if self._svc is not None and self._config_stamp != _stamp(self._svc.vault.dir / "config.yaml"):
            self._drop()  # config.yaml was edited while the server runs: take the new settings
        if self._svc is None:
            from ccmemory.app.service import Service
            from ccmemory.core.vault import Vault

            try:
                vault = Vault.open(self.start)
                stamp = _stamp(vault.dir / "config.yaml")  # before reading it: an edit after is seen
                svc = Service(vault)
            except ValueError as exc:  # unreadable config.yaml
                raise ToolFailure("bad_config", str(exc), "fix .ccmemory/config.yaml") from None
            try:
                svc.reindex()
            except (IndexUnavailable, VaultNotFound):
                svc.close()
                raise
            except Exception as exc:  # e.g. a backend whose driver is missing or cannot connect
                svc.close()
                raise IndexUnavailable(f"{svc.config.backend} backend: {type(exc).__name__}: {exc}") from None
            self._svc = svc
            self._config_stamp = stamp
            self._refreshed = time.monotonic()
        return self._svc

    def _drop(self) -> None:
        if self._svc is not None:
            with contextlib.suppress(Exception):
                self._svc.close()
            self._svc = None

    def close(self) -> None:
        with self._lock:
            self._drop()


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)
