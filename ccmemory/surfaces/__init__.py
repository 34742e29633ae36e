"""Surfaces: the CLI, the MCP server, the Claude Code hooks, the dashboard and the site. Thin:
they parse input, call features and the service, and render."""
