#!/bin/sh
# ccmemory plugin hook wrapper: `hook.sh <Event>` runs ccmemory's hook handler with the hook's
# JSON on stdin. The command is found by find.sh (PATH, ~/.local/bin, the one `ccmemory init`
# recorded). When it is not installed, SessionStart prints a one-line hint
# and every hook exits 0: a missing tool must never break a Claude Code session.
#
# Speed: pip's generated `ccmemory` script imports `re` before doing anything (costly on busy
# machines), so when its first line names a plain interpreter we start that interpreter on
# `ccmemory.surfaces.hooks` directly. Only shell builtins are used to find it (no extra processes).
event="$1"
. "$(dirname "$0")/find.sh"
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
  echo "ccmemory plugin: the ccmemory command was not found (PATH, ~/.local/bin, CCMEMORY_BIN); $CCMEMORY_INSTALL_HINT."
fi
exit 0
