"""Core: the memory model, errors, settings, atomic writes, walking and reading files, redaction,
the vault of memory files and the reference tree, configuration, git state, telemetry. Imports
nothing else of ccmemory."""
