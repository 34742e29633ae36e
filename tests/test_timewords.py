"""Time words in search (issue 30): "last week", "yesterday", "since March", "in Q3" become a date
range, through the CLI and the MCP search; the rest of the query is what is matched."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ccmemory.text.timewords import extract
from tests.conftest import RunCli

NOW = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "rest", "since", "until"),
    [
        ("decisions from last week", "decisions", "2026-11-18T10:00:00Z", None),
        ("what broke yesterday", "what broke", "2026-11-24T00:00:00Z", "2026-11-25T00:00:00Z"),
        ("gotchas since March", "gotchas", "2026-03-01T00:00:00Z", None),
        ("gotchas since december", "gotchas", "2025-12-01T00:00:00Z", None),  # the most recent one
        ("deploys in Q3 2025", "deploys", "2025-07-01T00:00:00Z", "2025-10-01T00:00:00Z"),
        ("redis in the last 3 days", "redis", "2026-11-22T10:00:00Z", None),
        ("migrations before 2026-01-01", "migrations", None, "2026-01-01T00:00:00Z"),
        ("decisions in May", "decisions", "2026-05-01T00:00:00Z", "2026-06-01T00:00:00Z"),
        ("auth changes this month", "auth changes", "2026-11-01T00:00:00Z", None),
    ],
)
def test_time_phrases(query: str, rest: str, since: str | None, until: str | None) -> None:
    got, found = extract(query, NOW)
    assert found is not None and got == rest
    assert (found.as_dict()["since"], found.as_dict()["until"]) == (since, until)


@pytest.mark.parametrize(
    "query",
    [
        "the cache may expire",
        "week numbers in reports",
        "march the migrations forward",
        "in 12 steps",
        "last deploy",
    ],
)
def test_words_that_are_not_a_time_phrase_stay_words(query: str) -> None:
    assert extract(query, NOW) == (query, None)


def _hand(repo: Path, name: str, title: str, created: datetime) -> None:
    folder = repo / ".ccmemory" / "decisions"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    (folder / f"{name}.md").write_text(f"---\ntype: decision\ntitle: {title}\ncreated: {stamp}\n---\nBody.\n")


def test_search_narrows_to_the_range_and_says_so(repo: Path, run_cli: RunCli) -> None:
    now = datetime.now(UTC)
    _hand(repo, "recent", "Kestrel feeds move to the east aviary", now - timedelta(days=2))
    _hand(repo, "old", "Kestrel feeds stay in the west aviary", now - timedelta(days=90))
    run_cli(repo, "reindex")
    both = json.loads(run_cli(repo, "search", "kestrel feeds", "--json").stdout)
    assert len(both) == 2
    proc = run_cli(repo, "search", "kestrel feeds from last week")
    assert "east aviary" in proc.stdout and "west aviary" not in proc.stdout
    assert "time: 'last week'" in proc.stderr and "searching 'kestrel feeds'" in proc.stderr
    literal = json.loads(
        run_cli(repo, "search", "kestrel feeds last week", "--literal-time", "--json").stdout
    )
    assert len(literal) == 2
    explicit = json.loads(
        run_cli(repo, "search", "kestrel feeds last week", "--since", "365d", "--json").stdout
    )
    assert len(explicit) == 2  # an explicit bound wins: the words are searched as words


def test_mcp_search_reports_the_time_filter(repo: Path) -> None:
    from tests._mcp_client import SyncClient

    now = datetime.now(UTC)
    _hand(repo, "recent", "Merlin perches get heated", now - timedelta(days=1, hours=2))
    _hand(repo, "old", "Merlin perches stay cold", now - timedelta(days=200))
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as client:
        out = client.call("search", {"query": "merlin perches in the last 3 days"})
    assert [r["title"] for r in out["results"]] == ["Merlin perches get heated"]
    assert (
        out["time_filter"]["phrase"] == "in the last 3 days"
        and out["time_filter"]["words_searched"] == "merlin perches"
    )
