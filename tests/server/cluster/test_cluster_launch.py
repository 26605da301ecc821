"""`arena cluster`'s topology (cli/cluster_topology.py) on real PostgreSQL and Redis: every
server answers through the proxy, a WebSocket passes through it, and stopping leaves no process.

Needs ARENA_TEST_DATABASE_URL and ARENA_TEST_REDIS_URL (skipped without them); the Redis keys
and channels of each run carry a prefix of their own.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from typer.testing import CliRunner

from cli.cluster_member import ClusterError
from cli.cluster_services import check_services
from cli.cluster_topology import Cluster, ClusterSpec
from cli.main import create_cli
from tests.ports import free_port
from tests.server.conftest import cluster_on_free_ports
from tests.wsclient import connect

DATABASE_URL = os.environ.get("ARENA_TEST_DATABASE_URL")
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")
needs_services = pytest.mark.skipif(
    not (DATABASE_URL and REDIS_URL),
    reason="ARENA_TEST_DATABASE_URL and ARENA_TEST_REDIS_URL are not set",
)
ROOT = Path(__file__).resolve().parents[3]
HELLO = {"type": "hello", "protocol_version": "1.0", "client": "test"}


async def _empty_database(url: str) -> None:
    """Drop everything in the public schema (Arena's tables and the job queue's)."""
    engine = create_async_engine(url)
    async with engine.begin() as connection:
        await connection.execute(text("DROP SCHEMA public CASCADE"))
        await connection.execute(text("CREATE SCHEMA public"))
    await engine.dispose()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Two servers, two workers and the proxy on a fresh database, stopped after the module."""
    assert DATABASE_URL and REDIS_URL
    asyncio.run(_empty_database(DATABASE_URL))
    root = tmp_path_factory.mktemp("cluster")
    spec = ClusterSpec(
        database_url=DATABASE_URL,
        redis_url=REDIS_URL,
        servers=2,
        workers=2,
        env={"ARENA_REDIS_KEY_PREFIX": f"test-{uuid.uuid4().hex[:12]}"},
        cwd=root,
        log_dir=root / "logs",
    )
    with cluster_on_free_ports(spec) as running:
        yield running


def has_module(name: str) -> bool:
    """True if this build has module `name`."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # its package is absent too
        return False


def logged(cluster: Cluster, needle: str) -> list[str]:
    """The names of the servers whose log holds `needle`."""
    return [s.name for s in cluster.servers if needle in s.log.read_text(errors="replace")]


@needs_services
def test_each_server_answers_through_the_proxy_in_turn(cluster: Cluster) -> None:
    probes = [f"probe-{uuid.uuid4().hex}" for _ in range(4)]
    for probe in probes:
        # A new connection each time: the proxy balances connections, not requests.
        response = httpx.get(f"{cluster.url}/health?{probe}=1", timeout=10)
        assert response.status_code == 200
        assert response.json()["database"] == "postgresql"
    for server in cluster.servers:  # directly too: each on its own port
        assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
    # uvicorn's access log names each request: every probe reached exactly one server, and
    # consecutive connections alternate between the two.
    answered = [logged(cluster, probe) for probe in probes]
    assert all(len(names) == 1 for names in answered), answered
    first, second = answered[0][0], answered[1][0]
    assert first != second
    assert [names[0] for names in answered] == [first, second, first, second]


@needs_services
def test_a_player_registered_through_one_server_plays_through_the_other(
    cluster: Cluster,
) -> None:
    """The shared database: a token made on one server opens a WebSocket on another."""
    name = f"p{uuid.uuid4().hex[:10]}"
    first = cluster.servers[0].url
    registered = httpx.post(f"{first}/players", json={"name": name}, timeout=10)
    assert registered.status_code == 201, registered.text
    token = registered.json()["token"]

    async def hello_through_proxy() -> list[dict[str, object]]:
        url = cluster.url.replace("http://", "ws://") + "/ws"
        headers = {"Authorization": f"Bearer {token}"}
        answers = []
        async with connect(url, additional_headers=headers) as ws:
            await ws.send(json.dumps(HELLO))
            answers.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
            # Frames keep flowing both ways after the upgrade: a message the server cannot
            # read is answered with an error on the same socket.
            await ws.send("not json")
            answers.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        return answers

    for _ in cluster.servers:  # one connection to each server, in turn
        welcome, error = asyncio.run(hello_through_proxy())
        assert welcome["type"] == "welcome" and welcome["player"] == name
        assert error["type"] == "error" and error["code"] == "BAD_MESSAGE"


@needs_services
def test_the_compose_nginx_conf_passes_requests_and_websockets(
    cluster: Cluster, tmp_path: Path
) -> None:
    """deploy/nginx.conf, its upstream pointed at the cluster's servers, in a real nginx."""
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
    # Everything nginx writes goes to the test's directory.
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
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        while True:
            try:
                response = httpx.get(f"{base}/health", timeout=2)
                break
            except httpx.HTTPError:
                assert process.poll() is None and time.monotonic() < deadline, "no nginx"
                time.sleep(0.1)
        assert response.json()["database"] == "postgresql"
        name = f"n{uuid.uuid4().hex[:10]}"
        token = httpx.post(f"{base}/players", json={"name": name}, timeout=10).json()["token"]

        async def hello() -> tuple[dict[str, object], dict[str, object]]:
            headers = {"Authorization": f"Bearer {token}"}
            async with connect(f"ws://127.0.0.1:{port}/ws", additional_headers=headers) as ws:
                await ws.send(json.dumps(HELLO))
                welcome = json.loads(await asyncio.wait_for(ws.recv(), 10))
                await ws.send("not json")
                return welcome, json.loads(await asyncio.wait_for(ws.recv(), 10))

        welcome, error = asyncio.run(hello())
        assert welcome["type"] == "welcome" and welcome["player"] == name
        assert error["code"] == "BAD_MESSAGE"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@needs_services
