"""A hosted tournament: its set-up, games, watchers and running task, held in memory.

The service and the runner share one `HostedTournament` per tournament id; the database holds
the same set-up and games (see server.tournaments.store), so a restart loads it again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from protocol.messages import (
    BotPoints,
    ServerMessage,
    TournamentCreate,
    TournamentGame,
    TournamentStandings,
    TournamentState,
)
from server.tournaments import wire
from tournament.runner import GameTask

log = logging.getLogger(__name__)

Watcher = Callable[[ServerMessage], None]
"""Receives a tournament's messages; must not block (a WebSocket connection's `send`)."""


@dataclass
class HostedTournament:
    """A tournament held in memory: its set-up, games, watchers and running task.

    `tasks` (the schedule) is built only for a tournament that is started or running.
    """

    id: str
    body: TournamentCreate
    status: str
    games_total: int
    created_ms: int
    owner_id: int | None = None
    owner_name: str | None = None
    invitations: dict[str, str] = field(default_factory=dict)
    """Each invited player's answer: pending, accepted or declined."""
    reason: str | None = None
    games: dict[int, TournamentGame] = field(default_factory=dict)
    tasks: list[GameTask] | None = None
    watchers: set[Watcher] = field(default_factory=set)
    runner: asyncio.Task[None] | None = None
    creating: set[asyncio.Future[str]] = field(default_factory=set)
    """Games being recorded and their matches made: a step the runner's cancellation does not
    cut in two (a stop waits for it, so that every game stored is in `games`)."""
    epoch: int | None = None
    """In a cluster, the owner epoch of this process's claim (server.tournaments.owners) that
    its runner writes under; None: not claimed here (or a single process: writes unfenced)."""
    standings: TournamentStandings | None = None
    results_seen: int = 0

    @property
    def done(self) -> int:
        """Return how many games have a result."""
        return sum(1 for game in self.games.values() if game.result is not None)

    def ordered_games(self) -> list[TournamentGame]:
        """Return the games begun so far, in schedule order."""
        return [self.games[index] for index in sorted(self.games)]

    def points(self) -> tuple[BotPoints, ...]:
        """Return the points table now (cheap: no rating fit)."""
        return wire.points(self.body.bots, self.games.values())

    def record_result(self, game: TournamentGame) -> None:
        """Store a finished game in memory; the standings are computed again when next asked."""
        self.games[game.index] = game
        self.standings = None
        self.results_seen += 1

    async def fresh_standings(self) -> TournamentStandings:
        """Return the standings of every game finished now, fitted in a worker thread.

        The Elo fit takes up to a few tenths of a second for the largest tournaments: it runs
        off the event loop, and again if a game finished meanwhile, so the standings returned
        match `games` until the caller's next await.
        """
        while self.standings is None:
            seen = self.results_seen
            fitted = await asyncio.to_thread(wire.standings, self.body.bots, self.ordered_games())
            if seen == self.results_seen:
                self.standings = fitted
        return self.standings

    async def state(self) -> TournamentState:
        """Return the tournament's state; nothing changes between its standings and games."""
        fitted = await self.fresh_standings()
        return TournamentState(
            tournament_id=self.id,
            spec=self.body,
            status=self.status,
            owner=self.owner_name,
            invitations=dict(self.invitations),
            reason=self.reason,
            games_done=self.done,
            games_total=self.games_total,
            standings=fitted,
            games=tuple(self.ordered_games()),
            created_time_ms=self.created_ms,
        )

    def publish(self, message: ServerMessage) -> None:
        """Send `message` to every watcher; a watcher that fails is dropped."""
        for watcher in list(self.watchers):
            try:
                watcher(message)
            except Exception:
                log.exception("a watcher of tournament %s failed", self.id)
                self.watchers.discard(watcher)
