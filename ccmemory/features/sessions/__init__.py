"""Session history (issue 28): one local, private JSON record per Claude Code session, built from
its transcript (`record`), stored under `.ccmemory/local/sessions/` (`store`), searched (`search`)
and shown briefly at SessionStart (`digest`)."""
