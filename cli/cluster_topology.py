"""The local cluster's topology as processes: what to start (`ClusterSpec`), the running
processes (`Cluster`) and `running_cluster` (docs/SCALING.md).

N `arena serve` processes (ARENA_ROLE=server) on their own ports, M `arena worker` processes,
and a TCP proxy (cli/tcp_proxy.py) in front that gives each connection to the next server in
turn and names its client in a PROXY protocol header (the servers trust the proxy's address),
all on one PostgreSQL database (the truth) and one Redis (the bus). The same topology as
docker-compose.yml, without Docker.

The tests, bench/scale.py and `arena cluster` (cli/cluster.py) start and stop it here, reach
each process, kill one and start it again; each process is a `Member` (cli/cluster_member.py),
and the services are checked first (`check_services`, cli/cluster_services.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cli.cluster_member import (
    ClusterError,
    Member,
    arena_executable,
    client_sources,
    free_port,
    has_worker_command,
)
from cli.cluster_services import check_services

SERVER_ROLE = "server"
WORKER_ROLE = "worker"
PROXY_ROLE = "proxy"


@dataclass
class ClusterSpec:
    """What to start: how many servers and workers, on which services, where."""

    database_url: str
    """PostgreSQL, as SQLAlchemy's async URL (postgresql+asyncpg://...)."""
    redis_url: str
    servers: int = 2
    workers: int = 2
    host: str = "127.0.0.1"
    port: int = 0
    """The proxy's port (0: any free one)."""
    server_ports: list[int] | None = None
    """One port per server; by default free ones."""
    env: dict[str, str] = field(default_factory=dict)
    """Added to every process's environment (settings: ARENA_REDIS_KEY_PREFIX, limits, ...);
    it overrides the URLs above (a benchmark's baseline: ARENA_REDIS_URL empty)."""
    cwd: Path | None = None
    """Working directory of every process (the grader's directory is relative to it)."""
    log_dir: Path | None = None
    """Where each process's output goes (NAME.log); by default a new temporary directory."""
    echo: Callable[[str], None] | None = None
    """Also called with each output line, prefixed with its process's name."""
    start_timeout_s: float = 60.0


