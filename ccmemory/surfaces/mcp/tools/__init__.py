"""The MCP tools, one module a section:

- ``record``: the ``record_*`` tools (one per memory type, generated from ``model.TYPES``) and
  ``memory_supersede``;
- ``search``: search, search_precedent, search_semantic, query_context, query_by_topic, timeline,
  query_stale_decisions, query_failed_approaches, query_open_questions, get_memory;
- ``graph``: trace_decision, query_patterns, detect_issues, suggest_connections, get_metrics;
- ``sessions``: the ``sessions`` tool (the local session history: list / search / get);
- ``reference``: reference knowledge (query_reference, list_references, cache_url, ...);
- ``resources``: graph://schema, graph://stats, graph://project/{name}, ccmemory://memory/{id}.

Each module's logic functions are free of the SDK (arguments in, JSON-able dicts out,
``ToolFailure`` on error); its ``register(tool, server, backend)`` adds the tools to a server with
the server's ``tool`` decorator (structured errors, read-only/write annotations).
"""

from collections.abc import Callable
from typing import Any

#: ``tool(description, *, read_only=True, name=None)`` -> decorator registering a function
Tool = Callable[..., Callable[[Callable[..., Any]], Any]]
