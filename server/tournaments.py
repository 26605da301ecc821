"""The tournament service: tournaments between house bots whose games are real server matches.

`TournamentService` is built in the lifespan next to the `MatchService` and kept on
`app.state.tournaments`. A tournament is created from a `TournamentCreate` body: the spec and
schedule are those of tournament.runner (the body's `openings`, by default the same as
`arena tournament`'s), so the server plays the same games as the local runner. Started, it gets
one background task that keeps up to `concurrency` matches in flight. Each game is a match
created through `MatchService.create_match` (seats {"bot": first} and {"bot": second}, the
opening's position as start position, untimed); its end is seen through a `MatchService`
listener; MatchService itself draws a match ("ply cap", an adjudication) the moment it reaches
the spec's ply cap (`create_match(..., ply_cap=)`, `limit_plies` after a restart), so no move is
ever played past it. Each game's row is stored when its match is created (with the match id)
and again with its result, and watchers (`/ws/tournaments/{id}`) get a
`tournament_game_finished` per game and a `tournament_finished` at the end.

Restarts: `resume()` restarts the task of every running tournament; call it before
`MatchService.resume`, so the matches in flight are followed before their bots move again.
Games with a result are kept; a game whose match was created re-attaches to that match
(resumed by `MatchService.resume`); the rest are scheduled. A crash between a match's creation
and the storing of its game row leaves that match orphaned, and the game is played again.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bots.spec import BotSpecError, check_limits, parse_bot_spec
from games import Game, GameError, game_names, get_game
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    BotPoints,
    BotRating,
    HeadToHead,
    HouseBot,
    MatchCreate,
    MatchEnded,
    MatchResult,
    ServerMessage,
    TournamentCreate,
    TournamentFinished,
    TournamentGame,
    TournamentGameFinished,
    TournamentList,
    TournamentStandings,
    TournamentState,
    TournamentSummary,
    next_offset,
)
from server.db.models import Player, epoch_ms
from server.db.models import Tournament as TournamentRow
from server.db.models import TournamentGame as GameRow
from server.limits import oversize, search_limits
from server.matches import MatchService, new_match_id
from server.publisher import Broadcast
from server.settings import Settings
from tournament.openings import Opening, OpeningError, deck, default_openings, parse_opening
from tournament.runner import GameTask, TournamentError, TournamentSpec, player_name, schedule
from tournament.standings import (
    GameResult,
    Standing,
    compute_standings,
    crosstable_dict,
    rating_dict,
    tally_points,
)

log = logging.getLogger(__name__)

"""The reason of a game drawn at its ply cap (the same words as tournament.runner)."""

Watcher = Callable[[ServerMessage], None]
"""Receives a tournament's messages; must not block (a WebSocket connection's `send`)."""


def check_maxima(body: TournamentCreate, settings: Settings) -> Game:
    """Return the game of `body` once its options and bots are within the server's maxima.

    Cheap (nothing is searched, no bot is built): it runs on the event loop, so a tournament
    beyond the maxima is refused at once. ProtocolError VALIDATION_ERROR naming the field.
    """
    try:
        game = get_game(body.game, dict(body.options))
    except GameError as error:
        raise _invalid("options" if body.game in game_names() else "game", str(error)) from None
    too_large = oversize(game.initial_state(), settings)
    if too_large is not None:
        raise _invalid("options", too_large)
    limits = search_limits(settings)
    for bot in body.bots:
        if player_name(bot) is None:
            try:
                check_limits(parse_bot_spec(bot), limits)
            except BotSpecError as error:
                raise _invalid("bots", f"bot {bot!r}: {error}") from None
    return game


def tournament_spec(body: TournamentCreate, settings: Settings | None = None) -> TournamentSpec:
    """Return the runner's spec for `body`; ProtocolError VALIDATION_ERROR naming the field.

    With `settings`, the game and the bots must be within the server's maxima too.
    """
    if settings is not None:
        game = check_maxima(body, settings)
    else:
        try:
            game = get_game(body.game, dict(body.options))
        except GameError as error:
            field_name = "options" if body.game in game_names() else "game"
            raise _invalid(field_name, str(error)) from None
    spec = TournamentSpec(
        game=game.name,
        bots=tuple(body.bots),
        options=tuple(sorted(game.option_texts.items())),
        format=body.format,
        games_per_pairing=body.games_per_pairing,
        seed=body.seed,
        ply_cap=body.ply_cap,
    )
    try:
        spec.validate(players=True)
    except TournamentError as error:
        # What pydantic has not checked already is about the bots (specs, duplicates).
        raise _invalid("bots", str(error)) from None
    return spec


def plan(
    body: TournamentCreate, settings: Settings | None = None
) -> tuple[TournamentSpec, list[GameTask]]:
    """Return the spec and schedule of `body` (plays every opening; run it in a thread).

    Raises ProtocolError VALIDATION_ERROR naming the field: `openings` for an unknown deck, a
    deck of another game, an opening that cannot be played (with its index in the list) or,
    with `settings`, one that starts a game larger than the server's maxima.
    """
    spec = tournament_spec(body, settings)
    game = spec.build_game()
    try:
        openings = _openings(body, game, spec)
        if settings is not None:
            for index, opening in enumerate(openings):
                too_large = oversize(opening.start_state(game), settings)
                if too_large is not None:
                    raise OpeningError(f"entry {index}: {too_large}")
        tasks = schedule(spec, openings)
    except OpeningError as error:
        raise _invalid("openings", str(error)) from None
    except (TournamentError, ValueError) as error:
        raise _invalid("games_per_pairing", str(error)) from None
    return spec, tasks


def _openings(body: TournamentCreate, game: Game, spec: TournamentSpec) -> list[Opening]:
    """Return the body's deck or list of openings, or the game's default ones."""
    if body.openings is None:
        return default_openings(game, spec.games_per_pairing // 2, spec.seed)
    if isinstance(body.openings, str):
        return deck(body.openings, game)
    openings = []
    for index, text in enumerate(body.openings):
        try:
            openings.append(parse_opening(text, game))
        except OpeningError as error:
            raise OpeningError(f"entry {index}: {error}") from None
    return openings


def score_of_first(result: MatchResult) -> float:
    """Return seat 0's score in a match that ended with `result` (an abort counts as a draw)."""
    if result.winner is None:
        return 0.5
    return 1.0 if result.winner == 0 else 0.0


