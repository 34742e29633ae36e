"""The seed's metrics (issue 31) under the seed's own definitions, on a small vault whose values are
worked out by hand below, through the real CLI (`ccmemory stats`) and the real MCP server (stdio)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ccmemory.core import spool, telemetry
from ccmemory.core.model import Relation
from tests._mcp_client import SyncClient
from tests.conftest import git, init_git
from tests.lifecycle_util import add_memory, cli, commit_all

ME = "carol@example.com"  # the local user (CCMEMORY_USER_ID)
ALICE = "alice@example.com"
ENV = {"CCMEMORY_USER_ID": ME}


def iso(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def build(root: Path) -> dict[str, str]:
    """8 memories (4 decisions, 2 facts, 1 exception, 1 correction), 3 relations, 3 sessions."""
    from ccmemory.app.vaultinit import init_vault

    init_git(root)
    init_vault(root)
    now = datetime.now(UTC).replace(microsecond=0)
    ids: dict[str, str] = {}

    def add(key: str, mtype: str, title: str, days: float, **kw: Any) -> None:
        kw.setdefault("author", ALICE)
        ids[key], _ = add_memory(root, title, mtype, created=now - timedelta(days=days), **kw)

    add("d1", "decision", "Use PostgreSQL for orders", 40)  # outside the 30-day window
    add("d2", "decision", "Use PostgreSQL 16 for orders", 10, supersedes=[ids["d1"]])
    add("d3", "decision", "Cache sessions in Redis", 5, author=ME, session="s2",
        relations=[Relation("CITES", ids["d2"])])  # fmt: skip
    add("f1", "fact", "CI runs on GitHub Actions", 8)
    add("f2", "fact", "The deploy happens on Fridays", 7)
    add("e1", "exception", "Batch exports may keep sessions in memory", 2,
        relations=[Relation("CITES", ids["d3"])], fields={"rule_broken": "sessions live in Redis"})  # fmt: skip
    add("c1", "correction", "The test runner is scripts/test", 1,
        fields={"wrong_belief": "tox runs tests", "right_belief": "scripts/test does"})  # fmt: skip
    commit_all(root, "memories")  # all curated ...
    add("d4", "decision", "Log as JSON lines", 3)  # ... but d4: uncommitted, developmental
    local = root / ".ccmemory" / "local"
    sessions = {
        "s1": (9, ["For context, our API uses JWT tokens signed with RS256.", "fix the failing test"]),
        "s2": (5, ["For context, our API uses JWT tokens signed with RS256.",
                   "Note that the database is PostgreSQL 16 with logical replication."]),
        "s3": (1, ["Keep in mind the deploy runs on Fridays only."]),
    }  # fmt: skip
    for sid, (days, prompts) in sessions.items():
        start, end = now - timedelta(days=days), now - timedelta(days=days) + timedelta(hours=1)
        rec = {"schema": 1, "id": sid, "start": iso(start), "end": iso(end), "prompts": prompts}
        (local / "sessions").mkdir(parents=True, exist_ok=True)
        (local / "sessions" / f"{sid}.json").write_text(json.dumps(rec), encoding="utf-8")
        for t in (start, end):  # the capture spool: the session's span for the telemetry store
            spool.append(local / "spool" / f"{sid}.jsonl", {"k": "tool", "ts": iso(t)})
    spool.append(
        local / "surfaced.jsonl",
        {"ts": iso(now), "session": "s3", "source": "startup", "ids": [ids["d2"], ids["d3"]], "chars": 99},
    )
    telemetry.emit(local, "recalled", [ids["d3"]], session="s2", source="prompt")  # d3's own session
    telemetry.emit(local, "retrieved", [ids["d2"]], session="mcp-1")
    telemetry.emit(local, "retrieved", [ids["d2"]], session="mcp-1")  # the same pair again
    telemetry.emit(local, "searched", [ids["d3"], ids["d1"]], session="mcp-1")
    telemetry.emit(local, "cited", [ids["d2"]], session="s2", source="reply")
    cli(root, "reindex")
    return ids


CONFIG = "metrics:\n  minutes_per_reexplanation: 6\n  hourly_rate: 120\n  currency: USD\n"

# By hand, from build():
#  decisions d1 d2 d3 d4 = 4; memories = 8; relations: d2 SUPERSEDES d1, d3 CITES d2, e1 CITES d3 = 3
#  evolution (seed): decision->decision SUPERSEDES 1 / 4 decisions                     = 0.25
#  rule exception (seed): 1 exception / 2 facts                                        = 0.5
#  graph density (seed): 3 relations / 8 memories                                      = 0.375
#  decision reuse (seed): last 30 days d2 d3 d4 = 3; with a precedent link d2 (SUPERSEDES d1),
#    d3 (CITES d2) = 2                                                                 = 2/3
#  re-explanation (seed): explaining prompts s1:1 ("fix the failing test" is a task), s2:2, s3:1 = 4;
#    s2's JWT prompt repeats s1's (cosine 1 > 0.85)                                    = 1/4
#  cognitive coefficient (seed): curated decisions d1 d2 d3 = 3;
#    1 + 0.02*3 + 0.5*(1 - 1/4) + 2/3 = 1 + 0.06 + 0.375 + 0.666667                     = 2.101667
#  context injection: sessions s1 s2 s3 = 3; a cited memory in s2                      = 1/3
#  knowledge sharing: curated decisions d1 d2 d3 = 3; queried (searched/retrieved) d1 d2 d3; by the
#    local user (carol), not the author: d1, d2 (alice's); d3 is carol's               = 2/3
#  hours saved: re-explanations avoided = distinct (session, memory) of surfaced/recalled/retrieved
#    outside the capturing session: (s3,d2) (s3,d3) (mcp-1,d2); recalled d3 in s2 is its own session
#    = 3; 3 * 6 min / 60 = 0.3 h; 0.3 h * 120 USD/h = 36 USD
EXPECTED = {
    "decision_evolution_rate": 0.25,
    "rule_exception_rate": 0.5,
    "graph_density": 0.375,
    "decision_reuse_rate": 2 / 3,
    "re_explanation_rate": 0.25,
    "cognitive_coefficient": 1 + 0.02 * 3 + 0.5 * (1 - 0.25) + 2 / 3,
    "context_injection_rate": 1 / 3,
    "knowledge_sharing_index": 2 / 3,
}
NOT_MEASURABLE = [
    "onboarding_acceleration",
    "tribal_knowledge_capture_rate",
    "bridge_validation_rate",
    "active_research_value",
]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("seed") / "repo"
    build(root)
    (root / ".ccmemory" / "config.yaml").write_text(CONFIG, encoding="utf-8")
    return root


def check(data: dict[str, Any]) -> None:
    seed = data["seed_metrics"]
    for key, want in EXPECTED.items():
        assert seed[key]["value"] == pytest.approx(want, abs=1e-5), (key, seed[key])
        assert seed[key]["formula"] and "patrickkidd/ccmemory" in seed[key]["source"], key
    for key in NOT_MEASURABLE:
        assert seed[key]["value"] is None and seed[key]["display"] == "not measurable", key
        assert seed[key]["why"], key
    # measured from the session records' autonomy scores (tests/test_autonomy.py); these records
    # are written by hand without one
    ttc = seed["time_to_context"]  # measured from the SessionStart hook's latency (test_seed_ttc.py)
    assert ttc["value"] is None and "latency" in ttc["why"]
    cv = seed["correction_velocity"]  # measured from the capture worker's log (test_seed_cv.py)
    assert cv["value"] is None and "correction-velocity.jsonl" in cv["why"]
    hu = seed["hypothesis_usefulness"]  # measured below (test_hypothesis_usefulness_by_hand)
    assert hu["value"] is None and hu["why"] == "no hypothesis proposed"
    le = seed["loop_efficiency"]
    assert le["value"] is None and le["why"] == "no session record with an autonomy score"
    # ours stays, beside the seed's: e.g. our evolution rate counts superseded decisions (d1) / 4
    assert seed["decision_evolution_rate"]["ours"] == "evolution_rate"
    assert data["metrics"]["evolution_rate"]["value"] == pytest.approx(0.25)
    assert data["metrics"]["rule_exception_rate"]["value"] == pytest.approx(1 / 3)  # 1 / (d2 d3 d4)
    h = data["hours_saved"]
    assert h["shown"] and h["reexplanations_avoided"] == 3
    assert h["hours"] == pytest.approx(0.3) and h["value"] == pytest.approx(36.0)
    assert h["assumptions"] == {"minutes_per_reexplanation": 6.0, "hourly_rate": 120.0, "currency": "USD"}


def test_stats_json_and_text_show_the_seed_metrics(vault: Path) -> None:
    data = json.loads(cli(vault, "stats", "--json", env=ENV).stdout)
    check(data)
    text = cli(vault, "stats", env=ENV).stdout
    assert "Decision Evolution Rate" in text and "not measurable" in text
    assert "36.00 USD at 120 USD/h (assumed, config)" in text and "× 6 min (assumed, config)" in text
    counts = json.loads(cli(vault, "stats", "--json", "--counts-only", env=ENV).stdout)
    assert "seed_metrics" not in counts and counts["memories"] == 8


def test_mcp_get_metrics_gives_the_same_figures(vault: Path) -> None:
    with SyncClient.stdio(vault, env=ENV) as client:
        data = client.call("get_metrics")
    check(data)
    assert any(n.startswith("onboarding_acceleration") for n in data["not_measured"])
    assert not any(n.startswith("correction_velocity") for n in data["not_measured"])


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "repo"
    build(root)
    yield root


def test_hours_saved_needs_valid_assumptions_in_config(bare: Path) -> None:
    h = json.loads(cli(bare, "stats", "--json", env=ENV).stdout)["hours_saved"]
    assert not h["shown"] and "minutes_per_reexplanation" in h["enable"] and "hours" not in h
    assert "hours saved: not shown" in cli(bare, "stats", env=ENV).stdout
    cfg = bare / ".ccmemory" / "config.yaml"
    cfg.write_text("metrics:\n  minutes_per_reexplanation: -3\n", encoding="utf-8")
    h = json.loads(cli(bare, "stats", "--json", env=ENV).stdout)["hours_saved"]
    assert not h["shown"] and "metrics.minutes_per_reexplanation" in h["why"]
    cfg.write_text("metrics:\n  minutes_per_reexplanation: 10\n", encoding="utf-8")  # no hourly rate
    h = json.loads(cli(bare, "stats", "--json", env=ENV).stdout)["hours_saved"]
    assert h["shown"] and h["hours"] == pytest.approx(0.5) and "value" not in h  # 3 * 10 / 60
    off = json.loads(cli(bare, "stats", "--json", env={**ENV, "CCMEMORY_TELEMETRY": "0"}).stdout)
    assert not off["hours_saved"]["shown"] and off["hours_saved"]["why"] == "telemetry is off"
    assert off["seed_metrics"]["context_injection_rate"]["why"] == "telemetry is off"
    assert off["seed_metrics"]["graph_density"]["value"] == pytest.approx(0.375)  # the files still count
    # the metrics wrote nothing the repository sees (their caches are in the git-ignored local/):
    # only the test's own config.yaml edit and the uncommitted d4
    changed = sorted(line[3:].split("/")[-1] for line in git(bare, "status", "--porcelain").splitlines())
    assert len(changed) == 2 and "log-as-json-lines" in changed[0] and changed[1] == "config.yaml"


# --- the dashboard: the same figures, refreshed live in a real browser ----------------------------


@pytest.mark.browser
def test_dashboard_shows_seed_metrics_and_refreshes_in_place(tmp_path: Path) -> None:
    from tests import site_cdp
    from tests.dashboard_util import Running

    root = tmp_path / "repo"
    ids = build(root)
    (root / ".ccmemory" / "config.yaml").write_text(CONFIG, encoding="utf-8")
    running = Running(root)
    running.dash.poll_seconds = 1  # the page polls every second here (30 s by default)
    try:
        with site_cdp.open_browser(1000, 500) as b:
            b.goto(running.server.url)
            b.wait_for("document.readyState === 'complete'")
            row = "document.querySelector('#seed-decision_evolution_rate .mval').textContent"
            assert b.eval(row) == "0.25"  # 1 decision->decision SUPERSEDES / 4 decisions
            assert "36.00 USD" in b.eval("document.getElementById('hours-saved').textContent")
            # the reader scrolls to the weekly charts, below every figure that will change
            top = "document.querySelector('section.charts h2').getBoundingClientRect().top"
            b.eval("document.querySelector('section.charts h2').scrollIntoView(); window.__kept = 1")
            before = b.eval(top)
            assert b.eval("window.scrollY") > 0
            # a fifth decision that supersedes d2: the seed's evolution rate is now 2 / 5
            add_memory(root, "Use PostgreSQL 17", "decision", supersedes=[ids["d2"]], author=ALICE)
            b.wait_for("document.getElementById('stat-memories').textContent === '9'", timeout=30)
            b.wait_for(f"{row} === '0.40'", timeout=30)
            assert b.eval("window.__kept") == 1  # the same page: no reload
            assert abs(b.eval(top) - before) <= 1  # and the reader's place is kept (what was in view)
            # a new session record repeating s3's explanation: 2 duplicates in 5 context events
            rec = {"schema": 1, "id": "s4", "start": iso(datetime.now(UTC)), "end": iso(datetime.now(UTC)),
                   "prompts": ["Keep in mind the deploy runs on Fridays only."]}  # fmt: skip
            (root / ".ccmemory/local/sessions/s4.json").write_text(json.dumps(rec), encoding="utf-8")
            b.wait_for("document.querySelector('#seed-re_explanation_rate .mval').textContent === '0.40'")
            assert b.eval("document.getElementById('live-status').textContent").startswith("updated")
    finally:
        running.close()


def test_quarter_report_carries_the_seed_metrics_and_hours_saved(vault: Path) -> None:
    r = json.loads(cli(vault, "report", "--period", "quarter", "--format", "json", env=ENV).stdout)
    assert r["period"] == "quarter"
    assert r["seed_metrics"]["decision_evolution_rate"]["now"] == "0.25"
    assert r["seed_metrics"]["graph_density"]["then"] == "not enough data"  # 91 days ago: no memories
    assert r["hours_saved"]["hours"] == pytest.approx(0.3)  # all 3 avoided re-explanations are recent
    md = cli(vault, "report", "--period", "quarter", "--format", "markdown", env=ENV).stdout
    assert "| Rule Exception Rate | 0.50 |" in md and "120 USD/h (assumed, config)" in md


def test_hypothesis_usefulness_by_hand(tmp_path: Path) -> None:
    """Three proposals; one tested within 30 days (1/3). By hand:
    h1 open 40 days ago, superseded by h1b supported 35 days ago: 5 days later, tested;
    h2 open 60 days ago, superseded by h2b refuted 10 days ago: 50 days later, not in the window;
    h3 open 2 days ago, nothing since: not tested. h1b and h2b are versions, not proposals."""
    from ccmemory.app.vaultinit import init_vault

    root = tmp_path / "repo"
    init_git(root)
    init_vault(root)
    now = datetime.now(UTC).replace(microsecond=0)
    ids: dict[str, str] = {}

    def add(key: str, title: str, days: float, status: str, **kw: Any) -> None:
        fields = {"prediction": "we will see it in the logs", "status": status}
        ids[key], _ = add_memory(
            root, title, "hypothesis", created=now - timedelta(days=days), fields=fields, **kw
        )

    add("h1", "Retries cause the duplicate invoices", 40, "open")
    add("h1b", "Retries cause the duplicate invoices (supported)", 35, "supported", supersedes=[ids["h1"]])
    add("h2", "The cache hides stale prices", 60, "open")
    add("h2b", "The cache hides stale prices (refuted)", 10, "refuted", supersedes=[ids["h2"]])
    add("h3", "Cold starts come from the ORM import", 2, "open")
    commit_all(root, "hypotheses")
    cli(root, "reindex")
    seed = json.loads(cli(root, "stats", "--json", env=ENV).stdout)["seed_metrics"]
    hu = seed["hypothesis_usefulness"]
    assert hu["value"] == pytest.approx(1 / 3) and (hu["part"], hu["whole"]) == (1, 3), hu
    assert "30 days" in hu["formula"] and "PROJECT_VISION.md" in hu["source"]
