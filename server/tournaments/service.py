"""The tournament service: who may create, start, cancel, answer and read tournaments.

`TournamentService` decides the policies (the server's maxima, the invitations, the owner's
rights) and keeps the tournaments loaded so far; the planning is server.tournaments.planning's,
the storage server.tournaments.store's and the playing server.tournaments.runner's.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import TournamentCreate, TournamentList, TournamentState
from server.db.models import Player
from server.matches import MatchService
from server.publisher import Broadcast
from server.tournaments.planning import check_maxima, plan, validation_error
from server.tournaments.runner import TournamentRunner
from server.tournaments.store import TournamentStore
from server.tournaments.tournament import HostedTournament, Watcher
from tournament.runner import player_name


class TournamentService:
    """Hosts tournaments: creates, starts, runs, resumes and reports them; one per application.

    Register `on_broadcast` as a `MatchService` listener before `resume()`.
    """

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        matches: MatchService,
        *,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._matches = matches
        self._wall = wall
        self._store = TournamentStore(sessions)
        self._runner = TournamentRunner(self._store, matches)
        self._loaded: dict[str, HostedTournament] = {}
        self._load_lock = asyncio.Lock()

    # -- life cycle ----------------------------------------------------------------------------

    async def resume(self) -> int:
        """Restart every running tournament's task; return how many were resumed.

        Call it before `MatchService.resume`: it registers the matches in flight first.
        """
        ids = await self._store.running_ids()
        for tournament_id in ids:
            await self._runner.launch(await self._get(tournament_id))
        return len(ids)

    async def close(self) -> None:
        """Stop the tournaments' tasks (their matches stay stored and resume on restart)."""
        await self._runner.close()

    async def on_broadcast(self, broadcast: Broadcast) -> None:
        """Notice the end of a watched match (the runner waits for it)."""
        await self._runner.on_broadcast(broadcast)

    # -- requests ------------------------------------------------------------------------------

    async def create(self, body: TournamentCreate, creator: Player) -> TournamentState:
        """Store a new tournament (status created) owned by `creator`.

        Every registered player it names other than `creator` is invited: the owner can start
        it once all of them have accepted. VALIDATION_ERROR naming a bad field.
        """
        settings = self._matches.settings
        check_maxima(body, settings)  # cheap, on the loop: a tournament too large fails at once
        _spec, tasks = await asyncio.to_thread(plan, body, settings)
        invitations = {}
        for participant in body.bots:
            name = player_name(participant)
            if name is None:
                continue
            player = await self._matches.players.named(name)
            if player is None:
                raise validation_error(
                    "bots", f"no player is named {name!r} (from {participant!r})"
                )
            if player.id != creator.id:
                invitations[player.name] = "pending"
        tournament = HostedTournament(
            id="t_" + uuid.uuid4().hex[:16],
            body=body,
            status="created",
            games_total=len(tasks),
            created_ms=int(self._wall() * 1000),
            owner_id=creator.id,
            owner_name=creator.name,
            invitations=invitations,
            tasks=tasks,
        )
        await self._store.add(tournament)
        self._loaded[tournament.id] = tournament
        return await tournament.state()

    async def start(self, tournament_id: str, player: Player) -> TournamentState:
        """Start a created tournament; a running or finished one is returned as it is.

        Only its owner may start it (FORBIDDEN), once every invited player has accepted
        (INVITATIONS_PENDING, naming who has not).
        """
        tournament = await self._get(tournament_id)
        self._check_owner(tournament, player, "start")
        if tournament.status == "created":
            waiting = {n: a for n, a in tournament.invitations.items() if a != "accepted"}
            if waiting:
                raise ProtocolError(
                    ErrorCode.INVITATIONS_PENDING,
                    "the tournament can start once every invited player has accepted: "
                    + ", ".join(f"{name} ({answer})" for name, answer in sorted(waiting.items())),
                    {"tournament_id": tournament.id, **waiting},
                )
            tournament.status = "running"
            await self._store.store_status(tournament)
            await self._runner.launch(tournament)
        return await tournament.state()

    async def cancel(self, tournament_id: str, player: Player) -> TournamentState:
        """Cancel a created or running tournament: no more games start, those in play stop.

        Only its owner may cancel it (FORBIDDEN); an ended one gives TOURNAMENT_OVER. A game
        stopped in play keeps no result (its match is adjudicated a draw, not counted).
        """
        tournament = await self._get(tournament_id)
        self._check_owner(tournament, player, "cancel")
        if tournament.status not in ("created", "running"):
            raise ProtocolError(
                ErrorCode.TOURNAMENT_OVER,
                f"the tournament is {tournament.status}: it cannot be cancelled",
                {"tournament_id": tournament.id},
            )
        tournament.status = "cancelled"
        tournament.reason = f"cancelled by {player.name}"
        await self._store.store_status(tournament)
        await self._runner.stop(tournament, "the tournament was cancelled")
        return await tournament.state()

    async def answer(self, tournament_id: str, player: Player, accept: bool) -> TournamentState:
        """Record `player`'s answer to the tournament's invitation (accept, or decline).

        NOT_CHALLENGED when the tournament does not invite `player`; TOURNAMENT_OVER once it
        has started or ended (answers count only before the start).
        """
        tournament = await self._get(tournament_id)
        if player.name not in tournament.invitations:
            raise ProtocolError(
                ErrorCode.NOT_CHALLENGED,
                f"the tournament does not invite {player.name}",
                {"tournament_id": tournament.id},
            )
        if tournament.status != "created":
            raise ProtocolError(
                ErrorCode.TOURNAMENT_OVER,
                f"the tournament is {tournament.status}: invitations are answered before it starts",
                {"tournament_id": tournament.id},
            )
        tournament.invitations[player.name] = "accepted" if accept else "declined"
        await self._store.store_invitations(tournament)
        return await tournament.state()

    def _check_owner(self, tournament: HostedTournament, player: Player, action: str) -> None:
        """Refuse (FORBIDDEN) anyone but the tournament's owner."""
        if tournament.owner_id != player.id:
            owner = tournament.owner_name or "the server"
            raise ProtocolError(
                ErrorCode.FORBIDDEN,
                f"only the tournament's owner ({owner}) may {action} it",
                {"tournament_id": tournament.id},
            )

    async def state(self, tournament_id: str) -> TournamentState:
        """Return a tournament's state with its standings and games."""
        return await (await self._get(tournament_id)).state()

    async def list_tournaments(self, limit: int = 50, offset: int = 0) -> TournamentList:
        """Return a page of tournaments, newest first."""
        return await self._store.page(limit, offset)

    async def watch(self, tournament_id: str, watcher: Watcher) -> None:
        """Send `watcher` the tournament's state now, then every progress message."""
        tournament = await self._get(tournament_id)
        state = await tournament.state()
        # No await from here: the watcher gets every message after the state it was sent.
        watcher(state)
        tournament.watchers.add(watcher)

    def unwatch(self, tournament_id: str, watcher: Watcher) -> None:
        """Stop sending to `watcher`."""
        tournament = self._loaded.get(tournament_id)
        if tournament is not None:
            tournament.watchers.discard(watcher)

    async def _get(self, tournament_id: str) -> HostedTournament:
        """Return the tournament, loading it from the database the first time."""
        tournament = self._loaded.get(tournament_id)
        if tournament is not None:
            return tournament
        async with self._load_lock:
            tournament = self._loaded.get(tournament_id)
            if tournament is not None:
                return tournament
            tournament = await self._store.load(tournament_id)
            if tournament is None:
                raise ProtocolError(
                    ErrorCode.UNKNOWN_TOURNAMENT,
                    f"no tournament has id {tournament_id!r}",
                    {"tournament_id": tournament_id},
                )
            self._loaded[tournament_id] = tournament
            return tournament
