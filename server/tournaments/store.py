"""Tournaments in the database: a tournament's row and its games' rows, read and written.

Each write commits at once: a tournament is stored when it is created, each game's row when its
match is created (with the match id) and again with its result, so a restart finds every
tournament and game where it was (see server.tournaments for what the runner does with them).
An SPRT tournament's state is counted again from its games when it is loaded; its row keeps the
state as of its last game (`store_sprt`) for the list of tournaments only.

In a cluster the runner's writes are fenced (server.tournaments.owners): `add_game`,
`store_result` and `end` given the owner epoch of the runner's claim take the tournament row's
lock and change nothing, raising FencedTournamentError, once the stored epoch is another (a
process claimed the tournament since); `add_game` and `store_result` also once the tournament
is not running (cancelled on another process: a game stopped in play keeps no result).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from competition.swiss_schedule import games_per_round
from protocol.messages import (
    SprtState,
    TournamentCreate,
    TournamentGame,
    TournamentList,
)
from server.db.models import Player, epoch_ms
from server.db.models import Tournament as TournamentRow
from server.db.models import TournamentGame as GameRow
from server.tournaments import listing
from server.tournaments.played import PlayedGame
from server.tournaments.recording import Recorded, game_row, record_game, stored_game, wire_game
from server.tournaments.tournament import HostedTournament


class FencedTournamentError(Exception):
    """A runner's write was refused: another process claimed the tournament (or it stopped
    running) since this runner's claim. Nothing was stored; the runner stops."""

    def __init__(self, tournament_id: str) -> None:
        super().__init__(f"tournament {tournament_id} is run by another process now")
        self.tournament_id = tournament_id


async def _fence(
    session: AsyncSession, tournament_id: str, epoch: int | None, *, running: bool = False
) -> None:
    """Raise FencedTournamentError unless the tournament's stored epoch is `epoch` (and, with
    `running`, it is running); None: not fenced (a single process). Locks the row."""
    if epoch is None:
        return
    row = (
        await session.execute(
            select(TournamentRow.owner_epoch, TournamentRow.status)
            .where(TournamentRow.id == tournament_id)
            .with_for_update()
        )
    ).one_or_none()
    if row is None or row.owner_epoch != epoch or (running and row.status != "running"):
        raise FencedTournamentError(tournament_id)


