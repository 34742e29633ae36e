"""Issue #15: one settings module. Every CCMEMORY_* variable is read in ccmemory/settings.py
(nowhere else in the package), documented in docs/configuration.md (the generated table), and
the `context:` section is parsed once for config.py and the capture settings alike."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ccmemory.core import settings
from ccmemory.core.config import load_config
from ccmemory.core.errors import ConfigError
from ccmemory.features.capture import settings as capture_settings

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "ccmemory"
NAME = re.compile(r"CCMEMORY_[A-Z0-9_]*[A-Z0-9]")


def _is_var_name(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return NAME.fullmatch(node.value) is not None
    if isinstance(node, ast.JoinedStr) and node.values:  # f"CCMEMORY_{x}"
        first = node.values[0]
        return isinstance(first, ast.Constant) and str(first.value).startswith("CCMEMORY_")
    return False


def _reads(tree: ast.AST) -> list[int]:
    """Lines where a CCMEMORY_ name is used as a key: env["X"], env.get("X"), "X" in env, ..."""
    lines = []
    for node in ast.walk(tree):
        keys: list[ast.AST] = []
        if isinstance(node, ast.Subscript):
            keys = [node.slice]
        elif isinstance(node, ast.Call):
            keys = list(node.args)
        elif isinstance(node, ast.Compare):
            keys = [node.left]
        if any(_is_var_name(k) for k in keys):
            lines.append(getattr(node, "lineno", 0))
    return lines


def test_no_module_but_settings_reads_a_ccmemory_variable() -> None:
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path == PKG / "core" / "settings.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found += [f"{path.relative_to(ROOT)}:{line}" for line in _reads(tree)]
    assert found == [], "read these through ccmemory.core.settings: " + ", ".join(found)


def test_the_check_sees_a_read() -> None:
    """The AST check above would catch each way a variable is read (it is not vacuous)."""
    for code in (
        'os.environ["CCMEMORY_X"]',
        'os.environ.get("CCMEMORY_X", "0")',
        'os.getenv("CCMEMORY_X")',
        '"CCMEMORY_X" in env',
        'env.get(f"CCMEMORY_{k}")',
    ):
        assert _reads(ast.parse(code)) == [1], code
    assert _reads(ast.parse('"""see CCMEMORY_X"""\nprint("set CCMEMORY_X first")')) == []


def test_every_name_in_package_and_docs_is_a_known_variable() -> None:
    known = {v.name for v in settings.VARS} | set(settings.OUTSIDE)
    assert len(known) == len(settings.VARS) + len(settings.OUTSIDE)  # no name twice
    texts = [
        *PKG.rglob("*.py"),
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
        ROOT / "scripts/neo4j-dev",
    ]
    unknown = {
        f"{name} ({path.relative_to(ROOT)})"
        for path in texts
        for name in NAME.findall(path.read_text(encoding="utf-8"))
        if name not in known and not name.endswith("_DEV") and name != "CCMEMORY_NEO4J"
    }
    assert unknown == set()


def test_docs_table_is_the_generated_one() -> None:
    page = (ROOT / "docs/configuration.md").read_text(encoding="utf-8")
    begin = page.index("-->", page.index("<!-- settings-table: begin")) + len("-->\n")
    end = page.index("<!-- settings-table: end -->")
    assert page[begin:end] == settings.markdown_table(), "rerun: python -m ccmemory.core.settings"
    for var in settings.VARS:
        assert f"| `{var.name}` |" in page and var.doc
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "configuration.md" in mkdocs


def test_kinds_parse_as_documented() -> None:
    assert settings.DISABLE.get({"CCMEMORY_DISABLE": "1"}) is True
    assert settings.DISABLE.get({"CCMEMORY_DISABLE": "true"}) is False  # exactly 1
    assert settings.DISABLE.get({}) is False
    assert settings.CAPTURE.get({}) is None
    assert settings.CAPTURE.get({"CCMEMORY_CAPTURE": "Off"}) is False
    assert settings.CAPTURE.get({"CCMEMORY_CAPTURE": ""}) is False  # as before: empty turns it off
    assert settings.CAPTURE.get({"CCMEMORY_CAPTURE": "yes"}) is True
    assert settings.TELEMETRY.get({}) is True
    assert settings.TELEMETRY.get({"CCMEMORY_TELEMETRY": ""}) is True  # only an explicit off
    assert settings.TELEMETRY.get({"CCMEMORY_TELEMETRY": " NO "}) is False
    assert settings.MAX_TOKENS.get({"CCMEMORY_MAX_TOKENS": "1e3"}) == 1000
    assert settings.MAX_TOKENS.get({"CCMEMORY_MAX_TOKENS": "lots"}) is None
    assert settings.MCP_REFRESH_SECONDS.value({}) == 30.0
    assert settings.MCP_REFRESH_SECONDS.value({"CCMEMORY_MCP_REFRESH_SECONDS": "-1"}) == -1.0
    assert settings.MCP_REFRESH_SECONDS.value({"CCMEMORY_MCP_REFRESH_SECONDS": "soon"}) == 30.0
    assert settings.NEO4J_BOLT_PORT.value({"CCMEMORY_NEO4J_BOLT_PORT": "7690"}) == 7690
    assert settings.PROJECT.get({"CCMEMORY_PROJECT": ""}) is None


def _repo(tmp_path: Path, config: str) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".ccmemory").mkdir()
    (tmp_path / ".ccmemory/config.yaml").write_text(config, encoding="utf-8")
    return tmp_path


def test_context_is_parsed_once_for_config_and_capture(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        "project: p\ncontext:\n  enabled: true\n  budget_tokens: 900\n  reference_sections: 2\n"
        "capture:\n  context: {budget_tokens: 700}\n",
    )
    env: dict[str, str] = {}
    cfg, cap = load_config(root, env=env), capture_settings.load(root, env)
    assert (cfg.context_enabled, cfg.context_budget, cfg.context.reference_sections) == (True, 700, 2)
    assert (cap.context_enabled, cap.context_budget_tokens) == (True, 700)
    env = {"CCMEMORY_CONTEXT": "0", "CCMEMORY_CONTEXT_BUDGET": "300"}
    cfg, cap = load_config(root, env=env), capture_settings.load(root, env)
    assert (cfg.context_enabled, cfg.context_budget) == (False, 300)
    assert (cap.context_enabled, cap.context_budget_tokens) == (False, 300)
    # a string "false" in the file is off for both (config.py used to read it as true)
    (root / ".ccmemory/config.yaml").write_text("context: {enabled: 'false', budget_tokens: many}\n")
    cfg, cap = load_config(root, env={}), capture_settings.load(root, {})
    assert (
        (cfg.context_enabled, cfg.context_budget)
        == (False, 600)
        == (cap.context_enabled, cap.context_budget_tokens)
    )


def test_environment_wins_over_the_file(tmp_path: Path) -> None:
    root = _repo(
        tmp_path, "project: filed\nbackend: sqlite\nembedder: local\nneo4j: {uri: 'bolt://h:1', user: u}\n"
    )
    cfg = load_config(root, env={"CCMEMORY_USER_ID": "me@example.com"})
    assert (cfg.project, cfg.backend, cfg.neo4j_uri, cfg.neo4j_user, cfg.embedder) == (
        "filed",
        "sqlite",
        "bolt://h:1",
        "u",
        "local",
    )
    env = {
        "CCMEMORY_PROJECT": "envp",
        "CCMEMORY_BACKEND": "NEO4J",
        "CCMEMORY_NEO4J_URI": "bolt://e:2",
        "CCMEMORY_NEO4J_PASSWORD": "pw-from-env",
        "CCMEMORY_USER_ID": "me@example.com",
    }
    cfg = load_config(root, env=env)
    assert (cfg.project, cfg.backend, cfg.neo4j_uri, cfg.neo4j_password, cfg.user_id) == (
        "envp",
        "neo4j",
        "bolt://e:2",
        "pw-from-env",
        "me@example.com",
    )
    cap = capture_settings.load(
        root, {"CCMEMORY_PROVIDER": "rules", "CCMEMORY_MAX_LLM_CALLS": "3", "CCMEMORY_WORKER_IDLE": "2.5"}
    )
    assert (cap.provider, cap.max_llm_calls_per_session, cap.worker_idle_seconds) == ("rules", 3, 2.5)
    assert capture_settings.load(root, {"CCMEMORY_PROVIDER": "bogus"}).provider == "auto"


def test_bad_backend_is_a_config_error_naming_the_fix(tmp_path: Path) -> None:
    root = _repo(tmp_path, "backend: postgres\n")
    with pytest.raises(ConfigError) as err:
        load_config(root, env={})
    assert "postgres" in err.value.message and "CCMEMORY_BACKEND" in (err.value.hint or "")
    assert isinstance(err.value, ValueError)  # older callers catch ValueError


def test_settings_imports_only_os() -> None:
    code = (
        "import sys; before = set(sys.modules); import ccmemory.core.settings; "
        "print(sorted(m for m in set(sys.modules) - before if not m.startswith(('ccmemory', '__future__'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
