"""YAML for memory files: human-friendly, diff-friendly output (`dump_yaml`) and bounded input
(`load_yaml`, docs/security.md). A leaf below the vault reader, so that config and the vault
share one loader."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import yaml

from ccmemory.core.errors import CcmemoryError
from ccmemory.core.model import format_timestamp

# --- YAML: human-friendly output, fast input ------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block style at the top, flow style for short scalar lists and relation mappings."""


def _repr_datetime(dumper: yaml.SafeDumper, value: datetime) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", format_timestamp(value))


def _repr_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(datetime, _repr_datetime)
_Dumper.add_representer(str, _repr_str)

try:  # the C loader is ~10x faster on large vaults; fall back to pure Python
    _Loader: type[Any] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


class _Block(dict[str, Any]):
    """The top-level mapping: always block style, one key per line (diff- and review-friendly)."""


def _repr_block(dumper: yaml.SafeDumper, value: _Block) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=False)


_Dumper.add_representer(_Block, _repr_block)


def dump_yaml(meta: dict[str, Any]) -> str:
    return yaml.dump(
        _Block(meta), Dumper=_Dumper, sort_keys=False, default_flow_style=None, allow_unicode=True, width=100
    )


# --- bounded YAML input (docs/security.md) -----------------------------------------------------
# A hostile file can nest a list 50,000 deep (libyaml's composer recurses in C: a segfault) or
# expand a 450-byte alias bomb into billions of nodes. `load_yaml` first walks the *event* stream
# (libyaml's parser keeps an explicit stack: no recursion, no objects built) and refuses deep
# nesting, alias expansion and oversize frontmatter before anything is composed.
MAX_FRONTMATTER_BYTES = 256 * 1024
MAX_YAML_DEPTH = 24
MAX_YAML_NODES = 20_000  # after alias expansion


class YAMLLimit(CcmemoryError, ValueError):
    """The frontmatter exceeds a bound; `line` is 1-based inside the YAML text."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line = line
        self.reason = reason


def _line(event: Any) -> int:
    mark = getattr(event, "start_mark", None)
    return int(mark.line) + 1 if mark is not None else 1


def _depth_bound(src: str) -> int:
    """A cheap upper bound on the nesting depth of `src`: every flow collection needs a `[` or
    `{`, every block sequence a `- ` (or a `-` ending a line), every complex key a `?`, and a
    block mapping nested in another (not through a sequence entry) a deeper indentation."""
    indents = {len(ln) - len(ln.lstrip(" ")) for ln in src.split("\n")}
    dashes = src.count("- ") + src.count("-\n") + (1 if src.endswith("-") else 0)
    return src.count("[") + src.count("{") + dashes + src.count("?") + len(indents)


def _prescan(src: str) -> None:
    if len(src) > MAX_FRONTMATTER_BYTES:
        raise YAMLLimit(1, f"frontmatter is {len(src)} characters; the limit is {MAX_FRONTMATTER_BYTES}")
    if "&" not in src and _depth_bound(src) < MAX_YAML_DEPTH:
        return  # no anchor (so no alias can expand) and provably shallow: the common case
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = []  # [anchor, node count]
    total = 0
    loader = _Loader(src)
    try:
        while loader.check_event():
            ev = loader.get_event()
            n = 0
            if isinstance(ev, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                stack.append([ev.anchor, 1])
                if len(stack) > MAX_YAML_DEPTH:
                    raise YAMLLimit(_line(ev), f"YAML nested deeper than {MAX_YAML_DEPTH} levels")
                continue
            if isinstance(ev, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                anchor, n = stack.pop()
                if anchor:
                    sizes[anchor] = n
            elif isinstance(ev, yaml.ScalarEvent):
                n = 1
                if ev.anchor:
                    sizes[ev.anchor] = 1
            elif isinstance(ev, yaml.AliasEvent):
                n = sizes.get(ev.anchor or "", 1)
            else:
                continue
            if stack:
                stack[-1][1] += n
            total += n
            if total > MAX_YAML_NODES or (stack and stack[-1][1] > MAX_YAML_NODES):
                raise YAMLLimit(_line(ev), f"YAML expands to more than {MAX_YAML_NODES} values (alias bomb?)")
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose:
            dispose()


def load_yaml(src: str) -> Any:
    """`yaml.load` with the safe loader, after `_prescan` bounded depth, aliases and size."""
    _prescan(src)
    return yaml.load(src, Loader=_Loader)
