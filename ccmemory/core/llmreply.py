"""The JSON object in a model's reply: models wrap it in prose or code fences now and then."""

from __future__ import annotations

import json
import re
from typing import Any

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def json_object(reply: str | None) -> dict[str, Any] | None:
    """The outermost ``{...}`` of ``reply`` parsed, or None when there is none, it is not valid
    JSON or not an object."""
    m = _OBJECT.search(reply or "")
    if not m:
        return None
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
