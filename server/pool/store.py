"""A pool's rows: its members, the games it made, the bookings that keep a member to one pool
game at once, and what pairing needs of them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.db.models import (
    HostedBot,
    HostedBotVersion,
    Match,
    Player,
    PoolGame,
    PoolMember,
    PoolSeat,
    utcnow,
)
from server.db.models import Rating as RatingRow

RECENT_GAMES = 10
"""A member's latest pool games that pairing reads (its last opponent, its colours)."""
UNFINISHED = ("waiting", "active")
ORPHAN_AFTER = timedelta(minutes=1)
"""A booking this old whose match does not exist was never made: it is dropped."""


def bot_key(bot_id: int) -> str:
    """The key of a hosted bot's membership (pairing's id, and its booking)."""
    return f"bot:{bot_id}"


def player_key(player_id: int) -> str:
    """The key of a connected player's membership."""
    return f"player:{player_id}"


def _key(bot_id: int | None, player_id: int | None) -> str:
    return bot_key(bot_id) if bot_id is not None else player_key(player_id or 0)


@dataclass(frozen=True, slots=True)
class Member:
    """A pool's member: a hosted bot (`bot_id`) or a connected player (`player_id`); its owner,
    the version that plays (a hosted bot's, if one can), why it is paused, and when it joined."""

    bot_id: int | None
    player_id: int | None
    owner_id: int
    label: str
    """`OWNER/NAME` of a hosted bot; a connected bot's player name."""
    spec: str | None
    """`hosted:OWNER/NAME@N` of the active ready version; None when none can play, and for a
    connected bot."""
    paused: str | None
    joined_at: datetime

    @property
    def key(self) -> str:
        """`bot:ID` or `player:ID`: the member in pairing and in the bookings."""
        return _key(self.bot_id, self.player_id)

    @property
    def connected(self) -> bool:
        """Whether the member is a player's own client (`arena bot`), not a hosted bot."""
        return self.player_id is not None

    @property
    def seat(self) -> str | None:
        """What a match's seat request names for it: its spec, or the player's name."""
        return self.label if self.connected else self.spec


@dataclass(frozen=True, slots=True)
class Played:
    """A pool game as pairing and pages read it."""

    match_id: str
    first_key: str
    second_key: str
    first: str
    second: str
    status: str
    winner: int | None
    code: str | None
    created_at: datetime


