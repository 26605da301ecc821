"""A tournament held here brought up to date with the database: the results, status and end
that other processes stored (workers, or the runner of its owner in a cluster), each told to
its watchers once.

Each game recorded elsewhere and each end is published as a notice (server.tournaments.notices)
that every server process hands to `on_notice`. A notice may be lost (Redis restarted) or come
twice: every `tournament_follow_s` the service reads back the tournaments it holds that other
processes play (`follow`), and its watchers are told of each game once and of the end once,
whichever comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from protocol.messages import TournamentFinished, TournamentGame
from server.tournaments.held import HeldTournaments, runs_here
from server.tournaments.notices import ENDED, parse_notice
from server.tournaments.runner import TournamentRunner
from server.tournaments.store import TournamentStore
from server.tournaments.tournament import HostedTournament

log = logging.getLogger(__name__)


class TournamentSync:
    """Brings the tournaments held in `memory` up to date from `store` (see the module);
    `runner` is stopped for a tournament run here that ended elsewhere."""

    def __init__(
        self, memory: HeldTournaments, store: TournamentStore, runner: TournamentRunner
    ) -> None:
        self._memory = memory
        self._store = store
        self._runner = runner

    async def on_notice(self, payload: dict[str, Any]) -> None:
        """Take a notice from another process (or this one): a game recorded, an end.

        A game's notice updates the tournament held here and tells its watchers, unless the
        game is known already; an end's reads the tournament back from the database (games
        whose notice was lost included). A tournament not held here is read when first asked.
        """
        notice = parse_notice(payload)
        if notice is None:
            log.warning("ignored a tournament notice: %.200r", payload)
            return
        loading = self._memory.loading.get(notice.tournament_id)
        if loading is not None:  # being read: held by the requests waiting for it, woken first
            with contextlib.suppress(Exception):
                await asyncio.shield(loading)
        tournament = self._memory.loaded.get(notice.tournament_id)
        if tournament is None:
            return
        if notice.game is not None:
            if tournament.status == "created":
                tournament.status = "running"  # started by another process: games come in
            self.record(tournament, notice.game)
        else:
            await self.sync(tournament)

    async def follow(self, every_s: float, elsewhere: Callable[[HostedTournament], bool]) -> None:
        """Every `every_s` seconds, read back the tournaments held that have not ended and are
        played `elsewhere` (lost notices, a start on another process)."""
        while True:
            await asyncio.sleep(every_s)
            for tournament in list(self._memory.loaded.values()):
                # Created ones too: another process may have started it.
                if tournament.status not in ENDED and elsewhere(tournament):
                    try:
                        await self.sync(tournament)
                    except Exception:
                        log.exception("could not read tournament %s back", tournament.id)

    async def refresh(self, tournament: HostedTournament) -> None:
        """Take the tournament's stored games, those in play included, and its status."""
        stored = await self.sync(tournament)
        if stored is not None:
            for index, game in stored.games.items():
                tournament.games.setdefault(index, game)

    async def sync(self, tournament: HostedTournament) -> HostedTournament | None:
        """Take the tournament's stored results and status: tell the watchers what they lack.

        A tournament run here that ended elsewhere (cancelled on another process) has its
        runner stopped first. Return the stored tournament (None: there is none)."""
        stored = await self._store.load(tournament.id)
        if stored is None:
            return None
        ended_elsewhere = stored.status in ENDED and tournament.status not in ENDED
        if ended_elsewhere and runs_here(tournament):
            await self._runner.halt(tournament, stored.reason or "the tournament ended")
        for index in sorted(stored.games):
            game = stored.games[index]
            if game.result is not None:
                self.record(tournament, game)
        if stored.status == "running" and tournament.status == "created":
            tournament.status = "running"  # started by another process
        if stored.status in ENDED and tournament.status not in ENDED:
            tournament.status = stored.status
            tournament.reason = stored.reason
            # The standings are fitted off the loop: no other end is told meanwhile.
            finished = TournamentFinished(
                tournament_id=tournament.id,
                games_done=tournament.done,
                games_total=tournament.games_total,
                standings=await tournament.fresh_standings(),
                sprt=tournament.sprt(),
            )
            tournament.publish(finished)
        return stored

    @staticmethod
    def record(tournament: HostedTournament, game: TournamentGame) -> None:
        """Hold a game's result and tell the watchers, once per game (no await here)."""
        tournament.finish_game(game)
