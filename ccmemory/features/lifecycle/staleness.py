"""Staleness from code: a memory may be stale when the code it is about changed a lot after it.

Rule (documented in the README and in `ccmemory check`):
a committed memory with `files:` is *maybe stale* when, in commits that come after the last commit
touching the memory file (in `git log --topo-order` of HEAD),
- the listed files (a path ending in `/` means the whole folder) changed by at least
  `threshold` lines in total (added + deleted, from `--numstat`; a binary change counts as
  `threshold`), default 50, or `stale_lines:` in `.ccmemory/config.yaml`; or
- a listed file changed and no longer exists at HEAD (deleted, or renamed away).
Memories that were never committed are never stale (they were just written). Editing and
committing the memory again (re-confirming it) clears the mark.

Cost: two git processes whatever the number of memories and files: one `git log --topo-order
--numstat` over `.ccmemory/` plus every listed file (read as a stream and stopped as soon as every
memory's last commit has been seen), and one `git ls-tree` for existence at HEAD; and none of
them when the answer for this HEAD commit and these memories is in `.ccmemory/local/` (one
`git rev-parse HEAD` to know).
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccmemory.core import gitstate
from ccmemory.core.layout import LOCAL_DIR, VAULT_DIR

DEFAULT_THRESHOLD = 50
MAX_PATHSPECS = 5000

_Counts = dict[str, int]
#: a walk's state: lines and commits per code path over the walk, and per memory path that
#: memory's (lines, commits) per code path in the commits newer than its last commit
_Walk = tuple[_Counts, _Counts, dict[str, tuple[_Counts, _Counts]]]


@dataclass(frozen=True)
class MemoryFiles:
    id: str
    path: str  # repo-relative memory file path
    files: tuple[str, ...]


@dataclass
class Staleness:
    id: str
    path: str
    lines: int = 0
    commits: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # code path -> lines changed after
    missing: list[str] = field(default_factory=list)

    def reason(self) -> str:
        parts = []
        if self.missing:
            parts.append(f"{', '.join(self.missing)} no longer exist{'s' if len(self.missing) == 1 else ''}")
        if self.lines:
            top = sorted(self.changed.items(), key=lambda kv: -kv[1])[:3]
            parts.append(
                f"{self.lines} lines changed in {self.commits} commit(s) since the memory was committed ("
                + ", ".join(f"{p} {n}" for p, n in top)
                + ")"
            )
        return "; ".join(parts)


def threshold_from(raw: dict[str, object] | None) -> int:
    value = (raw or {}).get("stale_lines")
    try:
        return max(1, int(value)) if value is not None else DEFAULT_THRESHOLD  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return DEFAULT_THRESHOLD


def _clean(spec: str) -> str | None:
    """A repo-relative path from a `files:` entry, or None when git cannot take it as a path."""
    spec = spec.strip().removeprefix("./")
    if not spec or spec.startswith(("/", ":")) or ".." in spec.split("/") or "\0" in spec:
        return None
    return spec


def _matches(code_path: str, spec: str) -> bool:
    if spec.endswith("/"):
        return code_path.startswith(spec)
    return code_path == spec or code_path.startswith(spec + "/")


def _stream_log(
    root: Path, specs: list[str], want: set[str], revs: str = "HEAD"
) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """Yield (commit, [(path, lines)]) of `revs` newest first (topo order); stops once `want` is
    all seen."""
    proc = subprocess.Popen(
        [
            "git",
            "log",
            "--topo-order",
            "--no-renames",
            "--numstat",
            "-z",
            "--format=%x01%H",
            revs,
            "--",
            # only the memories asked about: the whole vault dir made git list every memory
            # file of every commit (10k paths for a 10k vault) just to skip them here
            *(":(literal)" + p for p in sorted(want)),
            *specs,
        ],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    seen: set[str] = set()
    buf = b""
    try:
        while True:
            chunk = proc.stdout.read(65536)
            if chunk:
                buf += chunk
            blocks = buf.split(b"\x01")
            buf = blocks.pop() if chunk else b""
            if not chunk:
                blocks = [b for b in blocks if b] + ([buf] if buf else [])
            for block in blocks:
                if not block:
                    continue
                head, _, rest = block.partition(b"\0")
                entries: list[tuple[str, int]] = []
                for item in rest.split(b"\0"):
                    item = item.strip(b"\n")
                    if not item:
                        continue
                    added, deleted, path = item.decode("utf-8", "replace").split("\t", 2)
                    lines = -1 if added == "-" else int(added) + int(deleted)
                    entries.append((path, lines))
                yield head.decode().strip(), entries
                seen.update(p for p, _ in entries if p in want)
                if want and want <= seen:
                    return
            if not chunk:
                return
    finally:
        proc.kill()
        proc.wait()


def compute(
    root: Path, memories: Iterable[MemoryFiles], threshold: int = DEFAULT_THRESHOLD
) -> dict[str, Staleness]:
    """id -> Staleness for every memory that may be stale (others are absent)."""
    mems = [m for m in memories if m.files]
    if not mems or not gitstate.is_repo(root):
        return {}
    mems = _cleaned(mems)
    specs = sorted({f for m in mems for f in m.files})
    specs = specs[:MAX_PATHSPECS]
    if not specs:
        return {}
    head = gitstate.git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip()
    path = _cache_path(root) if head else None
    early = _take_early(root)
    if path is None:
        return _compute(root, mems, specs, threshold)[0]
    key = _cache_key(head, threshold, mems)
    entries = _cache_read(path)
    cached = _cache_get(entries, key)
    if cached is not None:
        return cached
    try:
        got = early() if early is not None else None
    except Exception:  # the early walk failed: walk here
        got = None
    if got is not None and got[0] == key:
        result, walk = got[1], got[2]
    else:
        result, walk = _compute(root, mems, specs, threshold, head, entries[0] if entries else None)
    _cache_put(path, entries, key, result, (threshold, mems, head, walk))
    return result


def _compute(
    root: Path,
    mems: list[MemoryFiles],
    specs: list[str],
    threshold: int,
    head: str = "",
    base: object = None,
) -> tuple[dict[str, Staleness], _Walk]:
    """The answer, and the walk's state (kept for the next HEAD: :func:`_since`). `base`: the
    newest stored entry; when it holds the walk of the same question at an ancestor of `head`
    reached by single-parent commits, only those commits are read."""
    walk = _since(root, mems, specs, threshold, head, base) if head and base else None
    if walk is None:
        walk = _changes_after(root, specs, {m.path for m in mems}, threshold, head or "HEAD")
    frozen = walk[2]
    existing = _existing(root, specs, head or "HEAD")
    # which changed code paths each distinct spec covers, and whether it still exists (once each)
    # every memory's counts list the code paths in the order the walk met them (each is the walk's
    # running total at that memory's last commit): their union in that order stands for the walk
    seen = dict.fromkeys(p for lines, _ in frozen.values() for p in lines)
    spec_paths = {spec: [p for p in seen if _matches(p, spec)] for spec in specs}
    spec_exists = {spec: any(_matches(p, spec) for p in existing) for spec in specs}
    result: dict[str, Staleness] = {}
    for m in mems:
        if m.path not in frozen:
            continue  # never committed: not stale
        st = _staleness(m, *frozen[m.path], spec_paths, spec_exists)
        if st.missing or st.lines >= threshold:
            result[m.id] = st
    return result, walk


# --- answers kept per HEAD commit ---------------------------------------------------------------
# The walk reads HEAD's history only (never the working tree), so for one HEAD commit, one set of
# memories (id, path, files) and one threshold the answer is always the same: it is kept in
# .ccmemory/local/ (never committed) and a session started again without a new commit does not
# walk the history again (~70 ms at 100k memories). A missing, unreadable or odd file is a miss.
CACHE_FILE = "staleness-cache.json"
CACHE_ENTRIES = 16
_CACHE_MAX_BYTES = 4 * 1024 * 1024


def _cache_key(head: str, threshold: int, mems: list[MemoryFiles]) -> str:
    import hashlib
    import json

    # the pathspecs are derived from the memories' files, so they need not be part of it
    what = [head, threshold, sorted([m.id, m.path, list(m.files)] for m in mems)]
    return hashlib.sha256(json.dumps(what).encode("utf-8")).hexdigest()


def _cache_path(root: Path) -> Path | None:
    """The cache file, or None when `local/` is missing or not a real folder (never followed)."""
    import os

    local = root / VAULT_DIR / LOCAL_DIR
    if os.path.islink(local) or not local.is_dir():
        return None
    return local / CACHE_FILE


def _cache_read(path: Path) -> list[Any]:
    import json

    from ccmemory.core.walk import read_regular

    try:
        data = json.loads(read_regular(path, _CACHE_MAX_BYTES))
    except (OSError, ValueError):
        return []
    return data if isinstance(data, list) else []


def _cache_get(entries: list[Any], key: str) -> dict[str, Staleness] | None:
    for entry in entries:
        if isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("stale"), list):
            try:
                return {d["id"]: Staleness(**d) for d in entry["stale"]}
            except (TypeError, KeyError):
                return None
    return None


def _cache_put(
    path: Path,
    entries: list[Any],
    key: str,
    result: dict[str, Staleness],
    asked: tuple[int, list[MemoryFiles], str, _Walk],
) -> None:
    """Put the answer first in the list read before the walk (the file is read once), with what
    was asked (threshold, memories) for :func:`prefetch` and the walk's state at that HEAD for
    :func:`_since`; older entries keep their answers only."""
    import contextlib
    import json
    import os
    from dataclasses import asdict

    threshold, mems, head, walk = asked
    older = [
        {"key": e["key"], "stale": e.get("stale")}
        for e in entries
        if isinstance(e, dict) and e.get("key") != key and "key" in e
    ]
    newest = {
        "key": key,
        "stale": [asdict(st) for st in result.values()],
        "threshold": threshold,
        "mems": _asked(mems),
    }
    frozen = walk[2]
    state = {"frozen": {p: [ln, c] for p, (ln, c) in frozen.items()}}
    if sum(len(ln) + len(c) for ln, c in frozen.values()) <= _WALK_MAX_PATHS:
        # else too big to keep: the next HEAD walks in full
        newest.update(head=head, walk=state, folder=_folder_id(path.parent))
    entries = [newest, *older][:CACHE_ENTRIES]
    # a private temp file renamed into place (readers see the old or the new list); no fsync: a
    # cache lost in a crash costs one walk
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(json.dumps(entries).encode("utf-8"))
        os.replace(tmp, path)
    except OSError:  # a read-only folder, a full disk: the next session walks again
        with contextlib.suppress(OSError):
            os.unlink(tmp)


# --- the walk started early (SessionStart) ---------------------------------------------------------
# The digest knows which memories it shows only after the service is imported and the index
# queried (~150-200 ms); after a new commit the walk (~70-100 ms at 100k memories, git's own work)
# then ran after that, on the hook's critical path. `prefetch` starts it in a daemon thread for
# the memories of the newest stored answer (a digest's memories change rarely between sessions):
# git runs while Python imports. `compute` takes that result only when its own key (HEAD,
# threshold, the same memories) is the one the thread walked for; otherwise it walks itself.
_EARLY: dict[str, Callable[[], tuple[str, dict[str, Staleness], _Walk] | None]] = {}
_EARLY_LOCK = threading.Lock()


def prefetch(root: Path) -> None:
    """Start the walk for the memories of the newest stored answer, when HEAD has moved since
    (nothing to do otherwise); never raises, never blocks."""
    import os

    from ccmemory.core.background import in_background

    waiter = in_background(_early_walk, root, name="ccmemory-staleness")
    with _EARLY_LOCK:
        _EARLY[os.path.realpath(root)] = waiter


def _take_early(root: Path) -> Callable[[], tuple[str, dict[str, Staleness], _Walk] | None] | None:
    import os

    with _EARLY_LOCK:
        return _EARLY.pop(os.path.realpath(root), None)


def _early_walk(root: Path) -> tuple[str, dict[str, Staleness], _Walk] | None:
    """(key, answer, walk) for the newest stored memories at the current HEAD; None when that
    answer is already stored or nothing was stored."""
    path = _cache_path(root)
    if path is None or not gitstate.is_repo(root):
        return None
    entries = _cache_read(path)
    newest = entries[0] if entries and isinstance(entries[0], dict) else {}
    threshold, rows = newest.get("threshold"), newest.get("mems")
    if not isinstance(threshold, int) or not isinstance(rows, list):
        return None
    mems = _cleaned([MemoryFiles(str(r[0]), str(r[1]), tuple(str(f) for f in r[2])) for r in rows])
    specs = sorted({f for m in mems for f in m.files})[:MAX_PATHSPECS]
    head = gitstate.git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip()
    if not mems or not specs or not head:
        return None
    key = _cache_key(head, threshold, mems)
    if _cache_get(entries, key) is not None:
        return None
    return key, *_compute(root, mems, specs, threshold, head, newest)


# --- the walk from the previous HEAD ----------------------------------------------------------------
# When HEAD moved from H0 to H1 by commits that each have one parent (a commit, a fast-forward
# of a straight line), `git log --topo-order H1` is those commits, newest first, then exactly
# `git log --topo-order H0` (topological order puts no parent before its children and the line
# leads into H0 alone; which commits a pathspec shows depends on each commit and its parents
# only). What an answer is made of, each memory's (lines, commits) per code path in the commits
# after its last one, adds up along the walk: a memory the new commits touch gets the counts of
# the newer of them, any other keeps its H0 counts plus everything the new commits changed (keys
# in a full walk's order). So the counts kept with H0's answer and a walk of the new commits give
# H1's exactly. A merge, a rebase, another branch, a different question: the full walk.
_WALK_MAX_PATHS = 20_000  # code paths kept with an answer (beyond that: walk in full next time)
_LINE_MAX = 1000  # new commits read this way (beyond that: walk in full)


def _asked(mems: list[MemoryFiles]) -> list[list[object]]:
    return [[m.id, m.path, list(m.files)] for m in mems]


def _since(
    root: Path, mems: list[MemoryFiles], specs: list[str], threshold: int, head: str, base: object
) -> _Walk | None:
    """The walk at `head` from the state stored in `base` (see above), or None to walk in full."""
    if not isinstance(base, dict) or base.get("threshold") != threshold or base.get("mems") != _asked(mems):
        return None
    old, state = base.get("head"), base.get("walk")
    if not isinstance(old, str) or not isinstance(state, dict) or old == head:
        return None
    here = _folder_id(root / VAULT_DIR / LOCAL_DIR)
    if here is None or base.get("folder") != here:
        return None  # counts written in another folder (a copy that came with a checkout): not used
    if not _one_line(root, old, head):
        return None
    try:
        frozen0 = {str(p): (_counts(v[0]), _counts(v[1])) for p, v in state["frozen"].items()}
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return None
    want = {m.path for m in mems}
    after, commits, frozen = _changes_after(root, specs, want, threshold, f"{old}..{head}")
    for path, (lines, counts) in frozen0.items():
        if path in want and path not in frozen:  # last committed before `old`
            frozen[path] = (_plus(after, lines), _plus(commits, counts))
    return after, commits, frozen  # the totals are the new commits' only: :func:`_compute` needs none


def _folder_id(folder: Path) -> list[int] | None:
    """The local folder's device and inode: counts are used only in the folder that wrote them."""
    import os

    try:
        st = os.lstat(folder)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


