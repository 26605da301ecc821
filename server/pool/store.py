"""A pool's rows: its members, the games it made, and what pairing needs of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.db.models import HostedBot, HostedBotVersion, Match, Player, PoolGame, PoolMember
from server.db.models import Rating as RatingRow

RECENT_GAMES = 10
"""A bot's latest pool games that pairing reads (its last opponent, its colours)."""
UNFINISHED = ("waiting", "active")


@dataclass(frozen=True, slots=True)
class Member:
    """A pool's member: its bot, owner, the version that plays (if one can), and when it
    joined."""

    bot_id: int
    owner_id: int
    label: str
    """`OWNER/NAME`."""
    spec: str | None
    """`hosted:OWNER/NAME@N` of the active ready version; None when none can play."""
    paused: str | None
    joined_at: datetime


@dataclass(frozen=True, slots=True)
class Played:
    """A pool game as pairing and pages read it."""

    match_id: str
    first_bot_id: int
    second_bot_id: int
    first: str
    second: str
    status: str
    winner: int | None
    created_at: datetime


class PoolStore:
    """Reads and writes the pools' rows."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def join(self, pool: str, bot_id: int) -> bool:
        """Add a bot to a pool; False when it is in it already."""
        try:
            async with self._sessions() as session, session.begin():
                session.add(PoolMember(pool=pool, bot_id=bot_id))
        except IntegrityError:
            return False
        return True

    async def leave(self, pool: str, bot_id: int) -> bool:
        async with self._sessions() as session, session.begin():
            result = await session.execute(
                delete(PoolMember).where(PoolMember.pool == pool, PoolMember.bot_id == bot_id)
            )
        return bool(getattr(result, "rowcount", 0))

    async def counts(self) -> dict[str, int]:
        async with self._sessions() as session:
            rows = (await session.execute(select(PoolMember.pool))).scalars().all()
        counted: dict[str, int] = {}
        for pool in rows:
            counted[pool] = counted.get(pool, 0) + 1
        return counted

    async def members(self, pool: str) -> list[Member]:
        query = (
            select(PoolMember, HostedBot, Player.name, HostedBotVersion.status)
            .join(HostedBot, HostedBot.id == PoolMember.bot_id)
            .join(Player, Player.id == HostedBot.owner_id)
            .outerjoin(
                HostedBotVersion,
                (HostedBotVersion.bot_id == HostedBot.id)
                & (HostedBotVersion.number == HostedBot.active),
            )
            .where(PoolMember.pool == pool)
            .order_by(PoolMember.id)
        )
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        members = []
        for member, bot, owner, status in rows:
            label = f"{owner}/{bot.name}"
            spec = f"hosted:{label}@{bot.active}" if bot.active and status == "ready" else None
            members.append(Member(bot.id, bot.owner_id, label, spec, bot.paused, member.joined_at))
        return members

    async def add_game(self, pool: str, match_id: str, first: int, second: int) -> None:
        async with self._sessions() as session, session.begin():
            session.add(
                PoolGame(pool=pool, match_id=match_id, first_bot_id=first, second_bot_id=second)
            )

    async def games(
        self, pool: str, *, unfinished: bool, limit: int, bot_ids: Sequence[int] = ()
    ) -> list[Played]:
        """The pool's games, newest first: the unfinished ones, or the finished ones (of
        `bot_ids` only, when given)."""
        statuses = UNFINISHED if unfinished else ("finished", "aborted")
        query = (
            select(PoolGame, Match.seat0_bot, Match.seat1_bot, Match.status, Match.result_winner)
            .join(Match, Match.id == PoolGame.match_id)
            .where(PoolGame.pool == pool, Match.status.in_(statuses))
            .order_by(PoolGame.id.desc())
            .limit(limit)
        )
        if bot_ids:
            query = query.where(
                or_(PoolGame.first_bot_id.in_(bot_ids), PoolGame.second_bot_id.in_(bot_ids))
            )
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        return [
            Played(
                game.match_id,
                game.first_bot_id,
                game.second_bot_id,
                first or "",
                second or "",
                status,
                winner,
                game.created_at,
            )
            for game, first, second, status, winner in rows
        ]

    async def ratings(self, game: str, specs: Sequence[str]) -> dict[str, RatingRow]:
        if not specs:
            return {}
        async with self._sessions() as session:
            rows = await session.scalars(
                select(RatingRow).where(RatingRow.game == game, RatingRow.bot.in_(specs))
            )
            return {row.bot: row for row in rows if row.bot is not None}
