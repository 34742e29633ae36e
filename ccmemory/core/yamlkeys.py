"""Where each mapping key of a YAML text is written, for messages that name a line: the line of a
config problem's key, and a key written twice (YAML keeps the last value, silently). A leaf (only
`yaml`), so that the config schema can use it without the vault's YAML module. `compose` builds
the node tree without constructing values (no alias expansion); call it on text that was already
loaded within bounds (`core.yamlio.load_yaml`, `core.config.read_config_file`)."""

from __future__ import annotations

from typing import Any

import yaml

try:  # the C loader is ~10x faster; fall back to pure Python
    _Loader: type[Any] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


def key_lines(src: str) -> list[tuple[str, int, int]]:
    """(dotted key, 1-based line, which mapping: a number per mapping node) of every mapping key in
    `src`, in the order written (nested mappings included, not those inside lists); [] when it does
    not parse."""
    try:
        node = yaml.compose(src, Loader=_Loader)
    except yaml.YAMLError:
        return []
    out: list[tuple[str, int, int]] = []
    mappings = 0

    def visit(n: Any, prefix: str) -> None:
        nonlocal mappings
        if not isinstance(n, yaml.MappingNode):
            return
        mappings += 1
        here = mappings
        for k, v in n.value:
            if isinstance(k, yaml.ScalarNode):
                dotted = f"{prefix}{k.value}"
                out.append((dotted, k.start_mark.line + 1, here))
                visit(v, dotted + ".")

    visit(node, "")
    return out


def duplicate_keys(keys: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Of `key_lines`' answer, the keys written twice in one mapping: (dotted key, line of the one
    YAML keeps, line of the one before it, which it ignores). Keys of a mapping that is ignored
    whole (under a key written twice) are not repeated: its key says it."""
    seen: dict[tuple[int, str], int] = {}
    out: list[tuple[str, int, int]] = []
    for dotted, line, mapping in keys:
        if (mapping, dotted) in seen:
            out.append((dotted, line, seen[(mapping, dotted)]))
        seen[(mapping, dotted)] = line
    return out
