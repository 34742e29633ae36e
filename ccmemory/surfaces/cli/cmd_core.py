"""init, new, show, check, reindex."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ccmemory.app.vaultinit import init_vault
from ccmemory.core.model import RELATION_TYPES, TYPES, Memory, Relation, is_provisional
from ccmemory.surfaces.cli.common import (
    FiniteRange,
    Progress,
    display_path,
    emit_json,
    notice,
    resolve_or_exit,
    service,
)
from ccmemory.surfaces.cli.errors import cli_error

TYPE_CHOICE = click.Choice(sorted(TYPES), case_sensitive=False)


def _in_git_dir(root: Path) -> bool:
    """True in a bare repository or inside a `.git` folder, where init would write into git's data."""
    from ccmemory.core import gitstate

    if not root.is_dir():
        return False
    try:
        out = gitstate.git(root, "rev-parse", "--is-inside-git-dir", check=False, timeout=10)
    except gitstate.GitError:
        return False
    return out.strip() == "true"


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--no-git-hooks", is_flag=True, help="Do not install the reindexing git hooks.")
def init(path: Path | None, no_git_hooks: bool) -> None:
    """Set up .ccmemory/ in a repository (default: the git top level of the current folder).

    Creates .ccmemory/README.md and config.yaml, the git-ignored .ccmemory/local/ folder for the
    index and logs, and builds the index. Safe to run again.

    In a git repository it also installs post-merge, post-checkout, post-rewrite and post-commit hooks that
    reindex in the background (honouring core.hooksPath and chaining existing hooks).
    """
    from ccmemory.core import gitstate

    root = (path or Path.cwd()).resolve()
    if _in_git_dir(root):
        bare = gitstate.git(root, "rev-parse", "--is-bare-repository", check=False, timeout=10).strip()
        raise click.ClickException(
            f"{root} is {'a bare git repository' if bare == 'true' else 'inside a .git folder'}: "
            "ccmemory needs a working tree (run `ccmemory init` in a clone or a `git worktree`)"
        )
    if path is None and gitstate.is_repo(root):
        root = Path(gitstate.git(root, "rev-parse", "--show-toplevel").strip())
    root.mkdir(parents=True, exist_ok=True)
    for line in init_vault(root):
        click.echo(line)
    if not no_git_hooks and gitstate.is_repo(root):
        from ccmemory.features.lifecycle.githooks import install

        for line in install(root):
            click.echo(line)
    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault

    with Service(Vault(root)) as svc:
        report = svc.reindex()
    click.echo(f"ccmemory is ready in {root} ({report.added} memories indexed)")
    if not gitstate.is_repo(root):
        notice(OUTSIDE_GIT)
    _record_command()


def _record_command() -> None:
    """Write this install's `ccmemory` path to the personal folder (`bin-path`), where the Claude
    Code plugin looks when `ccmemory` is not on PATH (plugin/scripts/find.sh): a clone's .venv
    works without activating it. Best effort: a read-only home only costs the plugin that shortcut."""
    import contextlib

    from ccmemory.core.atomic import atomic_write
    from ccmemory.core.config import personal_home

    exe = Path(sys.executable).parent / "ccmemory"
    if not exe.is_file():
        return
    with contextlib.suppress(OSError):
        home = personal_home()
        home.mkdir(parents=True, exist_ok=True)
        atomic_write(home / "bin-path", f"{exe}\n".encode(), overwrite=True)


OUTSIDE_GIT = (
    "this folder is not a git repository: memories work, but every one counts as curated, and "
    "promotion (a merge to main), review in pull requests and the git hooks do not apply "
    "(`git init` first to get them)"
)


def _parse_field(values: tuple[str, ...]) -> dict[str, Any]:
    import yaml

    out: dict[str, Any] = {}
    for item in values:
        if "=" not in item:
            raise click.BadParameter(f"{item!r}: use key=value", param_hint="--field")
        key, raw = item.split("=", 1)
        try:
            out[key.strip()] = yaml.safe_load(raw) if raw.strip().startswith("[") else raw
        except yaml.YAMLError:
            out[key.strip()] = raw
    return out


