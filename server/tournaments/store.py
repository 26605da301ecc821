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
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.messages import (
    SprtState,
    TournamentCreate,
    TournamentGame,
    TournamentList,
    TournamentSummary,
    next_offset,
)
from server.db.models import Match, MatchEvent, Player, epoch_ms, utcnow
from server.db.models import Tournament as TournamentRow
from server.db.models import TournamentGame as GameRow
from server.tournaments.played import PlayedGame
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


@dataclass(frozen=True)
class Recorded:
    """What `TournamentStore.record_game` did.

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
        tournament = HostedTournament(
            id=row.id,
            body=TournamentCreate.model_validate(row.spec),
            status=row.status,
            games_total=row.games_total,
            created_ms=epoch_ms(row.created_at),
            owner_id=row.created_by,
            owner_name=owner,
            invitations=dict(row.invitations or {}),
            reason=row.reason,
            games={g.game_index: _wire_game(g) for g in games},
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
            return status, _game(stored)

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
            async with self._sessions() as session, session.begin():
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
                    return Recorded(False, False, _game(stored), done, status)
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
                    session.add(
                        GameRow(
                            tournament_id=tournament_id,
                            game_index=game.index,
                            pair=game.pair,
                            first=game.first,
                            second=game.second,
                            opening=game.opening,
                            **values,
                        )
                    )
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
            async with self._sessions() as session:
                found = await session.execute(
                    select(TournamentRow.status).where(TournamentRow.id == tournament_id)
                )
                stored = await session.scalar(
                    select(GameRow).where(
                        GameRow.tournament_id == tournament_id, GameRow.game_index == game.index
                    )
                )
                done = await _done(session, tournament_id)
                return Recorded(False, False, _game(stored), done, found.scalar_one_or_none())

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
                    sprt=None
                    if row.sprt_state is None
                    else SprtState.model_validate(row.sprt_state),
                )
                for row in rows[:limit]
            ),
            next_offset=next_offset(offset, limit, len(rows)),
        )


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


def _game(row: GameRow | None) -> TournamentGame | None:
    """Return a game row as the wire's game (None for None)."""
    return None if row is None else _wire_game(row)


def _wire_game(row: GameRow) -> TournamentGame:
    """Return a game row as the wire's game."""
    return TournamentGame(
        index=row.game_index,
        pair=row.pair,
        first=row.first,
        second=row.second,
        opening=row.opening,
        match_id=row.match_id,
        result=row.result,
        reason=row.reason,
    )
