"""A memory's `files:` are stored as repository paths, whoever writes it (`ccmemory new`, the MCP
record tools, capture), so file recall (which compares repository-relative paths) fires for them;
a path outside the repository is refused; `check` warns about hand-written ones that cannot match.
Real git repositories, the real CLI and MCP server."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from ccmemory.core.repopath import entry_problem, repo_path
from ccmemory.features.capture.extract import Context, to_memory
from tests._mcp_client import SyncClient, make_repo
from tests.conftest import RunCli


def _files_of(path: Path) -> list[str]:
    front = path.read_text(encoding="utf-8").split("---\n")[1]
    return list(yaml.safe_load(front).get("files") or [])


def _memory_files(repo: Path) -> set[Path]:
    return {p for p in (repo / ".ccmemory").rglob("*.md") if "local" not in p.relative_to(repo).parts}


@pytest.mark.parametrize(
    ("entry", "cwd", "stored"),
    [
        ("{root}/src/app.py", "src/sub", "src/app.py"),  # absolute, inside
        ("./local.py", "src/sub", "src/sub/local.py"),  # relative to the current folder
        ("../x/../app.py", "src/sub", "src/app.py"),  # `..` resolved
        ("local.py", None, "local.py"),  # no current folder (MCP): relative to the root
        ("src/**/*.tsx", "src/sub", "src/**/*.tsx"),  # a glob is a repository pattern
        ("*.tf", "src/sub", "*.tf"),
        ("./*.py", "src/sub", "src/sub/*.py"),  # ... unless it starts with ./
        ("infra/", None, "infra/"),  # a folder keeps its slash
        ("{root}/infra/", "src", "infra/"),
        ("src\\win\\path.py", None, "src/win/path.py"),
        ("/etc/passwd", "src", None),  # outside
        ("../../outside.py", "src", None),
        ("..", None, None),
        (".", None, None),  # the repository itself
        ("{root}", "src", None),
        ("C:\\Users\\me\\x.py", None, None),
    ],
)
def test_repo_path(tmp_path: Path, entry: str, cwd: str | None, stored: str | None) -> None:
    root = tmp_path / "r"
    (root / "src" / "sub").mkdir(parents=True)
    text = entry.format(root=root)
    assert repo_path(text, root, root / cwd if cwd else None) == stored


def test_repo_path_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    assert repo_path(f"{tmp_path}/link/src/a.py", real) == "src/a.py"
    assert repo_path(f"{real}/src/a.py", tmp_path / "link") == "src/a.py"
    assert repo_path("./a.py", tmp_path / "link", real / "src") == "src/a.py"


def test_new_stores_repository_paths_from_a_subfolder(repo: Path, run_cli: RunCli) -> None:
    sub = repo / "src" / "sub"
    sub.mkdir(parents=True)
    out = run_cli(
        sub,
        "new",
        "gotcha",
        "Paths as typed",
        "--file",
        str(repo / "src" / "app.py"),
        "--file",
        "./local.py",
        "--file",
        "../x/../../README.md",
        "--file",
        "src/**/*.tsx",
        "--file",
        f"{repo}/infra/",
        "--body",
        "x",
    ).stdout.strip()
    stored = _files_of(sub / out)
    assert stored == ["src/app.py", "src/sub/local.py", "README.md", "src/**/*.tsx", "infra/"]
    assert str(repo) not in (sub / out).read_text(encoding="utf-8")  # no machine-local path
    recalled = run_cli(repo, "recall", "--file", "src/sub/local.py").stdout
    assert "Paths as typed" in recalled


def test_new_refuses_a_path_outside_the_repository(repo: Path, run_cli: RunCli) -> None:
    before = _memory_files(repo)
    args = ["new", "gotcha", "Outside", "--file", "src/ok.py", "--file", "/etc/passwd", "--body", "x"]
    proc = run_cli(repo, *args, check=False)
    assert proc.returncode != 0
    assert "'/etc/passwd'" in proc.stderr and "not inside the repository" in proc.stderr
    assert "no memory written" in proc.stderr
    assert _memory_files(repo) == before


def test_mcp_record_stores_repository_paths(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "src").mkdir()
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as client:
        out = client.call(
            "record",
            {
                "type": "gotcha",
                "title": "The parser chokes on BOMs",
                "body": "Strip the BOM before parsing.",
                "files": [str(repo / "src" / "parser.py"), "./src/../src/lexer.py"],
            },
        )
        assert _files_of(repo / out["path"]) == ["src/parser.py", "src/lexer.py"]
        before = _memory_files(repo)
        err = client.error(
            "record",
            {"type": "gotcha", "title": "Names a file elsewhere", "body": "x", "files": ["/etc/hosts"]},
        )
        assert err["code"] == "invalid_argument" and "'/etc/hosts'" in err["message"]
        assert _memory_files(repo) == before
        # a files filter given as Claude's tools give paths (absolute) finds it, as the relative one does
        for given in (str(repo / "src" / "parser.py"), "src/parser.py"):
            found = client.call("search", {"query": "parser BOM", "files": [given]})
            assert [r["id"] for r in found["results"]] == [out["id"]], (given, found)
    recalled = run_cli(repo, "recall", "--file", "src/parser.py").stdout
    assert "The parser chokes on BOMs" in recalled


def test_capture_drops_paths_outside_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    ctx = Context(root, "s-1", "main", "a@example.com", "job", datetime(2026, 11, 20, tzinfo=UTC))
    cand = {
        "type": "gotcha",
        "title": "The exporter times out above 500 invoices",
        "body": "Split the batch.",
        "files": [f"{root}/services/export.py", "/etc/hosts", "./services/"],
    }
    memory = to_memory(cand, ctx, "01JD3K8X9QF2B7M4R6T0VWYZAC", "test")
    assert memory is not None and memory.files == ["services/export.py", "services/"]


def test_check_warns_about_absolute_and_escaping_entries(repo: Path, run_cli: RunCli) -> None:
    path = repo / ".ccmemory" / "gotchas" / "hand.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        "---\ntype: gotcha\ntitle: Hand written\n"
        f"files: [{repo}/src/x.py, ../other/y.py, /etc/hosts, src/ok.py, 'src/**/*.ts']\n---\nBody.\n",
        encoding="utf-8",
    )
    proc = run_cli(repo, "check", check=False)
    lines = [ln for ln in proc.stdout.splitlines() if "hand.md:4: warning: files:" in ln]
    assert len(lines) == 3, proc.stdout
    text = "\n".join(lines)
    assert f"'{repo}/src/x.py' is an absolute path" in text and "write 'src/x.py'" in text
    assert "'../other/y.py' leaves the repository" in text
    assert "'/etc/hosts' is an absolute path" in text
    assert "0 error(s)" in proc.stdout + proc.stderr  # warnings only


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("/abs/x.py", "is an absolute path"),
        ("~/x.py", "is an absolute path"),
        ("C:\\x.py", "is an absolute path"),
        ("../x.py", "leaves the repository"),
        ("src/../../x.py", "leaves the repository"),
        ("src/../x.py", None),
        ("src/**/*.py", None),
        ("infra/", None),
    ],
)
def test_entry_problem(entry: str, problem: str | None) -> None:
    assert entry_problem(entry) == problem


def test_home_folder_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "r").mkdir()
    assert repo_path("~/r/a.py", tmp_path / "r") == "a.py"
    assert repo_path("~/elsewhere.py", tmp_path / "r") is None
    assert os.path.expanduser("~") == str(tmp_path)
