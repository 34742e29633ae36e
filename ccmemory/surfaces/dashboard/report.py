"""`ccmemory report`: an executive summary of the dashboard's figures for a week, month or quarter.

The same metrics as the dashboard (dashboard/metrics.py), now and at the start of the period,
with their trend; what was created; the most reused decisions; hotspots; what waits for review.
Rendered as text, markdown or HTML (escaped); PDF through headless Chromium when it is installed.
"""

from __future__ import annotations

import html
import shutil
import subprocess
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ccmemory.core.errors import CcmemoryError
from ccmemory.surfaces.dashboard import metrics as mx
from ccmemory.surfaces.dashboard import seed
from ccmemory.surfaces.dashboard.data import Dash

PERIODS = {"week": 7, "month": 30, "quarter": 91}


def build(dash: Dash, period: str, now: datetime | None = None) -> dict[str, Any]:
    now = now or datetime.now(UTC)
    days = PERIODS[period]
    start = now - timedelta(days=days)
    inp = dash.inputs()
    snap = inp.snap
    then, current = mx.compute(inp, start), mx.compute(inp, now + timedelta(seconds=1))
    seed_then, seed_now = seed.compute(inp, start), seed.compute(inp, now + timedelta(seconds=1))
    lo = mx.iso(start)
    created = [m for m in snap.mems if m.created >= lo]
    uses = Counter(
        mid for ts, kind, _, mid, _ in inp.events if kind in ("surfaced", "retrieved") and ts >= lo and mid
    )
    reused = [
        {"id": i, "title": snap.by_id[i].title, "uses": n}
        for i, n in uses.most_common()
        if i in snap.by_id and snap.by_id[i].type == "decision"
    ][:10]
    review = dash.review(limit=1000)
    patterns = dash.patterns(limit=5)
    return {
        "project": dash.project,
        "period": period,
        "from": mx.iso(start),
        "to": mx.iso(now),
        "metrics": {
            k: {
                "now": current[k]["display"],
                "then": then[k]["display"],
                "trend": _trend(then[k]["value"], current[k]["value"]),
                "formula": current[k]["formula"],
            }
            for k in current
        },
        "seed_metrics": {
            k: {
                "name": v["name"],
                "now": v["display"],
                "then": seed_then[k]["display"],
                "trend": _trend(seed_then[k]["value"], v["value"]),
                "why": v["why"],
                "formula": v["formula"],
                "source": v["source"],
            }
            for k, v in seed_now.items()
        },
        "hours_saved": seed.hours_saved(inp, dash.svc.config.raw, lo, mx.iso(now + timedelta(seconds=1))),
        "created": len(created),
        "created_by_type": dict(Counter(m.type for m in created).most_common()),
        "most_reused_decisions": reused,
        "correction_hotspots": [
            {"by": h["by"], "key": h["key"], "count": h["count"]} for h in patterns["correction_hotspots"]
        ],
        "waiting_for_review": {
            "developmental": review["developmental"]["count"],
            "duplicates_and_contradictions": len(review["findings"]),
            "stale": len(review["stale"]),
            "low_confidence": len(review["low_confidence"]),
            "open_questions": len(review["open_questions"]),
        },
    }


