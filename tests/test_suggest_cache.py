"""The pattern job (issue 31): suggestions computed in the background worker and kept in
.ccmemory/local/suggestions.json keyed by the index state; read from there while fresh, ignored
when stale, identical to computing them directly."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from ccmemory.app.service import Service
from ccmemory.core.vault import Vault
from ccmemory.features import suggest
from tests.capture_helpers import hook_env, make_repo
from tests.conftest import RunCli
from tests.lifecycle_util import add_memory
from tests.test_capture_worker import spool_session


def gotchas(repo: Path, n: int, start: int = 0) -> list[str]:
    return [
        add_memory(repo, f"Firing gotcha {i}", "gotcha", files=["src/firing.py"])[0]
        for i in range(start, start + n)
    ]


def as_dicts(items: list[suggest.Suggestion]) -> list[dict[str, object]]:
    return [asdict(s) for s in items]


def test_cached_suggestions_are_the_direct_ones_and_go_stale_with_the_index(
    repo: Path, run_cli: RunCli
) -> None:
    ids = gotchas(repo, 3)
    for n in range(2):
        add_memory(
            repo,
            f"Hotfix {n} skipped review",
            "exception",
            fields={"rule_broken": "Every change is reviewed"},
        )
    with Service(Vault(repo)) as svc:
        svc.reindex()
        cache = svc.vault.dir / "local" / suggest.CACHE_NAME
        assert suggest.cached(svc) is None and not cache.exists()
        direct = suggest.compute(svc)
        assert {s.kind for s in direct} == {"file", "exceptions"}
        assert as_dicts(suggest.suggestions(svc, include_dismissed=True)) == as_dicts(
            direct
        )  # computed, stored
        stored = suggest.cached(svc)
        assert stored is not None and as_dicts(stored) == as_dicts(direct)
        assert json.loads(cache.read_text())["key"] == suggest.state_key(svc)
        # while the key matches the answer comes from the file (a hand-edited one shows it)
        data = json.loads(cache.read_text())
        data["suggestions"] = data["suggestions"][:1]
        cache.write_text(json.dumps(data))
        assert len(suggest.suggestions(svc, include_dismissed=True)) == 1
        # the CLI and the dashboard's source read the same file
        assert len(json.loads(run_cli(repo, "suggest", "--json").stdout)) == 1
        # a new memory in the index makes it stale: recomputed, identical to computing directly
        ids += gotchas(repo, 1, start=3)
        svc.reindex()
        assert suggest.cached(svc) is None
        fresh = suggest.suggestions(svc, include_dismissed=True)
        assert as_dicts(fresh) == as_dicts(suggest.compute(svc))
        assert set(next(s for s in fresh if s.kind == "file").evidence) == set(ids)
        # an edited memory (same count, new content) is a new index state too
        key = suggest.state_key(svc)
        path = next(p for p in svc.vault.iter_paths() if "gotcha-3" in p.name)
        path.write_text(path.read_text().replace("Firing gotcha 3", "Firing gotcha three"))
        svc.reindex()
        assert suggest.state_key(svc) != key and suggest.cached(svc) is None
        # a torn cache file is ignored, never an error
        cache.write_text("{not json")
        assert as_dicts(suggest.suggestions(svc, include_dismissed=True)) == as_dicts(suggest.compute(svc))


def test_the_worker_runs_the_pattern_job_after_its_jobs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    gotchas(repo, 3)
    spool_session(repo)  # a capture job: the worker writes memories, then runs the pattern job
    done = subprocess.run(
        [sys.executable, "-m", "ccmemory.features.capture.worker", str(repo), "--once"],
        env=hook_env(),
        cwd=repo,
        timeout=120,
    )
    assert done.returncode == 0
    cache = repo / ".ccmemory" / "local" / suggest.CACHE_NAME
    assert cache.is_file()
    with Service(Vault(repo)) as svc:
        stored = suggest.cached(svc)  # fresh: the index is as the worker left it
        assert stored is not None
        assert as_dicts(stored) == as_dicts(suggest.compute(svc))
        assert any(s.kind == "file" for s in stored)
