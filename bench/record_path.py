"""Where recording one memory over MCP goes (issue 26: "climbs back up at most 2 times").

    .venv/bin/python bench/record_path.py

Runs the MCP record tool's body (``surfaces/mcp/tools/record.record``) in process on a fresh
repository with a few memories, under ``sys.setprofile``, and reports: the ccmemory modules
entered, the layer of each (surfaces > features > app > retrieval > index > text > core), and the
*climbs*: calls from a module of a lower layer into one of a higher layer (possible only through
a callback or an object handed down, since imports only point down: import-linter). Re-entering a
module already visited (e.g. returning to core.vault) is counted as "returns".
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LAYERS = ["core", "text", "index", "retrieval", "app", "features", "surfaces"]


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS)


def main() -> None:
    from ccmemory.app.service import Service
    from ccmemory.app.vaultinit import init_vault
    from ccmemory.core.model import Memory, new_id
    from ccmemory.surfaces.mcp.tools.record import record

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        init_vault(repo)
        svc = Service.open(repo)
        from datetime import UTC, datetime

        for title in ("Keep sessions in Redis", "Tokens live in httpOnly cookies"):
            svc.record(
                Memory(id=new_id(), type="decision", title=title, created=datetime.now(UTC), body=title)
            )
        svc.search("warm", limit=1, mode="text")  # open the index outside the measurement
        calls: list[tuple[str, str]] = []

        def prof(frame: FrameType, event: str, arg: Any) -> None:
            if event != "call":
                return
            callee = frame.f_globals.get("__name__", "")
            caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
            if callee.startswith("ccmemory.") and caller.startswith("ccmemory.") and callee != caller:
                calls.append((caller, callee))

        sys.setprofile(prof)
        try:
            record(svc, "decision", title="Sessions stay in Redis after the move", body="Same store.")
        finally:
            sys.setprofile(None)
        svc.close()
    climbs = [(a, b) for a, b in calls if layer(b) > layer(a)]
    modules = list(dict.fromkeys(b for _, b in calls))
    print(f"modules entered: {len(modules)}")
    print("  " + ", ".join(m.removeprefix("ccmemory.") for m in modules))
    print(f"cross-module calls: {len(calls)}; climbs (lower layer -> higher): {len(climbs)}")
    for a, b in dict.fromkeys(climbs):
        print(f"  climb {a} -> {b}  x{climbs.count((a, b))}")


if __name__ == "__main__":
    main()
