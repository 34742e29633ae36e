"""Generate a MkDocs project from the memories and build it into a static site.

Layout of the build directory (default `.ccmemory/local/site-build/`, git-ignored):

    project/mkdocs.yml      generated configuration (from site/mkdocs.base.yml)
    project/docs/**.md      one raw-HTML page per memory, log, topic...
    site/                   the static site (unless --out names another folder)

Only files whose content changed are rewritten, and pages of deleted memories are removed, so a
rebuild after a small change touches a few files (what `serve`'s watcher relies on).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ccmemory.core.errors import CcmemoryError
from ccmemory.core.model import TYPES
from ccmemory.core.redact import redact, redact_memory
from ccmemory.index.base import Edge, IndexedMemory
from ccmemory.surfaces.site.pages import TYPE_LABELS, Renderer, SiteData, log_page
from ccmemory.surfaces.site.safe import clean, escape

if TYPE_CHECKING:
    from ccmemory.app.service import Service

MARKER = ".ccmemory-site"  # written into every output folder we build; --out must be empty or ours
RELATED = 5


class SiteError(CcmemoryError):
    pass


def site_resources() -> Path:
    """Inside an installed wheel: ccmemory/_data/site; in a checkout: the repo's site/."""
    import ccmemory

    here = Path(ccmemory.__file__).resolve().parent  # the package folder
    packaged = here / "_data" / "site"
    return packaged if packaged.is_dir() else here.parent / "site"


@dataclass
class BuildResult:
    site_dir: Path
    project_dir: Path
    memories: int
    pages: int
    changed: int
    seconds: float
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _quiet_mkdocs(verbose: bool) -> Iterator[_Collect]:
    """Collect MkDocs warnings instead of letting them spill on the terminal."""
    logger = logging.getLogger("mkdocs")
    handler = _Collect()
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    if not verbose:
        logger.setLevel(logging.WARNING)
        logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate


def write_target(root: Path, rel: str) -> Path:
    """The path of a generated file: inside `root` (`ccmemory.core.walk.inside`) and with no symlink
    between `root` and it, so a hostile id or a planted link cannot make the site write elsewhere."""
    from ccmemory.core.walk import inside

    try:
        parts = rel.split("/")
        if "" in parts:
            raise ValueError("an absolute path or an empty part")
        path = inside(root, *parts)
    except ValueError as exc:
        raise SiteError(f"refusing to write page {rel[:120]!r}: {exc}") from None
    probe = path
    while probe != root and probe != probe.parent:
        if probe.is_symlink():
            raise SiteError(f"refusing to write page {rel[:120]!r}: {probe} is a symlink")
        probe = probe.parent
    return path


def check_out_dir(out: Path) -> None:
    """MkDocs empties its site folder: refuse a folder that is not empty and not a site we built."""
    if out.exists():
        if not out.is_dir():
            raise SiteError(f"{out} exists and is not a folder")
        if any(out.iterdir()) and not (out / MARKER).exists():
            raise SiteError(
                f"{out} is not empty and was not built by ccmemory: refusing to replace its contents "
                "(choose an empty or new folder)"
            )


