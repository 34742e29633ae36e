"""Warming a Neo4j server's write path while the client is still reading files (issue #20).

On a server that has just started, the first reindex pays for planning every write statement and
for the JVM compiling the code that runs them: the same 10k reindex took 3x as long as on a warm
server. `sync.reindex` spends its first seconds on git and on parsing the files, while the server
waits. `WriteWarmup` uses those seconds: it runs the real write path (`Neo4jIndex._apply_tx`) on
synthetic memories of every type, with every relation type, topics, files, sessions, authors and
`applies_to`, under a throw-away project name, in transactions that are always rolled back, so
nothing of it is ever stored. The first real `apply` stops it (after the round in flight).
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ccmemory.index.base import FileRecord
from ccmemory.model import RELATION_TYPES, TYPES, Memory, Relation, new_id

if TYPE_CHECKING:
    from ccmemory.index.neo4j.index import Neo4jIndex

#: Warm up only before a write of at least this many files (a first reindex, a big pull).
MIN_FILES = 1000
ROUND_SIZE = 250  # synthetic file records per rolled-back transaction
MAX_SECONDS = 60.0  # never warm longer than this, even if no apply comes


def synthetic_records(n: int, tag: str) -> list[FileRecord]:
    """`n` file records of made-up memories covering every type, relation type and key kind."""
    base = datetime(2020, 1, 1, tzinfo=UTC)
    types = sorted(TYPES)
    rel_types = [t for t in RELATION_TYPES if t != "SUPERSEDES"]
    ids: list[str] = []
    out = []
    for k in range(n):
        mid = new_id(int((base + timedelta(minutes=k)).timestamp() * 1000))
        prev = ids[-1] if ids else "01JWARMUPTARGET0000000000"
        m = Memory(
            id=mid,
            type=types[k % len(types)],
            title=f"warm-up memory {k} about caching tokens and retries",
            created=base + timedelta(minutes=k),
            body="A made-up memory used to warm the server's write path; always rolled back.",
            author=f"warmup{k % 3}@{tag}.invalid" if k % 2 else None,
            session=f"warmup-session-{k % 4}",
            topics=[f"warmup-topic-{k % 7}", f"warmup topic {k % 5}"],
            files=[f"src/warmup/{k % 11}.py"],
            confidence=0.5,
            source="llm",
            supersedes=[prev] if k % 5 == 0 else [],
            relations=[Relation(rel_types[k % len(rel_types)], prev, "warm-up" if k % 2 else None)],
            applies_to=[f"{tag}-other"] if k % 6 == 0 else [],
        )
        ids.append(mid)
        out.append(FileRecord(f".ccmemory/warmup/{k}.md", 0, 0, f"warmup-{k}", m))
    out.append(FileRecord(".ccmemory/warmup/broken.md", 0, 0, "warmup-broken", None, "made-up error", 1))
    return out


def _status(path: str) -> str:
    return "curated" if len(path) % 2 else "developmental"


class WriteWarmup:
    """A background thread running rolled-back synthetic writes until `stop()`."""

    def __init__(self, index: Neo4jIndex) -> None:
        self.index = index
        self.tag = "ccmemory-warmup-" + uuid.uuid4().hex[:12]  # never a real project's name
        self.rounds = 0
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ccmemory-neo4j-warmup", daemon=True)

    def start(self) -> WriteWarmup:
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        records = synthetic_records(ROUND_SIZE, self.tag)
        deadline = time.monotonic() + MAX_SECONDS
        try:
            while not self._stop.is_set() and time.monotonic() < deadline:
                with self.index._session() as s, s.begin_transaction() as tx:
                    self.index._apply_tx(
                        tx,
                        self.tag,
                        records,
                        [],
                        lambda path: "curated" if hash(path) % 2 else "developmental",
                    )
                    tx.rollback()  # nothing of the warm-up is ever stored
                self.rounds += 1
        except Exception as exc:  # an optimisation only: the real apply reports real problems
            self.error = type(exc).__name__
