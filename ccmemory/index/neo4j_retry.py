"""Schema statements on a Neo4j server that other clients may be setting up at the same moment
(the memory schema, the reference schema, the vector index): shared by both halves of the
Neo4j backend (ccmemory.index.neo4j and ccmemory.index.neo4j_ref)."""

from __future__ import annotations

import random
import time
from typing import Any


def run_schema(s: Any, stmt: str, attempts: int = 8) -> None:
    """One schema statement (`IF NOT EXISTS`) in session `s`. Clients connecting at once to a
    fresh server race on it: the slower one may be told the rule already exists (it does: that
    is what was asked) or deadlock on the schema lock (tried again after a short pause)."""
    from neo4j.exceptions import ClientError, TransientError

    for attempt in range(attempts):
        try:
            s.run(stmt).consume()
            return
        except ClientError as exc:
            if "AlreadyExists" not in str(exc.code or ""):
                raise
            return
        except TransientError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.05 * 2**attempt * (1 + random.random()))
