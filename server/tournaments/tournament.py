"""A hosted tournament: its set-up, games, watchers and running task, held in memory.

The service and the runner share one `HostedTournament` per tournament id; the database holds
the same set-up and games (see server.tournaments.store), so a restart loads it again. An SPRT
tournament's test is counted from its games (competition.sequential.OrderedTally, in schedule
order), so the games alone say where it stands, after a restart too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from competition.runner import GameTask, TournamentSpec
from competition.sequential import OrderedTally
from protocol.messages import (
    BotPoints,
    ServerMessage,
    SprtState,
    TournamentCreate,
    TournamentGame,
    TournamentGameFinished,
    TournamentStandings,
    TournamentState,
)
from server.tournaments import wire

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
    tally: OrderedTally | None = None
    """An SPRT tournament's test on the games recorded (None: not counted yet, or no SPRT)."""
    sprt_stored: SprtState | None = None
    """The SPRT state this process last stored on the tournament's row (for its listing)."""
    sprt_storing: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while that state is written: the writes of games ending together come in order."""

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
        """Store a finished game in memory; the standings are computed again when next asked,
        the SPRT counts the pairs it completes now."""
        self.games[game.index] = game
        self.standings = None
        self.results_seen += 1
        if self.tally is not None:
            self.tally.advance(_FirstBotScores(self))

    def finish_game(self, game: TournamentGame) -> bool:
        """Hold a finished game's result and tell the watchers, once per game (no await here):
        return False when the game's result was held already (nothing changes)."""
        known = self.games.get(game.index)
        if known is not None and known.result is not None:
            return False
        self.record_result(game)
        self.publish(
            TournamentGameFinished(
                tournament_id=self.id,
                game=game,
                games_done=self.done,
                games_total=self.games_total,
                points=self.points(),
                sprt=self.sprt(),
            )
        )
        return True

    def count_sprt(self) -> None:
        """Count the SPRT on every game recorded (the first count after a load reads them all:
        up to a few seconds at the cap, so call it in a thread before sharing the tournament)."""
        settings = self.body.sprt
        if settings is None or self.tally is not None:
            return
        spec = TournamentSpec(game=self.body.game, bots=tuple(self.body.bots))
        tally = OrderedTally(spec, wire.sprt_test(settings), 2 * settings.max_pairs)
        tally.advance(_FirstBotScores(self))
        self.tally = tally

    def sprt(self) -> SprtState | None:
        """Return the SPRT's state now (None: not an SPRT tournament)."""
        if self.body.sprt is None:
            return None
        self.count_sprt()
        assert self.tally is not None
        return wire.sprt_state(self.tally.status())

    @property
    def decided(self) -> bool:
        """Return True once the tournament's SPRT has reached H0 or H1 (never without one)."""
        if self.body.sprt is None:
            return False
        self.count_sprt()
        assert self.tally is not None
        return self.tally.decided

    async def fresh_standings(self) -> TournamentStandings:
        """Return the standings of every game finished now, fitted in a worker thread.

        The Elo fit takes up to a few tenths of a second for the largest tournaments: it runs
        off the event loop, and again if a game finished meanwhile, so the standings returned
        match `games` until the caller's next await.
        """
        while self.standings is None:
            seen = self.results_seen
            swiss_seed = None if self.body.swiss is None else self.body.seed
            fitted = await asyncio.to_thread(
                wire.standings, self.body.bots, self.ordered_games(), swiss_seed=swiss_seed
            )
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
            sprt=self.sprt(),
        )

    def publish(self, message: ServerMessage) -> None:
        """Send `message` to every watcher; a watcher that fails is dropped."""
        for watcher in list(self.watchers):
            try:
                watcher(message)
            except Exception:
                log.exception("a watcher of tournament %s failed", self.id)
                self.watchers.discard(watcher)


class _FirstBotScores(Mapping[int, float]):
    """The first bot's score in each finished game of a tournament, by index, read as asked
    (the SPRT's count reads a few games after each result, not all of them)."""

    def __init__(self, tournament: HostedTournament) -> None:
        self._games = tournament.games
        self._first = tournament.body.bots[0]

    def __getitem__(self, index: int) -> float:
        game = self._games[index]
        if game.result is None:
            raise KeyError(index)
        return game.result if game.first == self._first else 1.0 - game.result

    def __iter__(self) -> Iterator[int]:
        return (index for index, game in self._games.items() if game.result is not None)

    def __len__(self) -> int:
        return sum(1 for game in self._games.values() if game.result is not None)
