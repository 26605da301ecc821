"""Publishing a match's committed events to everyone following it: the `Broadcast`.

After every commit of accepted events, the match service (server.matches.service) hands them to its
`Publisher`, which translates them into protocol messages (server.matches.translation) and awaits
each listener with a `Broadcast`, while the match's lock is still held: listeners see every match's
events in order. A listener must not block (the WebSocket hub only queues the messages); a
failing listener is logged, never raised into the call that committed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from games.match import Effect
from protocol.messages import ServerMessage
from server.matches import translation
from server.matches.live import LiveMatch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Broadcast:
    """The messages of a match's newly committed events, for everyone following the match.

    `players` holds each seat's player id (None: a bot or an open seat). `messages` are in seq
    order; a `match_started` is followed by the match's `match_state` (with `your_seat` None:
    a sender fills in each receiver's seat).
    """

    match_id: str
    players: tuple[int | None, int | None]
    messages: tuple[ServerMessage, ...]


Listener = Callable[[Broadcast], Awaitable[None]]
"""An async callback awaited after each commit, under the match's lock; it must not block."""


class Publisher:
    """Awaits every listener with each broadcast; `now_ms` and `wall_ms` time the messages."""

    def __init__(self, now_ms: Callable[[], int], wall_ms: Callable[[], int]) -> None:
        self._now_ms = now_ms
        self._wall_ms = wall_ms
        self.listeners: list[Listener] = []
        """Awaited with a `Broadcast` after every commit of accepted events."""

    async def publish_effects(self, live: LiveMatch, effects: list[Effect]) -> None:
        """Publish the messages of the accepted events among `effects` (committed already) to
        the seats' players and the match's followers (nothing is built without a listener)."""
        if not self.listeners:
            return
        messages = tuple(translation.messages(live, effects, self._now_ms(), self._wall_ms()))
        if messages:
            await self.publish(Broadcast(live.id, live.recipients(), messages))

    async def publish_challenges(self, live: LiveMatch) -> None:
        """Send each player challenged to `live` its `challenge` (if it is connected)."""
        for seat, invited in enumerate(live.challenged):
            if invited is not None and self.listeners:
                players = (invited, None) if seat == 0 else (None, invited)
                challenge = translation.challenge(live, seat, self._now_ms())
                await self.publish(Broadcast(live.id, players, (challenge,)))

    async def publish_state(self, live: LiveMatch) -> None:
        """Send the match's state as it stands to its seated players and its followers."""
        state = translation.match_state(live, None, self._now_ms(), self._wall_ms())
        seated = (live.players[0], live.players[1])  # not a challenged player: not seated yet
        await self.publish(Broadcast(live.id, seated, (state,)))

    async def publish(self, broadcast: Broadcast) -> None:
        """Await every listener with `broadcast`; a failing listener is logged, not raised."""
        for listener in self.listeners:
            try:
                await listener(broadcast)
            except Exception:
                log.exception("a listener failed on match %s", broadcast.match_id)
