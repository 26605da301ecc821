"""House bots: the server's own players, searching in the search pool and playing through the
match service.

`HouseBots` is owned by the match service (server.matches.service), which asks it to `schedule` a
match after every commit and to `stop` a match that is over. A house bot's move is played like a
player's: under the match's lock, through the referee, committed before it is announced (the
service's `run`). A bot that crashes, returns no move, plays an illegal move or is stopped at
the server's time limit loses its match: the referee's bot failure (`Referee.fail`), with why.
A draw offered to a house bot is answered by its search (`Bot.accepts_draw`): the search of its
move when it is to move, else a search of the position as it stands.

Two ways to play: turn by turn (`_play_turns`: each search runs on a pool thread, and when both
seats are house bots the reply's search starts while the move is committed), and, for a match
between two untimed house bots, played ahead in a child process (`_play_pipelined`,
server.matches.playahead) while the pool can lend it a thread.

A hosted bot (server.hosted) sits in a seat as a house bot played by its program
(server.matches.hostedseats): never played ahead, its failures told to its owner alone.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from bots.result import SearchResult, SearchStopped
from bots.spec import Bot
from bots.turns import NO_MOVE, crashed, describe, house_bot_loses, played_illegal, seat_budget
from bots.wire import search_info
from games.base import Game, State
from games.match import Effect, MoveAccepted, Status
from protocol.errors import ErrorCode
from server.errors import MatchError
from server.matches import translation
from server.matches.builtbots import BuiltBots
from server.matches.hostedseats import HostedPlayers
from server.matches.live import LiveMatch
from server.matches.playahead import Item, PlayAhead
from server.matches.search_pool import SearchPool
from server.matches.store import MatchStore
from server.settings import Settings

log = logging.getLogger(__name__)


class Host(Protocol):
    """What house bots need of the match service (server.matches.service.MatchService)."""

    def now_ms(self) -> int:
        """Return the referee's clock, in monotonic milliseconds."""

    async def run(self, live: LiveMatch, effects: list[Effect]) -> object:
        """Commit and publish the accepted events of `effects`, then raise a refusal (under
        the match's lock)."""


