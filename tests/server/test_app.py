"""The application factory, against a real uvicorn server and a real HTTP client."""

from __future__ import annotations

import httpx

from server.app import create_app
from server.settings import Settings
from tests.server.conftest import RunningServer, wait_engine_ready


def test_health_and_games_over_http(live_server: RunningServer, server_settings: Settings) -> None:
    dialect = "postgresql" if server_settings.database_url.startswith("postgresql") else "sqlite"
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        health = client.get("/health")
        assert health.status_code == 200
        body = health.json()
        assert body == {"status": "ok", "database": dialect, "engine": body["engine"]}
        # The house engine's compiled search loads on a thread of its own after start-up.
        assert wait_engine_ready(client) == "ready"
        assert client.get("/games").json() == {
            "games": ["checkers", "connect4", "nim", "tictactoe"]
        }
        assert client.get("/docs").status_code == 200
        schema = client.get("/openapi.json").json()
        assert "/health" in schema["paths"]


def test_unknown_paths_are_404_not_500(live_server: RunningServer) -> None:
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        response = client.get("/no/such/thing")
        assert response.status_code == 404


def test_apps_are_independent() -> None:
    first = create_app(Settings(database_url="sqlite+aiosqlite:///a.db"))
    second = create_app(Settings(database_url="sqlite+aiosqlite:///b.db"))
    assert first is not second
    assert first.state.settings.database_url != second.state.settings.database_url
