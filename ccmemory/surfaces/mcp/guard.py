"""Errors as structured tool results (`guarded`), and strict argument names (middleware)."""

import difflib
import functools
import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from ccmemory.core.errors import CcmemoryError, mcp_error
from ccmemory.surfaces.mcp.common import ToolFailure

log = logging.getLogger("ccmemory.surfaces.mcp")

F = TypeVar("F", bound=Callable[..., Any])


def _error_result(failure: CcmemoryError) -> CallToolResult:
    payload = {"error": mcp_error(failure)}  # the one mapping to MCP error codes (ccmemory/errors.py)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=True,
    )


def guarded(fn: F) -> F:
    """Turn every failure into a structured tool error: never a stack trace for the model."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CcmemoryError as failure:  # ToolFailure, and any anticipated error a tool let through
            return _error_result(failure)
        except OSError as exc:  # a full disk, a read-only folder: the machine, not a bug
            where = f" ({exc.filename})" if exc.filename else ""
            return _error_result(
                ToolFailure(
                    "unavailable",
                    f"{fn.__name__} stopped: {exc.strerror or exc}{where}",
                    "memory files are written atomically, so none is half-written; free space or fix "
                    "permissions, then call it again",
                )
            )
        except Exception as exc:  # a bug: log it for the user, give the model something actionable
            log.exception("ccmemory tool %s failed", fn.__name__)
            return _error_result(
                ToolFailure(
                    "internal",
                    f"{fn.__name__} failed: {type(exc).__name__}: {exc}",
                    "no memory file was changed; the server log (stderr) has the details",
                )
            )

    return wrapper  # type: ignore[return-value]


_PYDANTIC_URL = re.compile(r"\n\s*For further information visit \S+")


def _without_values(text: str) -> str:
    """The validation message without the rejected values (pydantic's ``input_value=…``): a
    secret passed in the wrong field must not come back in the error, which the client logs.
    The field name and the expected type stay."""
    lines = []
    for line in text.splitlines():
        start = line.find("input_value=")
        if start >= 0:
            kind = line.rfind("input_type=")
            line = line[:start] + (line[kind:] if kind > start else "]")
        lines.append(line)
    return "\n".join(lines)


async def structured_argument_errors(ctx: Any, call_next: Any) -> Any:
    """The SDK reports arguments that fail the input schema as plain text; give them the same
    {"error": {code, message, hint}} shape as the tools' own errors."""
    result = await call_next(ctx)
    if getattr(ctx, "method", None) != "tools/call":
        return result
    data = result.model_dump(by_alias=True, exclude_none=True) if isinstance(result, BaseModel) else result
    if not isinstance(data, dict) or not data.get("isError") or data.get("structuredContent") is not None:
        return result
    content = data.get("content") or []
    text = content[0].get("text", "") if content and isinstance(content[0], dict) else ""
    if "validation error" not in text:
        return result
    failure = ToolFailure(
        "invalid_argument",
        _without_values(_PYDANTIC_URL.sub("", text)).strip(),
        "check the argument against the tool's input schema",
    )
    return _error_result(failure).model_dump(by_alias=True, exclude_none=True, mode="json")


def _schema_props(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The property schemas of an object schema (following one local $ref), else None."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        schema = defs.get(ref.removeprefix("#/$defs/"), {})
    props = schema.get("properties")
    return props if isinstance(props, dict) else None


def _item_schemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schemas an array argument's items may have (`list[X] | None` is an anyOf)."""
    out: list[dict[str, Any]] = []
    for option in [schema, *schema.get("anyOf", [])]:
        items = option.get("items") if isinstance(option, dict) else None
        if isinstance(items, dict) and option.get("type") == "array":
            out.append(items)
    return out


def unknown_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(where, unknown name, valid names) for every argument name the tool's input schema does
    not declare: top level, and keys of objects inside list arguments (e.g. relations[0].reasn)."""
    defs = schema.get("$defs") or {}
    props = _schema_props(schema, defs) or {}
    out: list[tuple[str, str, list[str]]] = []
    for name, value in arguments.items():
        if name not in props:
            out.append(("", name, sorted(props)))
            continue
        if not isinstance(value, list):
            continue
        for item_schema in _item_schemas(props[name]):
            inner = _schema_props(item_schema, defs)
            if inner is None:
                continue
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    out += [(f"{name}[{i}].", k, sorted(inner)) for k in item if k not in inner]
    return out


def strict_arguments(server: MCPServer) -> Any:
    """Middleware: a tool call with an argument name its input schema does not declare is an
    `invalid_argument` error naming the closest valid parameter. (The SDK builds each tool's
    argument model from its signature with pydantic's default `extra="ignore"`, so a misspelled
    name such as `type` for `types` would otherwise be dropped silently and the call answered
    as if unfiltered.)"""

    async def middleware(ctx: Any, call_next: Any) -> Any:
        params = getattr(ctx, "params", None)
        if getattr(ctx, "method", None) != "tools/call" or not isinstance(params, Mapping):
            return await call_next(ctx)
        arguments = params.get("arguments") or {}
        tool = next((t for t in await server.list_tools() if t.name == params.get("name")), None)
        if tool is None or not isinstance(arguments, dict):
            return await call_next(ctx)
        bad = unknown_arguments(dict(tool.input_schema), arguments)
        if not bad:
            return await call_next(ctx)
        parts = []
        for where, name, valid in bad:
            close = difflib.get_close_matches(name, valid, n=1, cutoff=0.5)
            guess = f"; did you mean {where}{close[0]!r}?" if close else ""
            parts.append(f"unknown argument {where}{name!r} for tool {tool.name}{guess}")
        where, _, valid = bad[0]
        failure = ToolFailure(
            "invalid_argument",
            "; ".join(parts),
            f"valid {'arguments' if not where else 'keys of ' + where.rstrip('.')}: {', '.join(valid)}",
        )
        return _error_result(failure).model_dump(by_alias=True, exclude_none=True, mode="json")

    return middleware
