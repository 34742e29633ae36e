"""Issue 15 part B seams: one memory model (`Memory.to_dict/from_dict`), one builder
(`ccmemory/draft.py`, `Service.draft`) with one policy for CLI and MCP, and record tools
generated from `model.TYPES` (the schema the real MCP client sees over stdio)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ccmemory.core.model import TYPES, Memory, Relation, new_id, provisional_id
from tests._mcp_client import SyncClient, make_repo
from tests.capture_helpers import read_memory
from tests.conftest import cli_env

SECRET = "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX"


def _memory(**kw: Any) -> Memory:
    base: dict[str, Any] = {
        "id": new_id(),
        "type": "correction",
        "title": "Tokens live in cookies, not localStorage",
        "created": datetime(2026, 11, 20, 14, 3, 11, tzinfo=UTC),
        "body": "Body with ünïcode, `code`, and a line\n---\nthat looks like frontmatter.",
        "author": "ana@example.com",
        "session": "s-1",
        "branch": "feature/x",
        "topics": ["auth", "security"],
        "files": ["src/auth.py"],
        "confidence": 0.75,
        "source": "explicit",
        "supersedes": [new_id()],
        "relations": [Relation("DEPENDS_ON", new_id(), "same cookie"), Relation("CITES", new_id())],
        "fields": {
            "wrong_belief": "localStorage is safe",
            "right_belief": "httpOnly cookies",
            "severity": "critical",
        },
        "extra": {"reviewed_by": "bo", "tags": ["x", 1]},
        "applies_to": ["other-project"],
    }
    base.update(kw)
    return Memory(**base)


# --- to_dict / from_dict ------------------------------------------------------------------------


def test_round_trip_keeps_every_attribute_and_is_json() -> None:
    m = _memory()
    data = json.loads(json.dumps(m.to_dict()))  # JSON-able, and survives a trip through JSON
    assert Memory.from_dict(data) == m
    assert data["created"] == "2026-11-20T14:03:11Z"
    d = _memory(type="decision", fields={"options_considered": ["a", "b"], "sets_precedent": True})
    assert Memory.from_dict(d.to_dict()) == d


def test_round_trip_of_a_provisional_id() -> None:
    m = _memory(id=provisional_id(".ccmemory/facts/hand.md"), type="fact", fields={})
    assert Memory.from_dict(m.to_dict()) == m


def test_index_payload_is_to_dict_with_applies_to_inside_fields() -> None:
    from ccmemory.index.base import IndexedMemory
    from ccmemory.index.derive import payload as memory_payload

    m = _memory()
    payload = json.loads(memory_payload(m))
    assert "extra" not in payload and "applies_to" not in payload
    assert payload["fields"]["applies_to"] == ["other-project"]
    back = IndexedMemory.from_payload(payload, path="p.md", status="curated", project="p", hash="h")
    assert (back.id, back.title, back.relations, back.created) == (
        m.id,
        m.title,
        m.relations,
        "2026-11-20T14:03:11Z",
    )


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"id": "../../etc/passwd"}, "not a ULID"),
        ({"id": 12}, "'id' must be a string"),
        ({"type": "rumour"}, "unknown type"),
        ({"title": {"$ne": 1}}, "'title' must be text"),
        ({"created": "yesterday-ish"}, "bad timestamp"),
        ({"confidence": "very"}, "confidence must be a number"),
        ({"confidence": 7}, "outside 0..1"),
        ({"topics": [{"a": 1}]}, "'topics' must be a list of strings"),
        ({"relations": "DEPENDS_ON x"}, "'relations' must be a list"),
        ({"relations": [{"type": "OWNS", "target": "x"}]}, "unknown relation type"),
        ({"fields": {"severity": "apocalyptic"}}, "severity 'apocalyptic' is not one of"),
        ({"fields": {"rationale": "not a correction field"}}, "rationale not a field of 'correction'"),
        ({"fields": ["a"]}, "must be mappings"),
        ({"body": ["not", "text"]}, "'body' must be text"),
        ({"source": "rumour"}, "unknown source"),
    ],
)
def test_from_dict_refuses_hostile_values_naming_them(change: dict[str, Any], needle: str) -> None:
    data = {**_memory().to_dict(), **change}
    with pytest.raises(ValueError, match=None) as info:
        Memory.from_dict(data)
    assert needle in str(info.value)


def test_from_dict_refuses_a_non_mapping() -> None:
    for bad in (None, [], "memory", 3):
        with pytest.raises(ValueError, match="must be a mapping"):
            Memory.from_dict(bad)


def test_extra_cannot_shadow_known_keys() -> None:
    data = _memory().to_dict()
    data["extra"] = {"id": new_id(), "severity": "minor", "kept": "yes"}
    m = Memory.from_dict(data)
    assert m.id == data["id"] and m.fields["severity"] == "critical" and m.extra == {"kept": "yes"}


# --- the one builder ----------------------------------------------------------------------------


def test_build_memory_redacts_every_text_and_validates() -> None:
    from ccmemory.app.draft import DraftError, build_memory

    m = build_memory(
        "correction",
        f"  Key   {SECRET} leaked ",
        body=f"body {SECRET}",
        topics=[f"t-{SECRET}", "auth", "auth", " "],
        files=["src/a.py", "src/a.py"],
        relations=[Relation("DEPENDS_ON", new_id(), f"reason {SECRET}")],
        fields={"wrong_belief": f"w {SECRET}", "right_belief": "r", "severity": None},
    )
    assert SECRET not in json.dumps(m.to_dict())
    assert m.title.startswith("Key [REDACTED") and m.topics[1:] == ["auth"] and m.files == ["src/a.py"]
    assert "severity" not in m.fields  # empty values are left out
    with pytest.raises(DraftError) as info:
        build_memory("correction", "x y z", fields={"wrong_belief": "a", "severity": "huge"})
    assert info.value.code == "invalid_argument" and "severity" in info.value.message
    with pytest.raises(DraftError, match="not a field of fact"):
        build_memory("fact", "A fact", fields={"rationale": "no"})
    with pytest.raises(DraftError, match="title is empty"):
        build_memory("fact", f"  {' '}  ")


def test_relation_supersedes_becomes_the_supersedes_list() -> None:
    from ccmemory.app.draft import build_memory

    old = new_id()
    m = build_memory("decision", "Newer", relations=[{"type": "supersedes", "target": old}], supersedes=[old])
    assert m.supersedes == [old] and m.relations == []


# --- CLI and MCP: the same policy ---------------------------------------------------------------


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("model") / "repo")


@pytest.fixture(scope="module")
def client(repo: Path) -> Iterator[SyncClient]:
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as c:
        yield c


def _cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ccmemory", *args], cwd=repo, capture_output=True, text=True, env=cli_env(None)
    )


def _files(repo: Path) -> set[Path]:
    return {p for p in (repo / ".ccmemory").rglob("*.md") if "local" not in p.parts}


@pytest.mark.parametrize("target", ["01ZZZZZZZZZZZZZZZZZZZZZZZZ", "no-such-memory-slug", "ZZZZ"])
def test_unknown_link_target_is_refused_by_cli_and_mcp_alike(
    client: SyncClient, repo: Path, target: str
) -> None:
    before = _files(repo)
    cli = _cli(repo, "new", "decision", "Links to nothing", "--relation", f"DEPENDS_ON:{target}", "--json")
    assert cli.returncode != 0 and target in cli.stderr and "no memory written" in cli.stderr
    cli = _cli(repo, "new", "decision", "Supersedes nothing", "--supersedes", target, "--json")
    assert cli.returncode != 0 and target in cli.stderr
    err = client.error(
        "record_decision",
        {"title": "Links to nothing", "relations": [{"type": "DEPENDS_ON", "target": target}]},
    )
    assert err["code"] == "not_found" and target in err["message"]
    err = client.error("record_decision", {"title": "Supersedes nothing", "supersedes": [target]})
    assert err["code"] == "not_found"
    assert _files(repo) == before


def test_ambiguous_target_is_refused_by_cli_and_mcp_alike(client: SyncClient, repo: Path) -> None:
    from ccmemory.core.vault import Vault

    ids = ["01KAAAAAAAAAAAAAAAAAAAAAA1", "01KAAAAAAAAAAAAAAAAAAAAAA2"]
    vault = Vault(repo)
    for i in ids:
        vault.write_new(_memory(id=i, title=f"Twin {i[-1]}", supersedes=[], relations=[]))
    _cli(repo, "reindex")
    before = _files(repo)
    cli = _cli(repo, "new", "fact", "Links to a twin", "--relation", "RELATES_TO:01KAAAA")
    assert cli.returncode != 0 and "matches 2 memories" in cli.stderr
    err = client.error(
        "record_fact",
        {"title": "Links to a twin", "relations": [{"type": "RELATES_TO", "target": "01KAAAA"}]},
    )
    assert err["code"] == "ambiguous" and "matches 2 memories" in err["message"]
    assert _files(repo) == before


def test_cli_and_mcp_write_the_same_redacted_memory(client: SyncClient, repo: Path) -> None:
    target = json.loads(_cli(repo, "new", "fact", "The queue is Redis streams", "--json").stdout)
    text_args = {
        "title": f"Rotate the key {SECRET}",
        "body": f"Old key {SECRET} <private>home address</private>",
        "wrong_belief": f"the key {SECRET} is fine",
        "right_belief": "rotate it",
        "severity": "critical",
    }
    # MCP first: a record identical to a memory in force answers "duplicate" instead of writing
    mcp = client.call(
        "record_correction",
        {
            **text_args,
            "topics": [f"keys-{SECRET}"],
            "relations": [{"type": "RELATES_TO", "target": target["path"], "reason": f"because {SECRET}"}],
        },
    )
    cli = _cli(
        repo,
        "new",
        "correction",
        text_args["title"],
        "--body",
        text_args["body"],
        "--field",
        f"wrong_belief={text_args['wrong_belief']}",
        "--field",
        "right_belief=rotate it",
        "--field",
        "severity=critical",
        "--topic",
        f"keys-{SECRET}",
        "--relation",
        f"RELATES_TO:{target['path']}:because {SECRET}",
        "--json",
    )
    assert cli.returncode == 0, cli.stderr
    made = json.loads(cli.stdout)
    a, b = read_memory(repo / made["path"]), read_memory(repo / mcp["path"])
    for m in (a, b):
        assert SECRET not in json.dumps(m.to_dict()) and "home address" not in m.body
        assert m.relations[0].target == target["id"]  # resolved from the path to the id
    same = ("title", "body", "topics", "fields", "author", "branch")
    assert {k: a.to_dict()[k] for k in same} == {k: b.to_dict()[k] for k in same}
    assert a.relations[0] == b.relations[0]  # (linking may add more: the two are close)
    assert (a.source, b.source) == ("manual", "explicit")


# --- record tools generated from the model --------------------------------------------------------


def test_every_type_has_a_record_tool_with_its_fields_limits_and_enums(client: SyncClient) -> None:
    tools = {t.name: t for t in client.list_tools()}
    generic = tools["record"].input_schema["properties"]["type"]["enum"]
    assert generic == list(TYPES)  # every type through `record`; most also have their own tool
    assert {n for n, s in TYPES.items() if not s.record_tool} == {"concept", "hypothesis", "knowledge_gap"}
    assert not {f"record_{n}" for n, s in TYPES.items() if not s.record_tool} & set(tools)
    for name, spec in TYPES.items():
        if not spec.record_tool:
            continue
        tool = tools[f"record_{name}"]
        assert spec.summary in (tool.description or "")
        props = tool.input_schema["properties"]
        required = set(tool.input_schema.get("required", []))
        for f in spec.own:
            schema = props[f.name]
            assert schema["description"] == f.description
            options = schema.get("anyOf", [schema])
            if f.kind == "enum":
                assert [o["enum"] for o in options if "enum" in o] == [list(f.choices)]
            if f.kind == "text":
                assert [o["maxLength"] for o in options if o.get("type") == "string"] == [f.max_length]
            assert (f.name in required) == f.required
        assert {
            "title",
            "body",
            "topics",
            "files",
            "relations",
            "supersedes",
            "confidence",
            "session",
        } <= set(props)
        assert set(props) - set(spec.fields) == {
            "title",
            "body",
            "topics",
            "files",
            "relations",
            "supersedes",
            "confidence",
            "session",
        }
    enums = tools["search"].input_schema["properties"]["types"]["anyOf"][0]["items"]["enum"]
    assert enums == list(TYPES)
    rel = tools["record_fact"].input_schema["$defs"]["RelationIn"]["properties"]["type"]["enum"]
    assert "SUPERSEDES" not in rel and len(rel) == 8


def test_gotcha_and_pattern_are_recorded(client: SyncClient, repo: Path) -> None:
    g = client.call("record_gotcha", {"title": "The test DB resets at midnight", "severity": "significant"})
    p = client.call("record_pattern", {"title": "Services take a Clock argument", "body": "For tests."})
    assert g["path"].startswith(".ccmemory/gotchas/") and p["path"].startswith(".ccmemory/patterns/")
    assert read_memory(repo / g["path"]).fields == {"severity": "significant"}
    err = client.error("record_gotcha", {"title": "Bad severity", "severity": "cosmic"})
    assert err["code"] == "invalid_argument"
