"""`arena cluster`: Arena scaled out on one machine, as local processes (docs/SCALING.md).

The command starts the topology of cli/cluster_topology.py (servers, workers and the proxy in
front, on one PostgreSQL database and one Redis), shows where each process runs, reports each
one that exits, and stops them all on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TextIO

import typer

from cli.cluster_member import ClusterError
from cli.cluster_services import check_services
from cli.cluster_topology import Cluster, ClusterSpec
from cli.common import fail
from cli.rlimit import raise_open_file_limit


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
