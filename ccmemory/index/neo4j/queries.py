"""The Cypher text of the write path, kept apart from the Python that runs it.

Every value is a parameter. The only text spliced in is a node label from `schema.TYPE_LABELS`
or a relationship type from `model.RELATION_TYPES`, both checked before use, never user text.
"""

from __future__ import annotations

from ccmemory.core.model import RELATION_TYPES
from ccmemory.index.neo4j.schema import ALL_TYPE_LABELS, REL_PATTERN, TYPE_LABELS

# Index hints on the lookups by key: without them the planner, going by the statistics of the
# moment, has picked a scan of all the project's file records per row (16 s of one 10k reindex).
HINT_IDENT = "USING INDEX n:Ident(project, id)"
HINT_FILE_PATH = "USING INDEX f:MemoryFile(project, scope, path)"
HINT_FILE_MEM = "USING INDEX f:MemoryFile(project, mem_id)"

RETURN_MEMORY = (
    "m.id AS id, m.type AS type, m.title AS title, m.body AS body, m.created AS created, "
    "m.path AS path, m.status AS status, m.project AS project, m.author AS author, "
    "m.session AS session, m.branch AS branch, m.topics AS topics, m.files AS files, "
    "m.confidence AS confidence, m.source AS source, m.supersedes AS supersedes, "
    "m.relations AS relations, m.fields AS fields, m.hash AS hash"
)

# --- file records (one scope's) -------------------------------------------------------------
FILE_STATES = (
    "MATCH (f:MemoryFile {project: $p, scope: $s}) RETURN f.path AS path, "
    "f.mtime_ns AS mtime_ns, f.size AS size, f.hash AS hash"
)
FILE_STATES_AT = (
    "UNWIND $paths AS path MATCH (f:MemoryFile {project: $p, scope: $s, path: path}) "
    "RETURN f.path AS path, f.mtime_ns AS mtime_ns, f.size AS size, f.hash AS hash"
)
DELETE_FILES = (
    "UNWIND $paths AS path MATCH (f:MemoryFile {project: $p, scope: $s, path: path}) "
    f"{HINT_FILE_PATH} WITH f, f.mem_id AS old DELETE f RETURN old"
)
UPSERT_FILES = (
    "UNWIND $rows AS row MERGE (f:MemoryFile {project: $p, scope: $s, path: row.path}) "
    "WITH f, row, f.mem_id AS old SET f += row.props "
    "WITH old WHERE old IS NOT NULL RETURN DISTINCT old"
)

# (row field, relationship type, key node) of a memory's links to its topic/file/session/author
_KEY_RELS = (
    ("topics", "ABOUT", "Topic {project: $p, name: key}"),
    ("files", "TOUCHES", "File {project: $p, path: key}"),
    ("sessions", "CAPTURED_IN", "Session {project: $p, id: key}"),
    ("authors", "AUTHORED_BY", "Author {id: key}"),
)
KEY_REL_PATTERN = "|".join(rtype for _, rtype, _ in _KEY_RELS)

