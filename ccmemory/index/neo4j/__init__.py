"""The team index on Neo4j 5 (official `neo4j` driver), answering exactly like the SQLite index.

Graph model (every node carries `project`, so one server holds many projects):

- `(:Ident {project, id})` for every memory id that exists or is pointed at. A memory that
  exists also has the labels `:Memory` and its type's label (`:Decision`, `:FailedApproach`...).
  An id that is only a relation target (dangling) keeps the bare `:Ident` node, so relations are
  always real relationships and reappear by themselves when the target file arrives.
- `(:Memory)-[:SUPERSEDES|DEPENDS_ON|... {reason}]->(:Ident)`: the typed relations, stored in the
  direction written in the newer file; reverse names are derived at query time.
- `(:Memory)-[:ABOUT]->(:Topic)`, `-[:TOUCHES]->(:File)`, `-[:CAPTURED_IN]->(:Session)`,
  `-[:AUTHORED_BY]->(:Author)`, `-[:IN_PROJECT]->(:Project)`, `-[:APPLIES_TO]->(:Project)` (its
  `applies_to`); `(:Project)-[:RELATED_TO {relation}]->(:Project)` from `related_to` in config.
- `(:MemoryFile {project, scope, path, mtime_ns, size, hash, mem_id, error, status, author_git,
  ...})`: what sync saw in one clone. `scope` is the indexing user's id (`Config.user_id`, "" when
  unknown), so each team member's reindex owns its own file records: `file_states`, `apply`,
  `refresh_status`, `clear` and `file_problems` see only the index's scope, and alice's reindex
  never removes the files bob's clone reported (his developmental memories stay, visible to him
  only). `status` and `author_git` are what that clone's git says about the path.
- `(:Embedding {embedder, text_hash, dim, embedding})`: vectors per content hash, with a vector
  index whose dimension follows the embedder that stored them.

Derivation across scopes: a memory is served from one valid file with its id, chosen among all
scopes of the project. Within each scope the smallest path wins (exactly the SQLite rule, so one
scope answers like SQLite); among those per-scope winners a curated one is preferred, then the
smallest (path, scope). The memory's status and git author are those of the winning file. So a
curated memory pulled into two clones is one memory node, and it stays curated while any clone
has it on its main branch. Duplicate-id problems are reported per scope (a file losing to another
file of the same clone), never because another clone's copy won.

Rules kept here: labels and relationship types come only from `model.TYPES` and
`model.RELATION_TYPES` (checked before use); every value is a query parameter; full-text input
goes through `query.lucene_query`. Each `apply` runs in one transaction, so a server lost mid-way
leaves the index at the previous batch and the next reindex converges.

Layout of this package: `schema.py` (constraints, indexes, labels), `queries.py` (the Cypher text
of the write path), `connection.py` (driver, sessions, error mapping), `write.py` (the steps of
deriving memory nodes from file records, as functions over a transaction), `read.py` (queries
over memories), `vectors.py` (embeddings and the vector index), `index.py` (`Neo4jIndex`, which
puts them together with the reference-chunk half in `ccmemory.index.neo4j_ref`).
"""

from ccmemory.index.neo4j.index import Neo4jIndex
from ccmemory.index.neo4j.schema import (
    _SCHEMA,
    FULLTEXT_INDEX,
    SCHEMA_VERSION,
    TYPE_LABELS,
    VECTOR_INDEX,
)

__all__ = ["FULLTEXT_INDEX", "SCHEMA_VERSION", "TYPE_LABELS", "VECTOR_INDEX", "_SCHEMA", "Neo4jIndex"]
