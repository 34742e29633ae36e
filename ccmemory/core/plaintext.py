"""Untrusted text made plain: the control characters a terminal, a YAML file or a browser would
act on (C0 controls but tab, newline and carriage return; DEL; the Unicode line and paragraph
separators that end a JavaScript string) are removed. Used wherever hostile text is shown or
written back: the site, published session summaries, a model's session summary."""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u2028\u2029]")


def strip_control(text: str) -> str:
    return CONTROL.sub("", text)