@click.command()
@click.argument("mtype", metavar="TYPE", type=TYPE_CHOICE)
@click.argument("title")
@click.option("--body", "-b", help="The memory's text (markdown). '-' reads it from stdin.")
@click.option("--topic", "-t", "topics", multiple=True, help="A topic (repeatable).")
@click.option(
    "--file",
    "-f",
    "files",
    multiple=True,
    help="A code path it concerns (repeatable): relative to the current folder or absolute, stored "
    "relative to the repository root; a glob (src/**/*.tsx, relative to the root) or a folder "
    "(infra/) is kept as one. A path outside the repository is refused.",
)
@click.option("--supersedes", "-s", multiple=True, help="Id of a memory this one replaces (repeatable).")
@click.option(
    "--relation",
    "-r",
    "relations",
    multiple=True,
    metavar="TYPE:ID[:REASON]",
    help=f"A typed link to another memory ({', '.join(RELATION_TYPES)}).",
)
@click.option(
    "--field",
    "fields",
    multiple=True,
    metavar="KEY=VALUE",
    help="A type-specific field, e.g. --field rationale='XSS can read localStorage'.",
)
@click.option("--confidence", type=FiniteRange(0, 1), default=None)
@click.option(
    "--source", type=click.Choice(["manual", "explicit", "llm", "rules", "import"]), default="manual"
)
@click.option("--json", "as_json", is_flag=True, help="Print id, path and status as JSON.")
@click.option(
    "--global",
    "global_",
    is_flag=True,
    help="Write it to your personal vault ($CCMEMORY_HOME or ~/.config/ccmemory): a preference, "
    "fact or correction that applies in every project.",
)
@click.option(
    "--applies-to",
    "applies_to",
    multiple=True,
    metavar="PROJECT",
    help="Another project this memory also applies to (repeatable; shown in its context and search).",
)
def new(
    mtype: str,
    title: str,
    body: str | None,
    topics: tuple[str, ...],
    files: tuple[str, ...],
    supersedes: tuple[str, ...],
    relations: tuple[str, ...],
    fields: tuple[str, ...],
    confidence: float | None,
    source: str,
    as_json: bool,
    global_: bool = False,
    applies_to: tuple[str, ...] = (),
) -> None:
    """Write one new memory file and print its path.

    TYPE is one of: decision, correction, preference, exception, insight, question,
    failed_approach, fact, gotcha, pattern, reference, concept, hypothesis, knowledge_gap
    (--field name=value sets a type's own field). Without --body, $VISUAL/$EDITOR opens
    with the type's guidance (as a comment, never stored) when run in a terminal; otherwise the
    body is left empty. --relation and --supersedes targets (id, 4+ character prefix, path or
    slug) must name one existing memory; otherwise nothing is written. Text is redacted
    before anything else sees it. Example:

      ccmemory new decision "Use httpOnly cookies" --topic auth --body "Tokens live in cookies."
    """
    from ccmemory.app.draft import DraftError
    from ccmemory.core.templates import load_template

    mtype = mtype.lower()
    if body == "-":
        body = sys.stdin.read()
    defaults, scaffold = load_template(mtype)
    if body is None:
        body = _body_from_editor(mtype, title, scaffold)
    own = {k: v for k, v in defaults.items() if v not in ("", [], None)}
    own.update(_parse_field(fields))
    rels: list[Relation] = []
    for spec in relations:
        parts = spec.split(":", 2)
        if len(parts) < 2 or parts[0].upper() not in RELATION_TYPES:
            raise click.BadParameter(
                f"{spec!r}: use TYPE:ID[:REASON] with TYPE one of {', '.join(RELATION_TYPES)}",
                param_hint="--relation",
            )
        rels.append(Relation(parts[0].upper(), parts[1], parts[2] if len(parts) > 2 else None))
    with service() as svc:
        try:  # the one builder: redacted, validated, link targets resolved or refused (draft.py)
            memory = svc.draft(
                mtype,
                title,
                body=body,
                topics=topics,
                files=files,
                cwd=Path.cwd(),  # a relative --file is relative to where the command runs
                relations=rels,
                supersedes=supersedes,
                confidence=confidence,
                source=source,
                fields=own,
                applies_to=applies_to,
            )
        except DraftError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            raise click.ClickException(f"{exc.message}{hint}; no memory written") from None
        from ccmemory.features.capture.linking import link_explicit

        linked = link_explicit(svc, memory)  # never dropped: close memories are linked instead
        try:
            rec = _record_global(memory, svc.vault.root) if global_ else svc.record(memory)
        except ValueError as exc:
            raise cli_error(exc) from None
        if rec.notice:
            notice(rec.notice)
        for line in linked:
            notice(f"linked: {line}")
        if not global_:
            from ccmemory.core import gitstate

            if not gitstate.is_repo(svc.vault.root):
                notice(OUTSIDE_GIT)
        if as_json:
            emit_json({"id": memory.id, "path": rec.path, "status": rec.status})
        else:
            click.echo(display_path(svc.vault.root, rec.path))


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _body_from_editor(mtype: str, title: str, guidance: str) -> str:
    """`new` without --body: in a terminal, the body typed in $VISUAL/$EDITOR (the template's
    guidance is a comment there and is removed); otherwise (scripts, hooks, CI) an empty body.
    Template text never becomes the memory's content."""
    if not _interactive():
        return ""
    from ccmemory.core.vault import strip_comments

    header = f"<!-- {mtype}: {' '.join(title.split())} -->\n"
    edited = click.edit(header + (guidance + "\n" if guidance else "") + "\n", extension=".md")
    if edited is None:
        raise click.ClickException("the editor was closed without saving: no memory written")
    return strip_comments(edited).strip()


