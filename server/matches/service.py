"""The match service: every call on a match, under its lock: referee, commit, publish.

`MatchService` adapts the pure referee (games.referee) to the server: one per application, kept
on `app.state.service`. Each call on an existing match is a value (server.matches.commands) run
by `route`: here by default (`execute`), or where a cluster sends it. The design (the order
under the lock, commit before acknowledge, flag falls, listeners, restarts) is in
docs/ARCHITECTURE.md, "The match service".
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TypeVar, cast

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from games.match import Effect, Event, EventKind, MoveAccepted, Rejected, Status
from protocol.errors import ErrorCode
from protocol.messages import (
    Challenge,
    MatchCreate,
    MatchState,
    MoveMade,
)
from server.db.models import Player
from server.db.writer import BatchWriter
from server.errors import MatchError
from server.matches import setup, translation
from server.matches.calls import MatchCalls
from server.matches.commands import (
    Accept,
    Act,
    Action,
    Adjudicate,
    Decline,
    Join,
    MatchCall,
    PendingChallenge,
    PlayMove,
    Read,
    Route,
    ShowState,
)
from server.matches.hostedseats import HostedSeats
from server.matches.housebots import HouseBots
from server.matches.lifecycle import MatchLifecycle
from server.matches.live import LiveMatch
from server.matches.ownership import Ownership
from server.matches.publisher import Publisher
from server.matches.search_pool import SearchPool
from server.matches.store import MatchStore
from server.matches.ticker import Ticker
from server.players import PlayerRegistry
from server.settings import Settings

T = TypeVar("T")

Clock = Callable[[], float]
"""A clock in seconds: `time.monotonic` for the referee's time, `time.time` for epoch times."""