def _one_line(root: Path, old: str, head: str) -> bool:
    """Whether `head` descends from `old` through commits with one parent each (at most _LINE_MAX)."""
    try:
        out = gitstate.git(
            root, "rev-list", "--parents", f"--max-count={_LINE_MAX + 1}", f"{old}..{head}", "--", check=False
        )
    except gitstate.GitError:
        return False
    rows = [line.split() for line in out.splitlines()]
    if not rows or len(rows) > _LINE_MAX:
        return False
    expect = head
    for row in rows:
        if len(row) != 2 or row[0] != expect:
            return False
        expect = row[1]
    return expect == old


def _counts(raw: object) -> _Counts:
    if not isinstance(raw, dict):
        raise TypeError("not a mapping")
    return {str(k): int(v) for k, v in raw.items()}


def _plus(first: _Counts, then: _Counts) -> _Counts:
    """`first` with `then` added, keys in the order a walk meets them (first's, then the new)."""
    out = dict(first)
    for key, n in then.items():
        out[key] = out.get(key, 0) + n
    return out


def _cleaned(mems: list[MemoryFiles]) -> list[MemoryFiles]:
    """The memories with only their git-usable `files:` entries; those left with none dropped."""
    cleaned = [MemoryFiles(m.id, m.path, tuple(c for c in map(_clean, m.files) if c)) for m in mems]
    return [m for m in cleaned if m.files]


