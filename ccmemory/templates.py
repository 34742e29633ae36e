"""Per-type markdown templates used by `ccmemory new` (shipped in the wheel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ccmemory.model import TYPES


def templates_dir() -> Path:
    """Inside an installed wheel: ccmemory/_data/templates; in a checkout: the repo's templates/."""
    here = Path(__file__).resolve().parent
    packaged = here / "_data" / "templates"
    return packaged if packaged.is_dir() else here.parent / "templates"


def load_template(mtype: str) -> tuple[dict[str, Any], str]:
    """(default type fields, body scaffold) for a memory type."""
    if mtype not in TYPES:
        raise ValueError(f"unknown type {mtype!r}")
    path = templates_dir() / f"{mtype}.md"
    if not path.is_file():
        return {}, ""
    text = path.read_text(encoding="utf-8")
    if text.startswith("---"):
        _, fm, body = text.split("---", 2)
        defaults = yaml.safe_load(fm) or {}
        return dict(defaults), body.strip("\n")
    return {}, text.strip("\n")
