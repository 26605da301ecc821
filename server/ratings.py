"""Ratings: a Glicko-2 rating per game for every player and house bot, updated as matches end.

`RatingService` is built in the lifespan (kept on `app.state.ratings`) and listens to the match
service (`on_broadcast`): when a match ends `finished` (never `aborted`), it rates it in a task
of its own, so the match's lock is not held while the ratings are written. Each match is one
rating period of its own (competition.ratings.rate_game), as Lichess rates each game as it ends.

Which matches are rated: every finished match whose two seats are each a registered player or
a house bot, tournament games included; a house bot is rated under its canonical spec
(`alphabeta:depth=6`), as a player of its own. Not rated: aborted matches, and a match whose
two seats are the same player (or the same bot spec), which says nothing of anyone's strength.

Exactly once: a match's two `rating_history` rows are unique on (match, seat), written in the
transaction that updates both ratings; `resume()` rates, oldest first, every finished match
that has none (one that ended while the server stopped before rating it, or before 0007).

Consistency: the transaction starts with a write to the match's row, which takes SQLite's
write lock (its reads then see no other writer's commit) and locks the row on PostgreSQL; it
then locks both rating rows, in id order, with `SELECT ... FOR UPDATE`, so two server
processes rating matches of the same player wait for each other instead of losing an update.
Within a process, one `asyncio.Lock` orders the rating transactions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, exists, func, or_, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bots.spec import BotSpecError, parse_bot_spec
from competition.ratings import DEFAULT_DEVIATION, DEFAULT_RATING, DEFAULT_VOLATILITY, Rating
from competition.ratings import rate_game as glicko2_game
from games.match import Status
from protocol.messages import Leaderboard, MatchEnded, PlayerProfile, PlayerRating, next_offset
from server.db.models import Match, Player, RatingChange, utcnow
from server.db.models import Rating as RatingRow
from server.matches.publisher import Broadcast

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Subject:
    """Who a rating belongs to: a registered player (by id) or a house bot (by canonical spec)."""

    player_id: int | None
    bot: str | None


def subject_of(player_id: int | None, bot: str | None) -> Subject | None:
    """Return who holds a seat, for rating: None for an empty seat."""
    if player_id is not None:
        return Subject(player_id, None)
    if bot is not None:
        return Subject(None, canonical_bot(bot))
    return None


def canonical_bot(spec: str) -> str:
    """Return a bot spec's canonical text (`alphabeta:depth=6`), so one bot has one rating."""
    try:
        return str(parse_bot_spec(spec))
    except BotSpecError:
        return spec


def score_of_seat0(winner: int | None) -> float:
    """Return seat 0's score in a finished match won by seat `winner` (None: a draw)."""
    return 0.5 if winner is None else 1.0 if winner == 0 else 0.0


@dataclass(frozen=True)
class RatingPoint:
    """A rating after one rated match: the match, the rating and deviation, when it was rated."""

    match_id: str
    rating: float
    deviation: float
    rated_at: datetime


HISTORY_LIMIT = 500
"""How many of a player's latest rated matches a history holds (over all games)."""


