"""The server URL a user gives, turned into the WebSocket URL and the HTTP base the client uses."""

from __future__ import annotations

import pytest

from client.rest import http_base_url, websocket_url


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("http://127.0.0.1:8000/", "ws://127.0.0.1:8000/ws"),
        ("https://arena.example.org", "wss://arena.example.org/ws"),
        ("HTTPS://arena.example.org/base/", "wss://arena.example.org/base/ws"),
        ("ws://localhost:9000/ws", "ws://localhost:9000/ws"),
        ("wss://h/ws/", "wss://h/ws"),
    ],
)
def test_websocket_url(given: str, expected: str) -> None:
    assert websocket_url(given) == expected


@pytest.mark.parametrize("bad", ["ftp://h", "localhost:8000", "http://", ""])
def test_websocket_url_refuses_bad_urls(bad: str) -> None:
    with pytest.raises(ValueError, match="server URL"):
        websocket_url(bad)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("ws://127.0.0.1:8000/ws", "http://127.0.0.1:8000"),
        ("wss://arena.example.org/ws", "https://arena.example.org"),
        ("wss://h/base/ws", "https://h/base"),
    ],
)
def test_http_base_url(given: str, expected: str) -> None:
    assert http_base_url(given) == expected
