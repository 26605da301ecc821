"""A tournament game played elsewhere (a worker), stored once: its result, its finished
match and the match's events, and its tournament finished once (`record_game`); a game's
new row (`game_row`) and a game's row as the wire's game.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.messages import TournamentGame
from server.db.models import Match, MatchEvent, utcnow
from server.db.models import Tournament as TournamentRow
from server.db.models import TournamentGame as GameRow
from server.tournaments.played import PlayedGame


@dataclass(frozen=True)
class Recorded:
    """What `record_game` did.

    `recorded`: this call stored the game's result (False: the game had one already, or the
    tournament is not running). `finished`: this call finished the tournament (its last game).
    `game` is the game as stored (this call's, or the one stored before; None if neither),
    `games_done` the tournament's games with a result and `status` its status, after the call.
    """

    recorded: bool
    finished: bool
    game: TournamentGame | None
    games_done: int
    status: str | None


async def record_game(sessions: async_sessionmaker[AsyncSession], played: PlayedGame) -> Recorded:
    """Store a game played elsewhere (a worker) once, and finish its tournament once.

    In one transaction, under the tournament row's lock (SELECT ... FOR UPDATE on
    PostgreSQL; SQLite has one writer): unless the tournament is not running or the game
    has a result already, store the game's result, its finished match and the match's
    events; then, if every game has a result, set the tournament `finished` (a conditional
    update: only from `running`). A call that loses either race changes nothing and says so:
    a game is counted once and a tournament finished once, however often a job is re-run.
    """
    tournament_id, game = played.tournament_id, played.game
    try:
        async with sessions() as session, session.begin():
            row = (
                await session.execute(
                    select(TournamentRow.status, TournamentRow.games_total)
                    .where(TournamentRow.id == tournament_id)
                    .with_for_update()
                )
            ).one_or_none()
            if row is None:
                return Recorded(False, False, None, 0, None)
            status, total = row
            stored = await session.scalar(
                select(GameRow).where(
                    GameRow.tournament_id == tournament_id, GameRow.game_index == game.index
                )
            )
            if status != "running" or (stored is not None and stored.result is not None):
                done = await _done(session, tournament_id)
                return Recorded(False, False, stored_game(stored), done, status)
            now = utcnow()
            await session.execute(
                insert(Match).values(played.match | {"created_at": now, "updated_at": now})
            )
            if played.events:
                await session.execute(
                    insert(MatchEvent), [event | {"created_at": now} for event in played.events]
                )
            values = {
                "match_id": game.match_id,
                "result": game.result,
                "reason": game.reason,
                "finished_at": now,
            }
            if stored is None:
                session.add(game_row(tournament_id, game, finished_at=now))
                await session.flush()
            else:
                fenced = await session.execute(
                    update(GameRow)
                    .where(GameRow.id == stored.id, GameRow.result.is_(None))
                    .values(values)
                )
                if fenced.rowcount != 1:  # type: ignore[attr-defined]
                    raise _Lost
            done = await _done(session, tournament_id)
            finished = False
            if done >= total:
                ended = await session.execute(
                    update(TournamentRow)
                    .where(TournamentRow.id == tournament_id, TournamentRow.status == "running")
                    .values(status="finished", updated_at=now)
                )
                finished = ended.rowcount == 1  # type: ignore[attr-defined]
                status = "finished" if finished else status
            return Recorded(True, finished, game, done, status)
    except (IntegrityError, _Lost):
        # Another call stored this game meanwhile (SQLite takes no row lock): theirs stands.
        async with sessions() as session:
            found = await session.execute(
                select(TournamentRow.status).where(TournamentRow.id == tournament_id)
            )
            stored = await session.scalar(
                select(GameRow).where(
                    GameRow.tournament_id == tournament_id, GameRow.game_index == game.index
                )
            )
            done = await _done(session, tournament_id)
            return Recorded(False, False, stored_game(stored), done, found.scalar_one_or_none())


class _Lost(Exception):  # noqa: N818 - a control-flow signal, not an error
    """The game got its result from another call within this one's transaction."""


async def _done(session: AsyncSession, tournament_id: str) -> int:
    """Return how many games of the tournament have a result."""
    count = await session.scalar(
        select(func.count())
        .select_from(GameRow)
        .where(GameRow.tournament_id == tournament_id, GameRow.result.is_not(None))
    )
    return int(count or 0)


def game_row(
    tournament_id: str, game: TournamentGame, finished_at: datetime | None = None
) -> GameRow:
    """Return a new row of the tournament's `game`: its place in the schedule, its players,
    opening and match, and its result and reason as `game` has them (finished at
    `finished_at`; None for a game begun)."""
    return GameRow(
        tournament_id=tournament_id,
        game_index=game.index,
        pair=game.pair,
        first=game.first,
        second=game.second,
        opening=game.opening,
        match_id=game.match_id,
        result=game.result,
        reason=game.reason,
        finished_at=finished_at,
    )


def stored_game(row: GameRow | None) -> TournamentGame | None:
    """Return a game row as the wire's game (None for None)."""
    return None if row is None else wire_game(row)


def wire_game(row: GameRow, per_round: int | None = None) -> TournamentGame:
    """Return a game row as the wire's game (of a Swiss tournament: `per_round` games a
    round, which its index says)."""
    return TournamentGame(
        round=None if per_round is None else row.game_index // per_round,
        index=row.game_index,
        pair=row.pair,
        first=row.first,
        second=row.second,
        opening=row.opening,
        match_id=row.match_id,
        result=row.result,
        reason=row.reason,
    )