class MatchService(MatchCalls):
    """Hosts matches: creates, loads and plays them; one per application. The calls on a match
    are `MatchCalls`' (server.matches.calls); its `lifecycle` resumes and drops matches.

    `clock` (seconds, monotonic) times the referee; `wall` (seconds since the epoch) stamps the
    `*_time_ms` fields and stored events. Every change of a match is stored through `writer`
    (group commit, server.db.writer; by default one on the session maker's engine). `players`
    is the player registry (by default one of its own on `sessions`). `ownership` (a cluster
    only) claims each unfinished match before it is held here (server.matches.store).
    """

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        *,
        clock: Clock = time.monotonic,
        wall: Clock = time.time,
        writer: BatchWriter | None = None,
        pool: SearchPool | None = None,
        players: PlayerRegistry | None = None,
        ownership: Ownership | None = None,
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._wall = wall
        self.players = players or PlayerRegistry(sessions)
        """The registered players (server.players), who a new match may name."""
        self.store = MatchStore(
            sessions, writer, settings.max_illegal_moves, self.now_ms, self.wall_ms, ownership
        )
        self.route: Route = self.execute
        self._closing = False
        self._bots = HouseBots(self, self.store, settings, pool)
        self._ticker = Ticker(self, self.store)
        self._publisher = Publisher(self.now_ms, self.wall_ms)
        self.listeners = self._publisher.listeners
        """Awaited with a `Broadcast` after every commit of accepted events, under the lock."""
        self.lifecycle = MatchLifecycle(self, self.store, self._bots, self._publisher)
        """The matches held here: resumed, taken over, dropped (server.matches.lifecycle)."""

    def host(self, hosted: HostedSeats) -> None:
        """Seat hosted bots (server.hosted) in matches: their specs are theirs to resolve."""
        self._bots.hosted.source = hosted

    @property
    def settings(self) -> Settings:
        """The server's settings (their limits apply to tournaments too)."""
        return self._settings

    @property
    def closing(self) -> bool:
        """True once `close` has begun: the process is stopping."""
        return self._closing

    def now_ms(self) -> int:
        """Return the referee's time: the monotonic clock, in milliseconds."""
        return int(self._clock() * 1000)

    def wall_ms(self) -> int:
        """Return the time since the epoch, in milliseconds."""
        return int(self._wall() * 1000)

    # -- the service's own life ----------------------------------------------------------------

    def start_ticker(self) -> None:
        """Start the background task that ends active timed matches whose flag has fallen."""
        self._ticker.start()

    async def close(self) -> None:
        """Stop the ticker, the house bots' tasks and their searches, then the writer.

        Every search is told to stop and ends within milliseconds, so the server exits
        promptly; moves already acknowledged are stored (commit before acknowledge), and a
        move a stopped search had not played is searched again after a restart.
        """
        self._closing = True
        for live in self.store.live_matches():
            live.stop.set()
        await self._ticker.close()
        await self._bots.close()
        await self.store.close()

    # -- matches: create, and read a copy ------------------------------------------------------

    async def create_match(
        self,
        body: MatchCreate,
        *,
        creator: Player | None = None,
        match_id: str | None = None,
        owner: str | None = None,
    ) -> MatchState:
        """Create a match from `body`; it starts at once unless a seat is open or challenged.

        `creator` is the player asking (None: the server itself, for a tournament, whose
        players consented when they accepted its invitation). A player is seated only by
        themself: a seat naming another player challenges them, and the match waits until they
        accept (`accept`) or decline (`decline`). The state returned is seen by `creator` (its
        `your_seat` is the creator's seat, if any), as `state(match_id, creator)` would show it.

        `body.max_plies` is the match's ply cap, a rule of the match kept with it (the referee
        draws the match at it, code `ply_cap`). For the server's own use (tournaments):
        `match_id` (from `new_match_id`) is the id to use, so the caller can record it before
        the match exists; `owner` is whose turn its house bots' searches wait for in the search
        pool (a tournament's owner; default: the creator).

        Raises MatchError VALIDATION_ERROR naming the field for an unknown game, bad options,
        a bad start position, a game larger than the server's maxima, an unknown player or a
        bad bot spec (or one beyond the server's search maxima).
        """
        live = setup.new_live_match(
            body,
            self._settings,
            match_id=match_id or new_match_id(),
            created_ms=self.wall_ms(),
            creator=creator,
            owner=owner,
        )
        async with self.store.sessions() as session:
            await setup.seat_requested(live, body, creator, self.players, session, self._bots.seat)
        effects: list[Effect] = []
        if live.is_ready():
            effects = live.referee.start(self.now_ms())
        async with live.lock:
            # Held before it is stored (a failed commit drops it): in a cluster, a stored
            # match this process owns but does not hold would be resumed as an orphan.
            self.store.add(live)
            await self.store.commit(
                live, _events(effects), new_match=setup.new_match_row(live, body)
            )
            await self._publisher.publish_effects(live, effects)
            await self._publisher.publish_challenges(live)
            self._bots.schedule(live)
            return self._match_state(live, None if creator is None else live.seat_of(creator.id))

    async def rematch(self, match_id: str, player: Player) -> MatchState:
        """Create the rematch of a finished match for one of its players: the same match with
        the seats swapped (`setup.rematch_request`), created as `create_match` creates
        any, by `player`: a house bot is seated, another player challenged."""
        body = await self.read(match_id, lambda live: setup.rematch_request(live, player))
        return await self.create_match(body, creator=player)

    async def read_copy(self, match_id: str, reader: Callable[[LiveMatch], T]) -> T:
        """Return `reader` of a copy of the match rebuilt from the database, held by nobody
        and committing nothing (for a match another process plays): its clocks as they stand
        now, a fallen flag shown as its owner will store it."""
        copy = await self.store.load_copy(match_id)
        copy.referee.tick(self.now_ms())
        return reader(copy)

    # -- a call on a match, here: lock, referee, commit, publish ------------------------------

    async def execute(self, call: MatchCall[T]) -> T:
        """Run `call` in this process, under the match's lock; return its result.

        Raises the call's MatchError when refused; in a cluster, NotOwnerError when another
        live process holds the match, FencedMatchError when another took it over meanwhile
        (nothing was stored).
        """
        live = await self.store.load(call.match_id)
        async with live.lock:
            result: object
            match call:
                case Read(reader=reader):
                    await self.run(live, live.referee.tick(self.now_ms()))
                    result = reader(live)
                case ShowState(viewer=viewer):
                    await self.run(live, live.referee.tick(self.now_ms()))
                    seat = None if viewer is None else live.seat_of(viewer.id)
                    result = self._match_state(live, seat)
                case PlayMove():
                    result = await self._move(live, call)
                case Act(player=player, action=action):
                    result = await self._act(live, player, action)
                case Join(player=player, seat=seat):
                    result = await self._take_seat(
                        live, setup.seat_to_join(live, player, seat), player
                    )
                case Accept(player=player):
                    result = await self._accept(live, player)
                case Decline(player=player):
                    seat = setup.challenged_seat(live, player)
                    await self.run(live, live.referee.decline(seat, self.now_ms()))
                    result = self._match_state(live, None)
                case PendingChallenge(player=player):
                    result = self._challenge(live, player)
                case Adjudicate(winner=winner, reason=reason):
                    result = await self._adjudicate(live, winner, reason)
                case _:
                    raise TypeError(f"not a call on a match: {call!r}")
            return cast(T, result)

    async def _accept(self, live: LiveMatch, player: Player) -> MatchState:
        seat = setup.challenged_seat(live, player)
        live.challenged[seat], live.challenged_names[seat] = None, None
        try:
            return await self._take_seat(live, seat, player)
        except MatchError:
            live.challenged[seat], live.challenged_names[seat] = player.id, player.name
            raise

    def _challenge(self, live: LiveMatch, player: Player) -> Challenge | None:
        seat = live.challenged_seat(player.id)
        if seat is not None and live.referee.status is Status.WAITING:
            return translation.challenge(live, seat, self.now_ms())
        return None

    async def _take_seat(self, live: LiveMatch, seat: int, player: Player) -> MatchState:
        """Seat `player` in `seat` and start the match if it is full (call under the lock)."""
        live.players[seat], live.names[seat] = player.id, player.name
        effects: list[Effect] = []
        if live.is_ready():
            effects = live.referee.start(self.now_ms())
        try:
            await self.store.commit(live, _events(effects))
        except MatchError:
            live.players[seat], live.names[seat] = None, None
            raise
        await self._publisher.publish_effects(live, effects)
        self._bots.schedule(live)
        return self._match_state(live, seat)

    async def _move(self, live: LiveMatch, call: PlayMove) -> MoveMade | None:
        seat = setup.seat_of(live, call.player)
        if call.expected_seq is not None and call.expected_seq != live.referee.seq:
            await self.run(live, live.referee.tick(self.now_ms()))
            raise MatchError(
                ErrorCode.STALE_SEQ,
                f"expected_seq is {call.expected_seq} but the match is at seq {live.referee.seq}",
                match_id=live.id,
                details={"seq": live.referee.seq},
            )
        effects = live.referee.move(seat, call.text, self.now_ms(), counted=call.counted)
        live.note_search(effects, translation.search_record(call.search))
        await self.run(live, effects)
        if not call.reply:
            return None
        accepted = next(e for e in effects if isinstance(e, MoveAccepted))
        return translation.move_made(live, accepted, self.wall_ms())

    async def _act(self, live: LiveMatch, player: Player, action: Action) -> MatchState:
        seat = setup.seat_of(live, player)
        referee, now_ms = live.referee, self.now_ms()
        match action:
            case Action.RESIGN:
                effects = referee.resign(seat, now_ms)
            case Action.OFFER_DRAW:
                effects = referee.offer_draw(seat, now_ms)
            case Action.ACCEPT_DRAW:
                effects = referee.accept_draw(seat, now_ms)
            case Action.DECLINE_DRAW:
                effects = referee.decline_draw(seat, now_ms)
            case Action.ABORT:
                effects = referee.abort(seat, now_ms)
        await self.run(live, effects)
        return self._match_state(live, seat)

    async def _adjudicate(self, live: LiveMatch, winner: int | None, reason: str) -> MatchState:
        effects = live.referee.adjudicate(winner, reason, self.now_ms())
        await self.run(live, effects)
        if not any(isinstance(e, Event) and e.kind is EventKind.ADJUDICATE for e in effects):
            result = live.referee.result
            if result is None:
                raise MatchError(
                    ErrorCode.NOT_STARTED, "the match has not started yet", match_id=live.id
                )
            raise MatchError(
                ErrorCode.MATCH_OVER, f"the match is over: {result.reason}", match_id=live.id
            )
        return self._match_state(live, None)

    def _match_state(self, live: LiveMatch, your_seat: int | None) -> MatchState:
        return translation.match_state(live, your_seat, self.now_ms(), self.wall_ms())

    # -- referee, commit, publish --------------------------------------------------------------

    async def run(self, live: LiveMatch, effects: list[Effect]) -> None:
        """Commit the accepted events of `effects`, publish them, let the match go on; then
        raise the refusal among `effects`, if there is one. Call under the match's lock (the
        house bots and the clock ticker call it too)."""
        events = _events(effects)
        if events:
            await self.store.commit(live, events)
            await self._publisher.publish_effects(live, effects)
            await self._go_on(live)
        rejected = next((e for e in effects if isinstance(e, Rejected)), None)
        if rejected is not None:
            raise translation.refusal(live, rejected)

    async def _go_on(self, live: LiveMatch) -> None:
        """After a commit: let a house bot move, or let go of a match over."""
        self._bots.schedule(live)
        if live.referee.status in (Status.FINISHED, Status.ABORTED):
            self._bots.stop(live)
            # A match over never changes again: it is reloaded from the database if asked
            # for, so the memory and the clock ticker hold only live matches.
            self.store.evict(live.id)


def new_match_id() -> str:
    """Return a fresh match id."""
    return "m_" + uuid.uuid4().hex[:16]


def _events(effects: list[Effect]) -> list[Event]:
    return [effect for effect in effects if isinstance(effect, Event)]
