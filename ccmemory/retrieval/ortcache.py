"""onnxruntime's optimized graph of the integer MiniLM, saved once and reopened without optimizing.

Building a session at ``ORT_ENABLE_ALL`` spends a good part of its time optimizing the graph
(about 0.10 s of a cold ``ccmemory search`` on 2 cores; reopening the saved result at
``ORT_DISABLE_ALL`` about 0.07 s, the same outputs bit for bit). onnxruntime's documentation on
offline optimization ("Online/Offline Mode" of its graph optimization page) says the saved model
must be reopened with the same options on the same hardware: with layout optimizations enabled it
may hold kernels for this CPU's instruction set. So the file is keyed by everything that can
change it:

- the integer graph it was optimized from (the :mod:`ccmemory.retrieval.int8graph` cache file,
  whose name is already a digest of the published model's path, size and mtime, the rewrite's
  version and its kind, plus its own size and mtime),
- the integer kernel chosen for this CPU (u8s8 or u8u8),
- the onnxruntime version,
- the CPU (the instruction-set features numpy detects, and the flags of ``/proc/cpuinfo`` on
  Linux; no cache where neither can be read),
- the session's thread count and :data:`VERSION` (bumped when the session options change).

It lives next to the integer graph (``<cache dir>/models``), is written under a temporary name
and renamed into place only after a session reopened from it gave bit-identical outputs to the
session that wrote it on a probe batch, and at most :data:`KEEP` such files are kept (least
recently used first out). A file that does not load is deleted and the session is built the normal
way (and saved again). Anything that goes wrong while saving leaves the normal session in use.
``CCMEMORY_OPTIMIZED_MODEL=0`` turns the cache off (every process optimizes the graph).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Bump when the session options of ``LocalMiniLM`` change (the saved graph depends on them).
VERSION = 1

#: Saved graphs kept in the cache folder (about 23 MB each), least recently used deleted first.
KEEP = 3

#: A session over a graph: ``start(model, optimize=..., save_to=...)`` (see ``LocalMiniLM``).
Start = Callable[..., Any]


def cpu_signature() -> str | None:
    """What identifies this CPU's instruction set, or None when it cannot be told: the features
    numpy detected with CPUID in this process (what onnxruntime's kernels see too, even under an
    emulator) and, on Linux, the kernel's flags of the first processor."""
    parts = [platform.system(), platform.machine()]
    known = False
    features: dict[str, bool] = {}
    for module in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):  # numpy 2, 1
        try:
            features = dict(importlib.import_module(module).__cpu_features__)
            break
        except (ImportError, AttributeError):
            continue
    if features:
        parts.append(" ".join(sorted(name for name, present in features.items() if present)))
        known = True
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:  # the first processor's flags: read no further
                if line.startswith(("flags", "Features")):
                    parts.append(line.split(":", 1)[1].strip())
                    known = True
                    break
    except OSError:
        pass
    return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()[:16] if known else None


def cached_path(graph: Path, *, kernel: str, threads: int, ort_version: str) -> Path | None:
    """Where the optimized session of ``graph`` is saved (None: this CPU cannot be identified)."""
    cpu = cpu_signature()
    if cpu is None:
        return None
    st = graph.stat()
    key = f"{graph.name}|{st.st_size}|{st.st_mtime_ns}|{kernel}|{threads}|ort {ort_version}|{cpu}|v{VERSION}"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]
    return graph.parent / f"{graph.stem}-ort-{digest}.onnx"


def open_session(start: Start, graph: Path, *, kernel: str, threads: int) -> Any:
    """A session over ``graph``: from its saved optimized form when there is one for this
    machine, else built (and saved) the normal way. Raises what ``start(graph)`` raises."""
    import onnxruntime as ort

    from ccmemory.core import settings

    if not settings.OPTIMIZED_MODEL.get():
        return start(graph)
    try:
        target = cached_path(graph, kernel=kernel, threads=threads, ort_version=ort.__version__)
    except OSError:
        target = None
    if target is None:
        return start(graph)
    if target.is_file():
        try:
            session = start(target, optimize=False)
        except Exception:  # damaged, or written by something else: build it again
            target.unlink(missing_ok=True)
        else:
            _touch(target)
            return session
    return _build_and_save(start, graph, target)


def _build_and_save(start: Start, graph: Path, target: Path) -> Any:
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        session = start(graph, save_to=tmp)
    except Exception:
        tmp.unlink(missing_ok=True)
        return start(graph)  # saving failed (or the graph is bad: then this raises as before)
    try:
        if tmp.is_file() and same_outputs(session, start(tmp, optimize=False)):
            _publish(tmp, target)
            _prune(target.parent)
    except Exception:  # a cache that cannot be written: the session in hand is the normal one
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return session


def same_outputs(a: Any, b: Any) -> bool:
    """Whether two sessions of the model give bit-identical hidden states on a probe batch
    (rows of different lengths, padded, token ids spread over the vocabulary)."""
    import numpy as np

    rng = np.random.default_rng(29)
    lengths = [5, 17, 64, 1]
    width = max(lengths) + 2
    ids = np.zeros((len(lengths), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, n in enumerate(lengths):
        ids[row, : n + 2] = [101, *rng.integers(1000, 30000, size=n).tolist(), 102]
        mask[row, : n + 2] = 1
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    (x,) = a.run(["last_hidden_state"], feed)
    (y,) = b.run(["last_hidden_state"], feed)
    return bool(x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y))


def _publish(tmp: Path, target: Path) -> None:
    """Make ORT's own file durable and private, then rename it into place (atomic)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fchmod(fd, 0o600)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)


def _touch(path: Path) -> None:
    """Mark ``path`` recently used (for :func:`_prune`); a read-only cache is fine."""
    with contextlib.suppress(OSError):
        os.utime(path)


def _prune(folder: Path) -> None:
    """Keep the :data:`KEEP` most recently used saved graphs (a new model or onnxruntime
    version leaves the old ones unused), and drop temporary files a killed process left."""
    for tmp in folder.glob(".*-ort-*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - tmp.stat().st_mtime > 3600:
                tmp.unlink()
    saved = []
    for p in folder.glob("*-ort-*.onnx"):
        try:
            saved.append((p.stat().st_mtime_ns, p))
        except OSError:
            continue
    for _, old in sorted(saved, reverse=True)[KEEP:]:
        old.unlink(missing_ok=True)
