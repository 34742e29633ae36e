"""The developer-memory dev set: parse the spec, write real memory files, load the queries.

    .venv/bin/python bench/memories/devset.py      # (re)writes bench/memories/ccmemory/ from spec*.txt
    .venv/bin/python bench/memories/devset.py --set blind   # the same for bench/memories/blind/

``spec*.txt`` hold the memories of "Ledgerly", a made-up invoicing web app, written for this set
(not derived from LoCoMo or from issue texts); ``queries.txt`` the queries with their targets and
their half (T = tuning, H = held-out). The memory files under ``ccmemory/`` are the product's own
format (``ccmemory.core.vault.render``): copy them into a repository's ``.ccmemory/`` and run
``ccmemory reindex``. Ids are derived from the key and date, so regenerating changes nothing.

Other sets live in sub-folders of the same shape (``blind/``: a second made-up project, every
query held out, written without access to the ranking code); :func:`select` switches to one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from ccmemory.core.model import TYPES, Memory  # noqa: E402
from ccmemory.core.vault import render, slugify  # noqa: E402

SET_DIR = HERE  # the set in use: this folder (Ledgerly) or a sub-folder (select())
FILES = HERE / "ccmemory"
KEYS = HERE / "keys.json"
AUTHOR = "dev@ledgerly.example"


def select(name: str) -> None:
    """Use the set in ``bench/memories/<name>/`` ("main": Ledgerly, this folder)."""
    global SET_DIR, FILES, KEYS, AUTHOR
    SET_DIR = HERE if name == "main" else HERE / name
    if not (SET_DIR / "queries.txt").is_file():
        raise SystemExit(f"no dev set at {SET_DIR}")
    FILES, KEYS = SET_DIR / "ccmemory", SET_DIR / "keys.json"
    AUTHOR = "dev@ledgerly.example" if name == "main" else f"dev@{name}.example"


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(key: str, when: datetime) -> str:
    """A valid ULID from the creation time and a hash of the key (deterministic)."""
    ms = int(when.timestamp() * 1000)
    rand = int.from_bytes(hashlib.sha256(key.encode()).digest()[:10], "big")
    n = (ms << 80) | rand
    return "".join(_CROCKFORD[(n >> (5 * i)) & 31] for i in reversed(range(26)))


@dataclass
class Spec:
    key: str
    memory: Memory
    supersedes: list[str]


def parse_specs() -> list[Spec]:
    specs: list[Spec] = []
    blocks: list[list[str]] = []
    for path in sorted(SET_DIR.glob("spec*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("## "):
                blocks.append([line])
            elif blocks and not line.startswith("#"):
                blocks[-1].append(line)
    for block in blocks:
        head = block[0][3:].split()
        key, mtype, date = head[0], head[1], head[2]
        opts = dict(h.split(":", 1) for h in head[3:])
        lines = [ln for ln in block[1:] if ln.strip()]
        title, rest = lines[0].strip(), lines[1:]
        fields: dict[str, object] = {}
        body: list[str] = []
        for ln in rest:
            name, sep, value = ln.partition("= ")
            if sep and name in TYPES[mtype].fields:
                fields[name] = (
                    [v.strip() for v in value.split(",")] if name == "options_considered" else value
                )
            else:
                body.append(ln.strip())
        created = datetime.fromisoformat(date).replace(hour=10, tzinfo=UTC)
        sup = [s for s in opts.get("sup", "").split(",") if s]
        m = Memory(
            id=ulid(key, created),
            type=mtype,
            title=title,
            created=created,
            body=" ".join(body),
            author=AUTHOR,
            topics=[t for t in opts.get("topics", "").split(",") if t],
            files=[f for f in opts.get("files", "").split(",") if f],
            confidence=0.9,
            source="manual",
            fields=fields,
        )
        specs.append(Spec(key, m, sup))
    ids = {s.key: s.memory.id for s in specs}
    if len(ids) != len(specs):
        raise SystemExit("duplicate keys in the spec")
    for s in specs:
        s.memory.supersedes = [ids[k] for k in s.supersedes]
    return specs


@dataclass
class Query:
    split: str  # "T" tuning, "H" held-out
    kind: str
    targets: list[str]  # memory keys; a hit is any of them
    text: str


def load_queries() -> list[Query]:
    out = []
    for line in (SET_DIR / "queries.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        split, kind, targets, text = (p.strip() for p in line.split("|", 3))
        out.append(Query(split, kind, targets.split(","), text))
    return out


def keys() -> dict[str, str]:
    return json.loads(KEYS.read_text())


def write_files() -> None:
    specs = parse_specs()
    if FILES.exists():
        shutil.rmtree(FILES)
    for s in specs:
        folder = FILES / TYPES[s.memory.type].folder
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{s.memory.created:%Y-%m-%d}-{slugify(s.memory.title)}.md"
        (folder / name).write_text(render(s.memory), encoding="utf-8")
    KEYS.write_text(json.dumps({s.key: s.memory.id for s in specs}, indent=1, sort_keys=True) + "\n")
    known = {s.key for s in specs}
    for q in load_queries():
        missing = [t for t in q.targets if t not in known]
        if missing:
            raise SystemExit(f"query {q.text!r} names unknown targets {missing}")
    print(f"{len(specs)} memories, {len(load_queries())} queries")


def make_repo(root: Path) -> None:
    """A git repository at ``root`` with the dev set as its committed (curated) memories."""
    root.mkdir(parents=True, exist_ok=True)
    run = lambda *a: subprocess.run(["git", *a], cwd=root, check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("config", "user.email", "bench@example.com")
    run("config", "user.name", "Bench")
    shutil.copytree(FILES, root / ".ccmemory")
    (root / ".ccmemory" / "local").mkdir(exist_ok=True)
    run("add", "-A")
    run("commit", "-qm", "dev set")


if __name__ == "__main__":
    select(sys.argv[sys.argv.index("--set") + 1] if "--set" in sys.argv else "main")
    write_files()