class RatingService:
    """Rates finished matches and reads the ratings: the leaderboard and a player's profile."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[bool]] = set()

    # -- rating ----------------------------------------------------------------------------------

    async def on_broadcast(self, broadcast: Broadcast) -> None:
        """Rate a match that has just finished, in a task of its own (never blocks the match)."""
        for message in broadcast.messages:
            if isinstance(message, MatchEnded) and message.status == Status.FINISHED.value:
                task = asyncio.create_task(self._rate_logged(message.match_id))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def resume(self) -> int:
        """Rate every finished match not rated yet, oldest first; return how many were rated."""
        async with self._sessions() as session:
            ids = (
                await session.scalars(
                    select(Match.id)
                    .where(
                        Match.status == Status.FINISHED.value,
                        ~exists().where(RatingChange.match_id == Match.id),
                    )
                    .order_by(Match.updated_at, Match.id)
                )
            ).all()
        rated = 0
        for match_id in ids:
            rated += await self.rate(match_id)
        return rated

    async def close(self) -> None:
        """Wait for the ratings being written (each is one short transaction)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _rate_logged(self, match_id: str) -> bool:
        try:
            return await self.rate(match_id)
        except Exception:
            # The match stays unrated and is rated by the next start's `resume`.
            log.exception("rating match %s failed", match_id)
            return False

    async def rate(self, match_id: str) -> bool:
        """Rate a finished match, once: return False when it is not rated (see the module).

        One transaction when both subjects have a rating in the game already (every game but
        each one's first); otherwise the newcomers' ratings are stored first, in a transaction
        of their own, and the match is rated in a second.
        """
        async with self._lock:
            async with self._sessions() as session:
                rated = await _rate_locked(session, match_id)
                if rated is None:
                    await session.rollback()
                else:
                    await session.commit()
                    return rated
            async with self._sessions() as session:
                match = await session.get(Match, match_id)
                if match is None:
                    return False
                subjects = _subjects(match)
                if subjects is None:
                    return False
                await _insert_missing(session, match.game, subjects)
                await session.commit()
            async with self._sessions() as session:
                rated = await _rate_locked(session, match_id)
                await session.commit()
                return bool(rated)

    # -- reading ---------------------------------------------------------------------------------

    async def leaderboard(self, game: str, limit: int = 50, offset: int = 0) -> Leaderboard:
        """Return a page of `game`'s ratings, highest first (ties: the earlier rated first)."""
        async with self._sessions() as session:
            rows = (
                await session.execute(
                    select(RatingRow, Player.name)
                    .outerjoin(Player, Player.id == RatingRow.player_id)
                    .where(RatingRow.game == game, RatingRow.games > 0)
                    .order_by(RatingRow.rating.desc(), RatingRow.id)
                    .limit(limit + 1)
                    .offset(offset)
                )
            ).all()
        ratings = tuple(_wire(row, name) for row, name in rows[:limit])
        return Leaderboard(
            game=game, ratings=ratings, next_offset=next_offset(offset, limit, len(rows))
        )

    async def leaderboards(self, limit: int = 10) -> tuple[Leaderboard, ...]:
        """Return the first page of every game that has ratings, in the games' name order.

        One query for every game (each rating ranked within its game, as `leaderboard` orders
        them): the lobby shows them all on every render.
        """
        rank = (
            func.row_number()
            .over(partition_by=RatingRow.game, order_by=(RatingRow.rating.desc(), RatingRow.id))
            .label("rank")
        )
        ranked = select(RatingRow.id, rank).where(RatingRow.games > 0).subquery()
        async with self._sessions() as session:
            rows = (
                await session.execute(
                    select(RatingRow, Player.name)
                    .join(ranked, ranked.c.id == RatingRow.id)
                    .outerjoin(Player, Player.id == RatingRow.player_id)
                    .where(ranked.c.rank <= limit + 1)
                    .order_by(RatingRow.game, ranked.c.rank)
                )
            ).all()
        games: dict[str, list[tuple[RatingRow, str | None]]] = {}
        for row, name in rows:
            games.setdefault(row.game, []).append((row, name))
        return tuple(
            Leaderboard(
                game=game,
                ratings=tuple(_wire(row, name) for row, name in listed[:limit]),
                next_offset=next_offset(0, limit, len(listed)),
            )
            for game, listed in games.items()
        )

    async def profile(self, player: Player) -> PlayerProfile:
        """Return `player`'s ratings, one per game they have played a rated match of."""
        async with self._sessions() as session:
            rows = (
                await session.scalars(
                    select(RatingRow)
                    .where(RatingRow.player_id == player.id, RatingRow.games > 0)
                    .order_by(RatingRow.game)
                )
            ).all()
        return PlayerProfile(
            name=player.name, ratings=tuple(_wire(row, player.name) for row in rows)
        )

    async def history(
        self, player: Player, limit: int = HISTORY_LIMIT
    ) -> dict[str, tuple[RatingPoint, ...]]:
        """Return `player`'s rating after each of their latest `limit` rated matches, per game,
        oldest first (the rating before the first match is the newcomer's, 1500 and 350)."""
        async with self._sessions() as session:
            rows = (
                await session.execute(
                    select(RatingChange, RatingRow.game)
                    .join(RatingRow, RatingRow.id == RatingChange.rating_id)
                    .where(RatingRow.player_id == player.id)
                    .order_by(RatingChange.id.desc())
                    .limit(limit)
                )
            ).all()
        history: dict[str, list[RatingPoint]] = {}
        for change, game in reversed(rows):
            history.setdefault(game, []).append(
                RatingPoint(change.match_id, change.rating, change.deviation, change.created_at)
            )
        return {game: tuple(points) for game, points in sorted(history.items())}


