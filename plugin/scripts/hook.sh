#!/bin/sh
# ccmemory plugin hook wrapper: `hook.sh <Event>` runs ccmemory's hook handler with the hook's
# JSON on stdin. When the ccmemory command is not installed, SessionStart prints a one-line hint
# and every hook exits 0: a missing tool must never break a Claude Code session.
#
# Speed: pip's generated `ccmemory` script imports `re` before doing anything (costly on busy
# machines), so when its first line names a plain interpreter we start that interpreter on
# `ccmemory.surfaces.hooks` directly. Only shell builtins are used to find it (no extra processes).
event="$1"
exe=$(command -v ccmemory 2>/dev/null)
if [ -n "$exe" ]; then
  IFS= read -r first < "$exe" 2>/dev/null
  py=${first#\#!}
  case "$first" in
    "#!"/*) case "$py" in *" "*) ;; *) [ -x "$py" ] && exec "$py" -c 'import sys
from ccmemory.surfaces.hooks import main
sys.exit(main(sys.argv[1:]))' "$event" ;; esac ;;
  esac
  exec "$exe" hook "$event"
fi
cat >/dev/null 2>&1  # drain stdin
if [ "$event" = "SessionStart" ]; then
  echo "ccmemory plugin: the ccmemory command is not installed; run: pipx install ccmemory (or pip install ccmemory), then ccmemory init in your repository."
fi
exit 0
