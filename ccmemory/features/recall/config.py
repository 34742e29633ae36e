"""The ``recall:`` section of ``.ccmemory/config.yaml``, then the environment.

```yaml
recall:
  enabled: true          # CCMEMORY_RECALL overrides
  budget_tokens: 300     # per prompt and per tool call; CCMEMORY_RECALL_BUDGET overrides
  max_memories: 3        # at most this many memories per injection, each with its gist
  also_titles: 2         # then up to this many more that cleared the same gate: title and id only
  prompts: true          # UserPromptSubmit: memories that apply to the prompt
  files: true            # PreToolUse: memories whose `files:` cover the file touched
```
Anything unreadable keeps its default (a typo never stops a hook; `ccmemory doctor` reports it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ccmemory.core import settings

DEFAULT_BUDGET = 300
#: after the ``max_memories`` lines, the next memories that cleared the relevance gate as a title
#: and id only (~20 tokens each): Claude can `get` them in full. On fifteen tuning sets the memory a
#: task prompt needed was shown for 0.883 -> 0.915 of prompts, 179 -> 227 tokens on a task prompt
#: (a fourth full line: 0.901, 226 tokens; bench/RESULTS-recall.md, eighth session)
DEFAULT_TITLES = 2
DEFAULT_MAX = 3


@dataclass
class RecallSettings:
    enabled: bool = True
    budget_tokens: int = DEFAULT_BUDGET
    max_memories: int = DEFAULT_MAX
    also_titles: int = DEFAULT_TITLES
    prompts: bool = True
    files: bool = True

    @property
    def pick_limit(self) -> int:
        """How many picks to ask the gates for: enough for the full lines and the titles."""
        return max(self.max_memories * 2, self.max_memories + self.also_titles)


def _flag(value: object, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() not in (*settings.OFF, "")
    return default


def _whole(value: object, default: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    if value != value or value in (float("inf"), float("-inf")):  # nan, inf
        return default
    return max(low, min(high, int(value)))


def recall_settings(raw: Mapping[str, object] | None, env: settings.Env = None) -> RecallSettings:
    """Settings from a parsed config.yaml mapping and the environment."""
    section = (raw or {}).get("recall")
    data: Mapping[str, object] = section if isinstance(section, dict) else {}
    out = RecallSettings(
        enabled=_flag(data.get("enabled", True), True),
        budget_tokens=_whole(data.get("budget_tokens"), DEFAULT_BUDGET, 0, 4000),
        max_memories=_whole(data.get("max_memories"), DEFAULT_MAX, 1, 10),
        also_titles=_whole(data.get("also_titles"), DEFAULT_TITLES, 0, 10),
        prompts=_flag(data.get("prompts", True), True),
        files=_flag(data.get("files", True), True),
    )
    enabled = settings.RECALL.get(env)
    if enabled is not None:
        out.enabled = enabled
    budget = settings.RECALL_BUDGET.get(env)
    if budget is not None:
        out.budget_tokens = max(0, min(4000, budget))
    return out


def load_raw(root: str) -> dict[str, Any]:
    """``.ccmemory/config.yaml`` as a mapping, for a hook: parsed with the project's reader
    (``ccmemory.core.config.read_config_file``: bounded, never follows a symlink) once per change of
    the file, then served from a JSON copy in ``.ccmemory/local/recall/config.json`` keyed by
    the file's size, mtime and inode (parsing YAML costs a hook ~20 ms of imports). An unreadable
    file means the defaults ({}); the CLI and ``doctor`` report it."""
    path = os.path.join(root, ".ccmemory", "config.yaml")
    try:
        st = os.lstat(path)
    except OSError:
        return {}
    key = [st.st_size, st.st_mtime_ns, st.st_ino]
    cache = os.path.join(root, ".ccmemory", "local", "recall", "config.json")
    try:
        with open(cache, encoding="utf-8") as fh:
            data = json.load(fh)
        if isinstance(data, dict) and data.get("key") == key and isinstance(data.get("raw"), dict):
            return dict(data["raw"])
    except (OSError, ValueError):
        pass
    from pathlib import Path

    from ccmemory.core.config import read_config_file

    try:
        raw = read_config_file(Path(root) / ".ccmemory")
    except ValueError:  # ConfigError
        return {}
    try:
        from ccmemory.core.atomic import atomic_write

        text = json.dumps({"key": key, "raw": raw}, default=str)
        atomic_write(Path(cache), text.encode("utf-8"), overwrite=True)
    except (OSError, TypeError, ValueError):
        pass  # uncached: parsed again next time
    return raw
