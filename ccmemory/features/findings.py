"""A problem `ccmemory check` reports: path, line, level and message (never a secret's value)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    level: str  # error | warning
    message: str

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "level": self.level, "message": self.message}
