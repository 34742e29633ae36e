#!/bin/sh
# ccmemory plugin hook wrapper: `hook.sh <Event>` runs `ccmemory hook <Event>` with the hook's
# JSON on stdin. When the ccmemory command is not installed, SessionStart prints a one-line hint
# and every hook exits 0: a missing tool must never break a Claude Code session.
event="$1"
if command -v ccmemory >/dev/null 2>&1; then
  exec ccmemory hook "$event"
fi
cat >/dev/null 2>&1  # drain stdin
if [ "$event" = "SessionStart" ]; then
  echo "ccmemory plugin: the ccmemory command is not installed; run: pipx install ccmemory (or pip install ccmemory), then ccmemory init in your repository."
fi
exit 0
