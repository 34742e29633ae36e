"""The facade (`Service.view`, ccmemory/view.py): reads bound to project and viewer, and the one
neighbours walk used by search expansion, MCP query_context and trace."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccmemory.app.service import Service
from ccmemory.app.vaultinit import init_vault
from ccmemory.core.model import Relation
from ccmemory.core.vault import Vault
from ccmemory.retrieval.view import MemoryView, neighbours
from tests.conftest import init_git, make_memory


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Service]:
    root = init_git(tmp_path / "repo")
    init_vault(root)
    with Service(Vault(root)) as s:
        yield s


def _write(svc: Service, title: str, **kw: object) -> str:
    m = make_memory(kw.pop("mtype", "decision"), title, **kw)  # type: ignore[arg-type]
    svc.vault.write_new(m)
    return m.id


def test_view_is_bound_to_project_and_viewer(svc: Service) -> None:
    a = _write(svc, "Use Postgres for jobs", topics=["db"])
    svc.reindex()
    view = svc.view
    assert isinstance(view, MemoryView) and (view.project, view.viewer) == (svc.project, svc.viewer)
    assert [m.id for m in view.query()] == [a] and view.count() == 1
    assert (
        view.filters(types=["fact"]).project == svc.project and view.count(view.filters(types=["fact"])) == 0
    )
    assert view.resolve(a[:8]) == [a] and [m.id for m in view.get([a])] == [a]
    assert view.stats() == svc.index.stats(svc.project)
    assert view.dangling() == [] and view.file_problems() == [] and view.superseded_ids() == set()


def test_neighbours_follow_direction_and_respect_visibility(svc: Service) -> None:
    b = _write(svc, "Use Redis streams for the queue")
    a = _write(svc, "Workers read the queue", relations=[Relation("DEPENDS_ON", b, "reads it")])
    c = _write(svc, "Queue retention is 7 days", relations=[Relation("CITES", a)])
    newer = _write(svc, "Workers read the queue in batches", supersedes=[a])
    svc.reindex()
    f = svc.view.filters(include_superseded=True)

    links, seen = svc.view.neighbours([a], f, direction="upstream")
    assert {(link.other, link.label) for link in links} == {(b, "DEPENDS_ON")} and set(seen) == {b}
    links, seen = svc.view.neighbours([a], f, direction="downstream")
    assert {(link.other, link.label) for link in links} == {(c, "CITED_BY"), (newer, "SUPERSEDED_BY")}
    links, _ = svc.view.neighbours([a], f)
    assert {link.other for link in links} == {b, c, newer}
    # `known` ends are kept but not loaded again
    links, seen = svc.view.neighbours([a], f, known={b})
    assert b in {link.other for link in links} and b not in seen

    # from the superseding memory, the superseded one is hidden unless asked for
    links, seen = svc.view.neighbours([newer], svc.view.filters())
    assert links == [] and seen == {}
    links, seen = svc.view.neighbours([newer], f)
    assert [(link.other, link.label) for link in links] == [(a, "SUPERSEDES")]

    # the filters decide visibility: a type filter hides the cited fact's neighbour kind
    links, _ = neighbours(svc.index, [a], dataclasses.replace(f, types=["fact"]))
    assert links == []
    with pytest.raises(ValueError, match="direction"):
        svc.view.neighbours([a], f, direction="sideways")


def test_neighbours_through_shared_topics(svc: Service) -> None:
    a = _write(svc, "Cache invalidation on deploy", topics=["cache", "deploy"])
    b = _write(svc, "Warm the cache after deploy", topics=["cache", "deploy"])
    svc.reindex()
    links, _ = svc.view.neighbours([a])
    assert links == []  # relations only by default
    links, seen = svc.view.neighbours([a], shared_limit=5)
    assert [(link.other, link.edge, link.direction) for link in links] == [(b, None, "shared")]
    assert links[0].shared == 2 and links[0].label == "SHARES_TOPIC_OR_FILE" and set(seen) == {b}


def test_team_rule_applies_to_the_walk(svc: Service) -> None:
    """The viewer sees curated memories and their own developmental ones; the walk obeys it."""
    from tests.conftest import git

    curated = _write(svc, "Curated decision", author="alice@example.com")
    git(svc.vault.root, "add", "-A")
    git(svc.vault.root, "commit", "-qm", "curated")
    theirs = _write(
        svc, "Their draft decision", author="bob@example.com", relations=[Relation("RELATES_TO", curated)]
    )
    svc.reindex()
    as_alice = MemoryView(svc.index, svc.project, "alice@example.com")
    links, seen = as_alice.neighbours([curated])
    assert links == [] and seen == {}  # bob's developmental memory is not alice's to see
    as_bob = MemoryView(svc.index, svc.project, "bob@example.com")
    links, seen = as_bob.neighbours([theirs])
    assert [(link.other, link.label) for link in links] == [(curated, "RELATES_TO")] and set(seen) == {
        curated
    }
    assert set(MemoryView(svc.index, svc.project, None).neighbours([curated])[1]) == {theirs}


def test_a_failing_count_of_invalid_files_never_fails_the_search(
    svc: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notice about files left out of the index is secondary: when the count fails (a
    backend error), the search answers without it."""
    from ccmemory.core.errors import IndexUnavailable

    _write(svc, "Use Postgres for jobs", topics=["db"])
    (svc.vault.dir / "facts").mkdir(exist_ok=True)
    (svc.vault.dir / "facts" / "bad.md").write_text("---\nid: [broken\n---\n")
    svc.reindex()
    assert svc.search("postgres jobs", mode="text").notices == [
        "1 memory file is invalid, so not indexed and not searched: .ccmemory/facts/bad.md;"
        " `ccmemory check` says why"
    ]

    def down(project: str, limit: int) -> tuple[int, list[str]]:
        raise IndexUnavailable("the server went away")

    monkeypatch.setattr(svc.index, "invalid_files", down)
    resp = svc.search("postgres jobs", mode="text")
    assert [h.memory.title for h in resp.hits] == ["Use Postgres for jobs"] and resp.notices == []


def test_prompt_recall_does_not_count_invalid_files(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """The notice is for callers that show it (CLI, MCP, dashboard): prompt recall in the warm
    process shows no notice, so it does not ask the index for the invalid files."""
    from ccmemory.features.recall import warm

    _write(svc, "Postgres jobs run the nightly invoice export", topics=["db"])
    svc.reindex()
    asked: list[int] = []
    real = svc.index.invalid_files

    def counting(project: str, limit: int) -> tuple[int, list[str]]:
        asked.append(limit)
        return real(project, limit)

    monkeypatch.setattr(svc.index, "invalid_files", counting)
    warm.answer(svc, {"op": "prompt", "text": "speed up the nightly invoice export job", "limit": 3})
    assert asked == []
    svc.search("nightly invoice export", mode="text")
    assert asked == [3]
