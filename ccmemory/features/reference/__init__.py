"""Reference knowledge (Domain 2): caching pages and papers into ``.ccmemory/reference/``, searching
it by section, its checks and the operations the CLI and MCP tools share. Reading and chunking
the tree is ``ccmemory.core.reftree``; indexing it is ``ccmemory.app.refsync``."""
