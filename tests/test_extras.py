"""The lean install (issue 33): what lives in an extra is never imported by the base commands, and a
command that needs a missing extra names the `pip install` to run (no traceback).

The extras are installed in the test environment ([dev] pulls [all]), so "missing" is made real by
a folder of stand-in packages first on PYTHONPATH whose import fails like an absent package."""

from __future__ import annotations

import json
from pathlib import Path

from ccmemory.core import extras
from tests.conftest import REPO_ROOT, RunCli

OPTIONAL = ("neo4j", "anthropic", "voyageai", "readability", "markdownify", "pypdf", "mkdocs", "material")


def _hide(tmp_path: Path, modules: tuple[str, ...] = OPTIONAL) -> dict[str, str]:
    hidden = tmp_path / "hidden"
    for name in modules:
        (hidden / name).mkdir(parents=True, exist_ok=True)
        (hidden / name / "__init__.py").write_text(f'raise ImportError("No module named {name} (hidden)")\n')
    return {"PYTHONPATH": f"{hidden}:{REPO_ROOT}"}


def test_every_extra_is_installed_for_the_tests() -> None:
    assert {name: extras.missing(name) for name in extras.EXTRAS} == {name: [] for name in extras.EXTRAS}


def test_the_base_commands_need_no_extra(repo: Path, run_cli: RunCli, tmp_path: Path) -> None:
    env = _hide(tmp_path)
    made = json.loads(run_cli(repo, "new", "fact", "The heron nests by the weir", "--json", env=env).stdout)
    hits = json.loads(run_cli(repo, "search", "where does the heron nest", "--json", env=env).stdout)
    assert hits[0]["id"] == made["id"]
    assert made["id"] in json.loads(run_cli(repo, "context", "--json", env=env).stdout)["ids"]
    run_cli(repo, "reindex", "--full", env=env)
    run_cli(repo, "check", env=env)
    doctor = json.loads(run_cli(repo, "doctor", "--json", env=env).stdout)
    assert doctor["ok"] is True
    mcp = run_cli(repo, "mcp", "--help", env=env)
    assert "Traceback" not in mcp.stderr


def test_a_missing_extra_is_named_with_its_pip_install(repo: Path, run_cli: RunCli, tmp_path: Path) -> None:
    env = _hide(tmp_path)
    site = run_cli(repo, "site", "build", env=env, check=False)
    assert site.returncode == 1 and "Traceback" not in site.stderr
    assert (
        "needs the optional 'site' extra" in site.stderr
        and "pip install -e '" in site.stderr
        and "[site]'" in site.stderr
    )
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    cache = run_cli(repo, "cache", str(pdf), env=env, check=False)
    assert cache.returncode == 1 and "[reference]'" in cache.stderr
    neo = run_cli(repo, "search", "heron", env={**env, "CCMEMORY_BACKEND": "neo4j"}, check=False)
    assert neo.returncode != 0 and "Traceback" not in neo.stderr
    assert "the Neo4j backend (backend: neo4j) needs the optional 'neo4j' extra" in neo.stderr


def test_the_demo_runs_on_the_base_install_and_names_a_command_that_works(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """README's first command: the demo needs no extra, and its "try it yourself" line is a command
    a new shell can run (the full path when the .venv is not on PATH, issue 33)."""
    import os
    import shlex
    import subprocess

    env = {**_hide(tmp_path), "PATH": "/usr/bin:/bin"}
    out = run_cli(tmp_path, "demo", env=env).stdout
    line = next(x for x in out.splitlines() if x.startswith("Try it yourself: "))
    folder, command = line.removeprefix("Try it yourself: cd ").split(" && ", 1)
    argv = shlex.split(command)
    assert os.path.isabs(argv[0]) and argv[0].endswith("/ccmemory")
    proc = subprocess.run(
        argv, cwd=folder, capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)
