"""A read that a Neo4j server answers with a transient error worth retrying (an "outdated read"
while another client commits: seen once with 8 clients at once, where an MCP search then failed
with index_unavailable) is run again; an error the server says is not worth retrying still fails
at once, as a clear IndexUnavailable (issue 29).

The server is the real test server; only the error is injected, on the session's first statement."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ccmemory.app.sync import record_from_bytes
from ccmemory.core.vault import render
from ccmemory.index.base import IndexUnavailable
from tests.conftest import make_memory

pytestmark = pytest.mark.neo4j


class _Flaky:
    """A real session whose next statements raise the queued errors first."""

    def __init__(self, real: Any, errors: list[Exception]) -> None:
        self.real, self.errors = real, errors

    def run(self, *args: Any, **kwargs: Any) -> Any:
        if self.errors:
            raise self.errors.pop(0)
        return self.real.run(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _error(code: str) -> Exception:
    from neo4j.exceptions import Neo4jError

    return Neo4jError._hydrate_neo4j(code=code, message="injected by the test")


def test_a_transient_read_error_is_tried_again(neo4j_server: Any) -> None:
    from ccmemory.index.neo4j import Neo4jIndex

    index = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    project = "transient-" + uuid.uuid4().hex[:8]
    m = make_memory("fact", "Read after a concurrent commit")
    index.apply(
        project, [record_from_bytes(render(m).encode(), ".ccmemory/facts/r.md", 1)], [], lambda p: "curated"
    )
    errors: list[Exception] = []
    real = index._session

    @contextlib.contextmanager
    def flaky() -> Iterator[Any]:
        with real() as s:
            yield _Flaky(s, errors)

    index._session = flaky  # type: ignore[method-assign]
    try:
        errors[:] = [_error("Neo.TransientError.Transaction.Outdated")] * 2
        assert [x.id for x in index.get(project, [m.id])] == [m.id]
        assert errors == []  # both raised, and the read was run a third time
        errors[:] = [_error("Neo.TransientError.Transaction.Terminated")]  # the driver: not retryable
        with pytest.raises(IndexUnavailable, match=r"injected by the test"):
            index.get(project, [m.id])
    finally:
        index._session = real  # type: ignore[method-assign]
        index.clear(project)
        index.close()