def test_the_workers_play_a_tournament_started_through_the_proxy(cluster: Cluster) -> None:
    """The workers run on the servers' queue: a house-bot tournament's games are theirs."""
    if not has_module("server.jobs.tournament_games"):
        pytest.skip("tournament games do not run on workers in this build")
    with httpx.Client(base_url=cluster.url, timeout=10) as http:
        token = http.post("/players", json={"name": f"t{uuid.uuid4().hex[:10]}"}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        body = {
            "game": "tictactoe",
            "bots": ["random", "alphabeta:depth=2"],
            "games_per_pairing": 4,
        }
        created = http.post("/tournaments", json=body, headers=auth)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["tournament_id"]
        http.post(f"/tournaments/{tournament_id}/start", headers=auth).raise_for_status()
        deadline = time.monotonic() + 60
        while (state := http.get(f"/tournaments/{tournament_id}").json())["status"] != "finished":
            assert time.monotonic() < deadline, state
            time.sleep(0.2)
    assert state["games_done"] == state["games_total"] == 4
    assert all(worker.is_running() for worker in cluster.workers)
    # A worker logs each game it records; the servers (ARENA_ROLE=server) played none.
    played_by = [w.name for w in cluster.workers if tournament_id in w.log.read_text()]
    assert played_by, "no worker played the tournament's games"
    assert logged(cluster, f"tournament {tournament_id} game") == []


@needs_services
def test_the_compose_house_bot_plays_a_challenge_through_the_proxy(
    cluster: Cluster, tmp_path: Path
) -> None:
    """deploy/house-bot.sh (docker-compose.yml's house-bot) registers its player and plays."""
    if not has_module("server.cluster.bus"):
        pytest.skip("no bus between the servers in this build: a challenge stays on one")
    bot_name = f"house{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "ARENA_SERVER": cluster.url,
        "ARENA_BOT_NAME": bot_name,
        "ARENA_BOT_SPEC": "random",
        "ARENA_BOT_DIR": str(tmp_path),
    }
    bot = subprocess.Popen(
        ["sh", str(ROOT / "deploy" / "house-bot.sh")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        token_file = tmp_path / f"{bot_name}.token"
        deadline = time.monotonic() + 30
        while not (token_file.exists() and token_file.read_text()):
            assert bot.poll() is None and time.monotonic() < deadline, "the bot did not register"
            time.sleep(0.1)
        with httpx.Client(base_url=cluster.url, timeout=10) as http:
            name = f"p{uuid.uuid4().hex[:10]}"
            token = http.post("/players", json={"name": name}).json()["token"]
            auth = {"Authorization": f"Bearer {token}"}
            body = {"game": "tictactoe", "seats": [name, bot_name]}
            created = http.post("/matches", json=body, headers=auth)
            assert created.status_code == 201, created.text
            match_id = created.json()["match_id"]
            # The bot accepts the challenge over its WebSocket (maybe on the other server).
            while http.get(f"/matches/{match_id}").json()["status"] != "active":
                assert time.monotonic() < deadline + 30, "the bot did not accept"
                time.sleep(0.1)
            moved = http.post(f"/matches/{match_id}/moves", json={"move": "4"}, headers=auth)
            assert moved.status_code == 200, moved.text
            while len((state := http.get(f"/matches/{match_id}").json())["moves"]) < 2:
                assert time.monotonic() < deadline + 60, "the bot did not answer the move"
                time.sleep(0.1)
        assert state["moves"][0] == "4" and state["to_move"] == 0
    finally:
        os.killpg(bot.pid, signal.SIGKILL)
        bot.wait()


@needs_services
def test_stop_leaves_no_process(tmp_path: Path) -> None:
    assert DATABASE_URL and REDIS_URL
    spec = ClusterSpec(
        database_url=DATABASE_URL,
        redis_url=REDIS_URL,
        servers=2,
        workers=1,
        env={"ARENA_REDIS_KEY_PREFIX": f"test-{uuid.uuid4().hex[:12]}"},
        cwd=tmp_path,
    )
    with cluster_on_free_ports(spec) as running:
        members = running.members
        pids = [member.pid for member in members]
        assert all(member.is_running() for member in members)
        assert httpx.get(f"{running.url}/health", timeout=10).status_code == 200
    assert not any(member.is_running() for member in members)
    # Nothing left in any member's process group either (grading children, play-ahead forks).
    left = [pid for pid, group in _process_groups().items() if group in pids]
    assert left == []
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{running.url}/health", timeout=5)


@needs_services
def test_the_command_prints_where_to_connect_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    assert DATABASE_URL and REDIS_URL
    env = {
        **os.environ,
        "ARENA_DATABASE_URL": DATABASE_URL,
        "ARENA_REDIS_URL": REDIS_URL,
        "ARENA_REDIS_KEY_PREFIX": f"test-{uuid.uuid4().hex[:12]}",
    }
    command = [str(Path(sys.executable).parent / "arena"), "cluster", "--servers", "2"]
    process = subprocess.Popen(
        [*command, "--workers", "1", "--port", "0", "--quiet", "--logs", str(tmp_path)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("Arena cluster on http://127.0.0.1:"), first
        url = first.split()[3]
        banner = [process.stdout.readline() for _ in range(6)]
        pids = [int(line.rsplit("pid", 1)[1].split()[0]) for line in banner if " pid " in line]
        assert len(pids) == 4  # the proxy, two servers, one worker
        assert httpx.get(f"{url}/health", timeout=10).status_code == 200
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=60)[0]
        assert process.returncode == 0, rest
        assert "stopped" in rest
        assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]
        assert {f"{name}.log" for name in ("proxy", "server-1", "server-2", "worker-1")} <= {
            path.name for path in tmp_path.iterdir()
        }
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _process_groups() -> dict[int, int]:
    """pid -> process group of every process on this machine (Linux /proc)."""
    groups = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        groups[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[2])
    return groups


@needs_services
def test_an_unreachable_redis_is_named_before_anything_starts() -> None:
    assert DATABASE_URL
    with pytest.raises(ClusterError, match=r"cannot use Redis at redis://127\.0\.0\.1:\d+/0"):
        check_services(DATABASE_URL, f"redis://127.0.0.1:{free_port()}/0")


def test_an_unreachable_postgresql_is_named() -> None:
    url = f"postgresql+asyncpg://arena:secret@127.0.0.1:{free_port()}/arena"
    with pytest.raises(ClusterError, match="cannot use PostgreSQL at") as raised:
        check_services(url, "redis://127.0.0.1:6379/0")
    assert "secret" not in str(raised.value)  # the password is not shown


def test_sqlite_is_refused_with_the_reason() -> None:
    with pytest.raises(ClusterError, match="needs PostgreSQL"):
        check_services("sqlite+aiosqlite:///arena.db", "redis://127.0.0.1:6379/0")


def test_the_command_asks_for_both_services() -> None:
    env = {"ARENA_DATABASE_URL": "", "ARENA_REDIS_URL": ""}
    result = CliRunner().invoke(create_cli("cluster"), ["cluster"], env=env)
    assert result.exit_code == 2
    assert "ARENA_DATABASE_URL" in result.output and "ARENA_REDIS_URL" in result.output
