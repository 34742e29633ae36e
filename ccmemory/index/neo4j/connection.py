"""The driver, its sessions and the mapping of driver errors to `IndexUnavailable`."""

from __future__ import annotations

import contextlib
import functools
import logging
import random
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import (
    AuthError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from ccmemory.index.base import IndexUnavailable
from ccmemory.index.neo4j.schema import ensure_schema

T = TypeVar("T")

# how long a write transaction is tried again on transient errors (deadlocks between clients of
# one server, a leader switch): long enough for 8 clients writing the same nodes at once
RETRY_SECONDS = 15.0


def _not_a_retry(record: logging.LogRecord) -> bool:
    """The driver's warning for each retried transaction (a deadlock's lock table, many lines
    long) is not for the user's terminal: the retry is the normal course; a failure still raises."""
    return "will be retried" not in record.getMessage()


logging.getLogger("neo4j.session").addFilter(_not_a_retry)


def wrap_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """Driver and server errors become IndexUnavailable naming the URI and the cause."""

    @functools.wraps(fn)
    def inner(self: Connection, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(self, *args, **kwargs)
        except IndexUnavailable:
            raise
        except (DriverError, Neo4jError, OSError) as exc:
            raise self._error(exc) from None

    return inner


class Connection:
    """One driver to one server; the schema is ensured on connect."""

    def __init__(
        self,
        uri: str,
        user: str,
        password: str,
        *,
        database: str | None = None,
        connection_timeout: float = 10.0,
        scope: str = "",
    ) -> None:
        self.location = uri
        self.uri = uri
        self.database = database
        self.scope = scope  # the indexing user's id: file records are kept per scope
        try:
            self.driver = GraphDatabase.driver(
                uri,
                auth=(user, password),
                connection_timeout=connection_timeout,
                max_transaction_retry_time=RETRY_SECONDS,
                connection_acquisition_timeout=connection_timeout * 2,
                notifications_min_severity="OFF",  # "property does not exist" on a fresh database
            )
        except (DriverError, Neo4jError, ValueError, OSError) as exc:
            raise self._error(exc) from None
        try:
            self.driver.verify_connectivity()
            self._ensure_schema()
        except (DriverError, Neo4jError, OSError) as exc:
            self.driver.close()
            raise self._error(exc) from None
        self._vector_dim: int | None = None
        # project -> (stamp, (memories, field length totals), document frequency per term), see
        # MemoryReads._text_stats
        self._text_kept: dict[str, tuple[str, tuple[int, tuple[int, int, int]], dict[str, int]]] = {}
        # (project, embedder) -> the stamp before a scan that found no vector missing, see
        # VectorStore.missing_vectors
        self._none_missing: dict[tuple[str, str], str] = {}

    def _error(self, exc: BaseException) -> IndexUnavailable:
        if isinstance(exc, AuthError):
            cause = "authentication failed (check CCMEMORY_NEO4J_USER / CCMEMORY_NEO4J_PASSWORD)"
        elif isinstance(exc, ServiceUnavailable | SessionExpired):
            cause = f"server unreachable or connection lost ({exc})"
        else:
            cause = f"{type(exc).__name__}: {exc}"
        then = "the credentials are fixed" if isinstance(exc, AuthError) else "the server is back"
        return IndexUnavailable(
            f"Neo4j index at {self.location}: {cause}. Memory files are untouched; "
            f"run `ccmemory reindex` once {then}."
        )

    @contextlib.contextmanager
    def _session(self) -> Iterator[neo4j.Session]:
        with self.driver.session(database=self.database) as s:
            yield s

    def _write(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        """`work` in one managed write transaction: the driver runs it again on a deadlock or
        another transient error (within `max_transaction_retry_time`), so `work` must do all its
        writing through the transaction it is given and keep no state from one attempt to the
        next. Clients of one server write the same nodes at once (the project, shared topics,
        curated memories indexed from every clone): a deadlock there is normal, and retried."""
        with self._session() as s:
            return s.execute_write(work)

    def _read(self, query: str, **params: Any) -> list[Any]:
        return self._retrying(lambda s: list(s.run(query, params)))

    def _read_stamped(self, query: str, **params: Any) -> tuple[list[Any], str | None]:
        """`_read`, and where the database is in its history of commits afterwards: the bookmark
        the server gives after a read (it names the last committed transaction), None when it
        gives none. The same stamp twice means nothing was committed in between, by any client."""

        def work(s: neo4j.Session) -> tuple[list[Any], str | None]:
            rows = list(s.run(query, params))
            return rows, "|".join(sorted(s.last_bookmarks().raw_values)) or None

        return self._retrying(work)

    def _retrying(self, work: Callable[[neo4j.Session], T]) -> T:
        """`work` (reads, or idempotent setup) in a new session, run again with a growing pause
        for up to RETRY_SECONDS when the server answers with a transient error it says is worth
        retrying: a read that saw data another client was committing ("outdated read", seen with 8
        clients at once), a deadlock. The driver retries only managed transactions; these are
        auto-commit statements. A lost server is not transient: it fails at once."""
        deadline = time.monotonic() + RETRY_SECONDS
        pause = 0.05
        while True:
            try:
                with self._session() as s:
                    return work(s)
            except TransientError as exc:
                if not exc.is_retryable() or time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause * (1 + random.random()))
                pause = min(pause * 2, 1.0)

    def _ensure_schema(self) -> None:
        """The schema and its backfill (idempotent). Clients connecting at once to a fresh server
        race on them (each statement: ccmemory.index.neo4j_retry); a transient error of the whole
        setup is tried again (`_retrying`)."""

        def work(s: neo4j.Session) -> None:
            ensure_schema(s)
            self._after_schema(s)

        self._retrying(work)

    def _after_schema(self, session: neo4j.Session) -> None:
        """What a subclass fills in once the schema is in place (the index backfills term rows);
        here so the connection does not import the writers (one layer of imports less)."""

    @wrap_errors
    def close(self) -> None:
        self.driver.close()
