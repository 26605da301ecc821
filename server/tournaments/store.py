"""Tournaments in the database: a tournament's row and its games' rows, read and written.

Each write commits at once: a tournament is stored when it is created, each game's row when its
match is created (with the match id) and again with its result, so a restart finds every
tournament and game where it was (see server.tournaments for what the runner does with them).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.messages import (
    TournamentCreate,
    TournamentGame,
    TournamentList,
    TournamentSummary,
    next_offset,
)
from server.db.models import Player, epoch_ms
from server.db.models import Tournament as TournamentRow
from server.db.models import TournamentGame as GameRow
from server.tournaments.tournament import HostedTournament


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
        return HostedTournament(
            id=row.id,
            body=TournamentCreate.model_validate(row.spec),
            status=row.status,
            games_total=row.games_total,
            created_ms=epoch_ms(row.created_at),
            owner_id=row.created_by,
            owner_name=owner,
            invitations=dict(row.invitations or {}),
            reason=row.reason,
            games={
                g.game_index: TournamentGame(
                    index=g.game_index,
                    pair=g.pair,
                    first=g.first,
                    second=g.second,
                    opening=g.opening,
                    match_id=g.match_id,
                    result=g.result,
                    reason=g.reason,
                )
                for g in games
            },
        )

    async def add(self, tournament: HostedTournament) -> None:
        """Store a new tournament (its set-up, status, owner and invitations)."""
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
                )
            )
            await session.commit()

    async def store_invitations(self, tournament: HostedTournament) -> None:
        """Store the invited players' answers."""
        async with self._sessions() as session:
            await session.execute(
                update(TournamentRow)
                .where(TournamentRow.id == tournament.id)
                .values(invitations=dict(tournament.invitations), updated_at=datetime.now(UTC))
            )
            await session.commit()

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

    async def add_game(self, tournament_id: str, game: TournamentGame) -> None:
        """Store a game begun: its place in the schedule, its players, opening and match id."""
        async with self._sessions() as session:
            session.add(
                GameRow(
                    tournament_id=tournament_id,
                    game_index=game.index,
                    pair=game.pair,
                    first=game.first,
                    second=game.second,
                    opening=game.opening,
                    match_id=game.match_id,
                )
            )
            await session.commit()

    async def store_result(self, tournament_id: str, game: TournamentGame) -> None:
        """Store a game's result and the reason of it."""
        async with self._sessions() as session:
            await session.execute(
                update(GameRow)
                .where(GameRow.tournament_id == tournament_id, GameRow.game_index == game.index)
                .values(result=game.result, reason=game.reason, finished_at=datetime.now(UTC))
            )
            await session.commit()

    async def page(self, limit: int, offset: int) -> TournamentList:
        """Return a page of tournaments, newest first, with their games done and owner."""
        async with self._sessions() as session:
            rows = (
                await session.scalars(
                    select(TournamentRow)
                    .order_by(TournamentRow.created_at.desc(), TournamentRow.id)
                    .limit(limit + 1)
                    .offset(offset)
                )
            ).all()
            ids = [row.id for row in rows[:limit]]
            done: dict[str, int] = {}
            owners: dict[int, str] = {}
            # No tournament (the lobby of a new server, and a page past the end) asks no more.
            if ids:
                counted = await session.execute(
                    select(GameRow.tournament_id, func.count())
                    .where(GameRow.tournament_id.in_(ids), GameRow.result.is_not(None))
                    .group_by(GameRow.tournament_id)
                )
                done = {tournament_id: count for tournament_id, count in counted.all()}
            owner_ids = {row.created_by for row in rows[:limit] if row.created_by is not None}
            if owner_ids:
                found = await session.execute(
                    select(Player.id, Player.name).where(Player.id.in_(owner_ids))
                )
                owners = {player_id: name for player_id, name in found}
        return TournamentList(
            tournaments=tuple(
                TournamentSummary(
                    tournament_id=row.id,
                    spec=TournamentCreate.model_validate(row.spec),
                    status=row.status,
                    owner=owners.get(row.created_by) if row.created_by is not None else None,
                    games_done=done.get(row.id, 0),
                    games_total=row.games_total,
                    created_time_ms=epoch_ms(row.created_at),
                )
                for row in rows[:limit]
            ),
            next_offset=next_offset(offset, limit, len(rows)),
        )
