"""ccmemory: persistent, reviewable memory for Claude Code.

Kept empty on purpose: hooks import this package on every tool call, so nothing heavy loads here.
"""

__version__ = "0.1.0"
