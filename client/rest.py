"""A bot client's addresses of a server and the REST requests it makes there.

The WebSocket URL (`/ws`) and the HTTP base are derived from the one server URL a user gives;
every request carries the player's token and the protocol version the client speaks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import httpx

from protocol.messages import MatchState
from protocol.version import PROTOCOL_VERSION, VERSION_HEADER

REST_TIMEOUT = 10.0
"""Seconds a REST request about a match may take."""

FetchState = Callable[[str, str, str], Awaitable[MatchState]]
"""`fetch(http_base, token, match_id)`: the current state of a match from the REST API."""


def websocket_url(server_url: str) -> str:
    """Return the `/ws` URL of the server at `server_url`.

    `http://` becomes `ws://` and `https://` becomes `wss://` (`ws(s)://` is kept); a path
    already ending in `/ws` is kept, otherwise `/ws` is appended. Raises ValueError for any
    other scheme or a URL without a host.
    """
    parts = urlsplit(server_url.strip())
    schemes = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
    scheme = schemes.get(parts.scheme.lower())
    if scheme is None or not parts.netloc:
        raise ValueError(
            f"server URL must be http(s)://HOST[:PORT] or ws(s)://HOST[:PORT], not {server_url!r}"
        )
    path = parts.path.rstrip("/")
    if not path.endswith("/ws"):
        path += "/ws"
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def http_base_url(ws_url: str) -> str:
    """Return the HTTP base URL of the server whose `/ws` URL is `ws_url`.

    `ws://h:p/ws` becomes `http://h:p` and `wss://h/base/ws` becomes `https://h/base`.
    """
    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme.lower() in ("wss", "https") else "http"
    path = parts.path.rstrip("/").removesuffix("/ws")
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def rest_client(token: str) -> httpx.AsyncClient:
    """Return an HTTP client whose requests carry `token` and the protocol version."""
    headers = {"Authorization": f"Bearer {token}", VERSION_HEADER: PROTOCOL_VERSION}
    return httpx.AsyncClient(timeout=REST_TIMEOUT, headers=headers)


async def fetch_match_state(http_base: str, token: str, match_id: str) -> MatchState:
    """Return the state of match `match_id` from `GET {http_base}/matches/{match_id}`.

    Raises httpx.HTTPError for a failed request or an error status and ValueError (a pydantic
    ValidationError) for a body that is not a match state.
    """
    async with rest_client(token) as http:
        response = await http.get(f"{http_base}/matches/{match_id}")
        response.raise_for_status()
    return MatchState.model_validate_json(response.content)


def error_text(response: httpx.Response) -> str:
    """The message of an Arena error body, or the start of whatever else came."""
    try:
        message = response.json().get("message")
    except (ValueError, AttributeError):
        message = None
    return str(message) if message else response.text[:200]