def _record_global(memory: Memory, project: Path) -> Any:
    """`new --global`: the memory goes to the personal vault (ccmemory/personal.py)."""
    from ccmemory.app.service import Service
    from ccmemory.features import personal

    if memory.type not in personal.CONTEXT_TYPES:
        raise click.BadParameter(
            f"the personal vault holds {', '.join(personal.CONTEXT_TYPES)}, not {memory.type}",
            param_hint="--global",
        )
    memory.branch = None
    rec = personal.record_global(memory, service=Service, project=project)
    rec.path = str(personal.home() / rec.path)
    return rec


@click.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True)
@click.option("--at", metavar="REV", help="Show the memory as it stood at REV (tag, commit, branch).")
def show(ref: str, as_json: bool, at: str | None) -> None:
    """Show one memory by id, id prefix (≥ 4 characters) or file path, with what git and the
    index know about it: status, relations in both directions, what supersedes it."""
    if at is not None:
        from ccmemory.surfaces.cli.at import show_at

        return show_at(ref, at, as_json)
    with service() as svc:
        m = resolve_or_exit(svc, ref)
        edges = svc.view.edges([m.id])
        incoming = [e for e in edges if e.dst == m.id and e.src != m.id]
        outgoing = [e for e in edges if e.src == m.id]
        if as_json:
            from dataclasses import asdict

            data = asdict(m)
            data["uri"] = m.uri
            if m.session:
                from ccmemory.features.sessions.service import uri as session_uri

                data["session_uri"] = session_uri(m.session)
            data["superseded_by"] = [e.src for e in incoming if e.type == "SUPERSEDES"]
            data["incoming"] = [asdict(e) for e in incoming]
            data["outgoing"] = [asdict(e) for e in outgoing]
            emit_json(data)
            return
        from ccmemory.app.resolve import short_ids

        short = short_ids(svc, [m.id, *(e.src for e in incoming), *(e.dst for e in outgoing)])
        path = svc.vault.root / m.path
        click.secho(f"{m.title}", bold=True)
        click.echo(f"{m.type} · {m.status} · {m.created} · {m.author or 'unknown author'}")
        click.echo(f"{short[m.id]}  {display_path(svc.vault.root, m.path)}  {m.uri}")
        if m.session:  # `ccmemory sessions show` reads the link
            from ccmemory.features.sessions.service import uri as session_uri

            click.echo(f"captured in {session_uri(m.session)}")
        if is_provisional(m.id):
            notice(f"{m.path} has no id yet: run `ccmemory check --fix` (or commit with the hook)")
        sup = [short[e.src] for e in incoming if e.type == "SUPERSEDES"]
        if sup:
            click.secho(f"superseded by: {', '.join(sup)}", fg="yellow")
        click.echo("")
        from ccmemory.core.walk import read_regular

        try:  # the safe reader: no symlink followed, no FIFO blocking
            text = read_regular(path).decode("utf-8", "replace")
        except OSError:
            text = m.body
        click.echo(text)
        from ccmemory.core.model import REVERSE_NAMES

        for e in outgoing:
            click.echo(f"→ {e.type} {short[e.dst]}" + (f" ({e.reason})" if e.reason else ""))
        for e in incoming:
            click.echo(f"← {REVERSE_NAMES.get(e.type, e.type)} {short[e.src]}")


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--base",
    metavar="REV",
    help="Also compare with REV (e.g. origin/main): warn about new memories that duplicate or "
    "contradict curated ones.",
)
@click.option(
    "--fix", is_flag=True, help="Write a missing id and created into hand-written memory files first."
)
def check(as_json: bool, strict: bool, base: str | None, fix: bool = False) -> None:
    """Validate every memory file; print `path:line: problem` and exit 1 on any error.

    Works without the index (usable in pre-commit and CI). Warnings (unknown relation targets,
    hand-written files without an id or created yet, memories that may be stale because their
    code changed a lot since, reference sections that contradict a memory: docs/reference.md) do
    not fail the check unless --strict. A possible secret in a
    memory file is an error.

    --fix writes a missing `id` (a ULID) and `created` (when the file was first committed, else
    now) into hand-written files, changing nothing else in them, then checks.
    """
    from ccmemory.core.vault import Vault, VaultNotFound
    from ccmemory.features.checks import check_vault
    from ccmemory.features.findings import Finding

    try:
        vault = Vault.open()
    except VaultNotFound as exc:
        raise cli_error(exc) from None
    fixed_lines: list[dict[str, object]] = []
    if fix:
        from ccmemory.features.checks import fix_vault

        for fx in fix_vault(vault):
            fixed_lines.append({"path": fx.path, "added": dict(fx.added)})
            if not as_json:
                click.echo(f"{fx.path}:1: fixed: added {fx.describe()}")
    work: dict[str, tuple[str, str, Memory]] = {}  # each file read and parsed once for every rule
    findings = check_vault(vault, work)
    from ccmemory.core.config import config_problems, load_config
    from ccmemory.core.gitstate import GitError
    from ccmemory.features.lifecycle.review import lifecycle_findings
    from ccmemory.features.personal import check_findings as personal_findings

    try:
        cfg = load_config(vault.root)
        findings += personal_findings(vault.root, cfg.user_id)  # overrides of personal-vault memories
        findings += [Finding(".ccmemory/config.yaml", 1, "warning", msg) for msg in cfg.related_problems]
        findings += [
            Finding(".ccmemory/config.yaml", p.line, p.level, f"{p.key}: {p.message}")
            for p in config_problems(vault.root)
        ]
        findings = sorted(
            findings + lifecycle_findings(vault, base, cfg.raw, work),
            key=lambda f: (f.path, f.line, f.level, f.message),
        )
    except (GitError, ValueError) as exc:
        raise cli_error(exc) from None
    errors = [f for f in findings if f.level == "error" or strict]
    if as_json:
        items: list[dict[str, object]] = [f.as_dict() for f in findings]
        items += [{**fx, "level": "fixed", "line": 1, "message": "added id/created"} for fx in fixed_lines]
        emit_json(items)
    else:
        for f in findings:
            prefix = "" if f.level == "error" else "warning: "
            click.echo(f"{f.path}:{f.line}: {prefix}{f.message}")
        n_files = sum(1 for _ in vault.iter_paths())
        from ccmemory.app.refsync import scan as scan_reference

        n_ref = len(scan_reference(vault)[0])
        click.echo(
            f"{n_files} memory files"
            + (f" and {n_ref} reference files" if n_ref else "")
            + f" checked: {len(errors)} error(s), "
            f"{len(findings) - len(errors)} warning(s)",
            err=True,
        )
    if errors:
        raise SystemExit(1)


