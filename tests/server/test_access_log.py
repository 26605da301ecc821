"""No credential reaches a real `arena serve`'s log, on any route that carries one in its path
or query, while the rest of each line does.

The routes are read from the application's own route table by their parameters' names, so a
new route with a token in its path is checked (and its log redacted) without a word here.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from server.access_log import credential_paths, is_credential, redact
from server.app import create_app
from server.settings import Settings
from tests.server.test_auth_matrix import walk
from tests.server.test_serve_http import arena_serve

HELLO = json.dumps({"type": "hello", "protocol_version": "1.0"})


def credential_routes(tmp_path: Path) -> list[tuple[str, str]]:
    """Return (METHOD or WS, template) of every route of the app with a credential in its path
    or declared query parameters, and every WebSocket route (they all take `?token=`)."""
    app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/routes.db"))
    found = []
    for method, template in sorted(set(walk(app.routes))):
        names = re.findall(r"\{([^}:]+)", template)
        if method == "WS" or any(is_credential(name) for name in names):
            found.append((method, template))
    return found


def fill(template: str, secret: str) -> str:
    """Put `secret` in each credential path parameter and a plain value in the others."""
    return re.sub(
        r"\{([^}:]+)[^}]*\}",
        lambda m: secret if is_credential(m.group(1)) else "x1",
        template,
    )


def test_the_credential_routes_are_found_from_the_route_table(tmp_path: Path) -> None:
    routes = credential_routes(tmp_path)
    assert ("GET", "/join/{token}") in routes
    assert ("WS", "/ws") in routes
    app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/routes.db"))
    assert credential_paths(app.routes) == ["/join/{token}"]


@pytest.mark.parametrize(
    ("logged", "expected"),
    [
        (
            '1.2.3.4:5 - "GET /join/arena_abc HTTP/1.1" 404',
            '1.2.3.4:5 - "GET /join/*** HTTP/1.1" 404',
        ),
        ("/join/arena_abc?next=/x&token=t", "/join/***?next=/x&token=***"),
        ("/join/a/b%2Fc", "/join/***"),
        ("/join/", "/join/"),
        ("/joined/arena_abc", "/joined/arena_abc"),
        ("/x/join/arena_abc", "/x/join/arena_abc"),
        ("/ws?secret=s&password=p&game=c", "/ws?secret=***&password=***&game=c"),
    ],
)
def test_redact_hides_path_tokens_of_the_given_templates(logged: str, expected: str) -> None:
    assert redact(logged, ["/join/{token}"]) == expected


def test_no_route_writes_a_credential_to_the_log(tmp_path: Path) -> None:
    routes = credential_routes(tmp_path)
    secrets_sent: list[str] = []
    expected_lines: list[str] = []
    with arena_serve(tmp_path) as (url, output):
        ws_url = url.replace("http://", "ws://")
        # A real invite token: the join page answers 200 with it.
        registered = httpx.post(f"{url}/players", json={"name": "prof"}, timeout=10).json()
        token = registered["token"]
        secrets_sent.append(token)
        created = httpx.post(
            f"{url}/courses",
            json={"name": "CS 1"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert created.status_code == 201, created.text
        invite = created.json()["invite_token"]
        secrets_sent.append(invite)
        joined = httpx.get(f"{url}/join/{invite}", timeout=10)
        assert joined.status_code == 200, joined.text
        expected_lines.append('"GET /join/*** HTTP/1.1" 200')
        for method, template in routes:
            secret = "arena_" + secrets.token_urlsafe(24)
            secrets_sent.append(secret)
            path = fill(template, secret)
            if method == "WS":
                # The player's own token in the query, and a path credential if any.
                with connect(f"{ws_url}{path}?token={token}") as ws:
                    ws.send(HELLO)
                    ws.recv(timeout=10)
                expected_lines.append(f'"WebSocket {redact(path, [template])}?token=***"')
                continue
            answer: Any = httpx.request(method, f"{url}{path}?token={token}", timeout=10)
            assert answer.status_code < 500, (method, path, answer.text)
            shown = redact(path, [template])
            expected_lines.append(f'"{method} {shown}?token=*** HTTP/1.1" {answer.status_code}')
    (log,) = output
    for secret in secrets_sent:
        assert secret not in log
        assert secret[6:18] not in log  # not even a piece of it
    for line in expected_lines:
        assert line in log, (line, log)
