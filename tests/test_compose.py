"""docker-compose.yml is valid and runs the topology docs/SCALING.md describes.

Compose itself checks the file when it is installed (`docker compose config`, or the older
`docker-compose config`: .ci/run installs Debian's); the topology checks then read what it
resolved. Without it they read the YAML directly (PyYAML, which uvicorn[standard] brings,
resolves the anchors and merge keys the file uses).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli.main import GROUPS
from server.connections import parse_trusted_proxies
from server.settings import all_settings, setting_named

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
NGINX = ROOT / "deploy" / "nginx.conf"
SERVERS = ("arena-1", "arena-2")
WORKERS = ("worker-1", "worker-2")
SERVER_PORT = 8000
PROXY_PORT = 8000


def compose_command() -> list[str] | None:
    """The compose command installed here: the Docker plugin, Debian's docker-compose, or none."""
    docker = shutil.which("docker")
    if docker is not None:
        found = subprocess.run(
            [docker, "compose", "version"], capture_output=True, check=False, timeout=30
        )
        if found.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy is not None else None


def resolved_by_compose(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [*command, "-f", str(COMPOSE), "config"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, f"compose refuses docker-compose.yml:\n{done.stderr}"
    loaded: dict[str, Any] = yaml.safe_load(done.stdout)
    return loaded


def read_yaml() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module", params=["compose", "yaml"])
def config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The file as compose resolves it, and as plain YAML (compose skipped when absent)."""
    if request.param == "yaml":
        return read_yaml()
    command = compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    return resolved_by_compose(command)


def argv(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return command.split() if isinstance(command, str) else [str(part) for part in command]


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # KEY=VALUE items
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def depends_on(service: dict[str, Any]) -> dict[str, str]:
    """Each service this one waits for, with the condition (service_started for a plain list)."""
    needs = service.get("depends_on") or {}
    if isinstance(needs, list):
        return dict.fromkeys(needs, "service_started")
    return {name: (how or {}).get("condition", "service_started") for name, how in needs.items()}


def published(service: dict[str, Any]) -> list[tuple[int, int]]:
    """(published, target) of each port the service publishes, short or long syntax."""
    ports = []
    for port in service.get("ports") or []:
        if isinstance(port, dict):
            ports.append((int(port["published"]), int(port["target"])))
        else:
            *_, outside, inside = str(port).split(":")
            ports.append((int(outside), int(inside)))
    return ports


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """Target -> source of each volume or bind mount, short or long syntax."""
    found = {}
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict):
            found[volume["target"]] = str(volume["source"])
        else:
            source, target = str(volume).split(":")[:2]
            found[target] = source
    return found


def test_the_services_are_the_documented_topology(config: dict[str, Any]) -> None:
    assert set(config["services"]) == {
        "postgres", "redis", *SERVERS, *WORKERS, "proxy", "house-bot",
    }  # fmt: skip


def test_servers_serve_with_the_server_role_on_postgresql_and_redis(
    config: dict[str, Any],
) -> None:
    services = config["services"]
    for name in SERVERS:
        server = services[name]
        assert argv(server)[:2] == ["arena", "serve"]
        assert argv(server)[argv(server).index("--port") + 1] == str(SERVER_PORT)
        env = environment(server)
        assert env["ARENA_ROLE"] == "server"
        assert env["ARENA_DATABASE_URL"].startswith("postgresql+asyncpg://")
        assert "@postgres:5432/" in env["ARENA_DATABASE_URL"]
        assert env["ARENA_REDIS_URL"].startswith("redis://redis:6379/")
        # Reached through the proxy only: nothing published, the proxy's forwarded address
        # trusted (the per-address limits count clients, not the proxy), never everyone's.
        assert not published(server)
        assert "FORWARDED_ALLOW_IPS" not in env
        assert parse_trusted_proxies(env["ARENA_TRUSTED_PROXIES"])
        assert "healthcheck" in server
    # The second waits for the first to answer: they never migrate the database at once.
    assert depends_on(services["arena-1"]) == {
        "postgres": "service_healthy", "redis": "service_healthy",
    }  # fmt: skip
    assert depends_on(services["arena-2"]) == {"arena-1": "service_healthy"}


def test_workers_run_the_queue_on_the_same_database_and_grader_directory(
    config: dict[str, Any],
) -> None:
    services = config["services"]
    server_env = environment(services[SERVERS[0]])
    grader_volume = mounts(services[SERVERS[0]])["/var/lib/arena/grader"]
    for name in WORKERS:
        worker = services[name]
        assert argv(worker) == ["arena", "worker"]
        env = environment(worker)
        assert env["ARENA_DATABASE_URL"] == server_env["ARENA_DATABASE_URL"]
        assert env["ARENA_REDIS_URL"] == server_env["ARENA_REDIS_URL"]
        assert env.get("ARENA_REDIS_KEY_PREFIX") == server_env.get("ARENA_REDIS_KEY_PREFIX")
        # The uploads the servers store are graded by the workers: one volume for both.
        assert mounts(worker)["/var/lib/arena/grader"] == grader_volume
        assert worker.get("privileged") is True  # the sandbox's namespaces
        assert not published(worker)


def test_every_arena_setting_named_exists() -> None:
    """A misspelt ARENA_ variable would be ignored silently by the servers and workers."""
    settings = {setting.variable for setting in all_settings()}
    services = read_yaml()["services"]
    for name in (*SERVERS, *WORKERS):
        named = {key for key in environment(services[name]) if key.startswith("ARENA_")}
        assert named <= settings, f"{name}: {named - settings} are not settings"


def test_every_arena_command_the_services_run_exists() -> None:
    commands = {command for names in GROUPS.values() for command in names}
    services = read_yaml()["services"]
    for name in (*SERVERS, *WORKERS):
        assert argv(services[name])[1] in commands
    script = (ROOT / "deploy" / "house-bot.sh").read_text(encoding="utf-8")
    assert re.findall(r"exec arena (\w+)", script) == ["bot"]


def test_the_proxy_publishes_one_port_and_balances_the_servers_with_websockets(
    config: dict[str, Any],
) -> None:
    proxy = config["services"]["proxy"]
    assert published(proxy) == [(PROXY_PORT, PROXY_PORT)]
    assert Path(mounts(proxy)["/etc/nginx/nginx.conf"]).name == NGINX.name
    assert set(depends_on(proxy)) == set(SERVERS)
    nginx = NGINX.read_text(encoding="utf-8")
    upstream = re.search(r"upstream arena \{(.*?)\}", nginx, re.S)
    assert upstream is not None
    servers = re.findall(r"^\s*server\s+([\w.-]+):(\d+)", upstream.group(1), re.M)
    assert servers == [(name, str(SERVER_PORT)) for name in SERVERS]
    assert re.search(rf"listen\s+{PROXY_PORT};", nginx)
    assert "proxy_pass http://arena;" in nginx
    # A WebSocket upgrade needs HTTP/1.1 to the server and both hop-by-hop headers passed on.
    assert "proxy_http_version 1.1;" in nginx
    assert re.search(r"proxy_set_header\s+Upgrade\s+\$http_upgrade;", nginx)
    assert re.search(r"proxy_set_header\s+Connection\s+\$connection_upgrade;", nginx)
    # The client's address set, not appended to: the client's own header is dropped.
    assert re.search(r"proxy_set_header\s+X-Forwarded-For\s+\$remote_addr;", nginx)


def test_the_house_bot_plays_through_the_proxy(config: dict[str, Any]) -> None:
    from bots.spec import parse_bot_spec

    bot = config["services"]["house-bot"]
    env = environment(bot)
    assert env["ARENA_SERVER"] == f"http://proxy:{PROXY_PORT}"
    parse_bot_spec(env["ARENA_BOT_SPEC"])  # a spec `arena bot` accepts (BotSpecError if not)
    script = Path(mounts(bot)[argv(bot)[-1]])
    assert script.name == "house-bot.sh" and (ROOT / "deploy" / script.name).is_file()
    assert "/var/lib/arena-bot" in mounts(bot)  # its token survives a restart


def test_the_settings_docs_scaling_lists_exist_with_their_defaults() -> None:
    """docs/SCALING.md's settings table names real settings and their numeric defaults."""
    table = (ROOT / "docs" / "SCALING.md").read_text(encoding="utf-8").split("## Settings")[1]
    rows = re.findall(r"^\| `ARENA_(\w+)` \| ([^|]+) \|", table, re.M)
    assert len(rows) >= 10
    for name, default in rows:
        setting = setting_named(name.lower())
        assert setting is not None, f"ARENA_{name} is not a setting"
        shown = default.strip().strip("`")
        if re.fullmatch(r"[\d.]+", shown):
            assert float(shown) == setting.field.default, f"ARENA_{name}: {shown}"
