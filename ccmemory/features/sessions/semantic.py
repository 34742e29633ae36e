"""The semantic half of session search: each session's prompts and summary embedded with the
project's embedder (ccmemory.retrieval.embed; local MiniLM offline, Voyage with a key), a session
scored by its best-matching text. Vectors are cached by content hash in
`.ccmemory/local/sessions/.vectors.json` (a dot-file: `prune` and the record listing ignore it;
entries of records that are gone are dropped on the next search), so a search embeds only the
query and the records written since the last search.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ccmemory.core.atomic import atomic_write
from ccmemory.features.sessions.store import sessions_dir

MAX_TEXTS = 12  # per session: its summary and its first prompts
MAX_CHARS = 1000  # per text (the model reads about 256 word pieces)


def texts_of(rec: dict[str, Any]) -> list[str]:
    prompts = [str(p)[:MAX_CHARS] for p in (rec.get("prompts") or [])[: MAX_TEXTS - 1]]
    return [str(rec.get("summary") or "")[:MAX_CHARS], *prompts]


def _cache_path(root: Path) -> Path:
    return sessions_dir(root) / ".vectors.json"


def _load_cache(root: Path, model: str) -> dict[str, str]:
    try:
        data = json.loads(_cache_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("model") != model or not isinstance(data.get("v"), dict):
        return {}
    return {str(k): str(v) for k, v in data["v"].items()}


def rank(query: str, records: list[dict[str, Any]], embedder: Any, root: Path) -> list[str]:
    """Session ids, best first, by the highest cosine of the query with any of their texts."""
    import numpy as np

    from ccmemory.retrieval.embed import content_hash, vector_to_bytes

    model = type(embedder).__name__
    cache = _load_cache(root, model)
    per = [(r["id"], [t for t in texts_of(r) if t.strip()]) for r in records]
    keys = {t: content_hash(t) for _, ts in per for t in ts}
    missing = [t for t, h in keys.items() if h not in cache]
    if missing:
        for t, vec in zip(missing, embedder.embed(missing, "document"), strict=True):
            cache[keys[t]] = base64.b64encode(vector_to_bytes(vec)).decode("ascii")
    used = {h: cache[h] for h in keys.values()}
    if missing or len(used) != len(cache):
        blob = json.dumps({"model": model, "v": used}).encode("utf-8")
        atomic_write(_cache_path(root), blob, overwrite=True)
    q = np.asarray(embedder.embed([query], "query"), dtype=np.float32).reshape(-1)
    scored = []
    for sid, ts in per:
        if not ts:
            continue
        mat = np.stack([np.frombuffer(base64.b64decode(used[keys[t]]), dtype="<f4") for t in ts])
        scored.append((sid, float((mat @ q).max())))
    scored.sort(key=lambda kv: (-kv[1], kv[0]))
    return [sid for sid, _ in scored]
