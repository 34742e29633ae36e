"""Numeric and duration options through the real CLI (issue 32): nan, inf and huge values are
refused with a usage error or clamped, never a traceback and never a hang."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, RunCli, cli_env


@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize("value", ["99999999999d", "999999999999999999999y", "10000000h"])
def test_huge_relative_ages_are_the_beginning_of_time(
    repo: Path, run_cli: RunCli, option: str, value: str
) -> None:
    run_cli(repo, "new", "fact", "The staging cluster has three nodes")
    proc = run_cli(repo, "search", "staging cluster", option, value, "--json", "--mode", "text", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    hits = proc.stdout
    assert ("three nodes" in hits) == (option == "--since")  # since the beginning: all; until then: none


@pytest.mark.parametrize(
    "args",
    [
        ["watch", "--for", "nan"],
        ["watch", "--for", "inf"],
        ["watch", "--debounce", "nan"],
        ["watch", "--reconcile", "-inf"],
        ["new", "fact", "x", "--confidence", "nan"],
        ["cache", "https://example.invalid/", "--timeout", "nan"],
        ["search", "x", "--limit", "99999999999999999999"],
        ["context", "--budget", "nan"],
    ],
)
def test_non_finite_and_out_of_range_numbers_are_usage_errors(repo: Path, args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", *args],
        cwd=repo,
        env=cli_env({"PYTHONPATH": str(REPO_ROOT)}),
        capture_output=True,
        text=True,
        timeout=30,  # a hang fails here
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "Invalid value" in proc.stderr
