"""A team of clones hammering one Neo4j server at once (issue #29), shared by
`tests/test_neo4j_concurrency.py` and `bench/neo4j_concurrency_bench.py`.

The team: one bare git "origin" seeded with curated memories, N clones of it, each with its own
git identity (so its own index scope) and the same project on the same server. Each client runs
its mix of real `ccmemory` CLI processes one after another (`new`, `search`, `context`,
incremental `reindex`, edits and a deletion of its own memory files), or drives one real
`ccmemory mcp` server over stdio, so N client processes talk to the server at any moment.

`check_team` then compares every clone's memory files with what the index holds for that clone's
scope: a file missing, stale or with another id there is a lost write.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

SHARED_TOPICS = ("sessions", "auth", "deploy")  # every client MERGEs the same Topic nodes
TYPES = ("decision", "fact", "gotcha", "insight", "pattern")


@dataclass(frozen=True)
class ServerInfo:
    uri: str
    user: str
    password: str


@dataclass
class Clone:
    n: int
    root: Path
    user: str
    mcp: bool = False


@dataclass
class Team:
    project: str
    origin: Path
    clones: list[Clone]
    curated: list[str]  # ids of the memories seeded on origin's main
    server: ServerInfo
    home: Path  # CCMEMORY_HOME of every client (a throw-away personal vault)

    def env(self) -> dict[str, str]:
        """The environment of every client process: the shared server and project, and none of
        the caller's other CCMEMORY_ settings."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
        env.update(
            PYTHONPATH=str(ROOT),
            CCMEMORY_BACKEND="neo4j",
            CCMEMORY_NEO4J_URI=self.server.uri,
            CCMEMORY_NEO4J_USER=self.server.user,
            CCMEMORY_NEO4J_PASSWORD=self.server.password,
            CCMEMORY_PROJECT=self.project,
            CCMEMORY_HOME=str(self.home),
            CCMEMORY_VECTOR_CACHE="off",  # every client computes its own vectors
            CCMEMORY_TELEMETRY="off",
        )
        return env


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def cli(
    team: Team, root: Path, *args: str, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=team.env(),
        timeout=timeout,
    )
    return proc, time.perf_counter() - t0


def make_team(
    base: Path, server: ServerInfo, project: str, clients: int = 8, mcp_clients: int = 2, curated: int = 6
) -> Team:
    """Origin with `curated` memories committed on main, cloned `clients`
    times; the last `mcp_clients` clones are driven over MCP."""
    from ccmemory.core.model import Memory, new_id
    from ccmemory.core.vault import Vault
    from ccmemory.surfaces.cli.cmd_core import init_vault

    base.mkdir(parents=True, exist_ok=True)
    home = base / "home"
    home.mkdir(exist_ok=True)
    origin = base / "origin.git"
    origin.mkdir()
    git(origin, "init", "-q", "--bare", "-b", "main")
    seed = base / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    _identity(seed, "lead@example.com")
    init_vault(seed)
    vault = Vault(seed)
    ids = []
    for i in range(curated):
        m = Memory(
            type=TYPES[i % len(TYPES)],
            title=f"Team rule {i}: keep {SHARED_TOPICS[i % 3]} settings in one place",
            body=f"Curated memory {i} that every clone indexes (seedword{i}).",
            id=new_id(),
            created=datetime(2026, 11, 1 + i, 12, 0, tzinfo=UTC),
            topics=[SHARED_TOPICS[i % 3]],
            author="lead@example.com",
        )
        vault.write_new(m)
        ids.append(m.id)
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "curated memories")
    git(seed, "remote", "add", "origin", str(origin))
    git(seed, "push", "-q", "origin", "main")
    clones = []
    for n in range(clients):
        root = base / f"clone{n}"
        git(base, "clone", "-q", str(origin), str(root))
        _identity(root, f"dev{n}@example.com")
        clones.append(Clone(n, root, f"dev{n}@example.com", mcp=n >= clients - mcp_clients))
    return Team(project, origin, clones, ids, server, home)


def _identity(root: Path, email: str) -> None:
    git(root, "config", "user.email", email)
    git(root, "config", "user.name", email.split("@")[0])
    git(root, "config", "commit.gpgsign", "false")


# --- one client ------------------------------------------------------------------------------


