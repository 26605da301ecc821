"""The tournament runner: one task per running tournament plays its games as server matches.

A started tournament gets one background task that keeps up to `concurrency` matches in flight.
Each game is a match created through `MatchService.create_match` (seats {"bot": first} and
{"bot": second}, the opening's position as start position, untimed); its end is seen through a
`MatchService` listener (`on_broadcast`). The game's ply cap, less the opening's moves
(`played.match_body`), is the match's own `max_plies`: its referee draws it (code `ply_cap`) the
moment it is reached, so no move is ever played past it, and the cap is stored with the match,
so a restart keeps it. Each game's row is stored
when its match is created (with the match id) and again with its result, and the watchers get a
`tournament_game_finished` per game and a `tournament_finished` at the end.

An SPRT tournament's schedule is its pairs up to the cap (server.tournaments.planning); no game
starts once its test has decided, the games under way then are played out (uncounted: the test
counts pairs in schedule order and stops at the decision, see competition.sequential), and the
tournament finishes. A restart counts the test again from the stored games and goes on.

In a cluster (`follow_s` given) the runner runs on the tournament's owner only
(server.tournaments.owners) and its writes are fenced by the epoch of its claim: a refused
write (FencedTournamentError: another process claimed the tournament) stops the runner quietly,
the tournament left to its new owner. After a takeover the tournament's matches may be owned by
another process: their ends come over the bus (`on_remote`, a `Bus.on_match` handler wanting
only the matches watched, `wants`), and, should a broadcast be lost (Redis restarted), the
runner reads each watched match's stored state every `follow_s` seconds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from typing import Any

from competition.runner import GameTask
from protocol.errors import ProtocolError
from protocol.messages import TournamentFinished
from server.matches.publisher import Broadcast
from server.matches.service import MatchService, new_match_id
from server.tournaments.notices import Notify, ended_notice, game_notice, tell
from server.tournaments.planning import next_swiss_round, plan
from server.tournaments.played import match_body, match_owner, scheduled_game
from server.tournaments.store import FencedTournamentError, TournamentStore
from server.tournaments.tournament import HostedTournament
from server.tournaments.watches import MatchWatches
from server.tournaments.wire import score_of_first

log = logging.getLogger(__name__)


class TournamentRunner:
    """Plays running tournaments' games through the match service, and ends tournaments.

    Register `on_broadcast` as a `MatchService` listener before the first `launch`. With
    `notify`, each game recorded and each end is also published to the other server
    processes (their watchers are told too: `TournamentService.on_notice`).
    """

    def __init__(
        self,
        store: TournamentStore,
        matches: MatchService,
        notify: Notify | None = None,
        follow_s: float | None = None,
    ) -> None:
        self._store = store
        self._matches = matches
        self._notify = notify
        self._tasks: set[asyncio.Task[None]] = set()
        self._running: dict[str, HostedTournament] = {}
        self._watches = MatchWatches(matches, self._spawn, follow_s)

    async def launch(self, tournament: HostedTournament) -> None:
        """Start the tournament's task unless it runs; its matches in flight are followed first.

        After a restart, call it before `MatchLifecycle.resume`, so the matches in flight are
        followed before their bots move again.
        """
        if tournament.runner is not None and not tournament.runner.done():
            return
        if tournament.tasks is None:
            tournament.tasks = (await asyncio.to_thread(plan, tournament.body))[1]
        for game in tournament.games.values():
            if game.result is None:
                # Follow the matches in flight before MatchLifecycle.resume lets their bots move
                # (a Swiss tournament's later rounds included, paired again as it goes on).
                self._watches.watch(game.match_id)
        tournament.runner = self._spawn(self._run(tournament))
        self._running[tournament.id] = tournament
        tournament.runner.add_done_callback(lambda _: self._forget(tournament))

    async def stop(self, tournament: HostedTournament, why: str) -> None:
        """Stop the tournament's task and its games in play (adjudicated with `why`).

        The caller stores the tournament's status first; the watchers then get its end.
        """
        runner = tournament.runner
        if runner is not None and not runner.done():
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        await self._settle(tournament)
        await self._end_early(tournament, why)

    async def close(self) -> None:
        """Stop the tournaments' tasks (their matches stay stored and resume on restart)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def on_broadcast(self, broadcast: Broadcast) -> None:
        """Notice the end of a watched match."""
        await self._watches.on_broadcast(broadcast)

    def wants(self, match_id: str, _players: object = None, _seqs: object = None) -> bool:
        """Return True for a match watched here (a `Bus.on_match` filter)."""
        return self._watches.wants(match_id)

    async def on_remote(self, item: object) -> None:
        """Notice the end of a watched match played by another process (a `Bus.on_match`
        handler)."""
        await self._watches.on_remote(item)

    def running(self) -> list[HostedTournament]:
        """Return the tournaments whose task runs here."""
        return [t for t in self._running.values() if t.runner is not None and not t.runner.done()]

    def _forget(self, tournament: HostedTournament) -> None:
        if self._running.get(tournament.id) is tournament and (
            tournament.runner is None or tournament.runner.done()
        ):
            del self._running[tournament.id]

    async def abandon(self, tournament: HostedTournament) -> None:
        """Stop the tournament's task without a word (another process runs it now)."""
        tournament.epoch = None
        runner = tournament.runner
        if runner is not None and not runner.done():
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)

    async def halt(self, tournament: HostedTournament, why: str) -> None:
        """Stop the task of a tournament ended elsewhere (cancelled from another process) and
        its games in play (adjudicated with `why`); the caller tells the watchers."""
        runner = tournament.runner
        if runner is None or runner.done():
            return
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await self._settle(tournament)
        for game in tournament.ordered_games():
            if game.result is None:
                await self._stop_match(game.match_id, why)

    async def tell(self, payload: dict[str, Any]) -> None:
        """Publish a notice to the other server processes, if any; a failure is logged (they
        read the tournaments they show back from the database)."""
        await tell(self._notify, payload)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _run(self, tournament: HostedTournament) -> None:
        """Play every game not finished, `concurrency` at a time (a Swiss tournament round by
        round); then finish the tournament."""
        assert tournament.tasks is not None
        try:
            if tournament.body.swiss is None:
                await self._play_all(tournament, tournament.tasks)
            else:
                await self._play_rounds(tournament)
            await self._finish(tournament)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if _fenced(error):
                log.warning(
                    "tournament %s is run by another process now (or ended there): "
                    "its runner here stops",
                    tournament.id,
                )
                tournament.epoch = None
                return
            log.exception("tournament %s failed", tournament.id)
            # The games' TaskGroup wraps what failed: name the first error itself.
            cause: BaseException = error
            while isinstance(cause, BaseExceptionGroup) and cause.exceptions:
                cause = cause.exceptions[0]
            await self._fail(tournament, f"{type(cause).__name__}: {cause}")

    async def _play_all(self, tournament: HostedTournament, tasks: Sequence[GameTask]) -> None:
        """Play the games of `tasks` not finished, `concurrency` at a time, to their ends."""
        slots = asyncio.Semaphore(tournament.body.concurrency)
        async with asyncio.TaskGroup() as group:
            for task in tasks:
                game = tournament.games.get(task.index)
                if game is not None and (game.first, game.second) != (task.first, task.second):
                    raise RuntimeError(
                        f"game {task.index} was stored as {game.first} v {game.second}, but "
                        f"its schedule says {task.first} v {task.second}"
                    )
                if game is not None and game.result is not None:
                    continue
                if game is None and tournament.decided:
                    break  # a decided test starts no game; those begun are followed
                await slots.acquire()
                if game is None and tournament.decided:
                    slots.release()
                    break
                match_id = None if game is None else game.match_id
                group.create_task(self._play(tournament, task, match_id, slots))

    async def _play_rounds(self, tournament: HostedTournament) -> None:
        """Play a Swiss tournament's rounds in turn, each paired once the one before it is
        over (server.tournaments.planning.next_swiss_round: after a restart the rounds played
        are paired again from their stored results, the same pairings)."""
        assert tournament.tasks is not None and tournament.body.swiss is not None
        earlier: list[list[GameTask]] = []
        current = list(tournament.tasks)
        while True:
            await self._play_all(tournament, current)
            earlier.append(current)
            if len(earlier) >= tournament.body.swiss.rounds:
                return
            results = {
                index: game.result
                for index, game in tournament.games.items()
                if game.result is not None
            }
            current = await asyncio.to_thread(next_swiss_round, tournament.body, earlier, results)
            tournament.tasks = [task for played in earlier for task in played] + current

    async def _fail(self, tournament: HostedTournament, why: str) -> None:
        """End a tournament whose task crashed: status failed, with the reason, stored."""
        reason = f"the tournament stopped on an error: {why}"[:500]
        try:
            if not await self._store.end(tournament.id, "failed", reason, tournament.epoch):
                return  # ended already (cancelled meanwhile)
        except FencedTournamentError:
            return  # another process runs it now
        except Exception:
            log.exception("could not store that tournament %s failed", tournament.id)
        tournament.status = "failed"
        tournament.reason = reason
        await self._end_early(tournament, "the tournament failed")
        await self.tell(ended_notice(tournament.id))

    async def _play(
        self,
        tournament: HostedTournament,
        task: GameTask,
        match_id: str | None,
        slots: asyncio.Semaphore,
    ) -> None:
        """Play (or, after a restart, follow) one game's match and record its result."""
        try:
            if match_id is None:
                match_id = await self._create_match(tournament, task)
            elif not await self._matches.exists(match_id):
                await self._make_match(tournament, task, match_id)  # a crash left it unmade
            result = await self._watches.outcome(match_id, self._watches.watch(match_id))
            game = tournament.games[task.index].model_copy(
                update={"result": score_of_first(result), "reason": result.description}
            )
            await self._store.store_result(tournament.id, game, tournament.epoch)
            # Stored first; then memory and watchers change together (no await between).
            tournament.finish_game(game)
            if tournament.body.sprt is not None:
                await self._store_sprt(tournament)
            await self.tell(game_notice(tournament.id, game))
        finally:
            slots.release()

    async def _store_sprt(self, tournament: HostedTournament) -> None:
        """Store the SPRT's state now on the tournament's row, unless stored already.

        One write at a time, each of the state when it starts: two games ending together never
        leave the earlier state stored last.
        """
        async with tournament.sprt_storing:
            state = tournament.sprt()
            if state is None or state == tournament.sprt_stored:
                return
            await self._store.store_sprt(tournament.id, state, tournament.epoch)
            tournament.sprt_stored = state

    async def _settle(self, tournament: HostedTournament) -> None:
        """Wait for the games being created when the runner was stopped: then every game
        stored is in memory with its match made, and can be stopped like the others."""
        if tournament.creating:
            await asyncio.gather(*tournament.creating, return_exceptions=True)

    async def _create_match(self, tournament: HostedTournament, task: GameTask) -> str:
        """Record the game and make its match as one step the runner's cancellation does not
        cut in two (`_record_and_make`); return the match's id."""
        creating = asyncio.ensure_future(self._record_and_make(tournament, task))
        tournament.creating.add(creating)

        waited = asyncio.shield(creating)

        def done(future: asyncio.Future[str]) -> None:
            tournament.creating.discard(future)
            if future.cancelled():
                return
            # Seen here (so asyncio does not report it as never retrieved): a fenced write is
            # another process running the tournament now, the runner's quiet stop; any other
            # error is the awaiter's, unless it stopped waiting (cancelled), then logged here.
            error = future.exception()
            if error is None:
                return
            if _fenced(error):
                log.info("tournament %s: %s", tournament.id, error)
            elif waited.cancelled():
                log.error(
                    "tournament %s: creating game %d failed",
                    tournament.id,
                    task.index,
                    exc_info=error,
                )

        creating.add_done_callback(done)
        return await waited

    async def _record_and_make(self, tournament: HostedTournament, task: GameTask) -> str:
        """Record the game under a new match id, then make the match (see `_make_match`)."""
        game = scheduled_game(task, new_match_id())
        await self._store.add_game(tournament.id, game, tournament.epoch)
        tournament.games[task.index] = game
        await self._make_match(tournament, task, game.match_id)
        return game.match_id

    async def _make_match(
        self, tournament: HostedTournament, task: GameTask, match_id: str
    ) -> None:
        """Create the game's match under `match_id`, watched before its bots can move.

        The game's row names the match before it exists: a crash between the two leaves a row
        whose match a restart creates, never a match no game knows (played twice).
        """
        self._watches.watch(match_id)
        body = match_body(tournament.body, task)
        await self._matches.create_match(
            body, match_id=match_id, owner=match_owner(tournament.owner_id)
        )

    async def _finish(self, tournament: HostedTournament) -> None:
        if not await self._store.end(tournament.id, "finished", None, tournament.epoch):
            return  # ended meanwhile (cancelled): whoever ended it told the watchers
        tournament.status = "finished"
        await self._publish_finished(tournament)
        await self.tell(ended_notice(tournament.id))

    async def _end_early(self, tournament: HostedTournament, why: str) -> None:
        """Stop the unfinished games' matches (adjudicated with `why`), then tell the watchers."""
        for game in tournament.ordered_games():
            if game.result is None:
                await self._stop_match(game.match_id, why)
        await self._publish_finished(tournament)

    async def _stop_match(self, match_id: str, reason: str) -> None:
        """End a tournament match that is still in play, if it is (a draw, no result kept)."""
        try:
            await self._matches.adjudicate(match_id, None, reason)
        except ProtocolError as error:
            log.info("match %s of a stopped tournament: %s", match_id, error.message)

    async def _publish_finished(self, tournament: HostedTournament) -> None:
        tournament.publish(
            TournamentFinished(
                tournament_id=tournament.id,
                games_done=tournament.done,
                games_total=tournament.games_total,
                standings=await tournament.fresh_standings(),
                sprt=tournament.sprt(),
            )
        )


def _fenced(error: BaseException) -> bool:
    """Return True when `error` is (or its group holds) a FencedTournamentError."""
    if isinstance(error, FencedTournamentError):
        return True
    if isinstance(error, BaseExceptionGroup):
        return any(_fenced(inner) for inner in error.exceptions)
    return False
