"""Both deployments count each client by its real address, whatever X-Forwarded-For it writes:
`arena cluster` (its TCP proxy names each client in a PROXY protocol header) and
docker-compose.yml's nginx (deploy/nginx.conf sets X-Forwarded-For), the servers run with
docker-compose.yml's environment. Every process of the cluster runs at its hard open-file
limit.

Needs ARENA_TEST_DATABASE_URL and ARENA_TEST_REDIS_URL (skipped without them). Clients pick
their source address in 127.0.0.0/8 (all of it is loopback) to be told apart.
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml

from cli.cluster_member import has_worker_command
from cli.cluster_topology import Cluster, ClusterSpec
from tests.ports import free_port
from tests.server.cluster.test_cluster_launch import _empty_database
from tests.server.conftest import cluster_on_free_ports
from tests.server.test_connections import (
    DEADLINE_S,
    error_of,
    open_file_limit,
    read_response,
    wait_for,
)

DATABASE_URL = os.environ.get("ARENA_TEST_DATABASE_URL")
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")
pytestmark = pytest.mark.skipif(
    not (DATABASE_URL and REDIS_URL),
    reason="ARENA_TEST_DATABASE_URL and ARENA_TEST_REDIS_URL are not set",
)
ROOT = Path(__file__).resolve().parents[2]
LIMIT = 3
"""Registrations per address and hour, in this module's cluster."""


