"""Hybrid and semantic retrieval through the product's own search path (real local model)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RunCli


def seed(run_cli: RunCli, repo: Path) -> dict[str, str]:
    ids = {}
    for key, mtype, title, body in [
        (
            "cookie",
            "decision",
            "Keep the session credential in an httpOnly cookie",
            "The browser never exposes it to page scripts; localStorage is off limits.",
        ),
        ("redis", "fact", "Background jobs run on Redis queues", "Workers pull from the jobs list."),
        ("css", "preference", "Use CSS grid for page layout", "Flexbox only inside components."),
    ]:
        out = run_cli(repo, "new", mtype, title, "--body", body, "--json").stdout
        ids[key] = json.loads(out)["id"]
    return ids


def search(run_cli: RunCli, repo: Path, *args: str, env: dict[str, str] | None = None):
    proc = run_cli(repo, "search", "--json", *args, env=env)
    return json.loads(proc.stdout), proc.stderr


def test_semantic_finds_what_words_miss(repo: Path, run_cli: RunCli) -> None:
    ids = seed(run_cli, repo)
    query = "where do login tokens live"  # shares no word with the cookie memory
    text_hits, _ = search(run_cli, repo, "--mode", "text", "--", query)
    assert ids["cookie"] not in [h["id"] for h in text_hits]
    sem_hits, err = search(run_cli, repo, "--mode", "semantic", "--", query)
    assert "semantic search is off" not in err
    assert sem_hits[0]["id"] == ids["cookie"]
    # an unrelated memory is still listed (semantic mode never answers with fewer than `limit`
    # results when the vault has them), below the nearest and marked weak
    weak = {h["id"]: h.get("weak", False) for h in sem_hits}
    assert len(sem_hits) == 3 and weak[ids["css"]] is True and weak[ids["cookie"]] is False
    hyb_hits, _ = search(run_cli, repo, "--explain", "--", query)
    assert hyb_hits[0]["id"] == ids["cookie"]
    assert hyb_hits[0]["explain"]["vector_rank"] == 1


def test_broken_model_falls_back_visibly(repo: Path, run_cli: RunCli, tmp_path: Path) -> None:
    ids = seed(run_cli, repo)
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not an onnx model")
    hits, err = search(run_cli, repo, "--", "redis queues", env={"CCMEMORY_MODEL_PATH": str(bad)})
    assert "semantic search is off" in err
    assert hits[0]["id"] == ids["redis"]  # full-text still answers
    report = json.loads(run_cli(repo, "reindex", "--json", env={"CCMEMORY_MODEL_PATH": str(bad)}).stdout)
    assert report["semantic"] is False and report["semantic_off_reason"]


def test_reindex_embeds_only_what_changed(repo: Path, run_cli: RunCli) -> None:
    seed(run_cli, repo)
    first = json.loads(run_cli(repo, "reindex", "--json").stdout)
    again = json.loads(run_cli(repo, "reindex", "--json").stdout)
    assert again["embedded"] == 0
    run_cli(repo, "new", "fact", "Deploys happen on Tuesdays")
    third = json.loads(run_cli(repo, "reindex", "--json").stdout)
    assert third["embedded"] == 1, (first, third)


def test_semantic_never_fewer_than_limit(repo: Path, run_cli: RunCli) -> None:
    """A query far from every memory still gets `limit` results in semantic mode, nearest first,
    each marked weak (JSON "weak": true, "[weak match]" in text output): a similarity floor marks,
    it never empties the list (issue 27)."""
    seed(run_cli, repo)
    query = "zebra migration patterns across the savanna"
    hits, err = search(run_cli, repo, "--mode", "semantic", "--limit", "2", "--explain", "--", query)
    assert "semantic search is off" not in err
    assert len(hits) == 2 and all(h["weak"] is True for h in hits)
    cosines = [h["explain"]["vector_score"] for h in hits]
    assert cosines == sorted(cosines, reverse=True)
    out = run_cli(repo, "search", "--mode", "semantic", "--", query).stdout
    assert "no matching memories" not in out and out.count("[weak match]") == 3
