"""The tournament-game task: a worker plays one game of a tournament and records it.

With `ARENA_ROLE=server`, starting a tournament whose participants are all house bots (hosted
bots among them, unless `worker_hosted` is off) defers one job per game
(`TournamentGameQueue.defer`, server.tournaments.service) instead of playing its games as live
matches in the server process; of a Swiss tournament, the first round's games, and the worker
that records a round's last result pairs the next round (server.tournaments.planning) and queues
its games. A hosted bot's program runs in this worker's sandbox, from the servers' hosted files,
and its owner is told how its game went, as the match service tells them. A worker's job:

1. reads the tournament's status and the game's row: a game with a result is not played again
   (its notice is published again, in case the first was lost), nor is a game of a tournament
   no longer running (cancelled);
2. plays the game in a thread (server.tournaments.played: the runner's set-up and referee);
3. records it (`TournamentStore.record_game`: the result, the finished match and its events
   once, the tournament finished by its last game, exactly once);
4. publishes a notice on the bus topic (server.tournaments.notices) for the watchers on every
   server process: the game, and the end if the tournament is over.

A killed worker's job is queued again by the stalled-job check (server.jobs.worker) and played
from the start elsewhere; the store's fence makes any re-run harmless. A job that raises (the
database away) is tried again `RETRIES` times; then the tournament fails, with the error as its
reason, as when a game raises in the server's runner. Each job carries the
lock `tournament-game:<id>:<index>`, so two jobs of one game never run at once, and its
queueing lock, so a game waits in the queue once. Every heartbeat a worker also queues again
the unplayed games of running worker tournaments that have no job (a server that died between
the start and its jobs: `requeue_orphans`).

Tournament games rank below every grading job (`PRIORITY`): a long tournament never delays a
student's grade. A worker stopped by SIGTERM stops its games within milliseconds once its
grace is over; they are queued again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import procrastinate
from procrastinate import jobs
from procrastinate.exceptions import AlreadyEnqueued
from sqlalchemy import text

from competition.runner import GameTask
from games import get_game
from protocol.messages import TournamentCreate
from sandbox import can_isolate, sandbox_support
from server.cluster.bus import Bus
from server.hosted import HostedBots
from server.hosted.launch import Launcher
from server.hosted.specs import is_hosted
from server.jobs.registry import HOSTED_PER_JOB, JobRuntime
from server.limits.slots import ComputeSlots, Split
from server.matches.service import new_match_id
from server.tournaments.notices import ENDED, TOPIC, Notify, ended_notice, game_notice, tell
from server.tournaments.planning import current_round, plan, swiss_rounds_known
from server.tournaments.played import HostedSeat, PlayedGame, is_for_workers, play_game
from server.tournaments.store import TournamentStore

log = logging.getLogger(__name__)

TASK: Final = "arena.tournament_game"
"""The task's name (registered in workers; servers defer by name)."""
QUEUE: Final = "tournaments"
"""The procrastinate queue of tournament games."""
PRIORITY: Final = -10_000_000
"""Below every grading job's priority (server.grading: fresh uploads, then regrades)."""
RETRIES: Final = 3
"""Times a job that raised is tried again (1, 2, 3 s later); after the last, the tournament
fails, as one whose game raised in the server's runner does."""
BOT_FAILURE: Final = "bot_failure"
"""The result code of a game its hosted program lost by failing (games.match.ResultCode)."""
Defer = Callable[[str, Sequence[int]], Awaitable[int]]
"""Queue the jobs of a tournament's games (`defer_games` on a worker's App)."""
PLANS_KEPT: Final = 16
"""Tournament schedules a worker keeps planned (a schedule plays every opening once)."""


def _lock(tournament_id: str, index: int) -> str:
    return f"tournament-game:{tournament_id}:{index}"


def _job(tournament_id: str, index: int) -> jobs.Job:
    lock = _lock(tournament_id, index)
    return jobs.Job(
        id=None,
        queue=QUEUE,
        priority=PRIORITY,
        lock=lock,
        queueing_lock=lock,
        task_name=TASK,
        task_kwargs={"tournament_id": tournament_id, "game_index": index},
    )


