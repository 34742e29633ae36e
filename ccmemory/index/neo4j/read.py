"""Queries over the memories of one project (the read half of the Index contract)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ccmemory.index.base import MAX_SHARED, Edge, FileProblem, Filters, IndexedMemory, stats_summary
from ccmemory.index.derive import PREFIX_LIMIT, ref_lookup
from ccmemory.index.neo4j.connection import Connection, wrap_errors
from ccmemory.index.neo4j.filters import memory_of, reaches_back, still_memories, where_clause
from ccmemory.index.neo4j.queries import RETURN_MEMORY
from ccmemory.index.neo4j.schema import FULLTEXT_INDEX, REL_PATTERN
from ccmemory.index.query import lucene_match_groups, lucene_match_terms
from ccmemory.text import analyzer, bm25

# the sizes of Lucene's top-k tried before filtering every match (MemoryReads._text_candidates)
TEXT_TOP_K = (400, 1600, 6400)


class MemoryReads(Connection):
    """Memories, their relations, problems and counts, for one project at a time."""

    backend = "neo4j"

    @wrap_errors
    def get(self, project: str, ids: Sequence[str]) -> list[IndexedMemory]:
        if not ids:
            return []
        ids = list(ids)
        rows = self._read(
            "UNWIND $ids AS id MATCH (m:Memory {project: $p, id: id}) RETURN " + RETURN_MEMORY,
            p=project,
            ids=sorted(set(ids)),
        )
        by_id = {r["id"]: memory_of(r) for r in still_memories(rows)}
        return [by_id[i] for i in ids if i in by_id]

    @wrap_errors
    def resolve(self, project: str, ref: str) -> list[str]:
        look = ref_lookup(ref)
        if look is None:
            return []
        rows = self._read(
            "MATCH (m:Memory {project: $p}) WHERE m.id = $id OR m.path = $ref RETURN m.id AS id",
            p=project,
            id=look.id,
            ref=look.path,
        )
        if rows:
            return sorted(r["id"] for r in rows)
        if look.prefix is not None:
            rows = self._read(
                "MATCH (m:Memory {project: $p}) WHERE m.id STARTS WITH $pre "
                "RETURN m.id AS id ORDER BY id LIMIT $limit",
                p=project,
                pre=look.prefix,
                limit=PREFIX_LIMIT,
            )
            return [r["id"] for r in rows]
        return []

    @wrap_errors
    def query(self, f: Filters, limit: int = 50, offset: int = 0) -> list[IndexedMemory]:
        where, params = where_clause(f)
        # with ids, a seek on the (project, id) index: the clause's `(NOT $f_use_ids OR m.id IN
        # $f_ids)` alone makes the planner read every memory of the project (the expansion of
        # each search asks for its few neighbours so)
        seek = "m.id IN $f_ids AND " if f.ids is not None else ""
        rows = self._read(
            f"MATCH (m:Memory {{project: $p}}) WHERE {seek}{where} RETURN {RETURN_MEMORY} "
            "ORDER BY m.created DESC, m.id DESC SKIP $offset LIMIT $limit",
            p=f.project,
            offset=offset,
            limit=limit,
            **params,
        )
        return [memory_of(r) for r in still_memories(rows)]

    @wrap_errors
    def count(self, f: Filters) -> int:
        where, params = where_clause(f)
        rows = self._read(
            f"MATCH (m:Memory {{project: $p}}) WHERE {where} RETURN count(m) AS n", p=f.project, **params
        )
        return int(rows[0]["n"])

    @wrap_errors
    def text_search(
        self, text: str, f: Filters, limit: int = 50, *, groups: Sequence[Sequence[str]] | None = None
    ) -> list[tuple[str, float]]:
        """Candidates holding any analysed query term, or every term of one of ``groups`` (at
        most bm25.CANDIDATE_CAP, Lucene's order), scored by `ccmemory.text.bm25` on the query's
        terms with the project's statistics, like every backend."""
        terms = analyzer.query_terms(text)
        if not terms:
            return []
        match = lucene_match_groups(groups) if groups is not None else lucene_match_terms(terms)
        if not match:
            return []
        rows, stamp = self._text_candidates(match, f)
        if not rows:
            return []
        stats = self._text_stats(f.project, terms, stamp)
        cands = [bm25.Candidate(r["id"], (r["t"] or "", r["b"] or "", r["f"] or "")) for r in rows]
        return bm25.rank(terms, cands, stats)[:limit]

    @wrap_errors
    def doc_freqs(self, project: str, terms: Sequence[str]) -> dict[str, int]:
        """The terms' document frequencies as text search reads them (kept ones first: they are
        the state of the last search's stamp), without the totals."""
        kept = self._text_kept.get(project)
        df = dict(kept[2]) if kept is not None else {}
        self._read_df(project, terms, df)
        return {t: df[t] for t in dict.fromkeys(terms)}

    def _read_df(self, project: str, terms: Sequence[str], df: dict[str, int]) -> None:
        """Put into ``df`` the document frequency of each of ``terms`` it does not hold yet."""
        missing = [t for t in dict.fromkeys(terms) if t not in df]
        if not missing:
            return
        rows = self._read(
            "UNWIND $terms AS t CALL db.index.fulltext.queryNodes($index, t.q) YIELD node "
            "WHERE node.project = $p RETURN t.term AS term, count(node) AS df",
            index=FULLTEXT_INDEX,
            terms=[{"term": t, "q": lucene_match_terms([t])} for t in missing],
            p=project,
        )
        df.update({t: 0 for t in missing})  # a term no memory holds has no row
        df.update({r["term"]: int(r["df"]) for r in rows})

    def _text_stats(self, project: str, terms: list[str], stamp: str | None) -> bm25.Stats:
        """The project's statistics for BM25: memories, total field lengths, document frequency
        of each term. Counting them reads every memory of the project (0.4-0.5 s at 100k) and
        every match of each term, so they are kept per connection while the database has not
        committed anything since `stamp` was taken (taken before they were read; no stamp, no
        keeping): what the same reads would give, for repeated searches between writes. The
        stamp is taken after the candidates were read, before these are: kept values are only
        used while no commit came after it, so they are the state the stamp names."""
        kept = self._text_kept.get(project)
        if kept is not None and stamp is not None and kept[0] == stamp:
            totals, df = kept[1], kept[2]
        else:
            st = self._read(
                "MATCH (m:Memory {project: $p}) RETURN count(m) AS n, "
                "sum(m.len_title) AS lt, sum(m.len_body) AS lb, sum(m.len_fields) AS lf",
                p=project,
            )[0]
            totals = (int(st["n"]), (int(st["lt"] or 0), int(st["lb"] or 0), int(st["lf"] or 0)))
            df = {}
            if stamp is not None:
                self._text_kept[project] = (stamp, totals, df)
        self._read_df(project, terms, df)
        return bm25.Stats(totals[0], totals[1], {t: df[t] for t in terms})

    def _text_candidates(self, match: str, f: Filters) -> tuple[list[Any], str | None]:
        """The first bm25.CANDIDATE_CAP memories passing `f` in (Lucene score desc, id) order,
        and the stamp of the database after the first read (`Connection._read_stamped`).

        Lucene's best `k` matches of the whole server (`queryNodes` with a limit: a top-k, not a
        sort of every match) are filtered here; they settle the answer when at least CANDIDATE_CAP
        pass and the last of those scores above the k-th match (every match left out scores at
        most that: none can tie or pass it), or when there are fewer than `k` matches at all.
        Otherwise `k` grows, and at the end every match is filtered, as before: the same rows
        either way. At 100k memories a query matched 10k-36k of them, each filtered (properties
        and a superseded check) before its top 100 were taken."""
        where, params = where_clause(f)
        cap = bm25.CANDIDATE_CAP
        stamp: str | None = None
        for step, k in enumerate(TEXT_TOP_K):
            raw, now = self._read_stamped(
                "CALL db.index.fulltext.queryNodes($index, $q, {limit: $k}) YIELD node AS m, score "
                f"WITH m, score, m.project = $p AND {where} AS keep "
                "RETURN score, keep, CASE WHEN keep THEN m.id END AS id, "
                "CASE WHEN keep THEN m.ft_title END AS t, CASE WHEN keep THEN m.ft_body END AS b, "
                "CASE WHEN keep THEN m.ft_fields END AS f",
                index=FULLTEXT_INDEX,
                q=match,
                k=k,
                p=f.project,
                **params,
            )
            stamp = now if step == 0 else stamp
            kept = sorted((r for r in raw if r["keep"]), key=lambda r: (-r["score"], r["id"]))
            if len(raw) < k:
                return kept[:cap], stamp
            if len(kept) >= cap and kept[cap - 1]["score"] > min(r["score"] for r in raw):
                return kept[:cap], stamp
        return self._every_text_match(match, f), stamp

    def _every_text_match(self, match: str, f: Filters) -> list[Any]:
        """`_text_candidates` by filtering every match of the server (the query used before)."""
        where, params = where_clause(f)
        return self._read(
            "CALL db.index.fulltext.queryNodes($index, $q) YIELD node AS m, score "
            f"WHERE m.project = $p AND {where} "
            "RETURN m.id AS id, m.ft_title AS t, m.ft_body AS b, m.ft_fields AS f "
            "ORDER BY score DESC, id ASC LIMIT $limit",
            index=FULLTEXT_INDEX,
            q=match,
            p=f.project,
            limit=bm25.CANDIDATE_CAP,
            **params,
        )

    @wrap_errors
    def edges(self, project: str, ids: Sequence[str]) -> list[Edge]:
        if not ids:
            return []
        # each side from an index seek (one pattern with `a.id IN $ids OR b.id IN $ids` read every
        # relation of the project); UNION drops the edges found from both ends
        rows = self._read(
            f"MATCH (a:Memory {{project: $p}}) WHERE a.id IN $ids "
            f"MATCH (a)-[r:{REL_PATTERN}]->(b:Memory {{project: $p}}) "
            "RETURN a.id AS src, type(r) AS type, b.id AS dst, r.reason AS reason "
            "UNION "
            f"MATCH (b:Memory {{project: $p}}) WHERE b.id IN $ids "
            f"MATCH (a:Memory {{project: $p}})-[r:{REL_PATTERN}]->(b) "
            "RETURN a.id AS src, type(r) AS type, b.id AS dst, r.reason AS reason",
            p=project,
            ids=list(ids),
        )
        out = {Edge(r["src"], r["type"], r["dst"], r["reason"]) for r in rows}
        return sorted(out, key=lambda e: (e.src, e.type, e.dst))

    @wrap_errors
    def dangling(self, project: str) -> list[Edge]:
        rows = self._read(
            f"MATCH (a:Memory {{project: $p}})-[r:{REL_PATTERN}]->(b:Ident) WHERE NOT b:Memory "
            "RETURN a.id AS src, type(r) AS type, b.id AS dst, r.reason AS reason",
            p=project,
        )
        return sorted(
            (Edge(r["src"], r["type"], r["dst"], r["reason"]) for r in rows),
            key=lambda e: (e.src, e.type, e.dst),
        )

    @wrap_errors
    def superseded_ids(self, f: Filters) -> set[str]:
        g = dataclasses.replace(f, include_superseded=True)
        where, params = where_clause(g)
        rows = self._read(
            f"MATCH (m:Memory {{project: $p}}) WHERE {where} AND "
            "EXISTS { (sx:Memory)-[:SUPERSEDES]->(m) WHERE sx.id <> m.id "
            "AND (NOT $f_use_viewer OR sx.status = 'curated' OR sx.author = $f_viewer) "
            f"AND {reaches_back('m')} }} "
            "RETURN m.id AS id",
            p=f.project,
            **params,
        )
        return {r["id"] for r in rows}

    @wrap_errors
    def related_by_topic_or_file(
        self, f: Filters, ids: Sequence[str], limit: int = 20
    ) -> list[tuple[str, str, int]]:
        if not ids:
            return []
        where, params = where_clause(f)
        rows = self._read(
            "MATCH (s:Memory {project: $p}) WHERE s.id IN $ids "
            "MATCH (s)-[:ABOUT|TOUCHES]->(x) "
            # a topic or file shared by very many memories connects nothing in particular
            # (Topic/File nodes are per project, so their degree counts this project's memories)
            "WHERE COUNT { (x)<-[:ABOUT|TOUCHES]-() } <= $max_shared "
            "MATCH (x)<-[:ABOUT|TOUCHES]-(m:Memory {project: $p}) "
            f"WHERE m.id <> s.id AND NOT m.id IN $ids AND {where} "
            "RETURN m.id AS other, s.id AS via, count(*) AS n",
            p=f.project,
            ids=list(ids),
            max_shared=MAX_SHARED,
            **params,
        )
        ranked = sorted(
            ((r["other"], r["via"], int(r["n"])) for r in rows), key=lambda t: (-t[2], t[0], t[1])
        )
        return ranked[:limit]

    @wrap_errors
    def file_links(self, f: Filters, matching: Callable[[str], bool] | None = None) -> list[tuple[str, str]]:
        """(memory id, file as written) of every memory passing ``f`` that names files (those
        ``matching`` accepts, when given)."""
        where, params = where_clause(f)
        rows = self._read(
            f"MATCH (m:Memory {{project: $p}})-[:TOUCHES]->(x:File) WHERE {where} "
            "RETURN m.id AS id, x.path AS file ORDER BY id, file",
            p=f.project,
            **params,
        )
        return [(r["id"], r["file"]) for r in rows if matching is None or matching(r["file"])]

    @wrap_errors
    def file_problems(self, project: str) -> list[FileProblem]:
        """This scope's invalid files, and its files losing to a smaller path of the same clone."""
        out = [
            FileProblem(r["path"], r["line"], r["error"])
            for r in self._read(
                "MATCH (f:MemoryFile {project: $p, scope: $s}) WHERE f.error IS NOT NULL "
                "RETURN f.path AS path, f.error_line AS line, f.error AS error",
                p=project,
                s=self.scope,
            )
        ]
        for r in self._read(
            "MATCH (f:MemoryFile {project: $p, scope: $s}) WHERE f.error IS NULL AND f.mem_id IS NOT NULL "
            "WITH f.mem_id AS id, collect(f.path) AS paths WHERE size(paths) > 1 RETURN id, paths",
            p=project,
            s=self.scope,
        ):
            paths = sorted(r["paths"])
            for path in paths[1:]:
                out.append(FileProblem(path, 1, f"duplicate id {r['id']}: also used by {paths[0]}"))
        return sorted(out, key=lambda p: (p.path, p.line or 0))

    @wrap_errors
    def invalid_files(self, project: str, limit: int) -> tuple[int, list[str]]:
        rows = self._read(
            "MATCH (f:MemoryFile) USING INDEX f:MemoryFile(error) "
            "WHERE f.error IS NOT NULL AND f.project = $p AND f.scope = $s "
            "RETURN f.path AS path ORDER BY path",
            p=project,
            s=self.scope,
        )
        return len(rows), [r["path"] for r in rows[:limit]]

    @wrap_errors
    def stats(self, project: str) -> dict[str, Any]:
        by_type = {
            r["k"]: r["n"]
            for r in self._read(
                "MATCH (m:Memory {project: $p}) RETURN m.type AS k, count(*) AS n ORDER BY k", p=project
            )
        }
        by_status = {
            r["k"]: r["n"]
            for r in self._read(
                "MATCH (m:Memory {project: $p}) RETURN m.status AS k, count(*) AS n ORDER BY k", p=project
            )
        }
        nrel = self._read(
            f"MATCH (:Memory {{project: $p}})-[r:{REL_PATTERN}]->() RETURN count(r) AS n", p=project
        )[0]["n"]
        nerr = self._read(
            "MATCH (f:MemoryFile {project: $p, scope: $s}) WHERE f.error IS NOT NULL RETURN count(f) AS n",
            p=project,
            s=self.scope,
        )[0]["n"]
        nvec = self._read("MATCH (e:Embedding) RETURN count(e) AS n")[0]["n"]
        return stats_summary(
            self.backend, self.location, by_type, by_status, relations=nrel, invalid_files=nerr, vectors=nvec
        )

    @wrap_errors
    def server_info(self) -> dict[str, Any]:
        """Version, edition and schema state, for `ccmemory doctor`."""
        comp = self._read("CALL dbms.components() YIELD name, versions, edition RETURN *")[0]
        idx = self._read("SHOW INDEXES YIELD name, type, state RETURN name, type, state ORDER BY name")
        cons = self._read("SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name")
        return {
            "version": comp["versions"][0],
            "edition": comp["edition"],
            "indexes": {r["name"]: {"type": r["type"], "state": r["state"]} for r in idx},
            "constraints": [r["name"] for r in cons],
        }

    @wrap_errors
    def dump(self, project: str) -> dict[str, Any]:
        """The same shape and values as SQLiteIndex.dump (compared across backends in tests)."""
        mems = self._read(
            "MATCH (m:Memory {project: $p}) RETURN m.id AS id, m.path AS path, m.type AS type, "
            "m.title AS title, m.body AS body, m.created AS created, m.author_fm AS author_fm, "
            "m.author_git AS author_git, m.session AS session, m.branch AS branch, "
            "m.confidence AS confidence, m.source AS source, m.status AS status, m.fields AS fields, "
            "m.topics AS topics, m.files AS files, m.supersedes AS supersedes, "
            "m.relations AS relations, m.hash AS hash, m.text_hash AS text_hash, "
            "m.ft_title AS ft_title, m.ft_body AS ft_body, m.ft_fields AS ft_fields",
            p=project,
        )
        mems.sort(key=lambda r: r["id"])
        total = self._read("MATCH (m:Memory) RETURN count(m) AS n")[0]["n"]
        rels = self._read(
            f"MATCH (a:Memory {{project: $p}})-[r:{REL_PATTERN}]->(b:Ident) "
            "RETURN a.id AS src, type(r) AS type, b.id AS dst, r.reason AS reason",
            p=project,
        )
        topics = self._read(
            "MATCH (m:Memory {project: $p})-[:ABOUT]->(t:Topic) RETURN m.id AS id, t.name AS v", p=project
        )
        files = self._read(
            "MATCH (m:Memory {project: $p})-[:TOUCHES]->(f:File) RETURN m.id AS id, f.path AS v", p=project
        )
        file_rows = self._read(
            "MATCH (f:MemoryFile {project: $p, scope: $s}) RETURN f.path AS path, f.size AS size, "
            "f.hash AS hash, f.mem_id AS mem_id, f.error AS error, f.error_line AS error_line",
            p=project,
            s=self.scope,
        )
        cols = (
            "id path type title body created author_fm author_git session branch confidence source "
            "status fields topics files supersedes relations hash text_hash"
        ).split()
        return {
            "memories": [tuple(r[c] for c in cols) for r in mems],
            "fts": [(r["id"], r["ft_title"], r["ft_body"], r["ft_fields"]) for r in mems],
            "fts_total": total,
            "relations": sorted(tuple(r.values()) for r in rels),
            "topics": sorted(tuple(r.values()) for r in topics),
            "files": sorted(tuple(r.values()) for r in files),
            "file_rows": sorted(tuple(r.values()) for r in file_rows),
        }

    @wrap_errors
    def projects(self) -> list[str]:
        return [r["name"] for r in self._read("MATCH (p:Project) RETURN p.name AS name ORDER BY name")]

    @wrap_errors
    def related_projects(self, project: str) -> list[tuple[str, str]]:
        rows = self._read(
            "MATCH (a:Project {name: $p})-[r:RELATED_TO]-(b:Project) WHERE b.name <> $p "
            "RETURN b.name AS name, r.relation AS relation ORDER BY name, relation",
            p=project,
        )
        out: dict[str, str] = {}
        for r in rows:
            out.setdefault(r["name"], r["relation"])
        return sorted(out.items())

    @wrap_errors
    def applying_to(self, target: str, f: Filters, limit: int = 50) -> list[IndexedMemory]:
        where, params = where_clause(f)
        rows = self._read(
            "MATCH (m:Memory {project: $p})-[:APPLIES_TO]->(:Project {name: $target}) "
            f"WHERE {where} RETURN {RETURN_MEMORY} ORDER BY m.created DESC, m.id DESC LIMIT $limit",
            p=f.project,
            target=target,
            limit=limit,
            **params,
        )
        return [memory_of(r) for r in still_memories(rows)]

    @wrap_errors
    def projects_applying_to(self, target: str) -> list[str]:
        rows = self._read(
            "MATCH (m:Memory)-[:APPLIES_TO]->(:Project {name: $t}) WHERE m.project <> $t "
            "RETURN DISTINCT m.project AS name ORDER BY name",
            t=target,
        )
        return [r["name"] for r in rows]
