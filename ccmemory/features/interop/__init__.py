"""Interop (issue 30): memories in and out of other formats.

- `jsonfile`: every memory as one JSON document (`export --to json`) and back (`import --from
  json`): a lossless round trip of every frontmatter field and the body;
- `rulesout`: the curated rules in force as a marked, regenerated block of CLAUDE.md, AGENTS.md
  or a Cursor rule file, for agents that do not run the plugin;
- `rulesin`: agent rule files (CLAUDE.md, AGENTS.md, .cursorrules, .cursor/rules/*.mdc,
  copilot-instructions.md, .windsurfrules, GEMINI.md) in, one memory per rule.
"""