class SiteGenerator:
    def __init__(self, svc: Service, build_dir: Path | None = None, *, related: bool = True):
        self.svc = svc
        self.build_dir = (build_dir or svc.vault.local / "site-build").resolve()
        self.project_dir = self.build_dir / "project"
        self.docs_dir = self.project_dir / "docs"
        self.resources = site_resources()
        self.related = related

    # --- collecting -----------------------------------------------------------------------------
    def collect(self, timings: dict[str, float] | None = None) -> SiteData:
        from ccmemory.core import gitstate
        from ccmemory.surfaces.site.history import file_histories

        timings = timings if timings is not None else {}
        svc = self.svc
        t = time.perf_counter()
        svc.reindex()
        timings["reindex"] = time.perf_counter() - t

        t = time.perf_counter()
        f = svc.filters(include_superseded=True)
        total = svc.view.count(f)
        # a hand-written file may hold a secret (`check` fails CI on it): never publish it
        memories = [redact_memory(m) for m in svc.view.query(f, limit=max(total, 1))]
        by_id = {m.id: m for m in memories}
        ids = list(by_id)
        edges: set[Edge] = set()
        for start in range(0, len(ids), 400):
            edges.update(
                e for e in svc.view.edges(ids[start : start + 400]) if e.src in by_id and e.dst in by_id
            )
        dangling: dict[str, list[Edge]] = defaultdict(list)
        for e in svc.view.dangling():
            if e.src in by_id:
                dangling[e.src].append(e)
        superseded = svc.view.superseded_ids(f)
        timings["query"] = time.perf_counter() - t

        t = time.perf_counter()
        history = file_histories(svc.vault.root, [m.path for m in memories])
        timings["git_history"] = time.perf_counter() - t

        t = time.perf_counter()
        related = self._related(memories, by_id, superseded) if self.related else {}
        timings["related"] = time.perf_counter() - t
        return SiteData(
            project=svc.project,
            memories=memories,
            by_id=by_id,
            edges=sorted(edges, key=lambda e: (e.src, e.type, e.dst)),
            superseded=superseded,
            history=history,
            related=related,
            dangling=dict(dangling),
            in_repo=gitstate.is_repo(svc.vault.root),
        )

    def _related(
        self, memories: list[IndexedMemory], by_id: dict[str, IndexedMemory], superseded: set[str]
    ) -> dict[str, list[IndexedMemory]]:
        """The product's own ranking (`Service.search`, text mode: no embedder to load) of the
        memory's title and topics, its candidates found with the query's distinctive terms
        (`ccmemory.text.morelike`): a bounded cost per memory at any vault size (the whole query
        matched most of a large vault, and each match was scored: 56 ms a memory at 100k).

        Superseded memories are dropped here rather than by the index filter: the same ranking,
        but the filter's per-row NOT EXISTS costs about 10x more on SQLite, 1k times over.
        """
        from ccmemory.text.analyzer import query_terms
        from ccmemory.text.morelike import like_groups

        out: dict[str, list[IndexedMemory]] = {}
        f = self.svc.filters(include_superseded=True)
        df: dict[str, int] = {}  # document frequencies, asked once per term
        for m in memories:
            query = " ".join([m.title, *m.topics])
            terms = query_terms(query)
            missing = [t for t in terms if t not in df]
            try:
                if missing:
                    df.update(self.svc.index.doc_freqs(f.project, missing))
                groups = like_groups(terms, df, len(by_id))
                hits = (
                    self.svc.search(
                        query,
                        f,
                        limit=RELATED + 6,
                        mode="text",
                        expand=False,
                        groups=groups,
                        unindexed_notice=False,
                    ).hits
                    if groups
                    else []
                )
            except Exception:
                hits = []
            # the collected (redacted) memory, not the search's copy: 100k lists of 5 copies held
            # 1.5 GB, and a copy's text is not redacted
            out[m.id] = [
                by_id[h.memory.id]
                for h in hits
                if h.memory.id != m.id and h.memory.id in by_id and h.memory.id not in superseded
            ][:RELATED]
        return out

    # --- writing the MkDocs project -------------------------------------------------------------
    def config(self, site_dir: Path) -> dict[str, Any]:
        base = yaml.safe_load((self.resources / "mkdocs.base.yml").read_text(encoding="utf-8"))
        cfg: dict[str, Any] = dict(base)
        project = clean(self.svc.project) or "project"
        cfg["site_name"] = escape(f"{project} memory")
        cfg["docs_dir"] = "docs"
        cfg["site_dir"] = str(site_dir)
        cfg["theme"] = {**base["theme"], "custom_dir": str(self.resources / "overrides")}
        cfg["hooks"] = [str(self.resources / "hooks" / "ccmemory_pages.py")]
        cfg["nav"] = [
            {"Home": "index.md"},
            {"Logs": [{TYPE_LABELS[t]: log_page(t)} for t in TYPES]},
            {"Topics": "topics/index.md"},
            {"Timeline": "timeline.md"},
            {"Open questions": "questions.md"},
            {"Hypotheses": "hypotheses.md"},
        ]
        if getattr(self, "_has_reference", False):
            cfg["nav"].append({"Reference": "reference/index.md"})
        if getattr(self, "_has_sessions", False):
            cfg["nav"].append({"Sessions": "sessions.md"})
        return cfg

    def write_project(self, pages: dict[str, str], site_dir: Path) -> int:
        """Write pages and mkdocs.yml; only changed files are rewritten; stale pages removed."""
        files = dict(pages)
        changed = 0
        self.docs_dir.mkdir(parents=True, exist_ok=True)
        for rel, text in files.items():
            path = write_target(self.docs_dir, rel)  # refuses `..`, absolute parts and symlinks
            data = redact(text).encode("utf-8")  # a hand-written secret never reaches a page
            if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
            changed += 1
        for path in sorted(self.docs_dir.rglob("*"), reverse=True):
            rel = path.relative_to(self.docs_dir).as_posix()
            if path.is_file() and rel not in files:
                path.unlink()
                changed += 1
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
        cfg_text = yaml.safe_dump(self.config(site_dir), sort_keys=False, allow_unicode=True)
        cfg_path = write_target(self.project_dir, "mkdocs.yml")
        stale = cfg_path.is_symlink() or not cfg_path.is_file()
        if stale or cfg_path.read_text(encoding="utf-8") != cfg_text:
            tmp = cfg_path.with_name(cfg_path.name + ".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(cfg_text.encode("utf-8"))
            os.replace(tmp, cfg_path)
            changed += 1
        return changed

    def generate(self, site_dir: Path, timings: dict[str, float] | None = None) -> tuple[SiteData, int, int]:
        timings = timings if timings is not None else {}
        data = self.collect(timings)
        t = time.perf_counter()
        renderer = Renderer(data, self.resources / "templates")
        pages = renderer.render_all()
        from ccmemory.surfaces.site.reference_pages import render_reference

        pages.update(render_reference(renderer, self.svc))
        self._has_reference = "reference/index.md" in pages
        from ccmemory.surfaces.site.session_pages import render_sessions

        session_pages, self.session_problems = render_sessions(renderer, self.svc.vault.root)
        pages.update(session_pages)
        self._has_sessions = bool(session_pages)
        timings["render"] = time.perf_counter() - t
        t = time.perf_counter()
        changed = self.write_project(pages, site_dir)
        timings["write"] = time.perf_counter() - t
        return data, len(pages), changed

    # --- building -------------------------------------------------------------------------------
    def mkdocs_build(self, site_dir: Path, *, verbose: bool = False) -> list[str]:
        from mkdocs.commands.build import build
        from mkdocs.config import load_config

        # Marked before building (MkDocs keeps dotfiles when it empties the folder), so an
        # interrupted build still leaves a folder the next build may replace.
        site_dir.mkdir(parents=True, exist_ok=True)
        (site_dir / MARKER).write_text("built by ccmemory site build\n", encoding="utf-8")
        with _quiet_mkdocs(verbose) as collected:
            cfg = load_config(config_file=str(self.project_dir / "mkdocs.yml"))
            cfg.plugins.on_startup(command="build", dirty=False)
            try:
                build(cfg)
            finally:
                cfg.plugins.on_shutdown()
        return collected.messages

    def build(self, out: Path | None = None, *, verbose: bool = False) -> BuildResult:
        from ccmemory.core.extras import require

        require("site")  # MkDocs is an extra: say which pip install, before any work
        started = time.perf_counter()
        site_dir = (out or self.build_dir / "site").resolve()
        if out is not None:
            check_out_dir(site_dir)  # the default folder under .ccmemory/local/ is always ours
        timings: dict[str, float] = {}
        data, npages, changed = self.generate(site_dir, timings)
        t = time.perf_counter()
        warnings = [*getattr(self, "session_problems", []), *self.mkdocs_build(site_dir, verbose=verbose)]
        timings["mkdocs"] = time.perf_counter() - t
        return BuildResult(
            site_dir,
            self.project_dir,
            len(data.memories),
            npages,
            changed,
            time.perf_counter() - started,
            timings,
            warnings,
        )

    # --- serving --------------------------------------------------------------------------------
    def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        open_browser: bool = False,
        on_build: Callable[[BuildResult], None] | None = None,
    ) -> None:
        """Build, serve the site, and rebuild when memory files change (the page reloads itself)."""
        from ccmemory.core.extras import require

        require("site")
        site_dir = self.build_dir / "serve-site"
        if site_dir.exists():
            shutil.rmtree(site_dir)

        def builder() -> None:
            result = self.build(site_dir)
            if on_build:
                on_build(result)

        builder()
        server = make_watch_server(builder=builder, host=host, port=port, root=str(site_dir))
        server.watch_vault(self.svc.vault.dir)
        try:
            server.serve(open_in_browser=open_browser)
        except KeyboardInterrupt:
            pass
        finally:
            server.shutdown()