class TournamentGameQueue:
    """Defers tournament games to the workers (a server's `GameQueue`)."""

    def __init__(self, app: procrastinate.App) -> None:
        self._app = app

    async def defer(self, tournament_id: str, indexes: Sequence[int]) -> None:
        """Queue a job per game index; a game already waiting in the queue is not queued twice."""
        await defer_games(self._app, tournament_id, indexes)


async def defer_games(app: procrastinate.App, tournament_id: str, indexes: Sequence[int]) -> int:
    """Queue a job per game index in one statement (one by one if some wait already); return
    how many were queued."""
    if not indexes:
        return 0
    manager = app.job_manager
    try:
        await manager.batch_defer_jobs_async([_job(tournament_id, i) for i in indexes])
        return len(indexes)
    except AlreadyEnqueued:
        pass
    queued = 0
    for index in indexes:
        try:
            await manager.defer_job_async(_job(tournament_id, index))
        except AlreadyEnqueued:
            continue
        queued += 1
    return queued


_ORPHANS = text(
    f"""
    SELECT t.id, t.spec, t.games_total, g.game_index
      FROM tournaments AS t
      CROSS JOIN LATERAL generate_series(0, t.games_total - 1) AS g(game_index)
     WHERE t.status = 'running'
       AND NOT EXISTS (
           SELECT 1 FROM tournament_games AS r
            WHERE r.tournament_id = t.id AND r.game_index = g.game_index
              AND r.result IS NOT NULL)
       AND NOT EXISTS (
           SELECT 1 FROM procrastinate_jobs AS j
            WHERE j.task_name = '{TASK}' AND j.status IN ('todo', 'doing')
              AND j.args->>'tournament_id' = t.id
              AND (j.args->>'game_index')::int = g.game_index)
    """
)