def compose_server_environment() -> dict[str, str]:
    """docker-compose.yml's environment of the servers, for servers whose proxy is on
    127.0.0.1: the compose network's addresses become that one."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    environment = compose["services"]["arena-1"]["environment"]
    assert environment == compose["services"]["arena-2"]["environment"]
    own = {"ARENA_DATABASE_URL", "ARENA_REDIS_URL", "ARENA_REDIS_KEY_PREFIX", "ARENA_ROLE"}
    env = {key: str(value) for key, value in environment.items() if key not in own}
    if "ARENA_TRUSTED_PROXIES" in env:
        env["ARENA_TRUSTED_PROXIES"] = "127.0.0.1"
    return env


@contextmanager
def soft_file_limit(limit: int) -> Iterator[None]:
    """Lower this process's soft open-file limit (which children inherit) for a while."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Two servers, a worker and the proxy on docker-compose.yml's server environment, each
    started at a soft open-file limit of 512."""
    assert DATABASE_URL and REDIS_URL
    asyncio.run(_empty_database(DATABASE_URL))
    root = tmp_path_factory.mktemp("proxied")
    spec = ClusterSpec(
        database_url=DATABASE_URL,
        redis_url=REDIS_URL,
        servers=2,
        workers=1 if has_worker_command() else 0,
        env={
            **compose_server_environment(),
            "ARENA_REDIS_KEY_PREFIX": f"test-{uuid.uuid4().hex[:12]}",
            "ARENA_RATE_REGISTRATIONS_PER_ADDRESS": f"{LIMIT}/hour",
            "ARENA_MAX_CONNECTIONS_PER_ADDRESS": "3",
            "ARENA_HTTP_IDLE_TIMEOUT_S": "600",
        },
        cwd=root,
        log_dir=root / "logs",
    )
    with soft_file_limit(512), cluster_on_free_ports(spec) as running:
        yield running


def client(base: str, source: str) -> httpx.Client:
    """A client whose connections come from `source`, each request on a new connection."""
    return httpx.Client(
        base_url=base,
        transport=httpx.HTTPTransport(local_address=source),
        timeout=10,
        limits=httpx.Limits(max_keepalive_connections=0),
    )


def registrations(base: str, source: str, count: int) -> list[int]:
    """Register `count` players from `source`, each with a different forged X-Forwarded-For;
    return the statuses."""
    statuses = []
    with client(base, source) as http:
        for i in range(count):
            name = f"p{uuid.uuid4().hex[:12]}"
            forged = {"X-Forwarded-For": f"127.0.0.{100 + i}, 127.0.0.{150 + i}"}
            statuses.append(http.post("/players", json={"name": name}, headers=forged).status_code)
    return statuses


def test_every_process_of_the_cluster_runs_at_its_hard_open_file_limit(cluster: Cluster) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard <= 512:
        pytest.skip("the hard open-file limit leaves nothing to raise")
    for member in cluster.members:
        # A worker is not waited for at start: it raises its limit once it has started.
        wait_for(
            lambda: open_file_limit(member.pid) == (hard, hard),  # noqa: B023 - called at once
            f"{member.name} kept a soft open-file limit below {hard}",
        )


def test_the_cluster_proxy_counts_each_client_by_its_own_address(cluster: Cluster) -> None:
    assert registrations(cluster.url, "127.0.0.2", LIMIT + 2) == [201] * LIMIT + [429] * 2
    assert registrations(cluster.url, "127.0.0.3", LIMIT) == [201] * LIMIT


def test_the_cluster_proxys_clients_hold_connections_by_their_own_address(
    cluster: Cluster,
) -> None:
    """Each server counts the address the PROXY header names: 3 connections per server and
    address, the proxy taking the servers in turn."""
    host, port = cluster.url.removeprefix("http://").split(":")
    held = []
    try:
        statuses = []
        for _ in range(3 * len(cluster.servers) + 2):
            sock = _connect(host, int(port), "127.0.0.4")
            held.append(sock)
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            answer = read_response(sock)
            statuses.append(int(answer.split()[1]))
            if statuses[-1] == 503:
                assert error_of(answer, 503)["code"] == "TOO_MANY_CONNECTIONS"
        assert statuses == [200] * 3 * len(cluster.servers) + [503] * 2
        # Another client of the proxy has its own count.
        with client(cluster.url, "127.0.0.5") as other:
            assert other.get("/health").status_code == 200
    finally:
        for sock in held:
            sock.close()


def _connect(host: str, port: int, source: str) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=10, source_address=(source, 0))
    sock.settimeout(DEADLINE_S)
    return sock


def test_nginx_sets_the_clients_address_and_the_servers_believe_only_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    with nginx_in_front(cluster, tmp_path) as base:
        assert registrations(base, "127.0.0.6", LIMIT + 2) == [201] * LIMIT + [429] * 2
        assert registrations(base, "127.0.0.7", LIMIT) == [201] * LIMIT


@contextmanager
def nginx_in_front(cluster: Cluster, tmp_path: Path) -> Iterator[str]:
    """Run deploy/nginx.conf, its upstream pointed at the cluster's servers; yield its URL."""
    nginx = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    if nginx is None:
        pytest.skip("nginx is not installed (.ci/run installs Debian's nginx-light)")
    conf = (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    for index, server in enumerate(cluster.servers, 1):
        conf = conf.replace(f"server arena-{index}:8000", f"server 127.0.0.1:{server.port}")
    port = free_port()
    conf = conf.replace("listen 8000;", f"listen 127.0.0.1:{port};")
    paths = "".join(
        f"    {name} {tmp_path / name};\n"
        for name in ("client_body_temp_path", "proxy_temp_path", "fastcgi_temp_path",
                     "uwsgi_temp_path", "scgi_temp_path")
    )  # fmt: skip
    conf = conf.replace("http {\n", f"http {{\n    access_log off;\n{paths}", 1)
    conf = f"pid {tmp_path / 'nginx.pid'};\nerror_log {tmp_path / 'error.log'};\n{conf}"
    (tmp_path / "nginx.conf").write_text(conf)
    checked = subprocess.run(
        [nginx, "-t", "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen(
        [nginx, "-c", str(tmp_path / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            try:
                httpx.get(f"{base}/health", timeout=2)
                break
            except httpx.HTTPError:
                assert process.poll() is None and time.monotonic() < deadline, "no nginx"
                time.sleep(0.1)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