def _is_memory_change(path: str, vault_dir: Path) -> bool:
    p = Path(path)
    try:
        rel = p.resolve().relative_to(vault_dir.resolve())
    except ValueError:
        return False
    if not rel.parts or rel.parts[0] == "local":
        return False  # the index, spool and our own build output live there
    return p.suffix in (".md", ".yaml", ".yml")


def _watch_server_class() -> type:
    from mkdocs.livereload import LiveReloadServer

    class VaultWatchServer(LiveReloadServer):
        """MkDocs' live-reload server watching .ccmemory/ for memory files only (never local/,
        where every rebuild writes the index: that would rebuild forever)."""

        def watch_vault(self, vault_dir: Path) -> None:
            """Watch each memory folder recursively and .ccmemory/ itself flat (config.yaml,
            new folders), but never local/: polling the site build there would cost CPU."""
            import watchdog.events

            scheduled: set[str] = set()

            def rebuild() -> None:
                with self._rebuild_cond:
                    self._want_rebuild = True
                    self._rebuild_cond.notify_all()

            def on_memory_event(event: Any) -> None:
                paths = [getattr(event, "src_path", ""), getattr(event, "dest_path", "")]
                if not event.is_directory and any(p and _is_memory_change(str(p), vault_dir) for p in paths):
                    rebuild()

            def on_top_event(event: Any) -> None:
                path = Path(str(getattr(event, "dest_path", "") or event.src_path))
                if event.is_directory:
                    if path.parent == vault_dir and path.name != "local" and path.is_dir():
                        schedule(path)
                        rebuild()
                elif _is_memory_change(str(path), vault_dir):
                    rebuild()

            memory_handler = watchdog.events.FileSystemEventHandler()
            memory_handler.on_any_event = on_memory_event  # type: ignore[method-assign]

            def schedule(folder: Path) -> None:
                if str(folder) not in scheduled:
                    scheduled.add(str(folder))
                    self.observer.schedule(memory_handler, str(folder), recursive=True)

            for child in sorted(vault_dir.iterdir()):
                if child.is_dir() and child.name != "local":
                    schedule(child)
            top_handler = watchdog.events.FileSystemEventHandler()
            top_handler.on_any_event = on_top_event  # type: ignore[method-assign]
            self.observer.schedule(top_handler, str(vault_dir), recursive=False)
            self._watched_paths[str(vault_dir)] = 1

    return VaultWatchServer


def make_watch_server(**kw: Any) -> Any:
    return _watch_server_class()(**kw)