@dataclass
class Op:
    kind: str
    seconds: float
    ok: bool
    detail: str = ""


@dataclass
class ClientLog:
    clone: Clone
    ops: list[Op] = field(default_factory=list)
    recorded: dict[str, str] = field(default_factory=dict)  # id -> path of the memories it wrote
    deleted: set[str] = field(default_factory=set)  # ids whose files it deleted
    edited: set[str] = field(default_factory=set)

    @property
    def errors(self) -> list[Op]:
        return [op for op in self.ops if not op.ok]


def _problem(proc: subprocess.CompletedProcess[str]) -> str:
    """Why a CLI run counts as an error: exit status, a traceback, or a write left unindexed."""
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {proc.stderr.strip()[-2000:]}"
    for text in (proc.stderr, proc.stdout):
        if "Traceback" in text or "not indexed" in text or "IndexUnavailable" in text:
            return f"stderr: {proc.stderr.strip()[-2000:]}\nstdout: {proc.stdout.strip()[-500:]}"
    return ""


def _token(clone: Clone, k: int) -> str:
    return f"c{clone.n}tok{k}x"  # one word the analyzer keeps whole: found only in that memory


PLAN = ("new", "search", "new", "edit", "delete", "context")
# an MCP server indexes what it records at once and refreshes itself from the files: its client
# records much faster than a CLI process starts, and is the one that keeps the server busy
MCP_PLAN = ("new", "search", "new", "context", "new", "edit", "new", "delete")


