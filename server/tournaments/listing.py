"""The list of tournaments, a page at a time, as the wire shows it."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.messages import (
    SprtState,
    TournamentCreate,
    TournamentList,
    TournamentSummary,
    next_offset,
)
from server.db.models import Player, epoch_ms
from server.db.models import Tournament as TournamentRow
from server.db.models import TournamentGame as GameRow


async def page(
    sessions: async_sessionmaker[AsyncSession], limit: int, offset: int
) -> TournamentList:
    """Return a page of tournaments, newest first, with their games done and owner."""
    async with sessions() as session:
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
                sprt=None if row.sprt_state is None else SprtState.model_validate(row.sprt_state),
            )
            for row in rows[:limit]
        ),
        next_offset=next_offset(offset, limit, len(rows)),
    )