def _changes_after(root: Path, specs: list[str], want: set[str], threshold: int, revs: str = "HEAD") -> _Walk:
    """(lines and commits per code path over the whole walk, memory path -> (lines, commits) per
    code path in commits newer than that memory's last commit)."""
    # commits after each memory's last commit: accumulate per code path while walking newest-first
    after: _Counts = {}  # code path -> lines in commits newer than the current position
    commits_after: _Counts = {}
    frozen: dict[str, tuple[_Counts, _Counts]] = {}  # memory path -> snapshot
    for _commit, entries in _stream_log(root, specs, want, revs):
        code = [(p, n) for p, n in entries if not p.startswith(VAULT_DIR + "/")]
        mem_paths = [p for p, _ in entries if p in want and p not in frozen]
        for p in mem_paths:  # the memory's last commit: changes seen so far came after it
            frozen[p] = (dict(after), dict(commits_after))
        for p, n in code:
            after[p] = after.get(p, 0) + (threshold if n < 0 else n)
            commits_after[p] = commits_after.get(p, 0) + 1
    return after, commits_after, frozen


def _existing(root: Path, specs: list[str], rev: str = "HEAD") -> set[str]:
    """The paths under `specs` that exist at `rev` (empty when git cannot tell)."""
    try:
        out = gitstate.git(root, "ls-tree", "-r", "-z", "--name-only", rev, "--", *specs, check=False)
        return {p for p in out.split("\0") if p}
    except gitstate.GitError:
        return set()