class Client:
    """One team member. `run(deadline)` does the PLAN in a loop until `deadline` (or `max_ops`),
    always starting and ending with an incremental reindex."""

    def __init__(self, team: Team, clone: Clone, seed: int = 0) -> None:
        self.team, self.clone = team, clone
        self.log = ClientLog(clone)
        self.rng = random.Random(seed * 1000 + clone.n)
        self.k = 0
        self.mcp: Any = None
        self._errlog: Any = None

    # the operations, each returning an error text ("" when fine)
    def op_reindex(self) -> str:
        proc, _ = cli(self.team, self.clone.root, "reindex", "--json")
        return _problem(proc)

    def _new_args(self) -> tuple[str, str, list[str], list[str], str]:
        self.k += 1
        tok = _token(self.clone, self.k)
        mtype = TYPES[self.rng.randrange(len(TYPES))]
        title = f"Client {self.clone.n} note {self.k} {tok}"
        topics = [SHARED_TOPICS[self.rng.randrange(3)], f"own-{self.clone.n}"]
        rels = []
        if self.k % 2 == 0:  # relations into the shared curated memories: their nodes get locked
            rels.append(f"DEPENDS_ON:{self.team.curated[self.rng.randrange(len(self.team.curated))]}")
        return mtype, title, topics, rels, tok

    def op_new(self) -> str:
        mtype, title, topics, rels, tok = self._new_args()
        body = f"Written by {self.clone.user} while others write too. {tok} shared sessions deploy."
        if self.mcp is not None:
            res = self.mcp.call_raw(
                "record",
                {
                    "type": mtype,
                    "title": title,
                    "body": body,
                    "topics": topics,
                    "relations": [
                        {"type": r.split(":")[0], "target": r.split(":")[1], "reason": "shared"} for r in rels
                    ],
                },
            )
            if res.is_error:
                return f"mcp record: {res.content[0].text}"
            data = res.structured_content or {}
            if not data.get("indexed"):
                return f"mcp record not indexed: {data}"
            self.log.recorded[data["id"]] = data["path"]
            return ""
        args = ["new", mtype, title, "--body", body, "--json"]
        for t in topics:
            args += ["--topic", t]
        for r in rels:
            args += ["--relation", r]
        proc, _ = cli(self.team, self.clone.root, *args)
        problem = _problem(proc)
        if not problem:
            out = json.loads(proc.stdout)
            self.log.recorded[out["id"]] = out["path"]
        return problem

    def _live(self) -> list[str]:
        return [i for i in self.log.recorded if i not in self.log.deleted]

    def op_search(self) -> str:
        """Read your own writes: the newest memory's unique word finds it (text mode: every
        memory was indexed by its `new`, embeddings or not)."""
        live = self._live()
        if not live:
            return ""
        mem_id = live[-1]
        tok = self._token_of(mem_id)
        if self.mcp is not None:
            res = self.mcp.call_raw("search", {"query": f"{tok} sessions", "mode": "hybrid"})
            if res.is_error:
                return f"mcp search: {res.content[0].text}"
            text = json.dumps(res.structured_content)
        else:
            proc, _ = cli(self.team, self.clone.root, "search", f"{tok} sessions", "--json")
            problem = _problem(proc)
            if problem:
                return problem
            text = proc.stdout
        return "" if mem_id in text else f"search {tok!r} did not find own memory {mem_id}"

    def _token_of(self, mem_id: str) -> str:
        return self._tokens[mem_id]

    def op_context(self) -> str:
        if self.mcp is not None:
            res = self.mcp.call_raw("context", {"task": "sessions deploy"})
            return f"mcp context: {res.content[0].text}" if res.is_error else ""
        proc, _ = cli(self.team, self.clone.root, "context", "--json")
        return _problem(proc)

    def op_edit(self) -> str:
        """A hand edit of one of its own memory files (picked up by the next reindex)."""
        live = self._live()
        if not live:
            return ""
        mem_id = live[self.rng.randrange(len(live))]
        path = self.clone.root / self.log.recorded[mem_id]
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\nEdited by hand at step {len(self.log.ops)}.\n")
        self.log.edited.add(mem_id)
        return ""

    def op_delete(self) -> str:
        live = self._live()
        if len(live) < 2:
            return ""
        mem_id = live[0]
        (self.clone.root / self.log.recorded[mem_id]).unlink()
        self.log.deleted.add(mem_id)
        return ""

    def _do(self, kind: str) -> None:
        t0 = time.perf_counter()
        try:
            problem = getattr(self, f"op_{kind}")()
        except Exception as exc:  # a client that crashes is an error, never a hang of the run
            problem = f"{type(exc).__name__}: {exc}"
        self.log.ops.append(Op(kind, time.perf_counter() - t0, not problem, problem))

    def run(
        self, deadline: float, max_ops: int | None = None, stop: threading.Event | None = None
    ) -> ClientLog:
        self._tokens: dict[str, str] = {}
        if self.clone.mcp:
            self._start_mcp()
        try:
            self._do("reindex")
            i = 0
            while time.monotonic() < deadline and (max_ops is None or i < max_ops):
                if stop is not None and stop.is_set():
                    break
                plan = MCP_PLAN if self.clone.mcp else PLAN
                kind = plan[(i + self.clone.n) % len(plan)]
                before = set(self.log.recorded)
                self._do(kind)
                for new in set(self.log.recorded) - before:
                    self._tokens[new] = _token(self.clone, self.k)
                i += 1
        finally:
            if self.mcp is not None:
                self._stop_mcp()
        self._do("reindex")  # the CLI, also for the MCP clients: the settled state is checked
        return self.log

    def _start_mcp(self) -> None:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from tests._mcp_client import SyncClient

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ccmemory", "mcp"],
            cwd=str(self.clone.root),
            env=self.team.env(),
        )
        self._errlog = (self.clone.root.parent / f"mcp{self.clone.n}.stderr").open("w+", encoding="utf-8")
        t0 = time.perf_counter()
        self.mcp = SyncClient._connect(lambda: stdio_client(params, errlog=self._errlog))
        self.log.ops.append(Op("mcp_start", time.perf_counter() - t0, True))

    def _stop_mcp(self) -> None:
        self.mcp.close()
        self.mcp = None
        self._errlog.seek(0)
        err = self._errlog.read()
        self._errlog.close()
        if "Traceback" in err or "Error" in err:
            self.log.ops.append(Op("mcp_stderr", 0.0, False, err[-2000:]))