class PoolStore:
    """Reads and writes the pools' rows."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def join(
        self, pool: str, *, bot_id: int | None = None, player_id: int | None = None
    ) -> bool:
        """Add a member to a pool; False when it is in it already (a paused connected member
        is resumed then)."""
        try:
            async with self._sessions() as session, session.begin():
                session.add(PoolMember(pool=pool, bot_id=bot_id, player_id=player_id))
        except IntegrityError:
            if player_id is not None:
                async with self._sessions() as session, session.begin():
                    await session.execute(
                        update(PoolMember)
                        .where(PoolMember.pool == pool, PoolMember.player_id == player_id)
                        .values(paused=None)
                    )
            return False
        return True

    async def leave(
        self, pool: str, *, bot_id: int | None = None, player_id: int | None = None
    ) -> bool:
        which = (
            PoolMember.bot_id == bot_id if bot_id is not None else PoolMember.player_id == player_id
        )
        async with self._sessions() as session, session.begin():
            result = await session.execute(delete(PoolMember).where(PoolMember.pool == pool, which))
        return bool(getattr(result, "rowcount", 0))

    async def pause(self, pool: str, player_id: int, reason: str) -> None:
        """Stop pairing a connected member until it joins again."""
        async with self._sessions() as session, session.begin():
            await session.execute(
                update(PoolMember)
                .where(PoolMember.pool == pool, PoolMember.player_id == player_id)
                .values(paused=reason[:500])
            )

    async def counts(self) -> dict[str, int]:
        async with self._sessions() as session:
            rows = (await session.execute(select(PoolMember.pool))).scalars().all()
        counted: dict[str, int] = {}
        for pool in rows:
            counted[pool] = counted.get(pool, 0) + 1
        return counted

    async def members(self, pool: str) -> list[Member]:
        """The pool's members, hosted and connected, in the order they joined."""
        hosted = (
            select(PoolMember, HostedBot, Player.name, HostedBotVersion.status)
            .join(HostedBot, HostedBot.id == PoolMember.bot_id)
            .join(Player, Player.id == HostedBot.owner_id)
            .outerjoin(
                HostedBotVersion,
                (HostedBotVersion.bot_id == HostedBot.id)
                & (HostedBotVersion.number == HostedBot.active),
            )
            .where(PoolMember.pool == pool)
        )
        connected = (
            select(PoolMember, Player.name)
            .join(Player, Player.id == PoolMember.player_id)
            .where(PoolMember.pool == pool)
        )
        async with self._sessions() as session:
            bots = (await session.execute(hosted)).all()
            players = (await session.execute(connected)).all()
        members: list[tuple[int, Member]] = []
        for member, bot, owner, status in bots:
            label = f"{owner}/{bot.name}"
            spec = f"hosted:{label}@{bot.active}" if bot.active and status == "ready" else None
            members.append(
                (
                    member.id,
                    Member(bot.id, None, bot.owner_id, label, spec, bot.paused, member.joined_at),
                )
            )
        for member, name in players:
            assert member.player_id is not None  # the join on players
            members.append(
                (
                    member.id,
                    Member(
                        None,
                        member.player_id,
                        member.player_id,
                        name,
                        None,
                        member.paused,
                        member.joined_at,
                    ),
                )
            )
        return [member for _, member in sorted(members, key=lambda pair: pair[0])]

    # Bookings.

    async def book(self, pool: str, match_id: str, keys: Iterable[str]) -> bool:
        """Book members into the pool game `match_id`; False (nothing booked) when one of them
        is booked already, here or by another server."""
        try:
            async with self._sessions() as session, session.begin():
                for key in keys:
                    session.add(PoolSeat(member=key, pool=pool, match_id=match_id))
        except IntegrityError:
            return False
        return True

    async def release(self, match_id: str) -> None:
        """Drop the bookings of a pool game that was not made."""
        async with self._sessions() as session, session.begin():
            await session.execute(delete(PoolSeat).where(PoolSeat.match_id == match_id))

    async def booked(self) -> set[str]:
        """Drop the bookings of pool games that ended, and of those never made (older than
        ORPHAN_AFTER and with no match: a server died between booking and creating); return
        the keys of the members still booked, in every pool."""
        ended = select(Match.id).where(Match.status.not_in(UNFINISHED))
        made = select(Match.id)
        cutoff = utcnow() - ORPHAN_AFTER
        async with self._sessions() as session, session.begin():
            await session.execute(delete(PoolSeat).where(PoolSeat.match_id.in_(ended)))
            await session.execute(
                delete(PoolSeat).where(PoolSeat.match_id.not_in(made), PoolSeat.created_at < cutoff)
            )
            keys = (await session.execute(select(PoolSeat.member))).scalars().all()
        return set(keys)

    async def players_in_play(self, player_ids: Sequence[int]) -> set[int]:
        """Return those of `player_ids` seated (or challenged) in an unfinished match."""
        if not player_ids:
            return set()
        columns = (
            Match.seat0_player_id,
            Match.seat1_player_id,
            Match.seat0_challenged_id,
            Match.seat1_challenged_id,
        )
        query = select(*columns).where(
            Match.status.in_(UNFINISHED), or_(*(column.in_(player_ids) for column in columns))
        )
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        wanted = set(player_ids)
        return {player for row in rows for player in row if player in wanted}

    # Games.

    async def add_game(self, pool: str, match_id: str, first: Member, second: Member) -> None:
        async with self._sessions() as session, session.begin():
            session.add(
                PoolGame(
                    pool=pool,
                    match_id=match_id,
                    first_bot_id=first.bot_id,
                    second_bot_id=second.bot_id,
                    first_player_id=first.player_id,
                    second_player_id=second.player_id,
                )
            )

    async def games(
        self, pool: str, *, unfinished: bool, limit: int, members: Sequence[Member] = ()
    ) -> list[Played]:
        """The pool's games, newest first: the unfinished ones, or the finished ones (of
        `members` only, when given)."""
        statuses = UNFINISHED if unfinished else ("finished", "aborted")
        query = (
            select(
                PoolGame,
                Match.seat0_bot,
                Match.seat1_bot,
                Match.status,
                Match.result_winner,
                Match.result_reason,
            )
            .join(Match, Match.id == PoolGame.match_id)
            .where(PoolGame.pool == pool, Match.status.in_(statuses))
            .order_by(PoolGame.id.desc())
            .limit(limit)
        )
        bot_ids = [m.bot_id for m in members if m.bot_id is not None]
        player_ids = [m.player_id for m in members if m.player_id is not None]
        if members:
            query = query.where(
                or_(
                    PoolGame.first_bot_id.in_(bot_ids),
                    PoolGame.second_bot_id.in_(bot_ids),
                    PoolGame.first_player_id.in_(player_ids),
                    PoolGame.second_player_id.in_(player_ids),
                )
            )
        names = select(Player.id, Player.name)
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
            player_names = {
                row.id: row.name
                for row in await session.execute(
                    names.where(
                        Player.id.in_(
                            {
                                p
                                for game, *_ in rows
                                for p in (game.first_player_id, game.second_player_id)
                                if p is not None
                            }
                        )
                    )
                )
            }
        return [
            Played(
                game.match_id,
                _key(game.first_bot_id, game.first_player_id),
                _key(game.second_bot_id, game.second_player_id),
                first or player_names.get(game.first_player_id or 0, ""),
                second or player_names.get(game.second_player_id or 0, ""),
                status,
                winner,
                code,
                game.created_at,
            )
            for game, first, second, status, winner, code in rows
        ]

    async def ratings(
        self, game: str, specs: Sequence[str], player_ids: Sequence[int] = ()
    ) -> dict[str, RatingRow]:
        """The ratings of hosted versions (by spec) and of players (by `player:ID`)."""
        found: dict[str, RatingRow] = {}
        async with self._sessions() as session:
            if specs:
                rows = await session.scalars(
                    select(RatingRow).where(RatingRow.game == game, RatingRow.bot.in_(specs))
                )
                found.update({row.bot: row for row in rows if row.bot is not None})
            if player_ids:
                rows = await session.scalars(
                    select(RatingRow).where(
                        RatingRow.game == game, RatingRow.player_id.in_(player_ids)
                    )
                )
                found.update(
                    {player_key(row.player_id): row for row in rows if row.player_id is not None}
                )
        return found
