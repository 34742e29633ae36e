"""`ccmemory suggest` (issue 31): memories proposed from patterns, each with its evidence; nothing
written until accepted; a dismissal is remembered."""

from __future__ import annotations

import json
from pathlib import Path

from tests.capture_helpers import read_memory
from tests.conftest import RunCli


def _new(run_cli: RunCli, repo: Path, *args: str) -> str:
    return str(json.loads(run_cli(repo, "new", *args, "--json").stdout)["id"])


def _vault(repo: Path, run_cli: RunCli) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {"file": [], "topic": [], "pair": [], "rule": [], "chain": [], "gotchas": []}
    for wrong, right in (("tabs", "four spaces"), ("camelCase keys", "snake_case keys")):
        ids["file"].append(
            _new(
                run_cli,
                repo,
                "correction",
                f"Not {wrong} in the ledger",
                "-f",
                "src/ledger.py",
                "--field",
                f"wrong_belief={wrong}",
                "--field",
                f"right_belief={right}",
            )
        )
    for n in range(3):
        ids["topic"].append(
            _new(
                run_cli,
                repo,
                "correction",
                f"Kiln correction {n}",
                "-t",
                "kiln",
                "--field",
                f"right_belief=rule {n}",
            )
        )
    for n in range(2):  # only two sharing a topic: not enough to call it one subject
        ids["pair"].append(_new(run_cli, repo, "correction", f"Glaze correction {n}", "-t", "glaze"))
    for n in range(2):
        ids["rule"].append(
            _new(
                run_cli,
                repo,
                "exception",
                f"Hotfix {n} skipped review",
                "--field",
                "rule_broken=Every change is reviewed",
                "--field",
                f"justification=outage {n}",
            )
        )
    prev = _new(run_cli, repo, "decision", "Store pots in Postgres")
    ids["chain"].append(prev)
    for title in ("Store pots in DynamoDB", "Store pots in Postgres again"):
        prev = _new(run_cli, repo, "decision", title, "--supersedes", prev)
        ids["chain"].append(prev)
    for n in range(3):
        ids["gotchas"].append(_new(run_cli, repo, "gotcha", f"Firing gotcha {n}", "-f", "src/firing.py"))
    return ids


def test_patterns_become_suggestions_with_their_evidence(repo: Path, run_cli: RunCli) -> None:
    ids = _vault(repo, run_cli)
    got = json.loads(run_cli(repo, "suggest", "--json").stdout)
    by_evidence = {frozenset(s["evidence"]): s for s in got}
    assert len(by_evidence) == len(got)
    assert set(by_evidence) == {
        frozenset(ids["file"]),
        frozenset(ids["topic"]),
        frozenset(ids["rule"]),
        frozenset(ids["chain"]),
        frozenset(ids["gotchas"]),
    }  # the glaze pair shares only a topic: no suggestion
    files = by_evidence[frozenset(ids["file"])]
    assert files["proposes"]["type"] == "fact" and "four spaces" in files["proposes"]["body"]
    rule = by_evidence[frozenset(ids["rule"])]["proposes"]
    assert rule["type"] == "question" and "every change is reviewed" in rule["fields"]["question"].lower()
    chain = by_evidence[frozenset(ids["chain"])]["proposes"]
    assert chain["title"] == "Decision revised 2 times: Store pots in Postgres again"
    assert by_evidence[frozenset(ids["gotchas"])]["proposes"]["title"].startswith(
        "src/firing.py needs care: 3"
    )
    before = sorted(p.name for p in (repo / ".ccmemory").rglob("*.md"))
    run_cli(repo, "suggest")  # listing writes nothing
    assert sorted(p.name for p in (repo / ".ccmemory").rglob("*.md")) == before


def test_accept_writes_a_linked_memory_and_dismiss_hides(repo: Path, run_cli: RunCli) -> None:
    ids = _vault(repo, run_cli)
    items = json.loads(run_cli(repo, "suggest", "--json").stdout)
    rule = next(s for s in items if s["kind"] == "exceptions")
    made = json.loads(run_cli(repo, "suggest", "--accept", rule["key"], "--json").stdout)
    memory = read_memory(repo / made["path"])
    assert memory.type == "question" and memory.source == "rules"
    assert {r.target for r in memory.relations if r.type == "RELATES_TO"} == set(ids["rule"])
    files = next(s for s in items if s["kind"] == "file")
    run_cli(repo, "suggest", "--dismiss", files["key"])
    left = {s["key"] for s in json.loads(run_cli(repo, "suggest", "--json").stdout)}
    assert rule["key"] not in left and files["key"] not in left and len(left) == len(items) - 2
    everything = {s["key"] for s in json.loads(run_cli(repo, "suggest", "--all", "--json").stdout)}
    assert {rule["key"], files["key"]} <= everything
    bad = run_cli(repo, "suggest", "--accept", "no-such-key", check=False)
    assert bad.returncode == 1 and "no suggestion 'no-such-key'" in bad.stderr
