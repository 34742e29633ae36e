"""Read memory files as they stand at a revision, without touching the working tree.

`ls-tree` lists the blobs under `.ccmemory/` at a revision (one call) and one `git cat-file
--batch` process streams their contents, so reading a whole vault at a revision costs two git
processes whatever its size.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ccmemory.core.gitstate import GitError, git
from ccmemory.core.layout import VAULT_DIR
from ccmemory.core.model import FOLDER_TO_TYPE, Memory
from ccmemory.core.vault import MAX_FILE_BYTES, MemoryFileError, decode, parse_text
from ccmemory.index.base import FileRecord


@dataclass(frozen=True)
class TreeEntry:
    path: str  # repo-relative POSIX path
    mode: str
    oid: str


def is_memory_rel(rel: str) -> bool:
    """The same rule as `Vault.iter_paths`: `.ccmemory/<type folder>/**/<name>.md`, no dot-names."""
    parts = rel.split("/")
    return (
        len(parts) >= 3
        and parts[0] == VAULT_DIR
        and parts[1] in FOLDER_TO_TYPE
        and parts[-1].endswith(".md")
        and not any(p.startswith(".") for p in parts[1:])
    )


def resolve_commit(root: Path, rev: str) -> str:
    out = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}", check=False)
    if not out.strip():
        from ccmemory.core.gitstate import is_repo

        if not is_repo(root):
            raise GitError(f"{root} is not a git repository: comparing revisions needs one (git init)")
        raise GitError(f"{rev!r} is not a commit in this repository")
    return out.strip()


def memory_tree(root: Path, rev: str) -> dict[str, TreeEntry]:
    """rel path -> blob entry of every memory file at `rev` (one git call)."""
    out = git(root, "ls-tree", "-r", "-z", "--full-tree", rev, "--", VAULT_DIR + "/")
    entries: dict[str, TreeEntry] = {}
    for item in out.split("\0"):
        if not item:
            continue
        meta, _, path = item.partition("\t")
        mode, kind, oid = meta.split()
        if kind == "blob" and is_memory_rel(path):
            entries[path] = TreeEntry(path, mode, oid)
    return entries


def read_blobs(root: Path, oids: list[str]) -> dict[str, bytes]:
    """oid -> content for every oid, through one `git cat-file --batch` process."""
    if not oids:
        return {}
    unique = list(dict.fromkeys(oids))
    proc = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input=("\n".join(unique) + "\n").encode(),
        capture_output=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise GitError(f"git cat-file --batch: {proc.stderr.decode(errors='replace').strip()}")
    data = proc.stdout
    out: dict[str, bytes] = {}
    pos = 0
    for oid in unique:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].decode()
        pos = nl + 1
        parts = header.split()
        if len(parts) == 2 and parts[1] == "missing":
            continue
        size = int(parts[2])
        out[oid] = data[pos : pos + size]
        pos += size + 1  # content is followed by a newline
    return out


def record_from_bytes(rel: str, data: bytes, parsed_as: tuple[str, Memory] | None = None) -> FileRecord:
    """Like `sync.load_record`, for bytes read from git (mtime is 0: there is no file).
    `parsed_as`: (sha256, memory) of this path's bytes parsed already (the working tree's file):
    reused when the digest is the same, as parsing the same text at the same path gives it."""
    digest = hashlib.sha256(data).hexdigest()
    if len(data) > MAX_FILE_BYTES:
        return FileRecord(rel, 0, len(data), digest, None, "file is larger than 1 MB", None)
    if b"\x00" in data[:8192]:
        return FileRecord(rel, 0, len(data), digest, None, "binary file (NUL bytes)", None)
    if parsed_as is not None and parsed_as[0] == digest:
        return FileRecord(rel, 0, len(data), digest, parsed_as[1])
    try:
        parsed = parse_text(decode(data, rel), rel)
    except MemoryFileError as exc:
        return FileRecord(rel, 0, len(data), digest, None, exc.reason, exc.line)
    return FileRecord(rel, 0, len(data), digest, parsed.memory)


def records_at(
    root: Path, rev: str, parsed: Mapping[str, tuple[str, Memory]] | None = None
) -> dict[str, FileRecord]:
    """Every memory file at `rev`, parsed (bad files carry their error). Two git processes.
    `parsed`: rel -> (sha256, memory) already parsed (the working tree's files); a file whose
    bytes at `rev` have that digest is not parsed again (at 100k memories a parse of every
    file is tens of seconds, and a pull request leaves almost all of them unchanged)."""
    tree = memory_tree(root, rev)
    blobs = read_blobs(root, [e.oid for e in tree.values()])
    known = parsed or {}
    return {
        rel: record_from_bytes(rel, blobs.get(e.oid, b""), known.get(rel)) for rel, e in sorted(tree.items())
    }


def merge_base(root: Path, a: str, b: str) -> str | None:
    out = git(root, "merge-base", a, b, check=False).strip()
    return out or None


def text_at(root: Path, rev: str, rel: str) -> str | None:
    out = subprocess.run(
        ["git", "cat-file", "blob", f"{rev}:{rel}"], cwd=root, capture_output=True, timeout=30
    )
    if out.returncode != 0:
        return None
    return out.stdout.decode("utf-8-sig", errors="replace").replace("\r\n", "\n")
