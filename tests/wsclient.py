"""websockets' client `connect` with a handshake deadline fit for a loaded test machine.

websockets gives up on an opening handshake after 10 s; the server under test shares two CPUs
with other test processes (and at times with another whole test run), where a handshake can
take longer without anything being wrong. Tests import `connect` from here; one that means to
time a handshake passes its own `open_timeout`.
"""

from __future__ import annotations

from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect

__all__ = ["OPEN_TIMEOUT_S", "ClientConnection", "connect"]

OPEN_TIMEOUT_S = 60.0
"""How long a test's client waits for the server to complete a WebSocket handshake."""


class connect(ws_connect):  # noqa: N801 - used as websockets' connect is, awaited or in `async with`
    """websockets' connect, with `open_timeout` OPEN_TIMEOUT_S unless the caller gives one."""

    def __init__(self, uri: str, **kwargs: Any) -> None:
        kwargs.setdefault("open_timeout", OPEN_TIMEOUT_S)
        super().__init__(uri, **kwargs)