def standings(bots: Sequence[str], games: Sequence[TournamentGame]) -> TournamentStandings:
    """Return points (best first, ties in `bots` order), ratings, crosstable and LOS.

    tournament.standings computes them from the finished games (Davidson Elo with its default
    prior); this maps them to the wire model. When no game is finished or the fit fails, only
    the points are given, and `rating_note` says why.
    """
    results = _results(games)
    table = compute_standings(bots, results)
    points = _wire_points(table.points)
    if not results:
        return TournamentStandings(points=points, rating_note="no game is finished yet")
    if table.fit is None or table.los is None:
        return TournamentStandings(points=points, rating_note=table.elo_error)
    return TournamentStandings(
        points=points,
        ratings=tuple(BotRating(**rating_dict(rating)) for rating in table.fit.ratings),
        first_move_advantage=table.fit.first_move_advantage,
        crosstable={
            bot: {other: HeadToHead(**record) for other, record in row.items()}
            for bot, row in crosstable_dict(table.crosstable).items()
        },
        los={bot: dict(row) for bot, row in table.los.items()},
    )


def _results(games: Iterable[TournamentGame]) -> list[GameResult]:
    """Return the finished games as tournament.stats results."""
    return [GameResult(g.first, g.second, g.result, g.pair) for g in games if g.result is not None]


def _wire_points(rows: Sequence[Standing]) -> tuple[BotPoints, ...]:
    return tuple(
        BotPoints(
            bot=row.bot,
            points=row.points,
            games=row.games,
            wins=row.wins,
            draws=row.draws,
            losses=row.losses,
        )
        for row in rows
    )


