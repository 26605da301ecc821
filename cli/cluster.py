"""`arena cluster`: Arena scaled out on one machine, as local processes (docs/SCALING.md).

N `arena serve` processes (ARENA_ROLE=server) on their own ports, M `arena worker` processes,
and a TCP proxy (cli/tcp_proxy.py) in front that gives each connection to the next server in
turn and names its client in a PROXY protocol header (the servers trust the proxy's address),
all on one PostgreSQL database (the truth) and one Redis (the bus). The same topology as
docker-compose.yml, without Docker.

The library half (`ClusterSpec`, `Cluster`, `running_cluster`) is what the tests and
bench/scale.py use to start and stop the topology, reach each process, kill one and start it
again; each process is a `Member` (cli/cluster_member.py), and the services are checked first
(`check_services`, cli/cluster_services.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, TextIO

import typer

from cli.cluster_member import (
    ClusterError,
    Member,
    arena_executable,
    client_sources,
    free_port,
    has_worker_command,
)
from cli.cluster_services import check_services
from cli.common import fail
from cli.rlimit import raise_open_file_limit

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


# -- the command --------------------------------------------------------------------------------


def register(app: typer.Typer) -> None:
    """Add the `cluster` command to `app`."""
    app.command("cluster")(cluster)


def cluster(
    servers: Annotated[
        int, typer.Option("--servers", "-n", min=1, help="`arena serve` processes.")
    ] = 2,
    workers: Annotated[
        int, typer.Option("--workers", "-w", min=0, help="`arena worker` processes.")
    ] = 2,
    host: Annotated[str, typer.Option(help="Address every process listens on.")] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            help="The proxy's port, where clients connect; the servers listen on the next "
            "ports (0: any free ones)."
        ),
    ] = 8000,
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            envvar="ARENA_DATABASE_URL",
            help="PostgreSQL URL (ARENA_DATABASE_URL), e.g. postgresql+asyncpg://user@host/db.",
        ),
    ] = None,
    redis_url: Annotated[
        str | None,
        typer.Option(
            "--redis", envvar="ARENA_REDIS_URL", help="Redis URL (ARENA_REDIS_URL), redis://host/0."
        ),
    ] = None,
    logs: Annotated[
        Path | None,
        typer.Option(help="Directory of each process's log (NAME.log); default: a new one."),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Do not show the processes' output.")
    ] = False,
) -> None:
    """Run Arena scaled out on this machine until Ctrl-C: servers, workers and a proxy.

    Starts SERVERS `arena serve` processes (ARENA_ROLE=server) and WORKERS `arena worker`
    processes on one PostgreSQL database and one Redis, and a TCP proxy on PORT that gives each
    connection (HTTP or WebSocket) to the next server in turn. Every other setting comes from
    the ARENA_* environment as for `arena serve`. Ctrl-C or SIGTERM stops everything.
    """
    if database is None or redis_url is None:
        missing = " and ".join(
            name
            for name, value in (
                ("--database/ARENA_DATABASE_URL", database),
                ("--redis/ARENA_REDIS_URL", redis_url),
            )
            if value is None
        )
        raise fail(
            f"a cluster needs PostgreSQL and Redis: set {missing}, e.g. "
            "ARENA_DATABASE_URL=postgresql+asyncpg://postgres@127.0.0.1/arena "
            "ARENA_REDIS_URL=redis://127.0.0.1:6379/0 (docs/SCALING.md)"
        )
    ports = None if port == 0 else [port + 1 + i for i in range(servers)]
    log_dir = logs or Path(tempfile.mkdtemp(prefix="arena-cluster-"))
    out: TextIO = sys.stdout
    lock = threading.Lock()

    def echo(line: str) -> None:
        with lock:
            out.write(line + "\n")
            out.flush()

    spec = ClusterSpec(
        database_url=database,
        redis_url=redis_url,
        servers=servers,
        workers=workers,
        host=host,
        port=port,
        server_ports=ports,
        log_dir=log_dir,
        echo=None if quiet else echo,
    )
    raise_open_file_limit()  # inherited by every process it starts
    try:
        check_services(database, redis_url)
        topology = Cluster(spec)
    except ClusterError as exc:
        fail(str(exc))
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        topology.start()
    except ClusterError as exc:
        fail(str(exc))
    echo(banner(topology))
    try:
        watch(topology, stop, echo)
    finally:
        echo("stopping: proxy, then servers and workers (SIGTERM)")
        topology.stop()
        echo("stopped")


def banner(topology: Cluster) -> str:
    """Return where to connect and what runs where."""
    spec = topology.spec
    from sqlalchemy.engine import make_url

    database = make_url(spec.database_url).render_as_string(hide_password=True)
    lines = [
        f"Arena cluster on {topology.url} (API docs at {topology.url}/docs): "
        f"{len(topology.servers)} servers, {len(topology.workers)} workers",
        f"  database {database}, Redis {spec.redis_url}",
        f"  proxy     {topology.url:<26} pid {topology.proxy.pid} (round robin per connection)",
    ]
    for member in [*topology.servers, *topology.workers]:
        lines.append(f"  {member.name:<9} {member.url or '':<26} pid {member.pid}")
    lines.append(f"Logs in {topology.log_dir}. Stop with Ctrl-C.")
    return "\n".join(lines)


def watch(topology: Cluster, stop: threading.Event, echo: Callable[[str], None]) -> None:
    """Until `stop` is set, report each member that exits (the others keep running)."""
    reported: set[str] = set()
    while not stop.wait(0.5):
        for member in topology.members:
            if member.name not in reported and not member.is_running():
                reported.add(member.name)
                assert member.process is not None
                echo(
                    f"{member.name} exited with code {member.process.returncode} "
                    f"(log: {member.log}); the others keep running"
                )