def _trend(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "n/a"
    if abs(b - a) < 0.005:
        return "flat"
    return f"{'up' if b > a else 'down'} {b - a:+.2f}"


def _label(k: str) -> str:
    return k.replace("_", " ")


def text(r: dict[str, Any], md: bool = False) -> str:
    h1, h2, li = ("# ", "## ", "- ") if md else ("", "", "  ")
    out = [
        f"{h1}ccmemory report: {r['project']}, last {r['period']} ({r['from'][:10]} to {r['to'][:10]})",
        "",
    ]
    out.append(f"{h2}Metrics (now, at the period's start, trend)")
    if md:
        out += ["", "| metric | now | then | trend |", "|---|---|---|---|"]
        out += [f"| {_label(k)} | {v['now']} | {v['then']} | {v['trend']} |" for k, v in r["metrics"].items()]
        out.append("")
        out.append("Cognitive coefficient is a heuristic. Formulas: docs/dashboard.md.")
    else:
        out += [
            f"{li}{_label(k):26} {v['now']:>16}  (was {v['then']}, {v['trend']})"
            for k, v in r["metrics"].items()
        ]
        out.append(f"{li}(cognitive coefficient is a heuristic; formulas in docs/dashboard.md)")
    out += ["", f"{h2}The seed's metrics, as the seed defines them (now, then, trend)"]
    if md:
        out += ["", "| metric | now | then | trend | formula · source |", "|---|---|---|---|---|"]
        out += [
            f"| {v['name']} | {v['now']} | {v['then']} | {v['trend']} | {v['formula']} · {v['source']} |"
            for v in r["seed_metrics"].values()
        ]
        out.append("")
    else:
        out += [
            f"{li}{v['name']:38} {v['now']:>16}  (was {v['then']}, {v['trend']})"
            + (f" ({v['why']})" if v["why"] and v["now"] == "not measurable" else "")
            for v in r["seed_metrics"].values()
        ]
    out.append(f"{li}{seed.describe(r['hours_saved'])}, in the period")
    by_type = ", ".join(f"{n} {t}" for t, n in r["created_by_type"].items()) or "none"
    out += ["", f"{h2}Created", f"{li}{r['created']} memories ({by_type})"]
    out += ["", f"{h2}Most reused decisions (surfaced or retrieved)"]
    out += [f"{li}{d['title']} ({d['id']}): {d['uses']}x" for d in r["most_reused_decisions"]] or [
        f"{li}none recorded"
    ]
    out += ["", f"{h2}Correction hotspots"]
    out += [f"{li}{h['by']} {h['key']}: {h['count']} corrections" for h in r["correction_hotspots"]] or [
        f"{li}none"
    ]
    out += ["", f"{h2}Waiting for review"]
    out += [f"{li}{_label(k)}: {v}" for k, v in r["waiting_for_review"].items()]
    return "\n".join(out) + "\n"


def to_html(r: dict[str, Any]) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(_label(k))}</td><td>{e(v['now'])}</td><td>{e(v['then'])}</td><td>{e(v['trend'])}</td>"
        f"<td class=f>{e(v['formula'])}</td></tr>"
        for k, v in r["metrics"].items()
    )

    seed_rows = "".join(
        f"<tr><td>{e(v['name'])}</td><td>{e(v['now'])}</td><td>{e(v['then'])}</td><td>{e(v['trend'])}</td>"
        f"<td class=f>{e(v['formula'])}<br>{e(v['source'])}<br>{e(v['why'] or '')}</td></tr>"
        for v in r["seed_metrics"].values()
    )

    def ul(items: list[str]) -> str:
        return "<ul>" + "".join(f"<li>{e(i)}</li>" for i in items) + "</ul>" if items else "<p>none</p>"

    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>ccmemory report {e(r['project'])}</title><style>"
        "body{font:14px/1.4 system-ui,sans-serif;max-width:900px;margin:24px auto;color:#1d232a}"
        "table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left}"
        ".f{color:#666;font-size:11px}</style></head><body>"
        f"<h1>ccmemory report: {e(r['project'])}</h1><p>Last {e(r['period'])}: {e(r['from'][:10])} to "
        f"{e(r['to'][:10])}</p><h2>Metrics</h2><table><tr><th>metric</th><th>now</th><th>then</th>"
        f"<th>trend</th><th>formula</th></tr>{rows}</table><p>The cognitive coefficient is a heuristic.</p>"
        "<h2>The seed's metrics, as the seed defines them</h2><table><tr><th>metric</th><th>now</th>"
        f"<th>then</th><th>trend</th><th>formula · source</th></tr>{seed_rows}</table>"
        f"<p>{e(seed.describe(r['hours_saved']))}, in the period</p>"
        f"<h2>Created</h2><p>{r['created']} memories</p>"
        "<h2>Most reused decisions</h2>"
        + ul([f"{d['title']} ({d['id']}): {d['uses']}x" for d in r["most_reused_decisions"]])
        + "<h2>Correction hotspots</h2>"
        + ul([f"{h['by']} {h['key']}: {h['count']}" for h in r["correction_hotspots"]])
        + "<h2>Waiting for review</h2>"
        + ul([f"{_label(k)}: {v}" for k, v in r["waiting_for_review"].items()])
        + "</body></html>\n"
    )


class NoPdfRenderer(CcmemoryError):
    pass


def pdf_renderer() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def to_pdf(html_text: str, out: Path) -> str:
    """Print the HTML report to PDF with headless Chromium; returns the renderer used."""
    exe = pdf_renderer()
    if exe is None:
        raise NoPdfRenderer(
            "PDF needs headless Chromium (Debian: apt-get install chromium), which is not installed; "
            "use --format html and print it from a browser"
        )
    with tempfile.TemporaryDirectory(prefix="ccm-report-") as tmp:
        src = Path(tmp) / "report.html"
        src.write_text(html_text, encoding="utf-8")
        proc = subprocess.run(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp}/profile",
             "--no-pdf-header-footer", f"--print-to-pdf={out}", src.as_uri()],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    if proc.returncode != 0 or not out.is_file():
        raise NoPdfRenderer(
            f"chromium could not print the PDF (exit {proc.returncode}): {proc.stderr[-400:]}"
        )
    return exe
