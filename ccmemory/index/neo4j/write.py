"""The write steps of the Neo4j index, as functions over one open transaction.

`derive` rebuilds the memory nodes of some ids from their winning file records (the rule is in
the package docstring): pick the winners, strip the old nodes back to bare `:Ident`s, build the
rows, write them batched, drop what nothing points at any more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import neo4j

from ccmemory.core.model import RELATION_TYPES
from ccmemory.index.base import IndexUnavailable
from ccmemory.index.derive import DerivedMemory
from ccmemory.index.derive import derive as derive_memory
from ccmemory.index.neo4j import queries as q
from ccmemory.index.neo4j.schema import label as type_label
from ccmemory.text import analyzer, bm25

Live = Callable[[str], tuple[str, str | None]]
# (path, file hash, scope, status, git adder) of one file feeding a memory
Candidate = tuple[str, str, str, str, str | None]
Rows = list[dict[str, Any]]


def pick_winners(
    files: list[Any], scope: str, live: Live | None
) -> tuple[dict[str, Candidate], list[dict[str, Any]]]:
    """The winning file of each id, and this scope's file records whose status/adder changed."""
    per_scope: dict[tuple[str, str], Candidate] = {}
    stale: list[dict[str, Any]] = []
    for r in files:
        status, adder = r["status"], r["author_git"]
        if r["scope"] == scope and live is not None:
            now = live(r["path"])
            if now != (status, adder):
                stale.append({"path": r["path"], "status": now[0], "author_git": now[1]})
            status, adder = now
        key = (r["id"], r["scope"])
        cur = per_scope.get(key)
        if cur is None or r["path"] < cur[0]:
            per_scope[key] = (r["path"], r["hash"], r["scope"], status or "developmental", adder)
    winners: dict[str, Candidate] = {}
    best: dict[str, tuple[bool, str, str]] = {}
    for (mem_id, cand_scope), cand in per_scope.items():
        rank = (cand[3] != "curated", cand[0], cand_scope)
        if mem_id not in best or rank < best[mem_id]:
            best[mem_id] = rank
            winners[mem_id] = cand
    return winners, stale


def winner_payloads(
    tx: neo4j.ManagedTransaction,
    project: str,
    scope: str,
    winners: dict[str, Candidate],
    local: dict[str, str] | None,
) -> dict[tuple[str, str], str]:
    """The winners' payloads: from this transaction's writes when we have them, else stored."""
    local = local or {}
    payload_of: dict[tuple[str, str], str] = {}
    fetch: list[dict[str, str]] = []
    for cand in winners.values():
        if cand[2] == scope and cand[0] in local:
            payload_of[(cand[2], cand[0])] = local[cand[0]]
        else:
            fetch.append({"scope": cand[2], "path": cand[0]})
    if fetch:
        for r in tx.run(q.PAYLOADS, p=project, rows=fetch):
            payload_of[(r["scope"], r["path"])] = r["payload"]
    return payload_of


def strip(tx: neo4j.ManagedTransaction, project: str, ids: list[str]) -> tuple[set[str], set[str]]:
    """Every memory node of `ids` back to a bare Ident. Returns the ids its relations pointed
    at and the element ids of the topic/file/session/author nodes it was linked to: the only
    nodes the rebuild can leave unreferenced."""
    targets: set[str] = set()
    keys: set[str] = set()
    if not ids:
        return targets, keys
    for r in tx.run(q.STRIP, p=project, ids=ids):
        targets.update(r["targets"])
        keys.update(r["keys"])
    return targets, keys


def memory_row(dm: DerivedMemory) -> dict[str, Any]:
    """The node row of one memory: its properties and the keys of what it is about."""
    im = dm.memory
    return {
        "id": im.id,
        "label": type_label(im.type),
        "topics": dm.topics,
        "files": dm.files,
        "sessions": [] if im.session is None else [im.session],
        "authors": [] if dm.author is None else [dm.author],
        "props": {
            "path": im.path,
            "type": im.type,
            "title": im.title,
            "body": im.body,
            "created": im.created,
            "author_fm": im.author,
            "author_git": dm.author_git,
            "author": dm.author,
            "session": im.session,
            "branch": im.branch,
            "confidence": None if im.confidence is None else float(im.confidence),
            "source": im.source,
            "status": im.status,
            **dm.columns,
            "hash": im.hash,
            "text_hash": dm.text_hash,
            "fields_text": dm.fields_text,
            **term_props(im.title, im.body, dm.fields_text),
        },
    }


def term_props(title: str, body: str, ftext: str) -> dict[str, Any]:
    """The analysed full-text fields and their lengths (the same terms SQLite's FTS5 table holds)."""
    analysed = analyzer.memory_fields(title, body, ftext)
    lengths = bm25.field_lengths(analysed)
    return {
        "ft_title": analysed[0],
        "ft_body": analysed[1],
        "ft_fields": analysed[2],
        "len_title": lengths[0],
        "len_body": lengths[1],
        "len_fields": lengths[2],
    }


def backfill_terms(s: Any, batch: int = 2000) -> int:
    """Memory nodes written before schema 2 get their analysed terms (once, on connect)."""
    done = 0
    while True:
        rows = list(
            s.run(
                "MATCH (m:Memory) WHERE m.ft_title IS NULL RETURN elementId(m) AS eid, m.title AS t,"
                " m.body AS b, m.fields_text AS f LIMIT $n",
                n=batch,
            )
        )
        if not rows:
            return done
        props = [
            {"eid": r["eid"], "props": term_props(r["t"] or "", r["b"] or "", r["f"] or "")} for r in rows
        ]
        s.run(
            "UNWIND $rows AS r MATCH (m:Memory) WHERE elementId(m) = r.eid SET m += r.props", rows=props
        ).consume()
        done += len(rows)