class GamePlayer:
    """A worker's side of tournament games: plays, records and announces them."""

    def __init__(
        self,
        runtime: JobRuntime,
        notify: Notify | None,
        hosted: HostedBots | None = None,
        defer: Defer | None = None,
    ) -> None:
        self._runtime = runtime
        self._hosted = hosted
        self._defer = defer
        self._rounds: OrderedDict[str, list[list[GameTask]]] = OrderedDict()
        self._store = TournamentStore(runtime.sessions)
        self._notify = notify
        self._plans: OrderedDict[str, list[GameTask]] = OrderedDict()

    async def play(self, tournament_id: str, game_index: int) -> None:
        """Play and record one game, unless it has a result or its tournament stopped."""
        status, stored = await self._store.game(tournament_id, game_index)
        if status is None:
            log.warning("tournament %s is gone: game %d not played", tournament_id, game_index)
            return
        if stored is not None and stored.result is not None:
            await self._tell(game_notice(tournament_id, stored))
            if status in ENDED:
                await self._tell(ended_notice(tournament_id))
            return
        if status != "running":
            return
        found = await self._store.spec(tournament_id)
        if found is None:
            return
        body, owner_id = found
        task = await self._task(tournament_id, body, game_index)
        if task is None:
            log.warning(
                "tournament %s game %d: its round is not paired yet (the round before it is "
                "being played); it is queued when that round ends",
                tournament_id,
                game_index,
            )
            return
        seats = await self._hosted_seats(body, task)
        stop = threading.Event()
        playing = asyncio.ensure_future(
            asyncio.to_thread(
                play_game,
                tournament_id,
                body,
                task,
                self._runtime.settings,
                match_id=new_match_id(),
                owner_id=owner_id,
                stop=stop,
                hosted=seats,
            )
        )
        try:
            played = await asyncio.shield(playing)
        except asyncio.CancelledError:
            stop.set()  # the search ends within milliseconds; the job is queued again
            with contextlib.suppress(BaseException):
                await playing
            raise
        finally:
            for seat in seats.values():
                await asyncio.to_thread(seat.bot.close)  # the program and its sandbox end
        recorded = await self._store.record_game(played)
        if recorded.recorded:
            await self._tell_owners(played, task)
        if body.swiss is not None and recorded.status == "running":
            await self._queue_next_round(tournament_id, body, game_index)
        if recorded.game is not None and recorded.game.result is not None:
            await self._tell(game_notice(tournament_id, recorded.game))
        if recorded.status in ENDED:
            await self._tell(ended_notice(tournament_id))
        log.info(
            "tournament %s game %d: %s (%s)",
            tournament_id,
            game_index,
            played.game.result,
            "recorded" if recorded.recorded else "not recorded: " + str(recorded.status),
        )

    async def _task(
        self, tournament_id: str, body: TournamentCreate, game_index: int
    ) -> GameTask | None:
        """Return game `game_index` of the tournament's schedule; of a Swiss tournament, None
        while its round cannot be paired (a game of the round before it has no result)."""
        if body.swiss is None:
            return (await self._tasks(tournament_id, body))[game_index]
        rounds = await self._swiss_rounds(tournament_id, body, game_index)
        per_round = len(rounds[0])
        if game_index // per_round >= len(rounds):
            return None
        return rounds[game_index // per_round][game_index % per_round]

    async def _swiss_rounds(
        self, tournament_id: str, body: TournamentCreate, upto: int
    ) -> list[list[GameTask]]:
        """Return a Swiss tournament's rounds paired so far, up to the one holding game `upto`
        when the results allow (the rounds paired are kept: results never change)."""
        known = self._rounds.get(tournament_id, [])
        if known and len(known) * len(known[0]) > upto:
            self._rounds.move_to_end(tournament_id)
            return known
        results = await self._results(tournament_id)
        rounds = await asyncio.to_thread(swiss_rounds_known, body, known, results, upto)
        self._rounds[tournament_id] = rounds
        while len(self._rounds) > PLANS_KEPT:
            self._rounds.popitem(last=False)
        return rounds

    async def _results(self, tournament_id: str) -> dict[int, float]:
        loaded = await self._store.load(tournament_id)
        if loaded is None:
            return {}
        return {i: g.result for i, g in loaded.games.items() if g.result is not None}

    async def _queue_next_round(
        self, tournament_id: str, body: TournamentCreate, game_index: int
    ) -> None:
        """Once every game of this game's Swiss round has its result, pair the next round and
        queue its games (several workers may find the round over at once: a game waits in the
        queue once, and a played one is not played again)."""
        assert body.swiss is not None
        rounds = await self._swiss_rounds(tournament_id, body, game_index)
        per_round = len(rounds[0])
        next_round = game_index // per_round + 1
        if next_round >= body.swiss.rounds:
            return
        rounds = await self._swiss_rounds(tournament_id, body, next_round * per_round)
        if len(rounds) <= next_round or self._defer is None:
            return  # a game of this round is still being played
        queued = await self._defer(tournament_id, [task.index for task in rounds[next_round]])
        if queued:
            log.info(
                "tournament %s: round %d paired, %d games queued",
                tournament_id,
                next_round + 1,
                queued,
            )

    async def _hosted_seats(self, body: TournamentCreate, task: GameTask) -> dict[str, HostedSeat]:
        """The hosted participants of a game, each with the version it plays and its bot (its
        program starts at its first move, in this worker's sandbox)."""
        wanted = [p for p in dict.fromkeys((task.first, task.second)) if is_hosted(p)]
        if not wanted:
            return {}
        if self._hosted is None:
            raise RuntimeError("this worker cannot run hosted bots: no sandbox here")
        game = get_game(body.game, body.options)
        seats = {}
        for participant in wanted:
            version = await self._hosted.resolve(participant, game, live=False)
            seats[participant] = HostedSeat(version, self._hosted.build(version, game))
        return seats

    async def _tell_owners(self, played: PlayedGame, task: GameTask) -> None:
        """Tell each hosted bot's owner how its game went: a failure, with its words, or a
        game played to its end (as the match service tells them of a live match)."""
        if self._hosted is None:
            return
        match = played.match
        for seat, participant in enumerate((task.first, task.second)):
            if not is_hosted(participant):
                continue
            version = match[f"seat{seat}_bot"] or participant
            if match.get("result_reason") == BOT_FAILURE and match.get("result_winner") == 1 - seat:
                words = str(match.get("result_detail") or "it failed")
                await self._hosted.failed(version, played.game.match_id, words)
            else:
                await self._hosted.finished(version)

    async def fail(self, tournament_id: str, game_index: int, error: BaseException) -> None:
        """End the tournament as failed after its game's job raised on its last try."""
        log.error("tournament %s game %d failed: %r", tournament_id, game_index, error)
        why = f"the tournament stopped on an error: game {game_index}: {type(error).__name__}: "
        if await self._store.fail(tournament_id, f"{why}{error}"):
            await self._tell(ended_notice(tournament_id))

    async def requeue_orphans(self, app: procrastinate.App) -> int:
        """Queue again the unplayed games of running worker tournaments that have no job."""
        async with self._runtime.sessions() as session:
            rows = (await session.execute(_ORPHANS)).all()
        missing: dict[str, list[int]] = {}
        bodies: dict[str, tuple[TournamentCreate, int]] = {}
        on_workers: dict[str, bool] = {}
        for tournament_id, spec, total, index in rows:
            if tournament_id not in on_workers:
                body = TournamentCreate.model_validate(spec)
                bodies[tournament_id] = (body, total)
                on_workers[tournament_id] = is_for_workers(
                    body, hosted=self._runtime.settings.worker.hosted
                )
            if on_workers[tournament_id]:
                missing.setdefault(tournament_id, []).append(index)
        queued = 0
        for tournament_id, unqueued in missing.items():
            body, total = bodies[tournament_id]
            indexes = unqueued
            if body.swiss is not None:
                # Only the current round's: the earliest round with a game unplayed, whether
                # that game has a job or not (the next round is paired from its results).
                results = await self._results(tournament_id)
                unplayed = [index for index in range(total) if index not in results]
                now = set(current_round(body, total, unplayed))
                indexes = [index for index in unqueued if index in now]
            count = await defer_games(app, tournament_id, indexes)
            if count:
                log.warning(
                    "tournament %s: %d games without a job queued again", tournament_id, count
                )
            queued += count
        return queued

    async def _tasks(self, tournament_id: str, body: TournamentCreate) -> list[GameTask]:
        """Return the tournament's schedule (planned in a thread, kept for the next games)."""
        tasks = self._plans.get(tournament_id)
        if tasks is None:
            tasks = (await asyncio.to_thread(plan, body))[1]
            self._plans[tournament_id] = tasks
            while len(self._plans) > PLANS_KEPT:
                self._plans.popitem(last=False)
        else:
            self._plans.move_to_end(tournament_id)
        return tasks

    async def _tell(self, payload: dict[str, Any]) -> None:
        """Publish a notice; a failure is logged (the servers read the database anyway)."""
        await tell(self._notify, payload)


def register(app: procrastinate.App, runtime: JobRuntime) -> None:
    """Add the tournament-game task to a worker's `app`, and its orphan check."""
    notify: Notify | None = None
    if runtime.settings.clustered:
        bus = Bus(runtime.settings)  # publishing only: nothing to start
        notify = functools.partial(bus.publish, TOPIC)
        runtime.closing.append(bus.close)
    player = GamePlayer(runtime, notify, _hosted_bots(runtime), functools.partial(defer_games, app))

    @app.task(
        name=TASK,
        queue=QUEUE,
        pass_context=True,
        retry=procrastinate.RetryStrategy(max_attempts=RETRIES, linear_wait=1),
    )
    async def tournament_game(
        context: procrastinate.JobContext, tournament_id: str, game_index: int
    ) -> None:
        try:
            await player.play(tournament_id, game_index)
        except Exception as error:
            if context.job.attempts >= RETRIES:  # the last try: procrastinate gives up
                await player.fail(tournament_id, game_index, error)
            raise

    async def requeue() -> None:
        await player.requeue_orphans(app)

    runtime.periodic.append(requeue)


def _hosted_bots(runtime: JobRuntime) -> HostedBots | None:
    """The hosted bots as this worker runs them: their files from the servers' `hosted_dir`,
    their programs in this worker's sandboxes under its own hosted uids, at most two a job
    (None when they cannot run here: no sandbox, and running without one not allowed)."""
    settings = runtime.settings
    if not (can_isolate() or settings.hosted.allow_unsandboxed):
        log.warning("this worker cannot run hosted bots: %s", sandbox_support().reason)
        return None
    programs = HOSTED_PER_JOB * runtime.concurrency
    slots = ComputeSlots(
        Split(
            slots=programs,
            grading_reserved=0,
            hosted_reserved=programs,
            grading_max=0,
            hosted_max=programs,
        )
    )
    launcher = Launcher(settings, slots, uids=runtime.hosted_uids)
    return HostedBots(runtime.sessions, settings, launcher, can_isolate)
