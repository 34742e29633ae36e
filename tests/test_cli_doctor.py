"""`ccmemory doctor` on SQLite and on a real Neo4j server, and with Neo4j down."""

from __future__ import annotations

import json
import socket
import uuid
from pathlib import Path

import pytest

from tests.conftest import RunCli, git
from tests.neo4j_server import Neo4jServer


def setup_vault(repo: Path, run_cli: RunCli, env: dict[str, str] | None = None) -> None:
    run_cli(repo, "new", "decision", "Doctor checks the index", "--topic", "ops", env=env)
    run_cli(repo, "new", "fact", "Neo4j listens on 7687", env=env)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "two memories")
    (repo / ".ccmemory" / "facts" / "2026-11-21-broken.md").write_text(
        "---\nid: [oops\n---\n", encoding="utf-8"
    )
    run_cli(repo, "reindex", env=env, check=False)  # exits non-zero: one invalid file


def test_doctor_sqlite(repo: Path, run_cli: RunCli) -> None:
    setup_vault(repo, run_cli)
    data = json.loads(run_cli(repo, "doctor", "--json").stdout)
    assert data["ok"] is True and data["backend"] == "sqlite"
    assert data["root"] == str(repo) and data["project"] == "repo" and data["version"]
    assert data["location"].endswith(".ccmemory/local/index.db")
    idx = data["index"]
    assert idx["counts"]["memories"] == 2 and idx["counts"]["by_status"] == {"curated": 2}
    assert [b["path"] for b in idx["invalid_files"]] == [".ccmemory/facts/2026-11-21-broken.md"]
    assert "server" not in idx
    cpu_path = data["embedder"].pop("cpu_path")
    assert data["embedder"] == {"available": True, "name": "minilm-l6-int8-rqx", "dim": 384}
    assert cpu_path["kernel"] in ("u8s8", "u8u8") and cpu_path["kernel"] in cpu_path["detail"].replace(
        "×", ""
    )
    assert data["capture"]["provider"]
    assert set(data["git_hooks"]["installed"]) == {
        "post-merge",
        "post-checkout",
        "post-rewrite",
        "post-commit",
        "pre-commit",
    }
    text = run_cli(repo, "doctor").stdout
    assert "backend      sqlite" in text and "2 memories (curated 2)" in text
    assert ".ccmemory/facts/2026-11-21-broken.md:" in text and "embedder" in text and "git hooks" in text


def test_doctor_outside_a_vault(tmp_path: Path, run_cli: RunCli) -> None:
    proc = run_cli(tmp_path, "doctor", "--json", check=False)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["ok"] is False and "ccmemory init" in data["error"]


def neo_env(server: Neo4jServer, project: str, uri: str | None = None) -> dict[str, str]:
    return {
        "CCMEMORY_BACKEND": "neo4j",
        "CCMEMORY_NEO4J_URI": uri or server.uri,
        "CCMEMORY_NEO4J_USER": server.user,
        "CCMEMORY_NEO4J_PASSWORD": server.password,
        "CCMEMORY_PROJECT": project,
        "CCMEMORY_USER_ID": "alice@example.com",
    }


@pytest.mark.neo4j
def test_doctor_neo4j(repo: Path, run_cli: RunCli, neo4j_server: Neo4jServer) -> None:
    from ccmemory.index.neo4j import Neo4jIndex

    project = "doctor-" + uuid.uuid4().hex[:8]
    env = neo_env(neo4j_server, project)
    try:
        setup_vault(repo, run_cli, env)
        data = json.loads(run_cli(repo, "doctor", "--json", env=env).stdout)
        assert data["ok"] is True and data["backend"] == "neo4j" and data["location"] == neo4j_server.uri
        assert data["user_id"] == "alice@example.com" and data["project"] == project
        idx = data["index"]
        assert idx["server"]["version"].startswith("5.26") and idx["server"]["edition"] == "community"
        sch = idx["schema"]
        assert sch["ok"] and sch["missing"] == [] and sch["not_online"] == []
        assert "memory_file_scope_key" in sch["constraints"] and "memory_terms" in sch["indexes"]
        assert idx["scope"] == "alice@example.com"
        assert idx["counts"]["memories"] == 2
        assert [b["path"] for b in idx["invalid_files"]] == [".ccmemory/facts/2026-11-21-broken.md"]
        text = run_cli(repo, "doctor", env=env).stdout
        assert "Neo4j 5.26" in text and "schema       ok" in text and "2 memories" in text
    finally:
        idx_ = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
        idx_.drop_project(project)
        idx_.close()


def test_doctor_neo4j_down(repo: Path, run_cli: RunCli) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    uri = f"bolt://127.0.0.1:{port}"
    env = {"CCMEMORY_BACKEND": "neo4j", "CCMEMORY_NEO4J_URI": uri, "CCMEMORY_NEO4J_PASSWORD": "x" * 12}
    proc = run_cli(repo, "doctor", env=env, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if "PROBLEM" in ln)
    assert uri in line and "unreachable" in line
    data = json.loads(run_cli(repo, "doctor", "--json", env=env, check=False).stdout)
    assert data["ok"] is False and uri in data["index"]["error"]
    assert data["git_hooks"]["git"] is True and "embedder" in data  # the rest is still reported


def test_doctor_names_a_missing_model(repo: Path, run_cli: RunCli, tmp_path: Path) -> None:
    missing = tmp_path / "nope.onnx"
    data = json.loads(
        run_cli(repo, "doctor", "--json", env={"CCMEMORY_MODEL_PATH": str(missing)}, check=False).stdout
    )
    assert data["embedder"]["available"] is False and str(missing) in data["embedder"]["reason"]


def test_doctor_fails_on_a_config_problem_it_lists(repo: Path, run_cli: RunCli) -> None:
    """It listed config.yaml's problems and exited 0; a config problem is a setup problem."""
    setup_vault(repo, run_cli)
    cfg = repo / ".ccmemory" / "config.yaml"
    cfg.write_text(cfg.read_text() + "\nrecall:\n  budget_tokens: lots\n")
    proc = run_cli(repo, "doctor", "--json", check=False)
    data = json.loads(proc.stdout)
    assert data["config"]["problems"] and data["ok"] is False and proc.returncode == 1
