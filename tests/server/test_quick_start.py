"""The quick start `arena serve` prints works against a real server."""

from __future__ import annotations

import json
import re

import httpx

from cli.server import quick_start
from server.settings import Settings
from tests.server.conftest import RunningServer


def test_the_quick_start_commands_work(live_server: RunningServer) -> None:
    """The JSON bodies `arena serve` prints are accepted by a real server, in order."""
    banner = quick_start(Settings(port=live_server.port))
    bodies = [json.loads(b) for b in re.findall(r"-d '(\{.*?\})'", banner)]
    assert len(bodies) == 3
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        token = client.post("/players", json=bodies[0]).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        created = client.post("/matches", json=bodies[1], headers=auth)
        assert created.status_code == 201
        match_id = created.json()["match_id"]
        moved = client.post(f"/matches/{match_id}/moves", json=bodies[2], headers=auth)
        assert moved.status_code == 200, moved.text
        assert moved.json()["move"] == "11-15"
        assert client.get(f"/matches/{match_id}").status_code == 200
