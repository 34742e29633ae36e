"""Recall at the moment of work (issue 27): the memories that apply to a prompt, or to a file
Claude is about to touch, injected as a few compact lines within a token budget.

- :mod:`.config`: the ``recall:`` section of config.yaml and its environment overrides;
- :mod:`.paths`: which memory ``files:`` entries (paths, folders, globs) cover a path, and the
  paths a tool call touches;
- :mod:`.engine`: choosing the memories (relevance gates, types in force, never superseded) and
  rendering them (type, title, short id, one-line gist) within the budget;
- :mod:`.state`: what a session was already shown (never the same memory twice unless it changed);
- :mod:`.warm`: a local socket served by a running MCP server, so a hook gets hybrid (text +
  vector) candidates without loading the model; the hook falls back to full text without it.

The hook handlers (``ccmemory.surfaces.hooks``) call :func:`ccmemory.features.recall.run.prompt` and
:func:`ccmemory.features.recall.run.tool`; nothing here imports the embedder unless a warm process does.
"""