def _subjects(match: Match) -> tuple[Subject, Subject] | None:
    """Return who sat in each seat of a rated match, or None when the match is not rated."""
    if match.status != Status.FINISHED.value:
        return None
    first = subject_of(match.seat0_player_id, match.seat0_bot)
    second = subject_of(match.seat1_player_id, match.seat1_bot)
    if first is None or second is None or first == second:
        return None
    return first, second


def _is(subject: Subject) -> ColumnElement[bool]:
    if subject.player_id is not None:
        return RatingRow.player_id == subject.player_id
    return and_(RatingRow.player_id.is_(None), RatingRow.bot == subject.bot)


async def _insert_missing(session: AsyncSession, game: str, subjects: Sequence[Subject]) -> None:
    """Store a newcomer's rating for each subject without one (a concurrent insert is fine)."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    for subject in sorted(subjects, key=lambda s: (s.player_id is None, s.player_id or 0, s.bot)):
        statement = insert(RatingRow).values(
            game=game,
            player_id=subject.player_id,
            bot=subject.bot,
            rating=DEFAULT_RATING,
            deviation=DEFAULT_DEVIATION,
            volatility=DEFAULT_VOLATILITY,
            games=0,
            updated_at=utcnow(),
        )
        await session.execute(statement.on_conflict_do_nothing())


async def _rate_locked(session: AsyncSession, match_id: str) -> bool | None:
    """Rate the match in `session`'s transaction: lock, check it is unrated, update, record.

    Return whether it was rated, or None when a subject has no rating in the game yet (the
    caller rolls back, stores the newcomers' ratings and calls again).
    """
    # A write first: it takes SQLite's write lock for the whole transaction (what it reads next
    # cannot change under it), and on PostgreSQL it locks the match row, as FOR UPDATE would.
    await session.execute(text("UPDATE matches SET seq = seq WHERE id = :id"), {"id": match_id})
    match = await session.get(Match, match_id)
    if match is None:
        return False
    subjects = _subjects(match)
    if subjects is None:
        return False
    already = await session.scalar(
        select(RatingChange.id).where(RatingChange.match_id == match_id).limit(1)
    )
    if already is not None:
        return False
    rows = (
        await session.scalars(
            select(RatingRow)
            .where(RatingRow.game == match.game, or_(*(_is(s) for s in subjects)))
            .order_by(RatingRow.id)
            .with_for_update()
        )
    ).all()
    held = [next((row for row in rows if _holds(row, s)), None) for s in subjects]
    first, second = held
    if first is None or second is None:
        return None
    score = score_of_seat0(match.result_winner)
    new = glicko2_game(_value(first), _value(second), score)
    for seat, (row, rating) in enumerate(zip((first, second), new, strict=True)):
        session.add(
            RatingChange(
                match_id=match_id,
                seat=seat,
                rating_id=row.id,
                score=score if seat == 0 else 1 - score,
                rating_before=row.rating,
                rating=rating.rating,
                deviation=rating.deviation,
                volatility=rating.volatility,
            )
        )
        row.rating, row.deviation, row.volatility = (
            rating.rating,
            rating.deviation,
            rating.volatility,
        )
        row.games += 1
    return True


def _holds(row: RatingRow, subject: Subject) -> bool:
    if subject.player_id is not None:
        return row.player_id == subject.player_id
    return row.player_id is None and row.bot == subject.bot


def _value(row: RatingRow) -> Rating:
    return Rating(row.rating, row.deviation, row.volatility)


def _wire(row: RatingRow, name: str | None) -> PlayerRating:
    return PlayerRating(
        game=row.game,
        player=name if row.player_id is not None else None,
        bot=row.bot,
        rating=round(row.rating, 2),
        deviation=round(row.deviation, 2),
        volatility=round(row.volatility, 6),
        games=row.games,
    )
