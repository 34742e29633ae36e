"""The MCP surface: `ops` holds the tool logic (plain Python over `Service`), `server` wires it into
the `mcp` SDK. Importing `ccmemory.surfaces.mcp.server` loads the SDK (~0.7 s): only `ccmemory mcp` does."""
