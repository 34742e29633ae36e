"""Shared helpers for the capture tests: real git repos, real `ccmemory hook` subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"

# Realistic fake secrets (valid shapes, not real credentials)
SECRETS = {
    "aws": "AKIAZ7Q4XJ2M5N8P3R6T",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Xk2Lm9N",
    "github": "ghp_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu",
    "slack": "xoxb-204817362514-4093827165403-Zq8Xk2Lm9NwR7d9Kq2mXv8Lp",
    "openai": "sk-proj-Qm3Zt8Vx2Lp9Rk4Ws7Yn1Bc6Df0Gh5Jk",
    "anthropic": "sk-ant-api03-Zq8Xk2Lm9NwR7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9UuQm3Zt8Vx2Lp9Rk4Ws7Yn1Bc6Df0Gh5Jk-AbCdEf",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyNDIiLCJuYW1lIjoiQWxpY2UifQ.Xq3mZk8wRt2LpVn9Ys4Bc7Df1Gh6Jk0MnQ",
    "db_password": "Tr0ub4dor-and-3-horses",
    "env_token": "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "pem_body": "MIIEowIBAAKCAQEAyq8Xk2Lm9NwR7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9UuQm3Zt",
    "private_note": "my-home-address-42-elm-street",
}


def secret_text() -> str:
    s = SECRETS
    return (
        f"aws key {s['aws']} and aws_secret_access_key={s['aws_secret']}\n"
        f"GITHUB_TOKEN={s['github']}\nslack {s['slack']}\nopenai {s['openai']}\n"
        f"anthropic {s['anthropic']}\njwt {s['jwt']}\n"
        f"postgres://app:{s['db_password']}@db.internal:5432/prod\n"
        f"export API_TOKEN={s['env_token']}\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{s['pem_body']}\n-----END RSA PRIVATE KEY-----\n"
        f"<private>{s['private_note']}</private>"
    )


def assert_no_secrets(text: str, where: str) -> None:
    for name, value in SECRETS.items():
        assert value not in text, f"secret {name} leaked into {where}"


def make_repo(tmp_path: Path, name: str = "repo") -> Path:
    repo = tmp_path / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.email", "dev@example.com"], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "Dev"], check=True)
    (repo / ".ccmemory").mkdir()
    (repo / ".gitignore").write_text(".ccmemory/local/\n")
    return repo


def hook_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CCMEMORY_", "ANTHROPIC_"))}
    if os.environ.get("CCMEMORY_HOME"):  # the test's own personal vault (conftest._personal_home)
        env["CCMEMORY_HOME"] = os.environ["CCMEMORY_HOME"]
    env.update(
        {
            "CCMEMORY_PROVIDER": "test",
            "CCMEMORY_WORKER_SETTLE": "0",
            "CCMEMORY_WORKER_IDLE": "0.5",
            "CCMEMORY_USER_ID": "dev@example.com",
        }
    )
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    env.update(extra)
    return env


def run_hook(
    event: str, payload: Any, cwd: Path, env: dict[str, str] | None = None, raw: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run(
        [sys.executable, "-m", "ccmemory", "hook", event],
        input=data,
        capture_output=True,
        cwd=cwd,
        env=env or hook_env(),
        timeout=60,
    )


def worker_busy(repo: Path) -> bool:
    import fcntl

    lock = repo / ".ccmemory" / "local" / "worker.lock"
    if not lock.exists():
        return False
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def wait_for_worker(repo: Path, timeout: float = 60.0) -> None:
    pending = repo / ".ccmemory" / "local" / "jobs" / "pending"
    deadline = time.time() + timeout
    while time.time() < deadline:
        busy = worker_busy(repo)
        left = list(pending.glob("*.json")) if pending.exists() else []
        if not busy and not left:
            return
        time.sleep(0.1)
    raise AssertionError(f"worker did not finish: pending={list(pending.glob('*.json'))}")


def read_memory(path: Path) -> Any:
    """The Memory in a file, parsed by the vault (independent of YAML layout)."""
    from ccmemory.core.vault import Vault

    return Vault(path.parents[2]).read(path)


def memory_files(repo: Path) -> list[Path]:
    base = repo / ".ccmemory"
    return sorted(
        p for p in base.rglob("*.md") if "local" not in p.relative_to(base).parts and p.name != "README.md"
    )


def all_local_text(repo: Path) -> str:
    """Every text file under .ccmemory/local/ (spool, jobs, logs, usage), concatenated."""
    out = []
    for p in (repo / ".ccmemory" / "local").rglob("*"):
        if p.is_file() and p.suffix in (".jsonl", ".json", ".log"):
            out.append(p.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(out)
