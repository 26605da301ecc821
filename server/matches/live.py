"""A match held in memory while it is played: its referee, who sits where, its house bots' state.

The match service (server.matches.service) keeps one `LiveMatch` per match being played and calls it
only under `LiveMatch.lock`; the helpers it hands a live match to (the translation into wire
messages, the house bots, the clock ticker) read it under that lock too.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from games.match import Effect, MoveAccepted
from games.referee import Referee


@dataclass
class LiveMatch:
    """A match held in memory: its referee, who sits where, its house bots and its lock.

    `players` holds each seat's player id and `names` its player name (None: a bot or open).
    """

    id: str
    referee: Referee
    options: dict[str, str]
    players: list[int | None]
    names: list[str | None]
    bot_specs: list[str | None]
    created_ms: int
    challenged: list[int | None] = field(default_factory=lambda: [None, None])
    """Each seat's challenged player id, until they accept (then a player) or decline."""
    challenged_names: list[str | None] = field(default_factory=lambda: [None, None])
    created_by: int | None = None
    creator_name: str | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    bot_task: asyncio.Task[None] | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    """Set when the match is over (or the server stops): its bots' searches end at once."""
    owner: str | None = None
    """Whose turn in the search pool this match's searches wait for (see
    server.matches.housebots)."""
    epoch: int | None = None
    """The owner epoch this copy was loaded at, in a cluster (server.cluster.leases): its
    writes are stored only while the match is still at it. None: a single process."""
    searches: dict[int, dict[str, Any]] = field(default_factory=dict)
    """The search statistics reported with each move, by the seq of the move's event: the JSON
    of a `protocol.SearchInfo` (validated as it came in; see server.matches.translation)."""

    def note_search(self, effects: list[Effect], search: dict[str, Any] | None) -> None:
        """Keep `search` as the statistics of the move `effects` accepted, if they did."""
        if search is None:
            return
        for effect in effects:
            if isinstance(effect, MoveAccepted):
                self.searches[effect.seq] = search

    def seat_of(self, player_id: int) -> int | None:
        """Return the seat `player_id` holds, or None."""
        for seat, holder in enumerate(self.players):
            if holder == player_id:
                return seat
        return None

    def is_open(self, seat: int) -> bool:
        """Return True when anyone may join `seat`: no player, no bot, nobody challenged."""
        return (
            self.players[seat] is None
            and self.bot_specs[seat] is None
            and self.challenged[seat] is None
        )

    def challenged_seat(self, player_id: int) -> int | None:
        """Return the seat a pending challenge invites `player_id` to, or None."""
        for seat, invited in enumerate(self.challenged):
            if invited == player_id:
                return seat
        return None

    def is_ready(self) -> bool:
        """Return True when every seat is taken: no seat open, no challenge pending."""
        return all(
            self.players[seat] is not None or self.bot_specs[seat] is not None for seat in (0, 1)
        )

    def recipients(self) -> tuple[int | None, int | None]:
        """Return each seat's player id, or its challenged player's while the challenge waits."""
        return (
            self.players[0] if self.players[0] is not None else self.challenged[0],
            self.players[1] if self.players[1] is not None else self.challenged[1],
        )