class Cluster:
    """A running (or stopped) local cluster: its members, the proxy's URL, start and stop."""

    def __init__(self, spec: ClusterSpec) -> None:
        if spec.servers < 1:
            raise ClusterError("a cluster needs at least one server")
        if spec.workers < 0:
            raise ClusterError("workers cannot be negative")
        self.spec = spec
        self._own_log_dir: tempfile.TemporaryDirectory[str] | None = None
        if spec.log_dir is None:
            self._own_log_dir = tempfile.TemporaryDirectory(prefix="arena-cluster-")
            self.log_dir = Path(self._own_log_dir.name)
        else:
            self.log_dir = spec.log_dir
            self.log_dir.mkdir(parents=True, exist_ok=True)
        ports = spec.server_ports or [free_port(spec.host) for _ in range(spec.servers)]
        if len(ports) != spec.servers:
            raise ClusterError(f"{spec.servers} servers need as many ports, not {len(ports)}")
        arena = arena_executable()
        base = {
            **os.environ,
            # Each line reaches the log (and the terminal) as it is written, not by the block.
            "PYTHONUNBUFFERED": "1",
            "ARENA_DATABASE_URL": spec.database_url,
            "ARENA_REDIS_URL": spec.redis_url,
            **spec.env,
        }
        # The servers take each client's address from the proxy's PROXY protocol header: they
        # trust the address the proxy connects from, besides any proxy the environment names.
        named = base.get("ARENA_TRUSTED_PROXIES", "").split(",")
        trusted = ",".join(
            dict.fromkeys(i for i in [*named, *client_sources(spec.host)] if i.strip())
        )
        self.servers = [
            self._member(
                f"server-{i + 1}",
                SERVER_ROLE,
                [arena, "serve", "--host", spec.host, "--port", str(port)],
                {**base, "ARENA_ROLE": SERVER_ROLE, "ARENA_TRUSTED_PROXIES": trusted},
                port,
            )
            for i, port in enumerate(ports)
        ]
        # Each worker claims a sandbox uid range of its own on the database (`arena worker
        # --help`): workers on one machine need no per-worker setting.
        self.workers = [
            self._member(
                f"worker-{i + 1}",
                WORKER_ROLE,
                [arena, "worker"],
                {**base, "ARENA_ROLE": WORKER_ROLE},
            )
            for i in range(spec.workers)
        ]
        proxy_port = spec.port or free_port(spec.host)
        proxy_argv = [
            sys.executable,
            "-m",
            "cli.tcp_proxy",
            "--listen",
            f"{spec.host}:{proxy_port}",
        ]
        for port in ports:
            proxy_argv += ["--backend", f"{spec.host}:{port}"]
        self.proxy = self._member("proxy", PROXY_ROLE, proxy_argv, dict(base), proxy_port)

    def _member(
        self, name: str, role: str, argv: list[str], env: dict[str, str], port: int | None = None
    ) -> Member:
        return Member(
            name, role, argv, env, self.spec.cwd, self.log_dir / f"{name}.log", port,
            echo=self.spec.echo,
        )  # fmt: skip

    @property
    def members(self) -> list[Member]:
        """Every process: the servers, the workers, then the proxy."""
        return [*self.servers, *self.workers, self.proxy]

    @property
    def url(self) -> str:
        """Where clients connect: the proxy."""
        return f"http://{self.spec.host}:{self.proxy.port}"

    def start(self) -> None:
        """Start every process and wait until each server answers, directly and via the proxy.

        The first server starts alone and migrates the database; the others and the workers
        start once it answers (two processes must not run the migrations at once). On any
        failure everything started is stopped and ClusterError says which process failed,
        with the end of its log.
        """
        if self.workers and not has_worker_command():
            raise ClusterError(
                "this Arena has no `arena worker` command yet: start the cluster with 0 workers"
            )
        try:
            first, *others = self.servers
            first.start()
            self.wait_ready(first)
            for member in others:
                member.start()
            for member in others:
                self.wait_ready(member)
            for member in self.workers:
                member.start()
            self.proxy.start()
            self.wait_ready(self.proxy)
            for member in self.workers:
                if not member.is_running():
                    raise ClusterError(self._exited(member))
        except BaseException:
            self.stop()
            raise

    def wait_ready(self, member: Member, timeout: float | None = None) -> None:
        """Wait until `member` (a server or the proxy) answers GET /health."""
        import httpx

        assert member.url is not None
        deadline = time.monotonic() + (timeout or self.spec.start_timeout_s)
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{member.url}/health", timeout=2).status_code < 500:
                    return
            if not member.is_running():
                raise ClusterError(self._exited(member))
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"{member.name} did not answer on {member.url} within "
                    f"{timeout or self.spec.start_timeout_s:g} s; its log "
                    f"({member.log}) ends:\n{member.tail()}"
                )
            time.sleep(0.1)

    @staticmethod
    def _exited(member: Member) -> str:
        assert member.process is not None
        member.wait(2)  # let its last lines reach the log
        return (
            f"{member.name} exited with code {member.process.returncode}; its log "
            f"({member.log}) ends:\n{member.tail()}"
        )

    def kill(self, member: Member) -> None:
        """SIGKILL `member` and its children at once (a crash, for takeover tests)."""
        member.kill_group()

    def restart(self, member: Member) -> None:
        """Start `member` again (after `kill`) on the same port; wait until a server answers."""
        member.start()
        if member.port is not None:
            self.wait_ready(member)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop every process: SIGTERM (the proxy first), then SIGKILL what remains after
        `timeout` seconds, children included. Safe to call twice."""
        self.proxy.signal(signal.SIGTERM)
        self.proxy.wait(timeout)
        rest = [*self.servers, *self.workers]
        for member in rest:
            member.signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for member in rest:
            member.wait(max(0.0, deadline - time.monotonic()))
        for member in self.members:
            member.kill_group()
        if self._own_log_dir is not None and self.spec.echo is None:
            # The logs were only for error messages: nothing refers to them any more.
            self._own_log_dir.cleanup()
            self._own_log_dir = None

    def __enter__(self) -> Cluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_cluster(spec: ClusterSpec) -> Iterator[Cluster]:
    """Start the cluster of `spec`, yield it, stop it on the way out."""
    check_services(spec.database_url, spec.redis_url)
    with Cluster(spec) as cluster:
        yield cluster