# --- deriving memory nodes from the file records --------------------------------------------
FILES_OF_IDS = (
    "UNWIND $ids AS id MATCH (f:MemoryFile {project: $p, mem_id: id}) "
    f"{HINT_FILE_MEM} WHERE f.error IS NULL "
    "RETURN id, f.scope AS scope, f.path AS path, f.hash AS hash, "
    "f.status AS status, f.author_git AS author_git"
)
SET_FILE_STATUS = (
    "UNWIND $rows AS row MATCH (f:MemoryFile {project: $p, scope: $s, path: row.path}) "
    f"{HINT_FILE_PATH} SET f.status = row.status, f.author_git = row.author_git"
)
PAYLOADS = (
    "UNWIND $rows AS row MATCH (f:MemoryFile {project: $p, scope: row.scope, path: row.path}) "
    f"{HINT_FILE_PATH} RETURN row.scope AS scope, row.path AS path, f.payload AS payload"
)
# a write lock on each id's node (created when missing) before anything about it is read: the
# _lock property is set and removed in the same statement (the lock stays until commit); sorted
# ids keep clients locking in one order
LOCK_IDENTS = (
    "UNWIND $ids AS id MERGE (n:Ident {project: $p, id: id}) "
    "SET n._lock = true REMOVE n._lock RETURN id, n:Memory AS memory"
)
STRIP = (
    f"UNWIND $ids AS id MATCH (n:Ident {{project: $p, id: id}}) {HINT_IDENT} "
    # only memories have outgoing relationships, labels and properties to strip: a bare Ident
    # (a relation target) is left alone
    "WITH n WHERE n:Memory "
    f"OPTIONAL MATCH (n)-[r:{REL_PATTERN}]->(d:Ident) "
    "WITH n, collect(d.id) AS targets "
    # the topic/file/session/author nodes it pointed at: the only ones the change can orphan
    f"WITH n, targets, [(n)-[:{KEY_REL_PATTERN}]->(k) | elementId(k)] AS keys "
    # a subquery per node: the planner cannot start the deletion from the relationships
    "CALL (n) { MATCH (n)-[r]->() DELETE r } "
    f"REMOVE n:Memory:{ALL_TYPE_LABELS} "
    "SET n = {project: n.project, id: n.id} "
    "RETURN targets, keys"
)
MERGE_KEYS = (
    "MERGE (:Project {name: $p}) "
    "WITH 1 AS one "
    "CALL () { UNWIND $topics AS name MERGE (:Topic {project: $p, name: name}) } "
    "CALL () { UNWIND $files AS path MERGE (:File {project: $p, path: path}) } "
    "CALL () { UNWIND $sessions AS key MERGE (:Session {project: $p, id: key}) } "
    "CALL () { UNWIND $authors AS key MERGE (:Author {id: key}) } "
    "RETURN count(*)"
)


# the type label of each row, set by a FOREACH per label so that one statement text (one plan)
# serves every type; the labels are the TYPE_LABELS values, never user text
_SET_TYPE_LABEL = " ".join(
    f"FOREACH (_ IN CASE WHEN row.label = '{lab}' THEN [1] ELSE [] END | SET n:{lab})"
    for lab in sorted(TYPE_LABELS.values())
)
WRITE_MEMORIES = (
    "MATCH (pr:Project {name: $p}) "
    "UNWIND $rows AS row MERGE (n:Ident {project: $p, id: row.id}) "
    f"SET n:Memory, n += row.props {_SET_TYPE_LABEL} "
    "CREATE (n)-[:IN_PROJECT]->(pr) "
    # the key nodes exist (MERGE_KEYS, in sorted order): each MERGE here only finds one
    + " ".join(
        f"FOREACH (key IN row.{field} | MERGE (k:{target}) CREATE (n)-[:{rtype}]->(k))"
        for field, rtype, target in _KEY_RELS
    )
)


MERGE_TARGETS = "UNWIND $ids AS id MERGE (:Ident {project: $p, id: id})"


# relationships between Ident nodes that exist, of every type in one statement text (a FOREACH
# per type; the types are model.RELATION_TYPES, never user text)
WRITE_EDGES = (
    "UNWIND $rows AS row MATCH (s:Ident {project: $p, id: row.src}) "
    "USING INDEX s:Ident(project, id) "
    "MATCH (d:Ident {project: $p, id: row.dst}) USING INDEX d:Ident(project, id) "
    + " ".join(
        f"FOREACH (_ IN CASE WHEN row.type = '{rtype}' THEN [1] ELSE [] END | "
        f"CREATE (s)-[:{rtype} {{reason: row.reason}}]->(d))"
        for rtype in RELATION_TYPES
    )
)


WRITE_APPLIES = (
    "UNWIND $rows AS row MATCH (n:Ident {project: $p, id: row.id}) "
    "USING INDEX n:Ident(project, id) "
    "UNWIND row.targets AS t MERGE (pr:Project {name: t}) CREATE (n)-[:APPLIES_TO]->(pr)"
)
DROP_STUBS = (
    f"UNWIND $ids AS id MATCH (n:Ident {{project: $p, id: id}}) {HINT_IDENT} "
    "WHERE NOT n:Memory AND NOT EXISTS { ()-->(n) } DETACH DELETE n"
)


DROP_ORPHAN_KEYS = (
    "UNWIND $keys AS key MATCH (k) WHERE elementId(k) = key AND NOT EXISTS { (k)--() } DELETE k"
)


DROP_ORPHAN_AUTHORS = "MATCH (a:Author) WHERE NOT EXISTS { (a)--() } DELETE a"