def run_team(
    team: Team, seconds: float, max_ops: int | None = None, seed: int = 0, mcp_until_cli_done: bool = False
) -> list[ClientLog]:
    """Every client at once (one thread each, driving its own processes); their logs. Each does
    `max_ops` operations or stops at `seconds`; with `mcp_until_cli_done`, the MCP clients go on
    until the last CLI client has finished (so the server is busy the whole time)."""
    clients = [Client(team, c, seed) for c in team.clones]
    logs: list[ClientLog | None] = [None] * len(clients)
    start = threading.Barrier(len(clients))
    cli_left = [sum(1 for c in team.clones if not c.mcp)]
    lock = threading.Lock()
    cli_done = threading.Event()
    if not cli_left[0]:
        cli_done.set()

    def one(i: int) -> None:
        clone = clients[i].clone
        start.wait()
        try:
            if mcp_until_cli_done and clone.mcp:
                logs[i] = clients[i].run(time.monotonic() + seconds, None, cli_done)
            else:
                logs[i] = clients[i].run(time.monotonic() + seconds, max_ops)
        finally:
            if not clone.mcp:
                with lock:
                    cli_left[0] -= 1
                    if not cli_left[0]:
                        cli_done.set()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [log if log is not None else ClientLog(c.clone) for log, c in zip(logs, clients, strict=True)]


# --- what the index holds ----------------------------------------------------------------------


def index_for(team: Team, clone: Clone) -> Any:
    from ccmemory.index.neo4j import Neo4jIndex

    s = team.server
    return Neo4jIndex(s.uri, s.user, s.password, scope=clone.user)


def disk_rows(root: Path) -> dict[str, tuple[int, str]]:
    """path -> (size, sha256) of every memory file of a clone, as sync hashes them."""
    from ccmemory.core.vault import Vault

    vault = Vault(root)
    out = {}
    for p in vault.iter_paths():
        data = p.read_bytes()
        out[vault.rel(p)] = (len(data), hashlib.sha256(data).hexdigest())
    return out


@dataclass
class Check:
    lost: list[str]  # human-readable: one line per lost or stale write
    dumps: dict[str, Any]  # clone user -> comparable dump of its scope


def check_team(team: Team, logs: list[ClientLog]) -> Check:
    """Compare each clone's files with its scope's file records and the project's memories."""
    from ccmemory.index.base import Filters
    from tests.test_index_conformance import comparable_dump

    lost: list[str] = []
    dumps: dict[str, Any] = {}
    by_user = {log.clone.user: log for log in logs}
    for clone in team.clones:
        idx = index_for(team, clone)
        try:
            dump = idx.dump(team.project)
            dumps[clone.user] = comparable_dump(dump)
            rows = {r[0]: r for r in dump["file_rows"]}  # (path, size, hash, mem_id, error, line)
            for path, (size, digest) in disk_rows(clone.root).items():
                row = rows.pop(path, None)
                if row is None:
                    lost.append(f"{clone.user}: {path} is not in the index")
                elif (row[1], row[2]) != (size, digest):
                    lost.append(f"{clone.user}: {path} is stale in the index")
                elif row[4] is not None:
                    lost.append(f"{clone.user}: {path} indexed as invalid: {row[4]}")
            lost += [f"{clone.user}: {p} is in the index, not on disk" for p in sorted(rows)]
            every = Filters(team.project, viewer=clone.user, include_superseded=True)
            visible = {m.id for m in idx.query(every, limit=100_000)}
            log = by_user.get(clone.user)
            if log is not None:
                for mem_id in log.recorded:
                    if mem_id in log.deleted and mem_id in visible:
                        lost.append(f"{clone.user}: deleted {mem_id} still served")
                    elif mem_id not in log.deleted and mem_id not in visible:
                        lost.append(f"{clone.user}: own memory {mem_id} not served to its author")
            lost += [f"{clone.user}: curated {i} not served" for i in team.curated if i not in visible]
        finally:
            idx.close()
    return Check(lost, dumps)


def drop(team: Team) -> None:
    idx = index_for(team, team.clones[0])
    try:
        idx.drop_project(team.project)
    finally:
        idx.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def summary(logs: list[ClientLog]) -> dict[str, dict[str, float]]:
    """Per op kind: count, errors, p50 and p95 seconds."""
    kinds: dict[str, list[Op]] = {}
    for log in logs:
        for op in log.ops:
            kinds.setdefault(op.kind, []).append(op)
    out = {}
    for kind, ops in sorted(kinds.items()):
        secs = [o.seconds for o in ops]
        out[kind] = {
            "n": len(ops),
            "errors": sum(1 for o in ops if not o.ok),
            "p50": percentile(secs, 0.5),
            "p95": percentile(secs, 0.95),
        }
    return out
