"""Capture: from Claude Code hooks and transcripts to memory files.

Modules with one job each: `paths` (local state layout), `spool` (durable per-session event log),
`transcript` (JSONL parsing), `segment` (bounded work segment), `signals` (user-signal
classification), `extract` (LLM/rules -> validated, redacted, deduplicated memories), `providers/`
(LLM seam), `jobs` + `worker` (durable job queue and its detached drainer), `settings`.
Nothing here is imported by the hook fast path except `paths` and `spool`.
"""