def _staleness(
    m: MemoryFiles,
    lines_after: _Counts,
    commits: _Counts,
    spec_paths: dict[str, list[str]],
    spec_exists: dict[str, bool],
) -> Staleness:
    """What changed under each of the memory's files after its last commit, and what is gone."""
    st = Staleness(m.id, m.path)
    commit_count = 0
    for spec in m.files:
        hit = {p: lines_after[p] for p in spec_paths.get(spec, ()) if p in lines_after}
        if not hit:
            continue
        for p, n in hit.items():
            st.changed[p] = st.changed.get(p, 0) + n
            commit_count = max(commit_count, commits.get(p, 0))
        if not spec_exists.get(spec, True):
            st.missing.append(spec)
    st.lines = sum(st.changed.values())
    st.commits = commit_count
    return st


def for_indexed(
    root: Path, mems: Iterable[object], raw_config: dict[str, object] | None = None
) -> dict[str, Staleness]:
    """Staleness of IndexedMemory-like objects (id, path, files); never raises."""
    try:
        items = [
            MemoryFiles(m.id, m.path, tuple(m.files))  # type: ignore[attr-defined]
            for m in mems
            if getattr(m, "files", None)
        ]
        return compute(root, items, threshold_from(raw_config))
    except Exception:
        return {}