@click.command("reindex")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of incrementally.")
@click.option("--no-embed", is_flag=True, help="Skip computing embeddings (full-text only).")
@click.option(
    "--allow-invalid", is_flag=True, help="Exit 0 even when invalid files were left out (for scripts)."
)
@click.option("--json", "as_json", is_flag=True)
def reindex_cmd(full: bool, no_embed: bool, allow_invalid: bool, as_json: bool) -> None:
    """Bring the index level with the memory files (incremental: only the files git reports
    changed since the last reindex, else a walk comparing path, mtime, size and hash).

    Bad files are reported with path and reason and left out of the index (never deleted or
    rewritten); the rest are indexed, and the command exits 1 (0 with --allow-invalid). Status
    (curated/developmental) is refreshed from git. The local session index is brought level with
    the session records (.ccmemory/local/sessions/) too; a record that cannot be read is named and
    skipped.
    """
    import time

    with service(fresh=False) as svc:
        bar = Progress("indexing")
        report = svc.reindex(full=full, progress=bar)
        bar.close()
        embedded, problem = 0, None
        started_embedding = time.perf_counter()
        if not no_embed:
            # The text phase is committed: full-text search works from here on, and an
            # interrupted embedding keeps what it stored (the next reindex or search resumes).
            ebar = Progress("embedding (full-text search is ready)")
            try:
                embedded, problem = svc.embed_missing(progress=ebar)
            except KeyboardInterrupt:
                ebar.close()
                notice(
                    f"embedding interrupted: {svc.vectors_pending} memories have no vector yet; "
                    "full-text search is up to date (run `ccmemory reindex` to finish)"
                )
                raise SystemExit(130) from None
            ebar.close()
            if problem is None and report.reference:
                from ccmemory.features.reference.ops import embed_sections

                problem = embed_sections(svc)
        embed_seconds = time.perf_counter() - started_embedding
        if as_json:
            data = report.as_dict()
            data["embed_seconds"] = round(embed_seconds, 3)
            data["embedded"] = embedded
            data["vectors_from_cache"] = svc.vectors_from_cache
            data["semantic"] = problem is None
            if problem:
                data["semantic_off_reason"] = problem
            emit_json(data)
        else:
            for e in report.errors:
                click.echo(f"{e.path}:{e.line or 1}: {e.reason}", err=True)
            for sk in report.skipped:
                click.echo(f"{sk.rel}:1: skipped: {sk.reason}", err=True)
            for sk in report.sessions.get("skipped", []):
                click.echo(
                    f".ccmemory/local/sessions/{sk['file']}:1: session record skipped: {sk['reason']}",
                    err=True,
                )
            if report.sessions.get("error"):
                click.echo(f"warning: {report.sessions['error']}", err=True)
            click.echo(
                f"added {report.added}, updated {report.updated}, removed {report.removed}, "
                f"unchanged {report.unchanged}, status changed {report.status_changed}, "
                f"errors {len(report.errors)}"
                + (f", embedded {embedded}" if embedded else "")
                + (
                    f", {svc.vectors_from_cache} vectors from the shared cache"
                    if svc.vectors_from_cache
                    else ""
                )
                + f" ({report.seconds:.2f}s files and index"
                + ("" if no_embed else f", {embed_seconds:.2f}s embedding")
                + ")"
            )
            if report.reference:
                ref = report.reference
                click.echo(
                    f"reference: {ref['files']} files, added {ref['added']}, updated {ref['updated']}, "
                    f"removed {ref['removed']}, {ref['chunks_written']} sections written"
                )
            if problem and not no_embed:
                notice(f"semantic search is off: {problem}")
    if report.errors and not allow_invalid:
        if not as_json:
            click.echo(
                f"{len(report.errors)} invalid file(s) left out of the index (listed above; "
                "`ccmemory check` explains each); exiting 1 (--allow-invalid to exit 0)",
                err=True,
            )
        raise SystemExit(1)
