"""`ccmemory doctor`: what this repository's ccmemory is configured to use, and whether it works.

Each check runs on its own and reports a problem as a line (never a traceback): the index backend
and its location, for Neo4j the server's version, edition and schema, the index counts and invalid
files, the embedder, the capture LLM provider and the git hooks. Exit status 1 when something
needed is broken (no vault, bad settings, the index unreachable or its schema incomplete).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import click

from ccmemory.surfaces.cli.common import emit_json


def _expected_schema() -> tuple[list[str], list[str]]:
    """Constraint and index names the Neo4j backend creates on connect (from its schema list)."""
    from ccmemory.index.neo4j.schema import _SCHEMA  # the backend's own list: one source of truth

    constraints: list[str] = []
    indexes: list[str] = []
    for stmt in _SCHEMA:
        m = re.match(r"CREATE (CONSTRAINT|INDEX|FULLTEXT INDEX) (\w+)", stmt)
        if m:
            (constraints if m.group(1) == "CONSTRAINT" else indexes).append(m.group(2))
    return constraints, indexes


def _index_report(config: Any, vault: Any) -> dict[str, Any]:
    from ccmemory.index import open_index
    from ccmemory.index.base import IndexUnavailable

    out: dict[str, Any] = {"ok": False}
    try:
        index = open_index(config, vault.dir)
    except IndexUnavailable as exc:
        out["error"] = str(exc)
        return out
    except Exception as exc:  # a driver or database problem we did not foresee: still a line
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    try:
        out["location"] = index.location
        info = index.server_info()
        if info is not None:
            want_cons, want_idx = _expected_schema()
            have_idx = info["indexes"]
            missing = [n for n in want_cons if n not in info["constraints"]]
            missing += [n for n in want_idx if n not in have_idx]
            not_online = sorted(n for n, v in have_idx.items() if v.get("state") != "ONLINE")
            out["server"] = {"version": info["version"], "edition": info["edition"]}
            out["schema"] = {
                "ok": not missing and not not_online,
                "constraints": info["constraints"],
                "indexes": {n: v for n, v in have_idx.items()},
                "missing": missing,
                "not_online": not_online,
                "vector_index": "embedding_vectors" in have_idx,
            }
            if index.scope is not None:
                out["scope"] = index.scope
        stats = index.stats(config.project)
        out["counts"] = {k: stats[k] for k in ("memories", "by_type", "by_status", "relations", "vectors")}
        out["invalid_files"] = [
            {"path": p.path, "line": p.line, "reason": p.reason} for p in index.file_problems(config.project)
        ]
        out["ok"] = out.get("schema", {}).get("ok", True)
    except IndexUnavailable as exc:
        out["error"] = str(exc)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        with contextlib.suppress(Exception):  # closing a dead connection: nothing more to say
            index.close()
    return out


def _embedder_report(config: Any) -> dict[str, Any]:
    from ccmemory.retrieval.embed import get_embedder

    try:
        # check=True loads the local model now, so a missing or corrupt file shows here
        emb = get_embedder(choice=config.embedder, check=True)
    except Exception as exc:
        return {"available": False, "reason": f"{type(exc).__name__}: {exc}"}
    report: dict[str, Any] = {"available": True, "name": emb.name, "dim": emb.dim}
    kernel = getattr(emb, "kernel", None)  # the local model's CPU path (issue 32)
    if kernel in ("u8s8", "u8u8"):
        from ccmemory.retrieval.int8graph import kernel_description

        report["cpu_path"] = {"kernel": kernel, "detail": kernel_description(kernel == "u8u8")}
    elif kernel == "float":
        report["cpu_path"] = {"kernel": "float", "detail": "float path (integer=False)"}
    return report


def _config_report(root: Path, config: Any) -> dict[str, Any]:
    """config.yaml against its schema, and a main_branch that names no branch."""
    from ccmemory.core import gitstate
    from ccmemory.core.config import config_problems

    problems = [p.render() for p in config_problems(root)]
    branch = config.main_branch
    if branch and gitstate.is_repo(root):
        known = gitstate.git(
            root, "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes", check=False
        ).split()
        if branch not in known and not any(k.endswith(f"/{branch}") for k in known):
            problems.append(
                f".ccmemory/config.yaml: main_branch: no branch {branch!r} in this repository "
                "(every memory stays developmental until it exists)"
            )
    return {"path": str(root / ".ccmemory" / "config.yaml"), "problems": problems}


def _capture_report(root: Path) -> dict[str, Any]:
    try:
        from ccmemory.features.capture.providers.choose import describe

        return describe(root)
    except Exception as exc:
        return {"provider": None, "reason": f"{type(exc).__name__}: {exc}"}


def _hooks_report(root: Path) -> dict[str, Any]:
    from ccmemory.core import gitstate

    try:
        if not gitstate.is_repo(root):
            return {"git": False, "installed": {}, "note": "not a git repository"}
        from ccmemory.features.lifecycle.githooks import HOOK_NAMES, MARKER, hooks_dir

        folder = hooks_dir(root)
        installed = {}
        for name in HOOK_NAMES:
            path = folder / name
            try:
                installed[name] = path.is_file() and MARKER.encode() in path.read_bytes()[:4096]
            except OSError:
                installed[name] = False
        return {"git": True, "dir": str(folder), "installed": installed}
    except Exception as exc:
        return {"git": None, "installed": {}, "note": f"{type(exc).__name__}: {exc}"}


def gather(start: Path | None = None) -> tuple[dict[str, Any], bool]:
    """The report and whether everything needed works."""
    from ccmemory import __version__
    from ccmemory.core.config import load_config
    from ccmemory.core.vault import Vault, VaultNotFound

    report: dict[str, Any] = {"version": __version__}
    try:
        vault = Vault.open(start)
    except VaultNotFound as exc:
        report["error"] = str(exc)
        return report, False
    report["root"] = str(vault.root)
    try:
        config = load_config(vault.root)
    except ValueError as exc:
        report["error"] = str(exc)
        return report, False
    report.update(
        project=config.project,
        user_id=config.user_id,
        backend=config.backend,
        location=config.neo4j_uri if config.backend == "neo4j" else str(vault.dir / "local" / "index.db"),
    )
    if config.backend == "neo4j":
        report["neo4j_user"] = config.neo4j_user
        report["neo4j_password_set"] = bool(config.neo4j_password)
    report["index"] = _index_report(config, vault)
    report["embedder"] = _embedder_report(config)
    report["vector_cache"] = _vector_cache_report()
    report["config"] = _config_report(vault.root, config)
    report["capture"] = _capture_report(vault.root)
    report["capture_review"] = _precision_report(vault, config)
    report["git_hooks"] = _hooks_report(vault.root)
    report["cross_project"] = _cross_report(config, vault)
    # a config problem is a setup problem (doctor's); invalid memory files are listed, and are
    # `check`'s to fail on
    return report, bool(report["index"]["ok"]) and not report["config"]["problems"]


def _precision_report(vault: Any, config: Any) -> dict[str, Any]:
    """Each memory type's capture threshold with its false-positive rate from review-queue
    dismissals (ccmemory.features.capture.precision)."""
    from ccmemory.app.service import Service
    from ccmemory.core.telemetry import DB, Store
    from ccmemory.features.analysis import all_memories
    from ccmemory.features.capture import settings as capture_settings
    from ccmemory.features.capture.precision import rates

    try:
        dismissed: set[str] = set()
        if (vault.dir / "local" / DB).is_file():  # never created by doctor
            store = Store(vault.dir / "local")
            try:
                dismissed = store.dismissed()
            finally:
                store.close()
        with Service(vault, config) as svc:
            mems = all_memories(svc)
        return rates(mems, dismissed, capture_settings.load(vault.root).min_confidence)
    except Exception as exc:  # the index report above already names an unreachable index
        return {"error": f"{type(exc).__name__}: {exc}"}


def _cross_report(config: Any, vault: Any) -> dict[str, Any]:
    """Related projects (related_to) and the personal vault (docs/cross-project.md)."""
    from ccmemory.app.service import Service
    from ccmemory.features.crossproject import status_report

    try:
        with Service(vault, config) as svc:
            return status_report(svc)
    except Exception as exc:  # the index report above already names an unreachable index
        return {"related": [], "notices": [f"{type(exc).__name__}: {exc}"], "personal_vault": {}}


def _text(r: dict[str, Any]) -> list[str]:
    lines = [f"ccmemory {r['version']}"]
    if "root" not in r or "backend" not in r:
        lines.append(f"  PROBLEM {r.get('error')}")
        return lines
    lines += [
        f"  repository   {r['root']}",
        f"  project      {r['project']}",
        f"  user id      {r['user_id'] or '(unknown: set CCMEMORY_USER_ID or git user.email)'}",
        f"  backend      {r['backend']}",
        f"  location     {r['location']}",
    ]
    lines += _index_text(r["index"])
    lines += _embedder_text(r["embedder"])
    lines += _vector_cache_text(r["vector_cache"])
    conf = r.get("config") or {"problems": []}
    lines.append(
        f"  config       {len(conf['problems']) or 'no'} problem(s)" + (":" if conf["problems"] else "")
    )
    lines += [f"    {p}" for p in conf["problems"]]
    cap = r["capture"]
    lines.append(f"  capture LLM  {cap.get('provider') or 'unknown'}: {cap.get('reason')}")
    lines += _precision_text(r.get("capture_review") or {})
    lines += _hooks_text(r["git_hooks"])
    lines += _cross_text(r.get("cross_project") or {})
    return lines


def _precision_text(rep: dict[str, Any]) -> list[str]:
    from ccmemory.features.capture.precision import text_lines

    if rep.get("error"):
        return [f"  thresholds   PROBLEM {rep['error']}"]
    if not rep.get("by_type"):
        return ["  thresholds   no automatic capture yet (capture.min_confidence: none set)"]
    head = "  thresholds   capture.min_confidence, false positives = dismissed / (dismissed + accepted):"
    return [head] + [f"    {line}" for line in text_lines(rep)]


def _index_text(idx: dict[str, Any]) -> list[str]:
    lines = []
    if idx.get("error"):
        lines.append(f"  index        PROBLEM {' '.join(idx['error'].split())}")
    if "server" in idx:
        lines += _server_text(idx)
    if "counts" in idx:
        c = idx["counts"]
        status = ", ".join(f"{k} {v}" for k, v in c["by_status"].items()) or "none"
        lines.append(
            f"  index        {c['memories']} memories ({status}), {c['relations']} relations, "
            f"{c['vectors']} vectors"
        )
        bad = idx["invalid_files"]
        lines.append(f"  invalid      {len(bad)} file(s)" + (":" if bad else ""))
        lines += [f"    {b['path']}:{b['line'] or 1}: {b['reason']}" for b in bad]
    return lines


def _server_text(idx: dict[str, Any]) -> list[str]:
    """The Neo4j server and its schema (constraints, indexes, what is missing or not online)."""
    lines = [f"  server       Neo4j {idx['server']['version']} {idx['server']['edition']}"]
    sch = idx["schema"]
    state = "ok" if sch["ok"] else "PROBLEM"
    lines.append(
        f"  schema       {state}: {len(sch['constraints'])} constraints, {len(sch['indexes'])} indexes"
        + (", vector index present" if sch["vector_index"] else ", no vector index yet")
    )
    if sch["missing"]:
        lines.append(f"               missing: {', '.join(sch['missing'])}")
    if sch["not_online"]:
        lines.append(f"               not online: {', '.join(sch['not_online'])}")
    return lines


def _embedder_text(emb: dict[str, Any]) -> list[str]:
    if not emb.get("available"):
        return [f"  embedder     unavailable: {emb.get('reason')}"]
    lines = [f"  embedder     {emb['name']} ({emb['dim']} dimensions)"]
    if emb.get("cpu_path"):
        lines.append(f"  cpu path     {emb['cpu_path']['detail']}")
    return lines


def _vector_cache_report() -> dict[str, Any]:
    from ccmemory.retrieval import vectorcache

    cache = vectorcache.shared()
    return {"enabled": False} if cache is None else {"enabled": True, **cache.stats()}


def _vector_cache_text(vc: dict[str, Any]) -> list[str]:
    if not vc.get("enabled"):
        return ["  vectors      shared cache off (CCMEMORY_VECTOR_CACHE)"]
    text = (
        f"shared cache {vc['path']}: {vc.get('vectors', 0)} vectors, {vc.get('mb', 0)} of {vc['max_mb']} MB"
    )
    if vc.get("problem"):
        text += f" (problem: {vc['problem']})"
    return [f"  vectors      {text}"]


def _hooks_text(hooks: dict[str, Any]) -> list[str]:
    if not hooks.get("installed"):
        return [f"  git hooks    {hooks.get('note')}"]
    have = [n for n, ok in hooks["installed"].items() if ok]
    missing = [n for n, ok in hooks["installed"].items() if not ok]
    text = f"installed: {', '.join(have) or 'none'}"
    if missing:
        text += f"; missing: {', '.join(missing)}"
    return [f"  git hooks    {text}"]


def _cross_text(cross: dict[str, Any]) -> list[str]:
    """Related projects, their notices and the personal vault."""
    lines = []
    for rel in cross.get("related", []):
        where = f"{rel['memories']} memories at {rel['source']}"
        lines.append(f"  related      {rel['project']} ({rel['relation']}): {where}")
    lines += [f"  related      note: {' '.join(n.split())}" for n in cross.get("notices", [])]
    pv = cross.get("personal_vault") or {}
    if pv:
        state = f"{pv['memory_files']} memory file(s)" if pv["exists"] else "not created yet"
        lines.append(f"  personal     {pv['path']} ({state})")
    return lines


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def doctor_cmd(as_json: bool) -> None:
    """Report version, repository, backend, server, schema, index counts, embedder, capture (and each
    memory type's capture threshold beside its false-positive rate from review dismissals), hooks.
    Exits 1 when the index does not work or config.yaml has a problem (invalid memory files are
    listed; `check` exits 1 for them)."""
    report, ok = gather()
    if as_json:
        emit_json({**report, "ok": ok})
    else:
        for line in _text(report):
            click.echo(line)
    if not ok:
        raise SystemExit(1)
