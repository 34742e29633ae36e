"""The git-native lifecycle: promotion, git hooks, the watcher, review (diff/check), time travel and
staleness. Everything here reads git (plumbing only); nothing rewrites a memory file or touches the
user's working tree or current branch."""