def edge_rows(dm: DerivedMemory) -> list[dict[str, Any]]:
    out = []
    for e in dm.edges:
        if e.type not in RELATION_TYPES:  # whitelist: never a type from user text
            raise IndexUnavailable(f"unknown relation type {e.type!r} in {dm.memory.path}")
        out.append({"src": e.src, "type": e.type, "dst": e.dst, "reason": e.reason})
    return out


def build_rows(
    project: str,
    ids: list[str],
    winners: dict[str, Candidate],
    payload_of: dict[tuple[str, str], str],
) -> tuple[Rows, Rows, Rows, dict[str, tuple[str, str | None]]]:
    """Node rows, relation rows, APPLIES_TO rows and id -> (status, git author) of the winners."""
    mems: Rows = []
    edges: Rows = []
    applies: Rows = []  # APPLIES_TO (:Project) targets of each memory
    derived: dict[str, tuple[str, str | None]] = {}
    for mem_id in ids:
        win = winners.get(mem_id)
        if win is None:
            continue
        path, fhash, win_scope, status, adder = win
        dm = derive_memory(
            payload_of[(win_scope, path)], path=path, status=status, project=project, hash=fhash, adder=adder
        )
        derived[dm.memory.id] = (dm.memory.status, dm.author_git)
        if dm.applies_to:
            applies.append({"id": dm.memory.id, "targets": dm.applies_to})
        mems.append(memory_row(dm))
        edges.extend(edge_rows(dm))
    return mems, edges, applies, derived


def write_memories(tx: neo4j.ManagedTransaction, project: str, mems: list[dict[str, Any]]) -> None:
    """Each memory node with its IN_PROJECT, ABOUT, TOUCHES, CAPTURED_IN and AUTHORED_BY
    relationships, in one statement for every type label (no per-row subqueries); the nodes
    these point at are MERGEd first, once per distinct key, in sorted order (one statement)."""
    if not mems:
        return
    tx.run(
        q.MERGE_KEYS,
        p=project,
        topics=sorted({t for row in mems for t in row["topics"]}),
        files=sorted({f for row in mems for f in row["files"]}),
        sessions=sorted({k for row in mems for k in row["sessions"]}),
        authors=sorted({k for row in mems for k in row["authors"]}),
    ).consume()
    # row["label"] comes from TYPE_LABELS (schema.label); the statement only compares it
    tx.run(q.WRITE_MEMORIES, p=project, rows=mems).consume()


def write_edges(tx: neo4j.ManagedTransaction, project: str, edges: list[dict[str, Any]]) -> None:
    if not edges:
        return
    tx.run(q.MERGE_TARGETS, p=project, ids=sorted({r["dst"] for r in edges})).consume()
    # row["type"] was checked against RELATION_TYPES (edge_rows); the statement only compares it
    tx.run(q.WRITE_EDGES, p=project, rows=edges).consume()


def write_applies(tx: neo4j.ManagedTransaction, project: str, applies: list[dict[str, Any]]) -> None:
    if applies:
        tx.run(q.WRITE_APPLIES, p=project, rows=applies).consume()


def drop_unreferenced(
    tx: neo4j.ManagedTransaction, project: str, stub_candidates: set[str], keys: set[str]
) -> None:
    """Ids among `stub_candidates` that are neither memories nor relation targets any more
    disappear, and so do the topic/file/session/author nodes among `keys` (element ids) that
    nothing points at. Only what the rebuild unlinked is checked, never the whole project."""
    if stub_candidates:
        tx.run(q.DROP_STUBS, p=project, ids=sorted(stub_candidates)).consume()
    if keys:
        tx.run(q.DROP_ORPHAN_KEYS, keys=sorted(keys)).consume()


def derive(
    tx: neo4j.ManagedTransaction,
    project: str,
    scope: str,
    ids: list[str],
    live: Live | None,
    local: dict[str, str] | None = None,
) -> dict[str, tuple[str, str | None]]:
    """Rebuild the memory nodes of `ids` from their winning files (see the package docstring).

    `live(path)` gives (status, git adder) of this scope's paths as git says now (stored on
    the file records when they differ); other scopes' files keep what their clone stored.
    `local` maps this scope's paths written in this transaction to their payloads, so the
    winners' payloads need not travel back from the server.
    The ids' nodes are locked first (created when missing): clients of one server re-derive the
    same memories at once (a curated memory is indexed from every clone), and without the lock
    two transactions could each strip the old links and create new ones (duplicated links), or
    derive from file records read before the other committed. Once the lock is held, what the
    others committed is what this transaction reads.
    Returns id -> (status, git author) of the memories rebuilt.
    """
    if not ids:
        return {}
    held = {r["id"] for r in tx.run(q.LOCK_IDENTS, p=project, ids=sorted(set(ids))) if r["memory"]}
    files = list(tx.run(q.FILES_OF_IDS, p=project, ids=ids))
    winners, stale = pick_winners(files, scope, live)
    if stale:
        tx.run(q.SET_FILE_STATUS, p=project, s=scope, rows=stale).consume()
    payload_of = winner_payloads(tx, project, scope, winners, local)
    targets, keys = strip(tx, project, sorted(held))  # only a memory node has links to strip
    mems, edges, applies, derived = build_rows(project, ids, winners, payload_of)
    # Every outgoing relationship of `ids` was deleted by strip() and each id is written once,
    # so relationships are CREATEd; the nodes they point at are MERGEd first, then only matched.
    write_memories(tx, project, mems)
    write_edges(tx, project, edges)
    write_applies(tx, project, applies)
    # an id rebuilt as a memory stays; one left without a winning file, or a former relation
    # target, goes unless something still points at it
    drop_unreferenced(tx, project, targets | (set(ids) - set(derived)), keys)
    return derived
