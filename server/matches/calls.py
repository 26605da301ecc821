"""The calls on a match as its callers make them: each a value sent through `route`.

`MatchCalls` is the part of the match service (server.matches.service.MatchService) that turns
each call on an existing match into its value (server.matches.commands) and hands it to
`route`, which runs it where the match is played: here (`MatchService.execute`: lock, referee,
commit, publish), or at its owner in a cluster (server.cluster.routing). Nothing here touches a
match: the caller need not know which process plays it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from protocol.messages import Challenge, MatchState, MoveMade, SearchInfo
from server.db.models import Player
from server.matches.commands import (
    Accept,
    Act,
    Action,
    Adjudicate,
    Decline,
    Join,
    PendingChallenge,
    PlayMove,
    Read,
    Route,
    ShowState,
)
from server.matches.live import LiveMatch
from server.matches.store import UNFINISHED, MatchStore

T = TypeVar("T")


class MatchCalls:
    """Joins, challenges, moves, actions and reads of a match, each run by `route`."""

    route: Route
    """Where each call on a match runs: here; a cluster routes it (server.cluster.routing)."""
    store: MatchStore
    """The matches in memory and in the database (server.matches.store)."""

    # -- join ----------------------------------------------------------------------------------

    async def join(self, match_id: str, player: Player, seat: int | None) -> MatchState:
        """Seat `player` in an open seat (`seat` None: any); the match starts when full."""
        return await self.route(Join(match_id, player, seat))

    async def accept(self, match_id: str, player: Player) -> MatchState:
        """Accept the challenge inviting `player` to this match: take the seat it offers.

        The match starts when no seat is open or challenged any more. MatchError
        NOT_CHALLENGED when no pending challenge of this match invites `player`.
        """
        return await self.route(Accept(match_id, player))

    async def decline(self, match_id: str, player: Player) -> MatchState:
        """Decline the challenge inviting `player` to this match: the match is aborted.

        MatchError NOT_CHALLENGED when no pending challenge of this match invites `player`.
        """
        return await self.route(Decline(match_id, player))

    async def challenges(self, player: Player) -> list[Challenge]:
        """Return the challenges waiting for `player`'s answer, oldest first."""
        pending = []
        for match_id in await self.store.challenging_ids(player.id):
            challenge = await self.route(PendingChallenge(match_id, player))
            if challenge is not None:
                pending.append(challenge)
        return pending

    # -- play ----------------------------------------------------------------------------------

    async def move(
        self,
        match_id: str,
        player: Player,
        text: str,
        expected_seq: int | None,
        search: SearchInfo | None = None,
    ) -> MoveMade:
        """Play `player`'s move; raise MatchError for a refused move (the match is unchanged).

        `search` (the bot's search statistics, as it reported them) is stored with the move
        and shown with it. A refused move counts toward the forfeit (`max_illegal_moves`).
        """
        made = await self.route(PlayMove(match_id, player, text, expected_seq, search, True))
        assert made is not None
        return made

    async def play(
        self,
        match_id: str,
        player: Player,
        text: str,
        expected_seq: int | None,
        search: SearchInfo | None = None,
    ) -> None:
        """Play `player`'s move as `move` does, for a player who learns of it from the
        broadcast (a WebSocket player): no `move_made` is built for the caller."""
        await self.route(PlayMove(match_id, player, text, expected_seq, search, True, False))

    async def move_by_hand(
        self, match_id: str, player: Player, text: str, expected_seq: int | None
    ) -> MoveMade:
        """Play a move a person entered on a match page; as `move`, but a refused move is
        only explained, never counted toward the forfeit.

        The page offers only the legal moves; what it refuses is a person's slip in the text
        box, not a bot's bug, and losing a match to three typos would be the server's fault.
        """
        made = await self.route(PlayMove(match_id, player, text, expected_seq, None, False))
        assert made is not None
        return made

    async def act(self, match_id: str, player: Player, action: Action) -> MatchState:
        """Run `action` (resign, offer or answer a draw, abort) for `player`."""
        return await self.route(Act(match_id, player, action))

    async def adjudicate(self, match_id: str, winner: int | None, reason: str) -> MatchState:
        """End an active match by the server's decision: `winner` wins (None: a draw).

        For the server itself (a tournament stopped while its games are played), not for
        players: stored and replayed as a referee event. Raises MatchError MATCH_OVER
        (NOT_STARTED) when the match is over (still waiting) and UNKNOWN_MATCH for no such
        match.
        """
        return await self.route(Adjudicate(match_id, winner, reason))

    # -- read ----------------------------------------------------------------------------------

    async def exists(self, match_id: str) -> bool:
        """Return True when a match has id `match_id`."""
        return await self.store.exists(match_id)

    async def live_states(self, player: Player) -> list[MatchState]:
        """Return the state of every live (waiting or active) match `player` holds a seat in.

        Each state is taken under its match's lock, after letting a fallen flag end it.
        """
        states = []
        for match_id in await self.store.held_ids(player.id):
            shown = await self.state(match_id, player)
            if shown.status in UNFINISHED:
                states.append(shown)
        return states

    async def state(self, match_id: str, viewer: Player | None = None) -> MatchState:
        """Return the full state of a match (after letting a fallen flag end it)."""
        return await self.route(ShowState(match_id, viewer))

    async def read(self, match_id: str, reader: Callable[[LiveMatch], T]) -> T:
        """Return `reader` of the match, under its lock, after letting a fallen flag end it.

        In a cluster, a match another live process owns is read from a copy rebuilt from the
        database (`read_copy`), its clocks as they stand now.
        """
        return await self.route(Read(match_id, reader))
