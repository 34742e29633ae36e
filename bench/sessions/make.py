"""Generate the session-history benchmark transcripts (issue 28) from hand-written specs.

The content of each session lives in ``dev_spec.py`` / ``heldout_spec.py``; this module only turns
it into Claude Code JSONL records of the real shape (see /work/shared/fixtures/transcripts/SCHEMA.md):
one record per content block, assistant blocks sharing ``message.id``, tool results as user records
with ``toolUseResult`` and ``sourceToolAssistantUUID``. Run: ``python bench/sessions/make.py``.
"""

from __future__ import annotations

import importlib
import json
import sys
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NS = uuid.UUID("6f1c2a52-9b1e-4d0e-a7f1-28c0ffee0028")


def _id(*parts: str) -> str:
    return str(uuid.uuid5(NS, "/".join(parts)))


def _tok(prefix: str, *parts: str) -> str:
    return prefix + uuid.uuid5(NS, "/".join(parts)).hex[:24]


class _Writer:
    def __init__(self, sid: str, cwd: str, branch: str, start: datetime) -> None:
        self.sid, self.cwd, self.branch, self.t = sid, cwd, branch, start
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.msg_id = ""
        self.req_id = ""
        self.n = 0

    def _env(self, kind: str, seconds: float) -> dict[str, Any]:
        self.n += 1
        self.t += timedelta(seconds=seconds)
        uid = _id(self.sid, str(self.n))
        rec = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": "2.0.31",
            "gitBranch": self.branch,
            "type": kind,
            "uuid": uid,
            "timestamp": self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.n * 37 % 1000:03d}Z",
        }
        self.parent = uid
        return rec

    def user(self, text: str) -> None:
        rec = self._env("user", 40 + 13 * (self.n % 7))
        rec["message"] = {"role": "user", "content": text}
        self.records.append(rec)
        self.msg_id = ""

    def _assistant(self, block: dict[str, Any]) -> dict[str, Any]:
        if not self.msg_id:
            self.msg_id = _tok("msg_01", self.sid, str(self.n))
            self.req_id = _tok("req_011C", self.sid, str(self.n))
        rec = self._env("assistant", 3 + self.n % 5)
        rec["message"] = {
            "id": self.msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 4,
                "cache_creation_input_tokens": 812 + self.n,
                "cache_read_input_tokens": 15230 + 97 * self.n,
                "output_tokens": 120 + self.n,
                "service_tier": "standard",
            },
        }
        rec["requestId"] = self.req_id
        self.records.append(rec)
        return rec

    def text(self, text: str) -> None:
        self.msg_id = ""
        self._assistant({"type": "text", "text": text})

    def tool(self, name: str, inp: dict[str, Any], out: str, result: Any, error: bool) -> None:
        tid = _tok("toolu_01", self.sid, str(self.n), name)
        arec = self._assistant({"type": "tool_use", "id": tid, "name": name, "input": inp})
        rec = self._env("user", 1 + len(out) % 4)
        block: dict[str, Any] = {"tool_use_id": tid, "type": "tool_result", "content": out}
        if error:
            block["is_error"] = True
        rec["message"] = {"role": "user", "content": [block]}
        rec["toolUseResult"] = result
        rec["sourceToolAssistantUUID"] = arec["uuid"]
        self.records.append(rec)
        self.msg_id = ""


def _numbered(content: str) -> str:
    return "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(content.splitlines(), 1))


def _step(w: _Writer, cwd: str, step: tuple[Any, ...]) -> None:
    kind = step[0]
    if kind == "u":
        w.user(step[1])
    elif kind == "a":
        w.text(step[1])
    elif kind == "bash":
        cmd, out = step[1], step[2]
        err = len(step) > 3 and bool(step[3])
        res = {
            "stdout": "" if err else out,
            "stderr": out if err else "",
            "interrupted": False,
            "isImage": False,
        }
        text = f"Error: Exit code 1\n{out}" if err else out
        w.tool(
            "Bash", {"command": cmd, "description": step[4] if len(step) > 4 else cmd[:40]}, text, res, err
        )
    elif kind == "read":
        path = f"{cwd}/{step[1]}"
        content = step[2]
        n = len(content.splitlines())
        res = {
            "type": "text",
            "file": {"filePath": path, "content": content, "numLines": n, "startLine": 1, "totalLines": n},
        }
        w.tool("Read", {"file_path": path}, _numbered(content), res, False)
    elif kind == "edit":
        path = f"{cwd}/{step[1]}"
        res = {
            "filePath": path,
            "oldString": step[2],
            "newString": step[3],
            "replaceAll": False,
            "userModified": False,
        }
        out = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{_numbered(step[3])}"
        w.tool("Edit", {"file_path": path, "old_string": step[2], "new_string": step[3]}, out, res, False)
    elif kind == "write":
        path = f"{cwd}/{step[1]}"
        res = {"type": "create", "filePath": path, "content": step[2], "structuredPatch": []}
        w.tool(
            "Write",
            {"file_path": path, "content": step[2]},
            f"File created successfully at: {path}",
            res,
            False,
        )
    elif kind == "grep":
        res = {"mode": "content", "numFiles": step[2].count("\n") + 1, "content": step[2]}
        w.tool("Grep", {"pattern": step[1], "output_mode": "content", "-n": True}, step[2], res, False)
    else:
        raise ValueError(f"unknown step kind {kind!r}")


def build(split: str) -> int:
    """Write ``<split>/transcripts/*.jsonl`` from ``<split>_spec.py``; return the session count."""
    sys.path.insert(0, str(HERE))
    spec = importlib.import_module(f"{split}_spec")
    out_dir = HERE / split / "transcripts"
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.jsonl"):
        old.unlink()
    for slug, when, branch, steps in spec.SESSIONS:
        sid = _id(split, slug)
        w = _Writer(sid, spec.CWD, branch, datetime.fromisoformat(when))
        for step in steps:
            _step(w, spec.CWD, step)
        body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in w.records)
        (out_dir / f"{sid}.jsonl").write_text(body, encoding="utf-8")
    slugs = {slug: _id(split, slug) for slug, *_ in spec.SESSIONS}
    lines = [
        json.dumps({"query": q, "session": slugs[slug], "kind": kind}, ensure_ascii=False)
        for q, slug, kind in spec.QUERIES
    ]
    (HERE / split / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(spec.SESSIONS)


if __name__ == "__main__":
    for name in sys.argv[1:] or ["dev", "heldout"]:
        print(name, build(name), "sessions")
