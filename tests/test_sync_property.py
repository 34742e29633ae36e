"""Incremental reindex == full rebuild, over random create/edit/rename/delete sequences."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccmemory.app.sync import reindex
from ccmemory.core.model import Relation
from ccmemory.core.vault import Vault, render
from ccmemory.index.sqlite import SQLiteIndex
from tests.conftest import init_git, make_memory

WORDS = ["auth", "cookie", "token", "cache", "redis", "deploy", "schema", "query", "retry", "index"]

op = st.one_of(
    st.tuples(
        st.just("create"),
        st.sampled_from(["decision", "correction", "fact", "insight"]),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        st.integers(0, 50),
        st.booleans(),
    ),
    st.tuples(st.just("edit"), st.integers(0, 50), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)),
    st.tuples(st.just("rename"), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("corrupt"), st.integers(0, 50)),
    st.tuples(st.just("duplicate"), st.integers(0, 50)),
    st.tuples(
        st.just("reindex"),
    ),
)


def apply_op(vault: Vault, operation: tuple, counter: list[int]) -> None:
    files = sorted(vault.iter_paths())
    kind = operation[0]
    if kind == "create":
        _, mtype, words, pick, link = operation
        valid = [p for p in files if _valid(p)]
        sup: list[str] = []
        rels: list[Relation] = []
        if valid and link:
            target = vault.read(valid[pick % len(valid)]).id
            if pick % 2:
                sup = [target]
            else:
                rels = [Relation("DEPENDS_ON", target, "because")]
        rels.append(Relation("CITES", "01JZZZZZZZZZZZZZZZZZZZZZZZ"))  # dangling: a warning only
        counter[0] += 1
        vault.write_new(
            make_memory(
                mtype,
                " ".join(words) + f" {counter[0]}",
                topics=words[:2],
                files=[f"src/{words[0]}.py"],
                supersedes=sup,
                relations=rels,
                body=" ".join(reversed(words)),
            )
        )
    elif not files:
        return
    elif kind == "edit":
        _, pick, words = operation
        path = files[pick % len(files)]
        if _valid(path):
            m = vault.read(path)
            m.title = " ".join(words)
            m.topics = words[-2:]
            m.body = m.body + " " + " ".join(words)
            path.write_text(render(m), encoding="utf-8")
    elif kind == "rename":
        path = files[operation[1] % len(files)]
        path.rename(path.with_name("renamed-" + path.name))
    elif kind == "delete":
        files[operation[1] % len(files)].unlink()
    elif kind == "corrupt":
        path = files[operation[1] % len(files)]
        path.write_text("---\nid: [broken\n---\n", encoding="utf-8")
    elif kind == "duplicate":
        path = files[operation[1] % len(files)]
        shutil.copy(path, path.with_name("copy-" + path.name))


def _valid(path: Path) -> bool:
    return not path.read_text(encoding="utf-8").startswith("---\nid: [broken")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(op, min_size=1, max_size=25))
def test_incremental_equals_full_rebuild(ops: list[tuple]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = init_git(Path(tmp) / "r")
        (root / ".ccmemory").mkdir()
        vault = Vault(root)
        inc = SQLiteIndex(Path(tmp) / "inc.db")
        counter = [0]
        for operation in ops:
            if operation[0] == "reindex":
                reindex(vault, inc, "p")
            else:
                apply_op(vault, operation, counter)
        reindex(vault, inc, "p")
        full = SQLiteIndex(Path(tmp) / "full.db")
        reindex(vault, full, "p", full=True)
        assert inc.dump("p") == full.dump("p")
        # and the index agrees with the files
        ids = {r[0] for r in full.dump("p")["memories"]}
        valid_ids = set()
        for p in vault.iter_paths():
            if _valid(p):
                valid_ids.add(vault.read(p).id)
        assert ids == valid_ids
        inc.close()
        full.close()
