"""Learning from dismissals (issue 31): the false-positive rate of automatic capture per memory
type from review-queue dismissals (dismissed / (dismissed + accepted)), per-type capture thresholds
in config (validated by the schema, used by capture), the rate beside them in `ccmemory doctor`
and on the dashboard's review page. Real git repositories, the real CLI, the real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ccmemory.features.capture.precision import suggest
from tests.conftest import RunCli, git, init_git
from tests.dashboard_util import Running
from tests.lifecycle_util import add_memory, cli, commit_all
from tests.session_transcripts import write_transcript


def _dismiss(r: Running, key: str) -> None:
    from ccmemory.surfaces.dashboard.app import csrf_for

    status, _, body = r.request(
        "POST", f"/api/dismiss?key={key}", headers={"X-CSRF-Token": csrf_for(r.server.token)}
    )
    assert status == 200, body


def test_the_rate_per_type_from_dismissals_beside_the_threshold(tmp_path: Path) -> None:
    from ccmemory.app.vaultinit import init_vault

    root = init_git(tmp_path / "repo")
    init_vault(root)
    (root / ".ccmemory" / "config.yaml").write_text(
        "capture:\n  min_confidence:\n    default: 0.3\n    decision: 0.7\n", encoding="utf-8"
    )
    ids: dict[str, str] = {}

    def add(key: str, title: str, mtype: str, source: str, conf: float) -> None:
        ids[key], _ = add_memory(root, title, mtype, source=source, confidence=conf)

    # on main (curated = accepted unless dismissed): 3 captured decisions, 1 captured correction,
    # and a decision the user recorded explicitly (never a false positive of the detector)
    add("d1", "Use Postgres for the ledger", "decision", "llm", 0.9)
    add("d2", "Keep the API versioned in the path", "decision", "llm", 0.8)
    add("d3", "Cache thumbnails for a day", "decision", "llm", 0.5)
    add("c1", "The build uses pnpm, not npm", "correction", "rules", 0.9)
    add("e1", "Ship on Tuesdays", "decision", "explicit", 0.4)
    commit_all(root, "memories on main")
    git(root, "checkout", "-q", "-b", "feature")
    # on a branch (developmental = pending unless dismissed)
    add("d4", "Rename the helpers module", "decision", "llm", 0.75)
    add("d5", "Use tabs in the Makefile", "decision", "llm", 0.72)
    add("c2", "The port is 8080, not 80", "correction", "llm", 0.5)
    add("q1", "Who owns the billing service?", "question", "llm", 0.55)
    commit_all(root, "captures on a branch")
    cli(root, "reindex", "--no-embed")
    r = Running(root)
    try:
        _dismiss(r, f"capture:{ids['d4']}")  # a developmental capture rejected in the queue
        _dismiss(r, f"low_confidence:{ids['d3']}")  # a curated, low-confidence one rejected
        _dismiss(r, f"question:{ids['q1']}")
        _dismiss(r, f"stale:{ids['d1']}")  # judges the staleness check, not the capture
        _dismiss(r, f"capture:{ids['e1']}")  # explicit: not counted at all
        status, _, body = r.request("GET", "/review")
        html = body.decode("utf-8")
        review: Any = json.loads(r.request("GET", "/api/review")[2])
    finally:
        r.close()
    # decision: captured d1..d5 (5); dismissed d3, d4; accepted d1, d2; pending d5 -> 2 / 4 = 50 %
    want_decision = {
        "captured": 5,
        "dismissed": 2,
        "accepted": 2,
        "pending": 1,
        "false_positive_rate": 0.5,
        "threshold": 0.7,
        "suggested": None,  # 4 judged: fewer than precision.MIN_JUDGED
    }
    # correction: c1 accepted, c2 pending -> 0 / 1; question: q1 dismissed -> 1 / 1
    want_correction = {"captured": 2, "dismissed": 0, "accepted": 1, "pending": 1, "false_positive_rate": 0.0}
    doctor = json.loads(cli(root, "doctor", "--json").stdout)["capture_review"]
    assert doctor["by_type"]["decision"] == want_decision
    assert {k: doctor["by_type"]["correction"][k] for k in want_correction} == want_correction
    assert doctor["by_type"]["correction"]["threshold"] == 0.3  # the default
    assert doctor["by_type"]["question"]["false_positive_rate"] == 1.0
    assert doctor["total"] == {
        "captured": 8,
        "dismissed": 3,
        "accepted": 3,
        "pending": 2,
        "false_positive_rate": 0.5,
    }
    text = cli(root, "doctor").stdout
    assert "decision         threshold 0.70  false positives 50% (2 dismissed / 4 judged; 1 pending)" in text
    # the dashboard: the same rates beside the thresholds, the dismissed capture gone from the queue
    assert (
        status == 200 and '<tr data-type="decision"><td>decision</td><td>0.70</td><td class="fp">50%' in html
    )
    assert review["precision"]["by_type"]["decision"] == want_decision
    listed = [m["id"] for ms in review["developmental"]["by_branch"].values() for m in ms]
    assert ids["d4"] not in listed and ids["d5"] in listed
    assert f'data-key="capture:{ids["d5"]}"' in html


def test_capture_drops_what_is_below_its_types_threshold(tmp_path: Path, run_cli: RunCli) -> None:
    """The test provider gives a correction 0.9 and a preference 0.8: with a correction
    threshold of 0.95 only the preference is written; without one, both."""
    transcript = write_transcript(
        tmp_path / "t" / "a.jsonl",
        "floor-1",
        [
            {"prompt": "no, that's wrong: the staging database is on port 6543"},
            {"prompt": "I prefer small commits with one change each"},
        ],
    )
    written: dict[str, list[str]] = {}
    for name, config in (("floored", "capture:\n  min_confidence: {correction: 0.95}\n"), ("plain", "")):
        repo = init_git(tmp_path / name)
        (repo / ".ccmemory").mkdir()
        (repo / ".ccmemory" / "config.yaml").write_text(config, encoding="utf-8")
        run_cli(repo, "import", "--provider", "test", "--json", str(transcript))
        written[name] = sorted(p.parent.name for p in (repo / ".ccmemory").rglob("*.md"))
    assert written["plain"] == ["corrections", "preferences"]
    assert written["floored"] == ["preferences"]


def test_the_schema_checks_the_thresholds(tmp_path: Path) -> None:
    from ccmemory.app.vaultinit import init_vault

    root = init_git(tmp_path / "repo")
    init_vault(root)
    (root / ".ccmemory" / "config.yaml").write_text(
        "capture:\n  min_confidence:\n    decison: 0.5\n", encoding="utf-8"
    )
    problems = json.loads(cli(root, "doctor", "--json", check=False).stdout)["config"]["problems"]
    assert any(
        ":2: capture.min_confidence: 'decison' is not a memory type; did you mean 'decision'?" in p
        for p in problems
    ), problems
    (root / ".ccmemory" / "config.yaml").write_text(
        "capture:\n  min_confidence: {decision: 1.5}\n", encoding="utf-8"
    )
    problems = json.loads(cli(root, "doctor", "--json", check=False).stdout)["config"]["problems"]
    assert any("decision: 1.5 is outside 0..1" in p for p in problems), problems


def test_the_suggested_threshold() -> None:
    # dismissed at 0.5 and 0.6, accepted at 0.6, 0.8, 0.9: from 0.6 up 1 of 4 is dismissed (25 %),
    # from 0.8 up none: 0.8 is the lowest cut at or under 20 %
    judged = [(0.5, True), (0.6, True), (0.6, False), (0.8, False), (0.9, False)]
    assert suggest(judged, 0.0) == 0.8
    assert suggest(judged, 0.8) is None  # no gain over the current threshold
    assert suggest(judged[:4], 0.0) is None  # too few judged
    assert suggest([(0.5, False)] * 6, 0.0) is None  # nothing dismissed
