"""config.yaml validated like input (issue 33): one schema, problems with key and line, through
`check`, `doctor` and a warning on every CLI command; bad values fall back to their defaults."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from ccmemory.core.config import DEFAULT_CONFIG
from ccmemory.core.config_schema import validate
from tests.conftest import RunCli

DOCS = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"

BAD = """\
backend: sqlite
context:
  budget_tokens: -40
capture:
  provider: gpt-5
  worker: {idle_secnds: 4}
telemetry: sometimes
recal:
  enabled: true
mcp: {tools: all}
"""


def test_every_problem_names_its_key_and_line() -> None:
    got = {(p.key, p.line, p.level) for p in validate(yaml.safe_load(BAD), BAD)}
    assert got == {
        ("context.budget_tokens", 3, "error"),
        ("capture.provider", 5, "error"),
        ("capture.worker.idle_secnds", 6, "warning"),
        ("telemetry", 7, "error"),
        ("recal", 8, "warning"),
        ("mcp.tools", 10, "error"),
    }
    text = {p.key: p.message for p in validate(yaml.safe_load(BAD), BAD)}
    assert (
        "did you mean 'recall'" in text["recal"]
        and "did you mean 'idle_seconds'" in text["capture.worker.idle_secnds"]
    )
    assert "-40 is outside 1..100000" in text["context.budget_tokens"]
    assert "not one of auto, anthropic" in text["capture.provider"]


def test_the_shipped_and_documented_configs_are_valid() -> None:
    """init's config.yaml and the full example in docs/configuration.md pass the schema: the schema,
    the docs and the readers cannot drift apart without a failing test."""
    assert validate(yaml.safe_load(DEFAULT_CONFIG), DEFAULT_CONFIG) == []
    block = re.search(r"## config.yaml\n\n```yaml\n(.*?)```", DOCS.read_text(), re.S)
    assert block, "docs/configuration.md lost its config.yaml example"
    assert validate(yaml.safe_load(block.group(1)), block.group(1)) == []


def test_values_of_the_wrong_kind_are_problems_not_crashes() -> None:
    for text in (
        "context: [1, 2]\n",
        "recall: {max_memories: .nan}\n",
        "capture: {batch_chars: true}\n",
        "7: x\n",
    ):
        problems = validate(yaml.safe_load(text), text)
        assert len(problems) == 1 and problems[0].line == 1, (text, problems)


def test_check_doctor_and_commands_report_a_bad_config(repo: Path, run_cli: RunCli) -> None:
    run_cli(repo, "new", "fact", "The kestrel feeds at dawn", "--body", "Every morning.")
    (repo / ".ccmemory" / "config.yaml").write_text(BAD + "main_branch: trunk\nembedder: openai\n")
    check = run_cli(repo, "check", check=False)
    assert check.returncode == 1
    assert ".ccmemory/config.yaml:3: context.budget_tokens: -40 is outside" in check.stdout
    assert ".ccmemory/config.yaml:8: warning: recal: unknown key" in check.stdout
    # a command works on the defaults and says once that the file has problems
    ctx = run_cli(repo, "context", "--json")
    assert "kestrel" in json.loads(ctx.stdout)["text"]  # the budget fell back to 600, not -40
    assert "warning: .ccmemory/config.yaml:3: context.budget_tokens" in ctx.stderr
    assert "(and 6 more)" in ctx.stderr and "`ccmemory check`" in ctx.stderr
    doctor = json.loads(run_cli(repo, "doctor", "--json", check=False).stdout)
    problems = doctor["config"]["problems"]
    assert any("main_branch: no branch 'trunk'" in p for p in problems)
    assert any(p.startswith(".ccmemory/config.yaml:12: embedder: 'openai' is not one of") for p in problems)
    # the embedder's own message names where the choice came from (not CCMEMORY_EMBEDDER)
    assert "`embedder:` in .ccmemory/config.yaml" in doctor["embedder"]["reason"]
    text = run_cli(repo, "doctor", check=False).stdout
    assert "config       8 problem(s):" in text
    # a clean file: nothing said
    (repo / ".ccmemory" / "config.yaml").write_text(DEFAULT_CONFIG)
    assert "config.yaml" not in run_cli(repo, "search", "kestrel").stderr


def test_a_key_written_twice_is_a_warning_and_lines_point_at_the_one_kept() -> None:
    """YAML keeps the last of a key written twice, silently: appending a `recall:` block below the
    one `init` wrote replaced it, and its problem was reported at the first block's line."""
    text = "recall:\n  budget_tokens: 300\n  prompts: true\ncontext:\n  budget_tokens: 600\nrecall:\n  budget_tokens: -1\n"
    got = {(p.key, p.line, p.level) for p in validate(yaml.safe_load(text), text)}
    assert ("recall.budget_tokens", 7, "error") in got
    assert ("recall", 6, "warning") in got
    (twice,) = [p for p in validate(yaml.safe_load(text), text) if p.key == "recall"]
    assert "line 1 is ignored" in twice.message