@dataclass
class _Watch:
    """A match a tournament waits for: its end (its result)."""

    future: asyncio.Future[MatchResult]


@dataclass
class _Tournament:
    """A tournament held in memory: its set-up, games, watchers and running task.

    `tasks` (the schedule) is built only for a tournament that is started or running.
    """

    id: str
    body: TournamentCreate
    status: str
    games_total: int
    created_ms: int
    owner_id: int | None = None
    owner_name: str | None = None
    invitations: dict[str, str] = field(default_factory=dict)
    """Each invited player's answer: pending, accepted or declined."""
    reason: str | None = None
    games: dict[int, TournamentGame] = field(default_factory=dict)
    tasks: list[GameTask] | None = None
    watchers: set[Watcher] = field(default_factory=set)
    runner: asyncio.Task[None] | None = None
    standings: TournamentStandings | None = None
    results_seen: int = 0

    @property
    def done(self) -> int:
        """Return how many games have a result."""
        return sum(1 for game in self.games.values() if game.result is not None)

    def ordered_games(self) -> list[TournamentGame]:
        """Return the games begun so far, in schedule order."""
        return [self.games[index] for index in sorted(self.games)]

    def points(self) -> tuple[BotPoints, ...]:
        """Return the points table now (cheap: no rating fit)."""
        return _wire_points(tally_points(self.body.bots, _results(self.games.values())))

    def record_result(self, game: TournamentGame) -> None:
        """Store a finished game in memory; the standings are computed again when next asked."""
        self.games[game.index] = game
        self.standings = None
        self.results_seen += 1

    async def fresh_standings(self) -> TournamentStandings:
        """Return the standings of every game finished now, fitted in a worker thread.

        The Elo fit takes up to a few tenths of a second for the largest tournaments: it runs
        off the event loop, and again if a game finished meanwhile, so the standings returned
        match `games` until the caller's next await.
        """
        while self.standings is None:
            seen = self.results_seen
            fitted = await asyncio.to_thread(standings, self.body.bots, self.ordered_games())
            if seen == self.results_seen:
                self.standings = fitted
        return self.standings


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
        self._sessions = sessions
        self._matches = matches
        self._wall = wall
        self._loaded: dict[str, _Tournament] = {}
        self._load_lock = asyncio.Lock()
        self._watches: dict[str, _Watch] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- life cycle ----------------------------------------------------------------------------

    async def resume(self) -> int:
        """Restart every running tournament's task; return how many were resumed.

        Call it before `MatchService.resume`: it registers the matches in flight first.
        """
        async with self._sessions() as session:
            ids = (
                await session.scalars(
                    select(TournamentRow.id).where(TournamentRow.status == "running")
                )
            ).all()
        for tournament_id in ids:
            await self._launch(await self._get(tournament_id))
        return len(ids)

    async def close(self) -> None:
        """Stop the tournaments' tasks (their matches stay stored and resume on restart)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

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
                raise _invalid("bots", f"no player is named {name!r} (from {participant!r})")
            if player.id != creator.id:
                invitations[player.name] = "pending"
        tournament = _Tournament(
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
        async with self._sessions() as session:
            session.add(
                TournamentRow(
                    id=tournament.id,
                    game=body.game,
                    spec=body.model_dump(mode="json"),
                    status="created",
                    games_total=len(tasks),
                    created_by=creator.id,
                    invitations=invitations,
                    created_at=datetime.fromtimestamp(tournament.created_ms / 1000, UTC),
                )
            )
            await session.commit()
        self._loaded[tournament.id] = tournament
        return await self._state(tournament)

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
            await self._store_status(tournament)
            await self._launch(tournament)
        return await self._state(tournament)

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
        await self._store_status(tournament)
        runner = tournament.runner
        if runner is not None and not runner.done():
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        await self._end_early(tournament, "the tournament was cancelled")
        return await self._state(tournament)

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
        async with self._sessions() as session:
            await session.execute(
                update(TournamentRow)
                .where(TournamentRow.id == tournament.id)
                .values(invitations=dict(tournament.invitations), updated_at=datetime.now(UTC))
            )
            await session.commit()
        return await self._state(tournament)

    def _check_owner(self, tournament: _Tournament, player: Player, action: str) -> None:
        """Refuse (FORBIDDEN) anyone but the tournament's owner."""
        if tournament.owner_id != player.id:
            owner = tournament.owner_name or "the server"
            raise ProtocolError(
                ErrorCode.FORBIDDEN,
                f"only the tournament's owner ({owner}) may {action} it",
                {"tournament_id": tournament.id},
            )

    async def _stop_match(self, match_id: str, reason: str) -> None:
        """End a tournament match that is still in play, if it is (a draw, no result kept)."""
        try:
            await self._matches.adjudicate(match_id, None, reason)
        except ProtocolError as error:
            log.info("match %s of a stopped tournament: %s", match_id, error.message)

    async def state(self, tournament_id: str) -> TournamentState:
        """Return a tournament's state with its standings and games."""
        return await self._state(await self._get(tournament_id))

    async def list_tournaments(self, limit: int = 50, offset: int = 0) -> TournamentList:
        """Return a page of tournaments, newest first."""
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
            counted = await session.execute(
                select(GameRow.tournament_id, func.count())
                .where(GameRow.tournament_id.in_(ids), GameRow.result.is_not(None))
                .group_by(GameRow.tournament_id)
            )
            done = {tournament_id: count for tournament_id, count in counted.all()}
            owner_ids = {row.created_by for row in rows[:limit] if row.created_by is not None}
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

    async def watch(self, tournament_id: str, watcher: Watcher) -> None:
        """Send `watcher` the tournament's state now, then every progress message."""
        tournament = await self._get(tournament_id)
        state = await self._state(tournament)
        # No await from here: the watcher gets every message after the state it was sent.
        watcher(state)
        tournament.watchers.add(watcher)

    def unwatch(self, tournament_id: str, watcher: Watcher) -> None:
        """Stop sending to `watcher`."""
        tournament = self._loaded.get(tournament_id)
        if tournament is not None:
            tournament.watchers.discard(watcher)

    # -- the match listener --------------------------------------------------------------------

    async def on_broadcast(self, broadcast: Broadcast) -> None:
        """Notice the end of a watched match."""
        watch = self._watches.get(broadcast.match_id)
        if watch is None:
            return
        for message in broadcast.messages:
            if isinstance(message, MatchEnded) and not watch.future.done():
                watch.future.set_result(message.result)

    # -- running -------------------------------------------------------------------------------

    async def _launch(self, tournament: _Tournament) -> None:
        if tournament.runner is not None and not tournament.runner.done():
            return
        if tournament.tasks is None:
            tournament.tasks = (await asyncio.to_thread(plan, tournament.body))[1]
        tasks: list[GameTask] = tournament.tasks
        for task in tasks:
            game = tournament.games.get(task.index)
            if game is not None and game.result is None:
                # Follow the matches in flight before MatchService.resume lets their bots move.
                self._matches.limit_plies(game.match_id, _match_ply_cap(tournament, task))
                self._watch_for(game.match_id)
        tournament.runner = self._spawn(self._run(tournament))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _run(self, tournament: _Tournament) -> None:
        """Play every game not finished, `concurrency` at a time; then finish the tournament."""
        assert tournament.tasks is not None
        slots = asyncio.Semaphore(tournament.body.concurrency)
        try:
            async with asyncio.TaskGroup() as group:
                for task in tournament.tasks:
                    game = tournament.games.get(task.index)
                    if game is not None and game.result is not None:
                        continue
                    await slots.acquire()
                    match_id = None if game is None else game.match_id
                    group.create_task(self._play(tournament, task, match_id, slots))
            await self._finish(tournament)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.exception("tournament %s failed", tournament.id)
            # The games' TaskGroup wraps what failed: name the first error itself.
            cause: BaseException = error
            while isinstance(cause, BaseExceptionGroup) and cause.exceptions:
                cause = cause.exceptions[0]
            await self._fail(tournament, f"{type(cause).__name__}: {cause}")

    async def _fail(self, tournament: _Tournament, why: str) -> None:
        """End a tournament whose task crashed: status failed, with the reason, stored."""
        tournament.status = "failed"
        tournament.reason = f"the tournament stopped on an error: {why}"[:500]
        try:
            await self._store_status(tournament)
        except Exception:
            log.exception("could not store that tournament %s failed", tournament.id)
        await self._end_early(tournament, "the tournament failed")

    async def _play(
        self,
        tournament: _Tournament,
        task: GameTask,
        match_id: str | None,
        slots: asyncio.Semaphore,
    ) -> None:
        """Play (or, after a restart, follow) one game's match and record its result."""
        try:
            cap = _match_ply_cap(tournament, task)
            if match_id is None:
                match_id = await self._create_match(tournament, task, cap)
            elif not await self._matches.exists(match_id):
                await self._make_match(tournament, task, match_id, cap)  # a crash left it unmade
            result = await self._outcome(match_id, self._watch_for(match_id))
            game = tournament.games[task.index].model_copy(
                update={"result": score_of_first(result), "reason": result.description}
            )
            await self._store_result(tournament, game)
            # Stored first; then memory and watchers change together (no await between).
            tournament.record_result(game)
            self._publish(
                tournament,
                TournamentGameFinished(
                    tournament_id=tournament.id,
                    game=game,
                    games_done=tournament.done,
                    games_total=tournament.games_total,
                    points=tournament.points(),
                ),
            )
        finally:
            slots.release()

    async def _create_match(self, tournament: _Tournament, task: GameTask, ply_cap: int) -> str:
        """Record the game under a new match id, then make the match (see `_make_match`)."""
        game = TournamentGame(
            index=task.index,
            pair=task.pair,
            first=task.first,
            second=task.second,
            opening=task.opening.name,
            match_id=new_match_id(),
        )
        async with self._sessions() as session:
            session.add(
                GameRow(
                    tournament_id=tournament.id,
                    game_index=game.index,
                    pair=game.pair,
                    first=game.first,
                    second=game.second,
                    opening=game.opening,
                    match_id=game.match_id,
                )
            )
            await session.commit()
        tournament.games[task.index] = game
        await self._make_match(tournament, task, game.match_id, ply_cap)
        return game.match_id

    async def _make_match(
        self, tournament: _Tournament, task: GameTask, match_id: str, ply_cap: int
    ) -> None:
        """Create the game's match under `match_id`, watched before its bots can move.

        The game's row names the match before it exists: a crash between the two leaves a row
        whose match a restart creates, never a match no game knows (played twice).
        """
        body = tournament.body
        self._watch_for(match_id)
        owner = None if tournament.owner_id is None else f"player:{tournament.owner_id}"
        await self._matches.create_match(
            MatchCreate(
                game=body.game,
                options=body.options,
                start_position=task.opening.position_text(),
                seats=(_seat(task.first), _seat(task.second)),
                time_control=body.time_control,
            ),
            ply_cap=ply_cap,
            match_id=match_id,
            owner=owner,
        )

    def _watch_for(self, match_id: str) -> _Watch:
        """Return the watch of a match, registering it (the listener then follows the match)."""
        watch = self._watches.get(match_id)
        if watch is None:
            watch = _Watch(asyncio.get_running_loop().create_future())
            self._watches[match_id] = watch
        return watch

    async def _outcome(self, match_id: str, watch: _Watch) -> MatchResult:
        """Wait for the match's result (MatchService draws it at its ply cap).

        The watch is registered before the state is read, and both the listener and `state`
        run under the match's lock, so an end is seen either in the state or by the listener.
        """
        try:
            state = await self._matches.state(match_id)
            if state.result is not None and not watch.future.done():
                watch.future.set_result(state.result)
            return await watch.future
        finally:
            self._watches.pop(match_id, None)

    async def _finish(self, tournament: _Tournament) -> None:
        tournament.status = "finished"
        await self._store_status(tournament)
        await self._publish_finished(tournament)

    async def _end_early(self, tournament: _Tournament, why: str) -> None:
        """Stop the unfinished games' matches (adjudicated with `why`), then tell the watchers."""
        for game in tournament.ordered_games():
            if game.result is None:
                await self._stop_match(game.match_id, why)
        await self._publish_finished(tournament)

    async def _publish_finished(self, tournament: _Tournament) -> None:
        self._publish(
            tournament,
            TournamentFinished(
                tournament_id=tournament.id,
                games_done=tournament.done,
                games_total=tournament.games_total,
                standings=await tournament.fresh_standings(),
            ),
        )

    def _publish(self, tournament: _Tournament, message: ServerMessage) -> None:
        for watcher in list(tournament.watchers):
            try:
                watcher(message)
            except Exception:
                log.exception("a watcher of tournament %s failed", tournament.id)
                tournament.watchers.discard(watcher)

    # -- storage -------------------------------------------------------------------------------

    async def _get(self, tournament_id: str) -> _Tournament:
        """Return the tournament, loading it from the database the first time."""
        tournament = self._loaded.get(tournament_id)
        if tournament is not None:
            return tournament
        async with self._load_lock:
            tournament = self._loaded.get(tournament_id)
            if tournament is not None:
                return tournament
            async with self._sessions() as session:
                row = await session.get(TournamentRow, tournament_id)
                if row is None:
                    raise ProtocolError(
                        ErrorCode.UNKNOWN_TOURNAMENT,
                        f"no tournament has id {tournament_id!r}",
                        {"tournament_id": tournament_id},
                    )
                games = (
                    await session.scalars(
                        select(GameRow).where(GameRow.tournament_id == tournament_id)
                    )
                ).all()
                owner = (
                    None
                    if row.created_by is None
                    else await session.scalar(
                        select(Player.name).where(Player.id == row.created_by)
                    )
                )
            tournament = _Tournament(
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
            self._loaded[tournament_id] = tournament
            return tournament

    async def _store_status(self, tournament: _Tournament) -> None:
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

    async def _store_result(self, tournament: _Tournament, game: TournamentGame) -> None:
        async with self._sessions() as session:
            await session.execute(
                update(GameRow)
                .where(GameRow.tournament_id == tournament.id, GameRow.game_index == game.index)
                .values(result=game.result, reason=game.reason, finished_at=datetime.now(UTC))
            )
            await session.commit()

    async def _state(self, tournament: _Tournament) -> TournamentState:
        """Return the tournament's state; nothing changes between its standings and games."""
        fitted = await tournament.fresh_standings()
        return TournamentState(
            tournament_id=tournament.id,
            spec=tournament.body,
            status=tournament.status,
            owner=tournament.owner_name,
            invitations=dict(tournament.invitations),
            reason=tournament.reason,
            games_done=tournament.done,
            games_total=tournament.games_total,
            standings=fitted,
            games=tuple(tournament.ordered_games()),
            created_time_ms=tournament.created_ms,
        )


def _seat(participant: str) -> str | HouseBot:
    """Return a match seat for a participant: a player's name, or a house bot."""
    name = player_name(participant)
    return HouseBot(bot=participant) if name is None else name


def _match_ply_cap(tournament: _Tournament, task: GameTask) -> int:
    """Return the plies a game's match may last: the spec's cap less the opening's moves."""
    return tournament.body.ply_cap - len(task.opening.moves)


def _invalid(field_name: str, message: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.VALIDATION_ERROR, f"{field_name}: {message}", {field_name: message[:500]}
    )
