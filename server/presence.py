"""Which bots are online and open to challenges, for `GET /bots/online`.

A bot is online while its player connection is open and its latest `bot_available` said
available (`Connection.bot_games`). `Presence` answers from this process's hub; in a cluster,
server.cluster.presence adds the bots connected to the other processes. The WebSocket route
calls `changed` whenever a connection's availability changes or it closes.
"""

from __future__ import annotations

from collections.abc import Mapping

from server.hub import Hub

Games = tuple[str, ...] | None
"""The games a bot accepts challenges to; None: any."""


class Presence:
    """The online bots of this process (`hub`): player id -> the games it accepts."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def local(self) -> dict[int, Games]:
        """Return the bots connected to this process and open to challenges."""
        return {
            player_id: connection.bot_games
            for player_id, connection in self.hub.players.items()
            if connection.bot_available and not connection.closed
        }

    def changed(self) -> None:
        """Note that a connection's availability changed (nothing to do in one process)."""

    async def online(self) -> Mapping[int, Games]:
        """Return every online bot (here: this process's)."""
        return self.local()

    async def start(self) -> None:
        """Start whatever keeps the list current (nothing in one process)."""

    async def close(self) -> None:
        """Stop; this process's bots leave the list."""
