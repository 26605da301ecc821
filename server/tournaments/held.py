"""The tournaments a service holds in memory, and when it lets them go.

A tournament is held while its runner runs here, while someone watches it here, and while a
request uses it (concurrent requests share that one copy); any other is read from the database
when asked, so finished, cancelled and waiting tournaments cost nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator

from protocol.errors import ErrorCode, ProtocolError
from server.tournaments.store import TournamentStore
from server.tournaments.tournament import HostedTournament


def runs_here(tournament: HostedTournament) -> bool:
    """Return True while the tournament's runner runs in this process."""
    return tournament.runner is not None and not tournament.runner.done()


class HeldTournaments:
    """The tournaments held in memory, by id, read through `store` when not held."""

    def __init__(self, store: TournamentStore) -> None:
        self._store = store
        self.loaded: dict[str, HostedTournament] = {}
        """The tournaments held in memory: each one whose runner runs here, is watched here, or
        is in use by a request (`_users`). The others are read from the database when asked
        (`held`): a finished, cancelled or waiting tournament costs no memory."""
        self._users: Counter[str] = Counter()
        """The requests using each held tournament now."""
        self.loading: dict[str, asyncio.Future[HostedTournament | None]] = {}
        """The reads from the database in progress, by tournament id."""

    @contextlib.asynccontextmanager
    async def held(self, tournament_id: str) -> AsyncIterator[HostedTournament]:
        """Hold the tournament while the caller uses it (read from the database unless held
        already: concurrent requests share one copy); then let it go unless it must stay
        (`release`). UNKNOWN_TOURNAMENT when there is none."""
        tournament = await self._get(tournament_id)
        self._users[tournament.id] += 1  # no await since `_get`: not let go meanwhile
        try:
            yield tournament
        finally:
            self._users[tournament.id] -= 1
            if self._users[tournament.id] <= 0:
                del self._users[tournament.id]
            self.release(tournament)

    def release(self, tournament: HostedTournament) -> None:
        """Let the tournament leave memory unless its runner runs here, someone watches it
        here or a request uses it; it is read from the database when next asked."""
        if self._users.get(tournament.id) or tournament.watchers or runs_here(tournament):
            return
        if self.loaded.get(tournament.id) is tournament:
            del self.loaded[tournament.id]

    async def _get(self, tournament_id: str) -> HostedTournament:
        """Return the held tournament, or read it from the database and hold it (the caller
        lets it go: `held`)."""
        tournament = self.loaded.get(tournament_id)
        if tournament is not None:
            return tournament
        # One read per tournament at a time, shared by the requests that want it; reads of
        # different tournaments (a large finished one takes a while) do not wait for each other.
        loading = self.loading.get(tournament_id)
        if loading is None:
            loading = asyncio.ensure_future(self._store.load(tournament_id))
            self.loading[tournament_id] = loading
            loading.add_done_callback(lambda _: self.loading.pop(tournament_id, None))
        found = await asyncio.shield(loading)
        if found is None:
            raise ProtocolError(
                ErrorCode.UNKNOWN_TOURNAMENT,
                f"no tournament has id {tournament_id!r}",
                {"tournament_id": tournament_id},
            )
        # The first request back holds the copy read; the others share it (or, if every
        # request let it go meanwhile, the copy held now: there is one at a time). A request
        # cancelled while the read runs holds nothing, so nothing stays held for it.
        return self.loaded.setdefault(tournament_id, found)