class TournamentStore:
    """Reads and writes tournaments and their games; each call is one committed transaction."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def running_ids(self) -> list[str]:
        """Return the ids of the tournaments stored `running`."""
        async with self._sessions() as session:
            ids = await session.scalars(
                select(TournamentRow.id).where(TournamentRow.status == "running")
            )
            return list(ids.all())

    async def load(self, tournament_id: str) -> HostedTournament | None:
        """Return the stored tournament with its games and owner's name; None if there is none.

        The schedule (`tasks`) is not stored: the runner plans it again.
        """
        async with self._sessions() as session:
            row = await session.get(TournamentRow, tournament_id)
            if row is None:
                return None
            games = (
                await session.scalars(select(GameRow).where(GameRow.tournament_id == tournament_id))
            ).all()
            owner = (
                None
                if row.created_by is None
                else await session.scalar(select(Player.name).where(Player.id == row.created_by))
            )
        body = TournamentCreate.model_validate(row.spec)
        per_round = None if body.swiss is None else games_per_round(len(body.bots))
        tournament = HostedTournament(
            id=row.id,
            body=body,
            status=row.status,
            games_total=row.games_total,
            created_ms=epoch_ms(row.created_at),
            owner_id=row.created_by,
            owner_name=owner,
            invitations=dict(row.invitations or {}),
            reason=row.reason,
            games={g.game_index: wire_game(g, per_round) for g in games},
        )
        if tournament.body.sprt is not None:
            # Counted from the games (a test at its cap takes a few seconds): off the loop,
            # before anyone else holds the tournament.
            await asyncio.to_thread(tournament.count_sprt)
        return tournament

    async def spec(self, tournament_id: str) -> tuple[TournamentCreate, int | None] | None:
        """Return the tournament's set-up and owner's id; None if there is none."""
        async with self._sessions() as session:
            row = (
                await session.execute(
                    select(TournamentRow.spec, TournamentRow.created_by).where(
                        TournamentRow.id == tournament_id
                    )
                )
            ).one_or_none()
        if row is None:
            return None
        return TournamentCreate.model_validate(row[0]), row[1]

    async def game(
        self, tournament_id: str, index: int
    ) -> tuple[str | None, TournamentGame | None]:
        """Return the tournament's status (None: no such tournament) and its game `index` as
        stored (None: not begun)."""
        async with self._sessions() as session:
            status = await session.scalar(
                select(TournamentRow.status).where(TournamentRow.id == tournament_id)
            )
            stored = await session.scalar(
                select(GameRow).where(
                    GameRow.tournament_id == tournament_id, GameRow.game_index == index
                )
            )
            return status, stored_game(stored)

    async def add(self, tournament: HostedTournament) -> None:
        """Store a new tournament (its set-up, status, owner and invitations, and its SPRT's
        state before any game)."""
        sprt = tournament.sprt()
        async with self._sessions() as session:
            session.add(
                TournamentRow(
                    id=tournament.id,
                    game=tournament.body.game,
                    spec=tournament.body.model_dump(mode="json"),
                    status=tournament.status,
                    games_total=tournament.games_total,
                    created_by=tournament.owner_id,
                    invitations=dict(tournament.invitations),
                    created_at=datetime.fromtimestamp(tournament.created_ms / 1000, UTC),
                    sprt_state=None if sprt is None else sprt.model_dump(mode="json"),
                )
            )
            await session.commit()

    async def store_answer(
        self, tournament_id: str, name: str, answer: str
    ) -> tuple[str, dict[str, str]] | None:
        """Store one invited player's answer while the tournament is `created`, under the row's
        lock (answers given on several server processes never overwrite each other); return
        the status and every answer as stored after the call (None: no such tournament)."""
        async with self._sessions() as session, session.begin():
            row = (
                await session.execute(
                    select(TournamentRow.status, TournamentRow.invitations)
                    .where(TournamentRow.id == tournament_id)
                    .with_for_update()
                )
            ).one_or_none()
            if row is None:
                return None
            invitations = dict(row.invitations or {})
            if row.status == "created" and name in invitations:
                invitations[name] = answer
                await session.execute(
                    update(TournamentRow)
                    .where(TournamentRow.id == tournament_id)
                    .values(invitations=invitations, updated_at=datetime.now(UTC))
                )
            return row.status, invitations

    async def store_status(self, tournament: HostedTournament) -> None:
        """Store the tournament's status and the reason it ended (if it did early)."""
        async with self._sessions() as session:
            await session.execute(
                update(TournamentRow)
                .where(TournamentRow.id == tournament.id)
                .values(
                    status=tournament.status,
                    reason=tournament.reason,
                    updated_at=datetime.now(UTC),
                )
            )
            await session.commit()

    async def end(
        self, tournament_id: str, status: str, reason: str | None, epoch: int | None = None
    ) -> bool:
        """Store a running tournament ended (`status`, `reason`); return False when it was not
        running any more (a conditional update: it ends once). Fenced by `epoch` (the module)."""
        async with self._sessions() as session:
            await _fence(session, tournament_id, epoch)
            ended = await session.execute(
                update(TournamentRow)
                .where(TournamentRow.id == tournament_id, TournamentRow.status == "running")
                .values(
                    status=status,
                    reason=None if reason is None else reason[:500],
                    updated_at=datetime.now(UTC),
                )
            )
            await session.commit()
            return bool(ended.rowcount)  # type: ignore[attr-defined]

    async def fail(self, tournament_id: str, reason: str) -> bool:
        """Store a running tournament `failed` with `reason`; return False if it was not running
        (a conditional update: the tournament ends once)."""
        async with self._sessions() as session:
            ended = await session.execute(
                update(TournamentRow)
                .where(TournamentRow.id == tournament_id, TournamentRow.status == "running")
                .values(status="failed", reason=reason[:500], updated_at=datetime.now(UTC))
            )
            await session.commit()
            return bool(ended.rowcount)  # type: ignore[attr-defined]

    async def add_game(
        self, tournament_id: str, game: TournamentGame, epoch: int | None = None
    ) -> None:
        """Store a game begun: its place in the schedule, its players, opening and match id
        (fenced by `epoch`, see the module)."""
        async with self._sessions() as session:
            await _fence(session, tournament_id, epoch, running=True)
            session.add(game_row(tournament_id, game))
            await session.commit()

    async def store_result(
        self, tournament_id: str, game: TournamentGame, epoch: int | None = None
    ) -> None:
        """Store a game's result and the reason of it (fenced by `epoch`, see the module)."""
        async with self._sessions() as session:
            await _fence(session, tournament_id, epoch, running=True)
            await session.execute(
                update(GameRow)
                .where(GameRow.tournament_id == tournament_id, GameRow.game_index == game.index)
                .values(result=game.result, reason=game.reason, finished_at=datetime.now(UTC))
            )
            await session.commit()

    async def store_sprt(
        self, tournament_id: str, state: SprtState, epoch: int | None = None
    ) -> None:
        """Store an SPRT tournament's state for its listing (fenced by `epoch`, see the module)."""
        async with self._sessions() as session:
            await _fence(session, tournament_id, epoch)
            await session.execute(
                update(TournamentRow)
                .where(TournamentRow.id == tournament_id)
                .values(sprt_state=state.model_dump(mode="json"))
            )
            await session.commit()

    async def record_game(self, played: PlayedGame) -> Recorded:
        """Store a game played elsewhere (a worker) once, and finish its tournament once
        (server.tournaments.recording)."""
        return await record_game(self._sessions, played)

    async def page(self, limit: int, offset: int) -> TournamentList:
        """Return a page of tournaments, newest first (server.tournaments.listing)."""
        return await listing.page(self._sessions, limit, offset)
