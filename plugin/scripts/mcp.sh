#!/bin/sh
# ccmemory plugin MCP server: `ccmemory mcp`, with the command found as the hooks find it
# (find.sh), so the plugin works when ccmemory is not on PATH.
. "$(dirname "$0")/find.sh"
if [ -z "$exe" ]; then
  echo "ccmemory plugin: cannot start the MCP server: the ccmemory command was not found (PATH, ~/.local/bin, CCMEMORY_BIN); $CCMEMORY_INSTALL_HINT." >&2
  exit 1
fi
exec "$exe" mcp "$@"
