"""Features: session context and recall, capture, scopes (personal vault, cross-project),
analysis and checks, links, reference knowledge, the git lifecycle. A feature that needs the
service takes it as a parameter."""
