"""Per-type markdown templates (shipped in the wheel): `ccmemory new` and people copying one by hand.

A template is a valid memory file as copied: `type`, an empty `title` (taken from the first
heading or the file name until filled in), the type's own fields, and a body that is only an
HTML comment with guidance, which is never indexed (`vault.strip_comments`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ccmemory.core.model import TYPES


def templates_dir() -> Path:
    """Inside an installed wheel: ccmemory/_data/templates; in a checkout: the repo's templates/."""
    import ccmemory

    here = Path(ccmemory.__file__).resolve().parent  # the package folder
    packaged = here / "_data" / "templates"
    return packaged if packaged.is_dir() else here.parent / "templates"


def template_text(mtype: str) -> str:
    """The template file's text ('' when there is none)."""
    if mtype not in TYPES:
        raise ValueError(f"unknown type {mtype!r}")
    path = templates_dir() / f"{mtype}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def load_template(mtype: str) -> tuple[dict[str, Any], str]:
    """(default values of the type's own fields, body guidance) for a memory type. The guidance
    is an HTML comment: it is what `new` shows in the editor, never body text by itself."""
    text = template_text(mtype)
    if text.startswith("---"):
        _, fm, body = text.split("---", 2)
        defaults = yaml.safe_load(fm) or {}
        own = {k: v for k, v in dict(defaults).items() if k in TYPES[mtype].fields}
        return own, body.strip("\n")
    return {}, text.strip("\n")
