"""`ccmemory start` / `stop` wrap docker compose; without Docker they say why and exit non-zero.

No Docker engine runs on these machines: the "missing" paths use a PATH without docker, and the
other paths a stand-in `docker` script that answers the way the real client does (its messages
are copied from Docker 27) and logs the arguments it got.
"""

from __future__ import annotations

import stat
from pathlib import Path

from tests.conftest import REPO_ROOT, RunCli

REAL_DAEMON_DOWN = (
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
)


def fake_docker(bin_dir: Path, *, compose: bool = True, engine: bool = True, up_code: int = 0) -> Path:
    """A `docker` stand-in on PATH; returns the file its arguments are logged to."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    log = bin_dir / "docker.log"
    script = f"""#!/bin/sh
echo "$@" >> {log}
if [ "$1" = "compose" ]; then
  if [ {int(compose)} = 0 ]; then
    echo "docker: 'compose' is not a docker command." >&2
    echo "See 'docker --help'" >&2
    exit 1
  fi
  if [ "$2" = "version" ]; then echo "Docker Compose version v2.29.1"; exit 0; fi
  if [ {int(engine)} = 0 ]; then echo "{REAL_DAEMON_DOWN}" >&2; exit 1; fi
  exit {up_code}
fi
if [ "$1" = "info" ]; then
  if [ {int(engine)} = 0 ]; then
    echo "{REAL_DAEMON_DOWN}" >&2
    exit 1
  fi
  echo "27.1.1"; exit 0
fi
exit 0
"""
    path = bin_dir / "docker"
    path.write_text(script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return log


def env_with(path: str, password: str | None = "a-long-password") -> dict[str, str]:
    env = {"PATH": path}
    if password is not None:
        env["CCMEMORY_NEO4J_PASSWORD"] = password
    return env


def test_start_without_docker_says_so(tmp_path: Path, run_cli: RunCli) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    for cmd in ("start", "stop"):
        proc = run_cli(tmp_path, cmd, env=env_with(str(empty)), check=False)
        assert proc.returncode == 3, proc.stderr
        assert "Docker is not installed" in proc.stderr
        assert "CCMEMORY_BACKEND=neo4j" in proc.stderr and "CCMEMORY_NEO4J_URI" in proc.stderr
        assert "CCMEMORY_NEO4J_PASSWORD" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_start_without_compose_plugin(tmp_path: Path, run_cli: RunCli) -> None:
    bin_dir = tmp_path / "bin"
    log = fake_docker(bin_dir, compose=False)
    proc = run_cli(tmp_path, "start", env=env_with(str(bin_dir)), check=False)
    assert proc.returncode == 4, proc.stderr
    assert "compose plugin" in proc.stderr and "'compose' is not a docker command" in proc.stderr
    assert "up" not in log.read_text().split()


def test_start_with_engine_down(tmp_path: Path, run_cli: RunCli) -> None:
    bin_dir = tmp_path / "bin"
    log = fake_docker(bin_dir, engine=False)
    proc = run_cli(tmp_path, "start", env=env_with(str(bin_dir)), check=False)
    assert proc.returncode == 5, proc.stderr
    assert "Docker engine is not running" in proc.stderr and "Is the docker daemon running?" in proc.stderr
    assert "CCMEMORY_NEO4J_URI" in proc.stderr
    assert not any(" up " in f" {line} " for line in log.read_text().splitlines())


def test_start_needs_a_password(tmp_path: Path, run_cli: RunCli) -> None:
    bin_dir = tmp_path / "bin"
    log = fake_docker(bin_dir)
    for pw in (None, "short"):
        proc = run_cli(tmp_path, "start", env=env_with(str(bin_dir), password=pw), check=False)
        assert proc.returncode == 2 and "CCMEMORY_NEO4J_PASSWORD" in proc.stderr, proc.stderr
    assert not log.exists()


def test_start_and_stop_run_docker_compose(tmp_path: Path, run_cli: RunCli) -> None:
    bin_dir = tmp_path / "bin"
    log = fake_docker(bin_dir)
    compose = str(REPO_ROOT / "docker-compose.yml")
    proc = run_cli(tmp_path, "start", env=env_with(str(bin_dir)))
    assert "bolt://127.0.0.1:7687" in proc.stdout and "CCMEMORY_BACKEND=neo4j" in proc.stdout
    assert f"compose -f {compose} up -d" in log.read_text().splitlines()
    # stop does not need the password (compose still interpolates it: ccmemory fills a stand-in)
    proc = run_cli(tmp_path, "stop", "--volumes", env=env_with(str(bin_dir), password=None))
    assert f"compose -f {compose} down --volumes" in log.read_text().splitlines()
    assert "deleted" in proc.stdout


def test_compose_failure_is_passed_on(tmp_path: Path, run_cli: RunCli) -> None:
    bin_dir = tmp_path / "bin"
    fake_docker(bin_dir, up_code=17)
    proc = run_cli(tmp_path, "start", env=env_with(str(bin_dir)), check=False)
    assert proc.returncode == 17 and "docker compose up exited 17" in proc.stderr


def test_packaged_compose_file_is_the_repo_one() -> None:
    from ccmemory.surfaces.cli.cmd_neo4j import compose_file

    path = compose_file()
    assert path.is_file() and "neo4j:5.26-community" in path.read_text(encoding="utf-8")
