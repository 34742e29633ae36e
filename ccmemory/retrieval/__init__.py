"""Retrieval: embedders (local MiniLM, Voyage), the hybrid search over an index, the reader's view
of the index, and vector warming."""
