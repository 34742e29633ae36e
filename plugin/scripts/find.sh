# Sourced by hook.sh and mcp.sh: sets $exe to the ccmemory command, or to "" when none is found.
# Looked for in order: $CCMEMORY_BIN; PATH; ~/.local/bin (pipx, `uv tool install`, pip --user);
# the command `ccmemory init` last recorded in the personal folder ($CCMEMORY_HOME, else
# $XDG_CONFIG_HOME/ccmemory, else ~/.config/ccmemory), so a clone's .venv that is not on PATH
# still works. Shell builtins only: the hooks run on every tool call.
exe=""
if [ -n "$CCMEMORY_BIN" ] && [ -x "$CCMEMORY_BIN" ]; then
  exe=$CCMEMORY_BIN
else
  exe=$(command -v ccmemory 2>/dev/null) || exe=""
fi
if [ -z "$exe" ] && [ -x "$HOME/.local/bin/ccmemory" ]; then
  exe="$HOME/.local/bin/ccmemory"
fi
if [ -z "$exe" ]; then
  _ccm_home=${CCMEMORY_HOME:-${XDG_CONFIG_HOME:-$HOME/.config}/ccmemory}
  if [ -r "$_ccm_home/bin-path" ]; then
    IFS= read -r _ccm_cand < "$_ccm_home/bin-path"
    [ -n "$_ccm_cand" ] && [ -x "$_ccm_cand" ] && exe=$_ccm_cand
  fi
fi
CCMEMORY_INSTALL_HINT="install it from a clone of ccmemory with: pipx install /path/to/ccmemory (or: uv tool install /path/to/ccmemory), then run: ccmemory init in your repository"
