"""The seed's Time-to-Context (issue 31), measured: the SessionStart hook records its own latency in
.ccmemory/local/surfaced.jsonl; TTC is the mean over sessions of the first injection's latency,
with its p95 against the seed's 1 s target. Written by real hook runs, read by `ccmemory stats`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.capture_helpers import hook_env, run_hook
from tests.dashboard_util import build_project
from tests.lifecycle_util import cli, reindex


def test_session_start_hooks_record_their_latency_and_stats_computes_ttc(tmp_path: Path) -> None:
    project = build_project(tmp_path / "repo")
    root = project.root
    spool = root / ".ccmemory" / "local" / "surfaced.jsonl"
    spool.unlink()  # build_project's hand-written line has no latency
    data = json.loads(cli(root, "stats", "--json").stdout)["seed_metrics"]["time_to_context"]
    assert data["value"] is None and "latency" in data["why"] and data["display"] == "not enough data"
    reindex(root)  # the hook reads the index, as after any ccmemory command
    runs = [("s-a", "startup"), ("s-b", "startup"), ("s-a", "resume")]  # s-a's resume is not its first
    for session, source in runs:
        payload = {
            "session_id": session,
            "cwd": str(root),
            "hook_event_name": "SessionStart",
            "source": source,
        }
        proc = run_hook("SessionStart", payload, root, hook_env())
        assert proc.returncode == 0 and b"additionalContext" in proc.stdout
    lines = [json.loads(x) for x in spool.read_text().splitlines()]
    assert [(x["session"], x["source"]) for x in lines] == runs
    assert all(0 < x["ms"] < 60_000 for x in lines)
    first = {}
    for x in lines:
        first.setdefault(x["session"], x["ms"] / 1000)
    seconds = sorted(first.values())
    want_mean = sum(seconds) / len(seconds)
    want_p95 = seconds[math.ceil(0.95 * len(seconds)) - 1]  # nearest rank: of two, the larger
    ttc = json.loads(cli(root, "stats", "--json").stdout)["seed_metrics"]["time_to_context"]
    assert ttc["value"] == pytest.approx(want_mean, rel=1e-5)
    assert ttc["p95"] == pytest.approx(want_p95, rel=1e-5) and ttc["sessions"] == 2
    assert ttc["meets_target"] == (want_p95 < 1.0) and ttc["target"] == "p95 < 1 s"
    assert ttc["display"].endswith(f"(p95 {want_p95:.3f} s)") and ttc["name"] == "Time-to-Context (TTC)"
