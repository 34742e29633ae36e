"""`ccmemory report` through the real CLI, and the metric rules on hand-made inputs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ccmemory.index.base import Edge, IndexedMemory
from ccmemory.surfaces.dashboard import metrics as mx
from tests.dashboard_util import HOSTILE_TITLE, Project, build_project
from tests.lifecycle_util import cli


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return build_project(tmp_path_factory.mktemp("report") / "repo")


def test_report_formats(project: Project, tmp_path: Path) -> None:
    data = json.loads(cli(project.root, "report", "--period", "month", "--format", "json").stdout)
    assert data["period"] == "month"
    assert data["created"] == len(project.ids) - 2  # db (40 days old) and auth (31 days) are older
    assert data["waiting_for_review"]["developmental"] == 2
    quarter = json.loads(cli(project.root, "report", "--period", "quarter", "--format", "json").stdout)
    assert quarter["period"] == "quarter" and quarter["created"] == len(project.ids)  # 91 days back: all
    assert data["most_reused_decisions"][0]["id"] == project.ids["auth"]
    text = cli(project.root, "report").stdout
    assert "last week" in text and "cognitive coefficient" in text and "heuristic" in text
    md = cli(project.root, "report", "--format", "markdown").stdout
    assert md.startswith("# ccmemory report") and "| metric | now | then | trend |" in md
    html = cli(project.root, "report", "--format", "html", "-o", str(tmp_path / "r.html")).stdout
    assert "wrote" in html
    page = (tmp_path / "r.html").read_text()
    assert "<script>" not in page and "<table>" in page
    assert HOSTILE_TITLE not in page  # titles appear only escaped (none of the hostile ones is reused)


def test_report_pdf_names_its_renderer_or_says_why_not(project: Project, tmp_path: Path) -> None:
    from ccmemory.surfaces.dashboard.report import pdf_renderer

    out = tmp_path / "r.pdf"
    proc = cli(project.root, "report", "--format", "pdf", "-o", str(out), check=False)
    if pdf_renderer() is None:
        assert proc.returncode != 0 and "PDF needs headless Chromium" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        assert "rendered by" in proc.stdout and out.read_bytes().startswith(b"%PDF")
    assert cli(project.root, "report", "--format", "pdf", check=False).returncode == 2  # needs -o


def mem(i: str, mtype: str, created: str, **kw: object) -> IndexedMemory:
    return IndexedMemory(
        id=i,
        type=mtype,
        title=i,
        body="",
        created=created,
        path=f"{i}.md",
        status=str(kw.pop("status", "curated")),
        project="p",
        **kw,
    )  # type: ignore[arg-type]


def test_metric_rules_on_hand_made_inputs() -> None:
    mems = [mem(f"d{i}", "decision", f"2026-11-0{i + 1}T00:00:00Z", session="s0") for i in range(5)]
    mems += [mem("x", "exception", "2026-11-08T00:00:00Z", source="llm")]
    edges = [Edge("d1", "SUPERSEDES", "d0")]
    snap = mx.Snapshot(mems, edges, {"d0"})
    events = [
        ("2026-11-09T00:00:00Z", "retrieved", "s1", "d1", 1),
        ("2026-11-09T00:00:00Z", "retrieved", "s0", "d2", 1),  # its own session: not reuse
        ("2026-11-09T00:00:00Z", "searched", "s1", "d3", 1),
    ]  # a search hit is not a use
    flags = {f"c{i}": i < 2 for i in range(5)}
    snap.mems += [mem(f"c{i}", "correction", "2026-11-07T00:00:00Z") for i in range(5)]
    snap.by_id.update({m.id: m for m in snap.mems})
    inp = mx.Inputs(snap, events, [("s1", "2026-11-09T00:00:00Z", "2026-11-09T02:00:00Z")], flags)
    out = mx.compute(inp)
    assert out["re_explanation_rate"]["value"] == pytest.approx(0.4)
    assert out["decision_reuse_rate"]["value"] == pytest.approx(1 / 5)
    assert out["cognitive_coefficient"]["value"] == pytest.approx(1 + 0.02 * 4 + 0.5 * 0.6 + 0.2)
    assert out["evolution_rate"]["value"] == pytest.approx(1 / 5)
    assert out["rule_exception_rate"]["value"] == pytest.approx(1 / 4)
    assert out["graph_density"]["value"] == pytest.approx(1 / (11 * 10))
    assert out["capture_per_session_hour"]["value"] == pytest.approx(0.5)
    # as of a date before the events: reuse not measurable yet, so no coefficient either
    early = mx.compute(inp, datetime(2026, 11, 8, tzinfo=UTC))
    assert early["decision_reuse_rate"]["display"] == "not enough data"
    assert early["cognitive_coefficient"]["value"] is None
    # the cap
    many = mx.Snapshot([mem(f"d{i}", "decision", "2026-11-01T00:00:00Z") for i in range(300)], [], set())
    capped = mx.compute(
        mx.Inputs(
            many,
            [("2026-11-09T00:00:00Z", "retrieved", "s", "d1", 1)],
            [],
            {f"d{i}": False for i in range(5)},
        )
    )
    assert capped["cognitive_coefficient"]["value"] == 4.0
    # off / no embeddings
    off = mx.compute(mx.Inputs(snap, events, [], None, "no embedder: test", telemetry_enabled=False))
    assert off["re_explanation_rate"]["why"] == "no embedder: test"
    assert off["decision_reuse_rate"]["why"] == "telemetry is off"
