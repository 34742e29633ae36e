"""One schema for `.ccmemory/config.yaml`: every key, its type, range or choices.

`validate(raw, text)` returns a `ConfigProblem` per unknown key (with "did you mean"), wrong type,
out-of-range number or unknown choice, each naming the dotted key and its line in the file. The
readers of each section (core.settings, core.config, features.capture.settings, recall.config,
core.telemetry) keep their own forgiving parse: a bad value falls back to its default there, so a
typo never stops a hook; this module is what `check` and `doctor` report, and what the CLI warns
about. `related_to` entries are checked by `core.config.parse_related`.

Imports nothing heavy (capture settings import PROVIDERS on the hook path): difflib and YAML are
imported inside the functions that use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PROVIDERS = ("auto", "anthropic", "claude-cli", "rules", "test", "none")
_OFF_WORDS = ("0", "1", "true", "false", "yes", "no", "on", "off")


@dataclass(frozen=True)
class ConfigProblem:
    key: str  # dotted, e.g. context.budget_tokens
    line: int  # 1-based line in config.yaml (1 when unknown)
    message: str
    unknown_key: bool = False  # a key the schema does not know (maybe a newer version's): a warning
    duplicate: bool = False  # a key written twice (YAML keeps the last): a warning

    @property
    def level(self) -> str:
        return "warning" if self.unknown_key or self.duplicate else "error"

    def render(self, path: str = ".ccmemory/config.yaml") -> str:
        return f"{path}:{self.line}: {self.key}: {self.message}"


class Rule:
    def problem(self, value: Any) -> str | None:  # pragma: no cover - every rule overrides it
        raise NotImplementedError


class Flag(Rule):
    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in _OFF_WORDS):
            return None
        return f"{value!r} is not true or false"


class Whole(Rule):
    def __init__(self, low: int, high: int | None = None) -> None:
        self.low, self.high = low, high

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            return f"{value!r} is not a whole number"
        if value < self.low or (self.high is not None and value > self.high):
            upper = f"..{self.high}" if self.high is not None else " or more"
            return f"{value!r} is outside {self.low}{upper} (the default is used)"
        return None


class Number(Whole):
    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            return f"{value!r} is not a number"
        return super().problem(value)


class Text(Rule):
    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, str) and value.strip() else f"{value!r} is not a text"


class Choice(Rule):
    def __init__(self, *choices: str) -> None:
        self.choices = choices

    def problem(self, value: Any) -> str | None:
        if isinstance(value, str) and value.strip().lower() in self.choices:
            return None
        import difflib

        near = difflib.get_close_matches(str(value).lower(), self.choices, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        return f"{value!r} is not one of {', '.join(self.choices)}{hint}"


class PerType(Rule):
    """A mapping of memory type (or `default`) to a number low..high: `capture.min_confidence`.
    The types are read when a file is checked (core.model, imported only then)."""

    def __init__(self, low: int, high: int) -> None:
        self.value = Number(low, high)

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, dict):
            return "must be a mapping of memory type to a number"
        from ccmemory.core.model import TYPES

        known = ["default", *TYPES]
        for key, number in value.items():
            if str(key) not in known:
                import difflib

                near = difflib.get_close_matches(str(key), known, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f" (known: {', '.join(known)})"
                return f"{key!r} is not a memory type{hint}"
            msg = self.value.problem(number)
            if msg:
                return f"{key}: {msg}"
        return None


class Anything(Rule):
    """Checked elsewhere (related_to: core.config.parse_related)."""

    def problem(self, value: Any) -> str | None:
        return None


Section = dict[str, "Rule | Section"]

CONTEXT: Section = {"enabled": Flag(), "budget_tokens": Whole(1, 100_000), "reference_sections": Whole(0, 20)}
SCHEMA: Section = {
    "project": Text(),
    "main_branch": Text(),
    "backend": Choice("sqlite", "neo4j"),
    "neo4j": {"uri": Text(), "user": Text()},
    "embedder": Choice("auto", "local", "voyage"),
    "context": CONTEXT,
    "recall": {
        "enabled": Flag(),
        "budget_tokens": Whole(0, 4000),
        "max_memories": Whole(1, 10),
        "also_titles": Whole(0, 10),
        "prompts": Flag(),
        "files": Flag(),
    },
    "capture": {
        "enabled": Flag(),
        "provider": Choice(*PROVIDERS),
        "model": Text(),
        "signal_model": Text(),
        "max_llm_calls_per_session": Whole(0),
        "max_tokens_per_session": Whole(0),
        "max_memories_per_segment": Whole(0, 5),
        "batch_segments": Whole(1),
        "batch_chars": Whole(1000),
        "min_confidence": PerType(0, 1),
        "worker": {"idle_seconds": Number(0), "max_attempts": Whole(1), "settle_seconds": Number(0)},
        "context": CONTEXT,
    },
    "telemetry": {"enabled": Flag(), "retention_days": Whole(1)},
    # the assumptions behind "hours saved" and its value (surfaces/dashboard/seed.py); absent: not shown
    "metrics": {
        "minutes_per_reexplanation": Number(0, 480),
        "hourly_rate": Number(0, 100_000),
        "currency": Text(),
    },
    "related_to": Anything(),
    "mcp": {"tools": Choice("lean", "full")},
    "reference": {"allow_private_hosts": Flag()},
    "stale_lines": Whole(1),
    "sessions": {
        "enabled": Flag(),
        "max_kb": Whole(1, 10_000),
        "at_start": Whole(0, 10),
        "at_start_tokens": Whole(0, 1000),
        "publish": Flag(),
        "publish_prompts": Whole(0, 20),
    },
}


def validate(raw: dict[str, Any], text: str | None = None) -> list[ConfigProblem]:
    """Every problem in the parsed file `raw` (`text`, the file's text, gives line numbers)."""
    from ccmemory.core.yamlkeys import duplicate_keys, key_lines

    keys = key_lines(text) if text else []
    lines = {key: line for key, line, _ in keys}  # written twice: the last, whose value YAML keeps
    out: list[ConfigProblem] = []
    _walk(raw, SCHEMA, "", lines, out)
    why = "written twice: the one on line {} is ignored (YAML keeps the last)"
    out += [
        ConfigProblem(key, line, why.format(was), duplicate=True) for key, line, was in duplicate_keys(keys)
    ]
    return sorted(out, key=lambda p: p.line)


def _walk(data: Any, schema: Section, prefix: str, lines: dict[str, int], out: list[ConfigProblem]) -> None:
    where = prefix.rstrip(".")
    if not isinstance(data, dict):
        out.append(ConfigProblem(where, lines.get(where, 1), "must be a mapping of keys"))
        return
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        line = lines.get(dotted, 1)
        rule = schema.get(str(key))
        if rule is None:
            import difflib

            near = difflib.get_close_matches(str(key), list(schema), n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else f" (known here: {', '.join(schema)})"
            out.append(ConfigProblem(dotted, line, f"unknown key, ignored{hint}", unknown_key=True))
        elif isinstance(rule, dict):
            if value is not None:
                _walk(value, rule, dotted + ".", lines, out)
        elif value is not None and (msg := rule.problem(value)):
            out.append(ConfigProblem(dotted, line, msg))