class HouseBots:
    """Plays the house bots' moves of every match: builds them, schedules and stops searches.

    Searches run in `pool` (server.matches.search_pool): threads of their own, shared fairly between
    owners (a match's owner, creator, or player).
    """

    def __init__(
        self,
        host: Host,
        store: MatchStore,
        settings: Settings,
        pool: SearchPool | None = None,
    ) -> None:
        self._host = host
        self._store = store
        self.built = BuiltBots(settings)
        """The bots built for the matches' seats, their specs checked (server.matches.builtbots)."""
        self.pool = pool or SearchPool(
            settings.bot.threads, settings.bot.searches_per_player, settings.bot.max_seconds
        )
        """Where house bots search (server.matches.search_pool): threads of their own, shared
        fairly."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.hosted = HostedPlayers()
        """The hosted bots' seats (server.matches.hostedseats)."""

    async def seat(self, spec: str, game: Game) -> str:
        """Return the spec a seat asking for `spec` stores; BotSpecError unless it makes a
        bot for `game` within the server's search maxima (a hosted bot: one that can play)."""
        if self.hosted.claims(spec):
            return await self.hosted.seat(spec, game)
        self.built.check(spec, game)
        return spec

    async def close(self) -> None:
        """Stop the pool's searches and every bot's task (set each match's `stop` first)."""
        self.pool.close()
        await self.hosted.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _bot(self, live: LiveMatch, seat: int) -> Bot | None:
        """Return the bot of `seat` (None for a player's seat): a hosted bot's, or a house
        bot from the built bots."""
        if self.hosted.claims(live.bot_specs[seat]):
            return self.hosted.bot(live, seat)
        return self.built.bot(live, seat)

    def stop(self, live: LiveMatch) -> None:
        """Stop the searches of a match that is over: its pool threads are free in moments."""
        live.stop.set()
        self.built.forget(live.id)
        self.hosted.stop(live)
        task = live.bot_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()  # a played-ahead match's child process is ended by its task

    def _owner(self, live: LiveMatch) -> str:
        """Return whose turn `live`'s searches wait for: its owner, creator, or player."""
        if live.owner is not None:
            return live.owner
        if live.created_by is not None:
            return f"player:{live.created_by}"
        for player in live.players:
            if player is not None:
                return f"player:{player}"
        return f"match:{live.id}"

    def _bot_seat(self, live: LiveMatch) -> int | None:
        """Return the seat of the house bot with something to do: the side to move, else the
        one a draw offer stands to; None when neither is a house bot's."""
        referee = live.referee
        if referee.status is not Status.ACTIVE:
            return None
        seat = referee.state.to_move
        if live.bot_specs[seat] is not None:
            return seat
        offer = referee.draw_offer
        if offer is not None and live.bot_specs[1 - offer] is not None:
            return 1 - offer
        return None

    def schedule(self, live: LiveMatch) -> None:
        """Start the house bot's task if a bot is to move or has a draw offer to answer, and
        none is running."""
        if self._bot_seat(live) is None:
            return
        if live.bot_task is not None and not live.bot_task.done():
            return
        task = asyncio.create_task(self._play(live))
        live.bot_task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _play(self, live: LiveMatch) -> None:
        """Play house-bot moves while a bot is to move (a match between two untimed house bots
        is played through `_play_pipelined` first)."""
        specs = live.bot_specs
        both_bots = specs[0] is not None and specs[1] is not None
        hosted = any(self.hosted.claims(spec) for spec in specs)
        if both_bots and not hosted and live.referee.config.time_control is None:
            await self._play_pipelined(live)
        await self._play_turns(live)

    async def _play_pipelined(self, live: LiveMatch) -> None:
        """Play a match between two untimed house bots with their searches back to back.

        A child process plays the game ahead (server.matches.playahead): each bot's move is handed
        to the event loop, which plays it through the referee and commits it in order, while the
        child already searches the reply. It stops when the match moves on otherwise (a
        resign, an abort, a ply cap, a server stop), or when the search pool takes back the
        thread it lent the child (another search has to wait); the turn-by-turn loop then
        carries on. Without a thread to spare, the match is played turn by turn from the start.
        """
        referee = live.referee
        specs = live.bot_specs
        assert specs[0] is not None and specs[1] is not None
        lease = self.pool.lease(self._owner(live))
        if lease is None:
            return
        try:
            ahead = PlayAhead((specs[0], specs[1]), referee.state, referee.seq)
        except BaseException:
            self.pool.end(lease)
            raise
        lease.on_revoke = ahead.interrupt
        try:
            while True:
                items = [await ahead.next(), *ahead.ready()]
                async with live.lock:
                    # Every move that has arrived is played, and all are committed together.
                    effects: list[Effect] = []
                    failure: Item | None = None
                    stop = False
                    for item in items:
                        if item is None or not self._plays_on(live, item):
                            stop = True
                            break
                        _, seat, move, search = item
                        if not isinstance(move, str):
                            failure = item
                            break
                        played = referee.move(seat, move, self._host.now_ms())
                        live.note_search(played, translation.search_record(search))
                        effects += played
                        if not any(isinstance(e, MoveAccepted) for e in played):
                            break  # refused: run raises it below
                    try:
                        await self._host.run(live, effects)
                    except MatchError as error:
                        if not self._store.is_live(live):
                            return  # dropped (not stored; in a cluster, another owns it)
                        if error.code not in (ErrorCode.ILLEGAL_MOVE, ErrorCode.INVALID_MOVE):
                            raise  # not the bot's fault (the database): logged by the task
                        failure = (referee.seq, referee.state.to_move, error.message, None)
                    position = referee.state
                if failure is not None:
                    await self._pipelined_failure(live, position, failure)
                    return
                if stop:
                    return
        finally:
            try:
                await ahead.close()
            finally:
                self.pool.end(lease)

    def _plays_on(self, live: LiveMatch, item: Item) -> bool:
        """Return True when `item` is the next move of the active match (the referee ends it at
        its ply cap, so no move is played past it)."""
        referee = live.referee
        seq, seat, _, _ = item
        return (
            self._store.is_live(live)
            and referee.status is Status.ACTIVE
            and referee.seq == seq
            and referee.state.to_move == seat
        )

    async def _pipelined_failure(
        self, live: LiveMatch, position: State[Any], failure: Item
    ) -> None:
        """End the match after a played-ahead bot failed in `position`: crashed, no move,
        illegal move."""
        _, seat, what, _ = failure
        if isinstance(what, BaseException):
            log.error("house bot %s failed in match %s: %s", live.bot_specs[seat], live.id, what)
            why = crashed(what)
        elif what is None:
            why = NO_MOVE
        else:
            why = played_illegal(what)
        await self._bot_loses(live, seat, position, why)

    async def _play_turns(self, live: LiveMatch) -> None:
        """Play house-bot moves while a bot is to move, and answer the draws offered to a bot;
        the search runs in a thread.

        When a house bot's move is accepted and the other side is a house bot too, that bot
        starts thinking at once, while the move is being committed (the commit's latency is
        hidden behind the search); its move is played only after the commit, in order. A draw
        offered to a bot that is to move is answered by the search of its move (declined, the
        move follows); one offered on the other side's turn, by a search of the position then.
        """
        ahead: tuple[int, asyncio.Future[SearchResult]] | None = None
        while True:
            async with live.lock:
                referee = live.referee
                seat = self._bot_seat(live) if self._store.is_live(live) else None
                if seat is None:
                    return
                bot = self._bot(live, seat)
                assert bot is not None
                position, seq = referee.state, referee.seq
                moving = position.to_move == seat
                if ahead is not None and ahead[0] == seq:
                    search = ahead[1]
                else:
                    search = self._search(live, bot, seat)
                ahead = None
            try:
                result = await search
            except SearchStopped as stopped:
                if live.stop.is_set():
                    return  # the match is over, or the server stops
                if not moving:
                    await self._decline_unjudged(live, seat, position, str(stopped))
                    continue
                await self._bot_loses(live, seat, position, str(stopped))
                return
            except Exception as error:
                if self.hosted.claims(live.bot_specs[seat]):
                    # A stranger's program failing is its owner's news, not the server's.
                    log.info("hosted bot %s failed in match %s: %s", bot.name, live.id, error)
                else:
                    log.exception("house bot %s failed in match %s", bot.name, live.id)
                if not moving:
                    await self._decline_unjudged(live, seat, position, "crashed")
                    continue
                await self._bot_loses(live, seat, position, crashed(describe(error)))
                return
            if moving and result.move is None:
                await self._bot_loses(live, seat, position, NO_MOVE)
                return
            async with live.lock:
                if referee.status is not Status.ACTIVE or referee.state is not position:
                    continue  # the match moved on while the bot thought (a resign, a flag, a move)
                effects = self._answer_draw(live, bot, seat, result, to_move=moving)
                if moving and referee.status is Status.ACTIVE:
                    played = referee.move(
                        seat, position.format_move(result.move), self._host.now_ms()
                    )
                    live.note_search(played, translation.search_record(search_info(result)))
                    effects += played
                    if any(isinstance(effect, MoveAccepted) for effect in played):
                        after = self._bot(live, referee.state.to_move)
                        if referee.status is Status.ACTIVE and after is not None:
                            ahead = (referee.seq, self._search(live, after, referee.state.to_move))
                try:
                    await self._host.run(live, effects)
                except MatchError as error:
                    if not self._store.is_live(live):
                        return  # dropped (not stored; in a cluster, another process owns it)
                    log.error("house bot %s in match %s: %s", bot.name, live.id, error)
                    illegal = error.message
                else:
                    continue
            await self._bot_loses(live, seat, position, played_illegal(illegal))
            return

    def _answer_draw(
        self, live: LiveMatch, bot: Bot, seat: int, result: SearchResult, *, to_move: bool
    ) -> list[Effect]:
        """Return the effects of `bot`'s answer to a draw offered to `seat`, if one stands,
        judged by its search `result` (call under the lock)."""
        referee = live.referee
        if referee.draw_offer != 1 - seat:
            return []
        now = self._host.now_ms()
        if bot.accepts_draw(result, to_move=to_move):
            return referee.accept_draw(seat, now)
        return referee.decline_draw(seat, now)

    async def _decline_unjudged(
        self, live: LiveMatch, seat: int, position: State[Any], why: str
    ) -> None:
        """Decline the draw offered to `seat` in `position` when the bot's search of it failed
        (it cannot judge the position: it plays on)."""
        async with live.lock:
            referee = live.referee
            if referee.status is not Status.ACTIVE or referee.state is not position:
                return
            if referee.draw_offer != 1 - seat:
                return
            spec = live.bot_specs[seat]
            log.warning(
                "house bot %s in match %s declines a draw: its search %s", spec, live.id, why
            )
            await self._host.run(live, referee.decline_draw(seat, self._host.now_ms()))

    def _search(self, live: LiveMatch, bot: Bot, seat: int) -> asyncio.Future[SearchResult]:
        """Start `bot`'s search of the match's position in the pool (call under the lock)."""
        referee = live.referee
        budget = seat_budget(referee, seat, self._host.now_ms())
        search = asyncio.ensure_future(
            self.pool.run(self._owner(live), bot, referee.state, time_budget=budget, stop=live.stop)
        )
        # A search started ahead may go unused (the match moved on): never an unread error.
        search.add_done_callback(lambda done: done.cancelled() or done.exception())
        return search

    async def _bot_loses(self, live: LiveMatch, seat: int, position: State[Any], why: str) -> None:
        """End the match as a loss for the house bot in `seat` that failed (crash, no move,
        illegal move, stopped) in `position`, unless the match moved on from it meanwhile
        (a draw offered meanwhile is not a move): the referee's bot failure (a flag that fell
        first is the referee's timeout instead)."""
        async with live.lock:
            referee = live.referee
            if referee.status is not Status.ACTIVE or referee.state is not position:
                return
            spec = live.bot_specs[seat]
            assert spec is not None
            if self.hosted.claims(spec):
                # Kept before the match ends: whoever reads the end can read why (its owner).
                why = await self.hosted.failed(live, seat, why)
            try:
                reason = house_bot_loses(referee.game, seat, spec, why)
                await self._host.run(live, referee.fail(seat, reason, self._host.now_ms()))
            except MatchError as error:
                log.error("ending match %s after its house bot failed: %s", live.id, error)
