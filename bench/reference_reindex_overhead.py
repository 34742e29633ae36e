"""Reindex cost of the reference tree: a no-op reindex with and without the 33-file test tree
(alternating, 30 rounds each), then a full reindex with it.

    .venv/bin/python bench/reference_reindex_overhead.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ccmemory.app.service import Service  # noqa: E402
from ccmemory.app.vaultinit import init_vault  # noqa: E402
from ccmemory.core.vault import Vault  # noqa: E402


def make(with_tree: bool) -> Service:
    repo = Path(tempfile.mkdtemp()) / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    init_vault(repo)
    if with_tree:
        shutil.copytree(ROOT / "tests/data/reference_tree", repo / ".ccmemory/reference")
    svc = Service(Vault(repo))
    svc.reindex()
    time.sleep(2.1)  # past the racy window, so the next passes really are no-ops
    svc.reindex()
    return svc


def main() -> None:
    plain, tree = make(False), make(True)
    times: dict[str, list[float]] = {"without": [], "with": []}
    for _ in range(30):
        for name, svc in (("without", plain), ("with", tree)):
            t = time.perf_counter()
            svc.reindex()
            times[name].append((time.perf_counter() - t) * 1000)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"no-op reindex p50: without tree {statistics.median(times['without']):.1f} ms,"
        f" with the 33-file tree {statistics.median(times['with']):.1f} ms"
    )
    t = time.perf_counter()
    tree.reindex(full=True)
    print(f"full reindex with the tree: {(time.perf_counter() - t) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
