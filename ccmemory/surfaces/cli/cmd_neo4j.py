"""`ccmemory start` / `ccmemory stop`: the team's Neo4j server through docker compose.

They wrap `docker compose -f docker-compose.yml up -d` / `down` for the compose file that ships
with ccmemory (neo4j:5.26-community, named volumes, a healthcheck, the password from
CCMEMORY_NEO4J_PASSWORD). When Docker, its compose plugin or its engine is missing they say which
and how to point ccmemory at a Neo4j started some other way, and exit non-zero.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import click

from ccmemory.core import settings
from ccmemory.core.errors import CcmemoryError
from ccmemory.surfaces.cli.errors import exit_code

EXIT_CONFIG = 2  # the Docker exit codes (3, 4, 5): cli/errors.py


class DockerProblem(CcmemoryError):
    """`ccmemory start`/`stop` cannot drive Docker; each case has its exit code (cli/errors.py)."""


class DockerMissing(DockerProblem):
    """No `docker` (nor `docker-compose`) on PATH."""


class ComposeMissing(DockerProblem):
    """Docker without its compose plugin."""


class DockerEngineDown(DockerProblem):
    """The Docker engine is not running or not reachable."""


def compose_file() -> Path:
    """The compose file: CCMEMORY_COMPOSE_FILE, else the packaged copy, else the checkout's."""
    env = settings.COMPOSE_FILE.get()
    if env:
        return Path(env).expanduser().resolve()
    import ccmemory

    here = Path(ccmemory.__file__).resolve().parent  # the package folder
    packaged = here / "_data" / "docker-compose.yml"
    if packaged.is_file():
        return packaged
    return here.parent / "docker-compose.yml"


def bolt_uri() -> str:
    return f"bolt://127.0.0.1:{settings.NEO4J_BOLT_PORT.value()}"


def hint() -> str:
    return (
        "To use a Neo4j server started another way (a package, Neo4j Desktop, Aura), point "
        "ccmemory at it:\n"
        "  export CCMEMORY_BACKEND=neo4j\n"
        f"  export CCMEMORY_NEO4J_URI={bolt_uri()}      # or neo4j+s://<id>.databases.neo4j.io\n"
        "  export CCMEMORY_NEO4J_USER=neo4j\n"
        "  export CCMEMORY_NEO4J_PASSWORD='...'\n"
        "then run `ccmemory reindex` and `ccmemory doctor`."
    )


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(cmd, 127, "", str(exc))


def _first_line(proc: subprocess.CompletedProcess[str]) -> str:
    text = (proc.stderr or proc.stdout or "").strip()
    return text.splitlines()[0] if text else f"exit status {proc.returncode}"


def compose_command() -> list[str]:
    """`docker compose` (or the standalone `docker-compose`), checked to work with a running engine."""
    docker = shutil.which("docker")
    standalone = shutil.which("docker-compose")
    if docker is None and standalone is None:
        raise DockerMissing(
            "Docker is not installed: no `docker` command on PATH. Install Docker Engine or "
            "Docker Desktop (https://docs.docker.com/get-docker/) to run Neo4j with `ccmemory start`.",
        )
    base: list[str] | None = None
    probe = subprocess.CompletedProcess(["docker"], 127, "", "no `docker` on PATH")
    if docker is not None:
        probe = _run([docker, "compose", "version"])
        if probe.returncode == 0:
            base = [docker, "compose"]
    if base is None and standalone is not None and _run([standalone, "version"]).returncode == 0:
        base = [standalone]
    if base is None:
        raise ComposeMissing(
            "Docker is installed but its compose plugin is not: `docker compose version` failed "
            f"({_first_line(probe)}). Install the Docker Compose plugin "
            "(https://docs.docker.com/compose/install/).",
        )
    info = _run([docker or "docker", "info", "--format", "{{.ServerVersion}}"])
    if info.returncode != 0:
        raise DockerEngineDown(
            f"the Docker engine is not running or not reachable: `docker info` failed "
            f"({_first_line(info)}). Start Docker (Docker Desktop, or `sudo systemctl start docker`) "
            "and check that your user may use it.",
        )
    return base


def _fail(message: str, code: int) -> None:
    click.echo(f"ccmemory: {message}", err=True)
    click.echo(hint(), err=True)
    raise SystemExit(code)


@click.command("start")
@click.option("--wait/--no-wait", default=False, help="Wait until the server is healthy.")
def start_cmd(wait: bool) -> None:
    """Start the team's Neo4j 5.26 server with docker compose (data in named volumes).

    Needs CCMEMORY_NEO4J_PASSWORD (8+ characters); the server listens on 127.0.0.1 only.
    """
    path = compose_file()
    if not path.is_file():
        _fail(f"no compose file at {path} (set CCMEMORY_COMPOSE_FILE)", EXIT_CONFIG)
    password = settings.NEO4J_PASSWORD.get() or ""
    if len(password) < 8:
        _fail(
            "set CCMEMORY_NEO4J_PASSWORD to the server's password (8+ characters) before starting "
            "Neo4j: it becomes the password of the `neo4j` user on first start.",
            EXIT_CONFIG,
        )
    try:
        base = compose_command()
    except DockerProblem as exc:
        _fail(str(exc), exit_code(exc))
        return
    cmd = [*base, "-f", str(path), "up", "-d", *(["--wait"] if wait else [])]
    shown = "docker compose" if len(base) == 2 else "docker-compose"
    click.echo(f"$ {shown} {' '.join(cmd[len(base) :])}", err=True)
    code = subprocess.run(cmd).returncode
    if code != 0:
        click.echo(f"ccmemory: docker compose up exited {code} (see its message above)", err=True)
        raise SystemExit(code)
    click.echo(
        f"Neo4j 5.26 is {'up' if wait else 'starting'} on {bolt_uri()}. Point ccmemory at it:\n"
        "  export CCMEMORY_BACKEND=neo4j\n"
        f"  export CCMEMORY_NEO4J_URI={bolt_uri()}\n"
        "  (CCMEMORY_NEO4J_PASSWORD as set now)\n"
        "then run `ccmemory reindex` and `ccmemory doctor`."
    )


@click.command("stop")
@click.option("--volumes", is_flag=True, help="Also delete the data volumes (the index is rebuildable).")
def stop_cmd(volumes: bool) -> None:
    """Stop the Neo4j server started by `ccmemory start` (its data volumes are kept)."""
    path = compose_file()
    if not path.is_file():
        _fail(f"no compose file at {path} (set CCMEMORY_COMPOSE_FILE)", EXIT_CONFIG)
    try:
        base = compose_command()
    except DockerProblem as exc:
        _fail(str(exc), exit_code(exc))
        return
    env = dict(os.environ)
    env.setdefault(settings.NEO4J_PASSWORD.name, "unused-by-down")  # compose interpolates it anyway
    cmd = [*base, "-f", str(path), "down", *(["--volumes"] if volumes else [])]
    code = subprocess.run(cmd, env=env).returncode
    if code != 0:
        click.echo(f"ccmemory: docker compose down exited {code} (see its message above)", err=True)
        raise SystemExit(code)
    click.echo("Neo4j stopped" + (" and its data volumes deleted." if volumes else " (data volumes kept)."))
