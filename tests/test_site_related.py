"""The site's related lists (issue 29): found with a memory's distinctive words only, ranked by the
product's text search on its whole title and topics, through the real generator on a real vault."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from ccmemory.app.service import Service
from ccmemory.core.model import Memory, new_id
from ccmemory.core.vault import Vault, render
from ccmemory.surfaces.site.generator import SiteGenerator
from ccmemory.text import morelike
from tests.capture_helpers import make_repo


def _write(vault: Vault, title: str, topics: list[str], when: datetime, body: str = "") -> str:
    m = Memory(id=new_id(), type="fact", title=title, created=when, body=body, topics=topics)
    m.fields = {"category": "convention"}
    path = vault.path_for(m)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(m), encoding="utf-8")
    return m.id


def test_related_lists_follow_distinctive_words_not_common_ones(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    vault = Vault(repo)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    # 400 memories made of the same few words: each word is in every one of them (too common
    # for a related list to be found with), and a memory of only those words finds nothing
    for i in range(400):
        _write(vault, f"Deploy service update step {i}", ["service", "deploy"], start + timedelta(minutes=i))
    plain = _write(vault, "Service deploy update checklist", ["service", "deploy"], start)
    # three memories sharing rare words (and the common ones): they list each other
    zk = [
        _write(vault, f"Zookeeper quorum lost during deploy {k}", ["zookeeper", "quorum"], start, "ensemble")
        for k in ("a", "b", "c")
    ]
    # one sharing a single rare word with them ranks after the two that share all of them
    half = _write(vault, "Zookeeper snapshot size", ["storage"], start)
    with Service(vault) as svc:
        svc.reindex()
        data = SiteGenerator(svc).collect()
        df = svc.index.doc_freqs(svc.project, ["deploy", "servic", "zookeep"])
    assert df["deploy"] >= 400 and df["zookeep"] == 4
    related = {mid: [m.id for m in ms] for mid, ms in data.related.items()}
    for mid in zk:
        others = [z for z in zk if z != mid]
        assert set(related[mid][:2]) == set(others), related[mid]
        assert half in related[mid]
        assert plain not in related[mid]  # shares only the common words
        assert len(related[mid]) == 3  # nothing made of common words only is added
    assert related[plain] == []
    assert related[half][0] in zk


def test_like_groups_keeps_rare_terms_and_pairs_common_ones() -> None:
    df = {"rare": 3, "mid1": 1000, "mid2": 1000, "mid3": 1000, "self": 1, "common": 60_000}
    groups = morelike.like_groups(["rare", "mid1", "mid2", "mid3", "self", "common"], df, 100_000)
    assert groups[0] == ("rare",)  # cheap and selective: alone
    assert ("self",) not in groups and all("self" not in g for g in groups)  # only the memory itself
    assert all(len(g) > 1 for g in groups[1:])  # the common words only together
    assert all(morelike.estimate(g, df, 100_000) <= morelike.MAX_MATCHES for g in groups)
    assert sum(morelike.cost(g, df, 100_000) for g in groups) <= morelike.BUDGET_US
    # at any vault size the cost stays within the budget (the whole point)
    for docs in (1_000, 10_000, 100_000, 1_000_000):
        scaled = {t: max(2, n * docs // 100_000) for t, n in df.items()}
        found = morelike.like_groups(list(df), scaled, docs)
        assert sum(morelike.cost(g, scaled, docs) for g in found) <= morelike.BUDGET_US
    assert morelike.like_groups(["self"], df, 100_000) == []
