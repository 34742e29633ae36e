"""Smoke test of the real Neo4j test server: Bolt, auth, version, full-text and vector indexes."""

from __future__ import annotations

import os
import uuid

import pytest

from tests.neo4j_server import Neo4jServer

pytestmark = pytest.mark.neo4j


def test_server_answers_with_auth_and_version(neo4j_server: Neo4jServer) -> None:
    from neo4j import GraphDatabase

    with GraphDatabase.driver(neo4j_server.uri, auth=neo4j_server.auth) as driver:
        records, _, _ = driver.execute_query("RETURN 1 AS one")
        assert records[0]["one"] == 1
        records, _, _ = driver.execute_query("CALL dbms.components() YIELD name, versions, edition RETURN *")
        kernel = records[0]
        assert kernel["versions"][0].startswith("5.26"), kernel["versions"]
        if not os.environ.get("CCMEMORY_TEST_NEO4J_URI"):  # ours, not a user-given server
            assert kernel["edition"] == "community"


def test_wrong_password_is_refused(neo4j_server: Neo4jServer) -> None:
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError

    with (
        GraphDatabase.driver(neo4j_server.uri, auth=(neo4j_server.user, "not-the-password")) as d,
        pytest.raises(AuthError),
    ):
        d.verify_connectivity()


def test_fulltext_and_vector_indexes_work(neo4j_server: Neo4jServer) -> None:
    from neo4j import GraphDatabase

    label = "Smoke" + uuid.uuid4().hex[:8]  # our own label: never touches other tests' data
    ft, vec = f"{label}_ft", f"{label}_vec"
    with GraphDatabase.driver(neo4j_server.uri, auth=neo4j_server.auth) as driver:
        try:
            driver.execute_query(f"CREATE FULLTEXT INDEX {ft} FOR (n:{label}) ON EACH [n.text]")
            driver.execute_query(
                f"CREATE VECTOR INDEX {vec} FOR (n:{label}) ON n.embedding OPTIONS "
                "{indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}"
            )
            driver.execute_query("CALL db.awaitIndexes(60)")
            driver.execute_query(
                f"UNWIND $rows AS row CREATE (n:{label}) SET n = row",
                rows=[
                    {"name": n, "text": t, "embedding": e}
                    for n, t, e in (
                        ("a", "auth tokens in httpOnly cookies", [1.0, 0.0, 0.0]),
                        ("b", "database migrations run at deploy", [0.0, 1.0, 0.0]),
                        ("c", "cookies expire after a day", [0.7, 0.7, 0.0]),
                    )
                ],
            )
            records, _, _ = driver.execute_query(
                "CALL db.index.fulltext.queryNodes($index, $q) YIELD node, score "
                "RETURN node.name AS name ORDER BY score DESC",
                index=ft,
                q="cookies",
            )
            assert sorted(r["name"] for r in records) == ["a", "c"]

            records, _, _ = driver.execute_query(
                "CALL db.index.vector.queryNodes($index, 3, $v) YIELD node, score "
                "RETURN node.name AS name, score",
                index=vec,
                v=[0.9, 0.1, 0.0],
            )
            assert [r["name"] for r in records] == ["a", "c", "b"]
            assert records[0]["score"] > records[1]["score"] > records[2]["score"]
        finally:
            driver.execute_query(f"MATCH (n:{label}) DETACH DELETE n")
            driver.execute_query(f"DROP INDEX {ft} IF EXISTS")
            driver.execute_query(f"DROP INDEX {vec} IF EXISTS")
