"""The match service: every call on a match, under its lock: referee, commit, publish.

`MatchService` adapts the pure referee (games.referee) to the server: one per application, built
in the lifespan and kept on `app.state.service`. Every match being played has a `LiveMatch` in
memory (server.matches.live; held by the store, server.matches.store) and one `asyncio.Lock`; every
call on a match runs under that lock, in this order:

1. take the time (a monotonic clock in milliseconds, passed in; games/ never reads a clock);
2. let the referee handle the call (which first lets a fallen flag end the match);
3. if the referee accepted an event, commit its `MatchEvent` row and the `Match` row's status,
   result and seq in one transaction (commit before acknowledge);
4. only then answer: the new state, or the protocol error of a rejected call.

A failed commit evicts the match from memory (the next call reloads it from the database, where
the event is absent) and answers INTERNAL_ERROR, so memory never runs ahead of the database.

Restarts: `resume()` rebuilds every unfinished match with `Referee.restore` from its events.
Downtime is charged to nobody: the side to move's clock resumes as it stood at its last stored
event (`downtime_ms=0`); the server being down is not the player's fault, and the time a player
spent thinking between its last event and the crash cannot be known. Counts of rejected moves
are not events and restart from the stored forfeit, if any (see `Referee.restore`).

A cluster (several processes on one PostgreSQL database, `leases` given; docs/SCALING.md): each
unfinished match is held by one process, its owner, which alone plays it (its lock, referee,
house bots, clock ticker, listeners). A call on a match this process does not hold goes:

- here, when the match has no owner, a dead one or this process (loading it claims it:
  server.cluster.leases), or is over (read from the database, held by nobody);
- to the owner, when another live process owns it: over `remote` (server.cluster.forwarding),
  players travelling by id and name, answered with the owner's result or refusal. When the
  owner does not answer, the call looks again (a dead owner's lease expires, then this process
  claims the match) until `lease_ttl_ms` and a margin have passed, then answers UNAVAILABLE
  (retryable). A call refused by the fence (another process claimed the match meanwhile) is
  sent again the same way: nothing of it was stored.

`read` with an arbitrary reader is not forwarded: a non-owner reads a copy rebuilt from the
database (its clocks as they stand now), committing nothing. Takeover of a dead owner's matches
(server.cluster.processes) charges the side to move up to the dead owner's last heartbeat, not
for the ownerless time after it (server.cluster.leases); a plain restart of a single process
keeps the rule above.

Flag falls are noticed when the match is next touched: every call, a REST GET included, ticks
the referee first, and the background ticker (server.matches.ticker, `start_ticker`) ticks every
active timed match a few times a second, so an idle match (a disconnected player's, say) also ends
on time.

Broadcasting: after every commit of accepted events, each of `listeners` is awaited with a
`Broadcast` (server.matches.publisher: the match id, its seats' player ids and the protocol messages
of the events, in seq order) while the match lock is still held, so listeners see every match's
events in order. A listener must not block (the WebSocket hub only queues the messages).

The rest lives beside the service: the players (server.players), a new match's set-up and
the seat policies (server.matches.setup), loading and committing (server.matches.store), the
translation of the referee's effects into protocol messages and errors (server.matches.translation),
publishing (server.matches.publisher), the house bots (server.matches.housebots), the clock ticker
(server.matches.ticker) and the listings (server.matches.queries). The referee owns every rule of a
match, its ply cap (`MatchConfig.max_plies`, stored with the match) and a house bot's failure
(`Referee.fail`) included.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from games.match import Effect, Event, EventKind, MoveAccepted, Rejected, Status
from protocol.errors import ErrorCode
from protocol.messages import (
    Challenge,
    MatchCreate,
    MatchState,
    MoveMade,
    SearchInfo,
    ServerMessage,
)
from server.cluster.leases import Leases, NotOwnerError, UnansweredError
from server.db.models import Player
from server.db.writer import BatchWriter
from server.errors import MatchError
from server.matches import setup, translation
from server.matches.housebots import HouseBots
from server.matches.live import LiveMatch
from server.matches.publisher import Broadcast, Publisher
from server.matches.search_pool import SearchPool
from server.matches.store import RETRY_AFTER_MS, UNFINISHED, FencedMatchError, MatchStore
from server.matches.ticker import Ticker
from server.players import PlayerRegistry
from server.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

Clock = Callable[[], float]
"""A clock in seconds: `time.monotonic` for the referee's time, `time.time` for epoch times."""

FORWARD_MARGIN_S = 2.0
"""How long past `lease_ttl_ms` a call keeps looking for a match's owner before UNAVAILABLE."""

RETRY_PAUSE_S = 0.25
"""The pause before looking again for the owner of a match whose owner did not answer."""

OWNERS_CACHED = 10_000
"""Matches whose owner is remembered (the cache starts over when full)."""

_HERE_ONLY: ContextVar[bool] = ContextVar("arena_here_only", default=False)
"""Set while serving a forwarded call: it runs here or is refused, never forwarded again."""


class Remote(Protocol):
    """Sends calls on a match to the process that owns it (server.cluster.forwarding)."""

    async def call(self, owner_id: str, op: str, payload: dict[str, Any]) -> Any:
        """Run `op` with `payload` at `owner_id`; return its result as JSON.

        Raises the owner's MatchError, NotOwnerError when it does not own the match (any
        more), UnansweredError when it does not answer in time.
        """


class MatchService:
    """Hosts matches: creates, loads, plays and resumes them; one per application.

    `clock` (seconds, monotonic) times the referee; `wall` (seconds since the epoch) stamps the
    `*_time_ms` fields and stored events. Every change of a match is stored through `writer`
    (group commit, server.db.writer; by default one on the session maker's engine). `players`
    is the player registry (by default one of its own on `sessions`).
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
        leases: Leases | None = None,
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._wall = wall
        self.players = players or PlayerRegistry(sessions)
        """The registered players (server.players), who a new match may name."""
        self.store = MatchStore(
            sessions, writer, settings.max_illegal_moves, self.now_ms, self.wall_ms, leases
        )
        """The matches in memory and in the database (server.matches.store)."""
        self.remote: Remote | None = None
        """In a cluster: sends calls to the owners of matches held elsewhere (see the module)."""
        self._closing = False
        self._owners: dict[str, tuple[str, float]] = {}
        self._bots = HouseBots(self, self.store, settings, pool)
        self._ticker = Ticker(self, self.store)
        self._publisher = Publisher(self.now_ms, self.wall_ms)
        self.store.on_claim = self._announce_claim
        self.listeners = self._publisher.listeners
        """Awaited with a `Broadcast` after every commit of accepted events (see the module)."""

    @property
    def settings(self) -> Settings:
        """The server's settings (their limits apply to tournaments too)."""
        return self._settings

    def now_ms(self) -> int:
        """Return the referee's time: the monotonic clock, in milliseconds."""
        return int(self._clock() * 1000)

    def wall_ms(self) -> int:
        """Return the time since the epoch, in milliseconds."""
        return int(self._wall() * 1000)

    # -- life cycle ----------------------------------------------------------------------------

    async def resume(self) -> int:
        """Rebuild every unfinished match from its stored events; return how many were resumed.

        In a cluster, none: the reaper (server.cluster.processes) shares the matches without a
        live owner among the live processes, each taking its share over (`take_over`).
        """
        if self.store.leases is not None:
            return 0
        ids = await self.store.unfinished_ids()
        for match_id in ids:
            live = await self.store.load(match_id)
            async with live.lock:
                await self.run(live, live.referee.tick(self.now_ms()))
                self._bots.schedule(live)
        return len(ids)

    async def take_over(self, match_id: str) -> bool:
        """Claim and resume a match without a live owner: rebuild it (charged the clock rule),
        let a fallen flag end it, schedule its house bots. Return False when it was not taken
        (another process owns it, it is over, or it is held here already)."""
        if self.store.in_memory(match_id) is not None:
            return False
        try:
            live = await self.store.load(match_id)
        except (NotOwnerError, MatchError):
            return False
        if not self.store.is_live(live):
            return False
        async with live.lock:
            try:
                await self.run(live, live.referee.tick(self.now_ms()))
            except MatchError as error:
                log.error("taking over match %s: %s", match_id, error)
                return False
            self._bots.schedule(live)
        return True

    async def _announce_claim(self, live: LiveMatch) -> None:
        """Send everyone following a match just claimed its state as stored.

        Its previous owner may have stored events it never published (it died in between):
        the state shows them to the players and spectators, on every process, so none waits
        for a `move_made` that will never come (a connection drops a state it is ahead of).
        A house bot to move plays (claimed on first touch, say a player's `state` read, the
        match would otherwise wait for a move nobody makes).
        """
        state = self._match_state(live, None)
        seated = (live.players[0], live.players[1])  # not a challenged player: not seated yet
        await self._publisher.publish(Broadcast(live.id, seated, (state,)))
        self._bots.schedule(live)  # its task starts once the match is held

    def owned_ids(self) -> list[str]:
        """Return the ids of the matches held in memory (in a cluster: owned here)."""
        return [live.id for live in self.store.live_matches()]

    def drop_all(self) -> int:
        """Drop every match held from memory and stop its house bots; return how many.

        For a process that lost its leases (server.cluster.processes): the owners now are
        others, and a call reloads (or forwards) the match."""
        held = self.store.live_matches()
        for live in held:
            self._bots.stop(live)
            self.store.evict(live.id)
        return len(held)

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

    # -- matches: create and join --------------------------------------------------------------

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
            await setup.seat_requested(live, body, creator, self.players, session, self._bots.check)
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

    async def join(self, match_id: str, player: Player, seat: int | None) -> MatchState:
        """Seat `player` in an open seat (`seat` None: any); the match starts when full."""

        async def here() -> MatchState:
            live = await self.store.load(match_id)
            async with live.lock:
                return await self._take_seat(live, setup.seat_to_join(live, player, seat), player)

        call = {"player": _who(player), "seat": seat}
        return await self._on_match(match_id, here, "join", call, MatchState.model_validate)

    async def accept(self, match_id: str, player: Player) -> MatchState:
        """Accept the challenge inviting `player` to this match: take the seat it offers.

        The match starts when no seat is open or challenged any more. MatchError
        NOT_CHALLENGED when no pending challenge of this match invites `player`.
        """

        async def here() -> MatchState:
            live = await self.store.load(match_id)
            async with live.lock:
                seat = setup.challenged_seat(live, player)
                live.challenged[seat], live.challenged_names[seat] = None, None
                try:
                    return await self._take_seat(live, seat, player)
                except MatchError:
                    live.challenged[seat], live.challenged_names[seat] = player.id, player.name
                    raise

        call = {"player": _who(player)}
        return await self._on_match(match_id, here, "accept", call, MatchState.model_validate)

    async def decline(self, match_id: str, player: Player) -> MatchState:
        """Decline the challenge inviting `player` to this match: the match is aborted.

        MatchError NOT_CHALLENGED when no pending challenge of this match invites `player`.
        """

        async def here() -> MatchState:
            live = await self.store.load(match_id)
            async with live.lock:
                seat = setup.challenged_seat(live, player)
                await self.run(live, live.referee.decline(seat, self.now_ms()))
                return self._match_state(live, None)

        call = {"player": _who(player)}
        return await self._on_match(match_id, here, "decline", call, MatchState.model_validate)

    async def challenges(self, player: Player) -> list[Challenge]:
        """Return the challenges waiting for `player`'s answer, oldest first."""
        pending = []
        for match_id in await self.store.challenging_ids(player.id):
            challenge = await self._challenge(match_id, player)
            if challenge is not None:
                pending.append(challenge)
        return pending

    async def _challenge(self, match_id: str, player: Player) -> Challenge | None:
        """Return the challenge of this match waiting for `player`'s answer, if any."""

        async def here() -> Challenge | None:
            live = await self.store.load(match_id)
            async with live.lock:
                seat = live.challenged_seat(player.id)
                if seat is not None and live.referee.status is Status.WAITING:
                    return translation.challenge(live, seat, self.now_ms())
                return None

        def decode(found: Any) -> Challenge | None:
            return None if found is None else Challenge.model_validate(found)

        return await self._on_match(match_id, here, "challenge", {"player": _who(player)}, decode)

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

    # -- matches: play -------------------------------------------------------------------------

    async def move(
        self,
        match_id: str,
        player: Player,
        text: str,
        expected_seq: int | None,
        search: SearchInfo | None = None,
    ) -> MoveMade:
        """Play `player`'s move; raise MatchError for a refused move (the match is unchanged).

        `search` (the bot's search statistics, as it reported them) is stored with the move
        and shown with it. A refused move counts toward the forfeit (`max_illegal_moves`).
        """

        async def here() -> MoveMade:
            return await self._move(match_id, player, text, expected_seq, search, counted=True)

        call = {
            "player": _who(player),
            "text": text,
            "expected_seq": expected_seq,
            "search": None if search is None else search.model_dump(mode="json"),
        }
        return await self._on_match(match_id, here, "move", call, MoveMade.model_validate)

    async def move_by_hand(
        self, match_id: str, player: Player, text: str, expected_seq: int | None
    ) -> MoveMade:
        """Play a move a person entered on a match page; as `move`, but a refused move is
        only explained, never counted toward the forfeit.

        The page offers only the legal moves; what it refuses is a person's slip in the text
        box, not a bot's bug, and losing a match to three typos would be the server's fault.
        """

        async def here() -> MoveMade:
            return await self._move(match_id, player, text, expected_seq, None, counted=False)

        call = {"player": _who(player), "text": text, "expected_seq": expected_seq}
        return await self._on_match(match_id, here, "move_by_hand", call, MoveMade.model_validate)

    async def _move(
        self,
        match_id: str,
        player: Player,
        text: str,
        expected_seq: int | None,
        search: SearchInfo | None,
        *,
        counted: bool,
    ) -> MoveMade:
        live = await self.store.load(match_id)
        async with live.lock:
            seat = setup.seat_of(live, player)
            if expected_seq is not None and expected_seq != live.referee.seq:
                await self.run(live, live.referee.tick(self.now_ms()))
                raise MatchError(
                    ErrorCode.STALE_SEQ,
                    f"expected_seq is {expected_seq} but the match is at seq {live.referee.seq}",
                    match_id=match_id,
                    details={"seq": live.referee.seq},
                )
            effects = live.referee.move(seat, text, self.now_ms(), counted=counted)
            live.note_search(effects, translation.search_record(search))
            published = await self.run(live, effects)
            accepted = next(e for e in effects if isinstance(e, MoveAccepted))
            # The reply is the `move_made` just broadcast, if one was (built once per move).
            for message in published:
                if isinstance(message, MoveMade) and message.seq == accepted.seq:
                    return message
            return translation.move_made(live, accepted, self.wall_ms())

    async def act(self, match_id: str, player: Player, action: str) -> MatchState:
        """Run `action` (resign, offer_draw, accept_draw, decline_draw, abort) for `player`."""

        async def here() -> MatchState:
            live = await self.store.load(match_id)
            async with live.lock:
                seat = setup.seat_of(live, player)
                referee = live.referee
                handlers: dict[str, Callable[[int, int], list[Effect]]] = {
                    "resign": referee.resign,
                    "offer_draw": referee.offer_draw,
                    "accept_draw": referee.accept_draw,
                    "decline_draw": referee.decline_draw,
                    "abort": referee.abort,
                }
                await self.run(live, handlers[action](seat, self.now_ms()))
                return self._match_state(live, seat)

        call = {"player": _who(player), "action": action}
        return await self._on_match(match_id, here, "act", call, MatchState.model_validate)

    async def rematch(self, match_id: str, player: Player) -> MatchState:
        """Create the rematch of a finished match for one of its players: the same match with
        the seats swapped (`setup.rematch_request`), created as `create_match` creates
        any, by `player`: a house bot is seated, another player challenged."""
        body = await self.read(match_id, lambda live: setup.rematch_request(live, player))
        return await self.create_match(body, creator=player)

    async def adjudicate(self, match_id: str, winner: int | None, reason: str) -> MatchState:
        """End an active match by the server's decision: `winner` wins (None: a draw).

        For the server itself (a tournament stopped while its games are played), not for
        players: stored and replayed as a referee event. Raises MatchError MATCH_OVER
        (NOT_STARTED) when the match is over (still waiting) and UNKNOWN_MATCH for no such
        match.
        """

        async def here() -> MatchState:
            live = await self.store.load(match_id)
            async with live.lock:
                effects = live.referee.adjudicate(winner, reason, self.now_ms())
                await self.run(live, effects)
                if not any(
                    isinstance(e, Event) and e.kind is EventKind.ADJUDICATE for e in effects
                ):
                    result = live.referee.result
                    if result is None:
                        raise MatchError(
                            ErrorCode.NOT_STARTED,
                            "the match has not started yet",
                            match_id=match_id,
                        )
                    raise MatchError(
                        ErrorCode.MATCH_OVER,
                        f"the match is over: {result.reason}",
                        match_id=match_id,
                    )
                return self._match_state(live, None)

        call = {"winner": winner, "reason": reason}
        return await self._on_match(match_id, here, "adjudicate", call, MatchState.model_validate)

    # -- matches: read -------------------------------------------------------------------------

    async def exists(self, match_id: str) -> bool:
        """Return True when a match has id `match_id`."""
        leases = self.store.leases
        if leases is not None and self.store.in_memory(match_id) is None:
            return await leases.lease(match_id) is not None
        try:
            await self.store.load(match_id)
        except MatchError as error:
            if error.code is ErrorCode.UNKNOWN_MATCH:
                return False
            raise
        return True

    async def live_states(self, player: Player) -> list[MatchState]:
        """Return the state of every live (waiting or active) match `player` holds a seat in.

        Each state is taken under its match's lock, after letting a fallen flag end it.
        """
        states = []
        for match_id in await self.store.held_ids(player.id):
            shown = await self.state(match_id, player)
            if shown.status in UNFINISHED:
                states.append(shown)
        return states

    async def state(self, match_id: str, viewer: Player | None = None) -> MatchState:
        """Return the full state of a match (after letting a fallen flag end it)."""

        def shown(live: LiveMatch) -> MatchState:
            return self._match_state(live, None if viewer is None else live.seat_of(viewer.id))

        async def here() -> MatchState:
            return await self._read_here(match_id, shown)

        call = {"player": None if viewer is None else _who(viewer)}
        return await self._on_match(match_id, here, "state", call, MatchState.model_validate)

    async def read(self, match_id: str, reader: Callable[[LiveMatch], T]) -> T:
        """Return `reader` of the match, under its lock, after letting a fallen flag end it.

        In a cluster, a match another live process owns is read from a copy rebuilt from the
        database, its clocks as they stand now (see the module).
        """
        if self.store.leases is None or self.store.in_memory(match_id) is not None:
            return await self._read_here(match_id, reader)
        if await self._owner(match_id) is None:
            try:
                return await self._read_here(match_id, reader)
            except NotOwnerError:
                pass  # another process claimed it meanwhile
        copy = await self.store.load_copy(match_id)
        copy.referee.tick(self.now_ms())  # a fallen flag shows, as its owner will store it
        return reader(copy)

    async def _read_here(self, match_id: str, reader: Callable[[LiveMatch], T]) -> T:
        live = await self.store.load(match_id)
        async with live.lock:
            await self.run(live, live.referee.tick(self.now_ms()))
            return reader(live)

    def _match_state(self, live: LiveMatch, your_seat: int | None) -> MatchState:
        return translation.match_state(live, your_seat, self.now_ms(), self.wall_ms())

    # -- a cluster: where a call runs ----------------------------------------------------------

    async def _on_match(
        self,
        match_id: str,
        here: Callable[[], Awaitable[T]],
        op: str,
        call: dict[str, Any],
        decode: Callable[[Any], T],
    ) -> T:
        """Run `here` when this process holds the match or may claim it, else send `op` with
        `call` to the match's owner and `decode` its answer (see the module)."""
        leases = self.store.leases
        if leases is None:
            return await here()
        deadline = time.monotonic() + self._settings.lease_ttl_ms / 1000 + FORWARD_MARGIN_S
        # One id for every attempt: an owner that ran the call already answers it again
        # rather than running it twice (its answer may have been lost).
        sent = {"match_id": match_id, "call_id": uuid.uuid4().hex, **call}
        bounced = False
        while True:
            owner = None
            if self.store.in_memory(match_id) is None:
                # Serving a forwarded call, the lease is read afresh: the asker trusts this
                # process's answer, and a remembered owner may be out of date.
                owner = await self._owner(match_id, fresh=_HERE_ONLY.get())
            if owner is None:
                try:
                    return await here()
                except NotOwnerError as error:
                    owner = error.owner_id  # another process claimed it meanwhile
                except FencedMatchError:
                    self._owners.pop(match_id, None)
                    if time.monotonic() > deadline:
                        raise
                    continue  # nothing was stored: look for the new owner
            if _HERE_ONLY.get():
                raise NotOwnerError(match_id, owner)
            if len(self._owners) >= OWNERS_CACHED:
                self._owners.clear()
            self._owners[match_id] = (owner, time.monotonic() + leases_ttl_s(self._settings))
            try:
                if self.remote is None:
                    raise UnansweredError(owner, "this process has no bus to reach it")
                return decode(await self.remote.call(owner, op, sent))
            except (NotOwnerError, UnansweredError) as error:
                # The owner let the match go (look again at once, then pausing: the lease may
                # be changing hands), or did not answer (it may be dead: its lease expires).
                self._owners.pop(match_id, None)
                if time.monotonic() > deadline:
                    raise MatchError(
                        ErrorCode.UNAVAILABLE,
                        f"the server process playing this match does not answer ({error}); "
                        "another takes it over within seconds: retry",
                        match_id=match_id,
                        details={"retry_after_ms": RETRY_AFTER_MS},
                    ) from None
                if bounced or isinstance(error, UnansweredError):
                    await asyncio.sleep(RETRY_PAUSE_S)
                bounced = isinstance(error, NotOwnerError)

    async def _owner(self, match_id: str, *, fresh: bool = False) -> str | None:
        """Return the live process other than this one that owns the match, or None when it
        may be run here (no owner, a dead one, this process, a match over or none).

        The owner of a match last forwarded to is remembered for a lease (`fresh`: not used).
        """
        cached = None if fresh else self._owners.get(match_id)
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        leases = self.store.leases
        assert leases is not None
        lease = await leases.lease(match_id)
        if lease is None or lease.is_over or not lease.alive or lease.owner_id is None:
            return None
        return None if lease.owner_id == leases.process_id else lease.owner_id

    async def serve_forwarded(self, op: str, call: dict[str, Any]) -> Any:
        """Run a call another process sent here as the match's owner; return its result as
        JSON. Never forwarded again: raises NotOwnerError when another live process owns the
        match, and the call's MatchError when refused.

        Once this process is stopping, raises UnansweredError: the call is not run (or, caught
        by the closed writer, stored nothing), and the asking process tries again until this
        one has released its matches (server.cluster.processes), then claims the match."""
        if self._closing:
            raise UnansweredError(self._process_id(), "stopping")
        token = _HERE_ONLY.set(True)
        try:
            result = await self._forwarded(op, call)
        except MatchError as error:
            if self._closing and error.code is ErrorCode.INTERNAL_ERROR:
                raise UnansweredError(self._process_id(), "stopping") from None
            raise
        finally:
            _HERE_ONLY.reset(token)
        return None if result is None else result.model_dump(mode="json")

    def _process_id(self) -> str:
        leases = self.store.leases
        return "this process" if leases is None else leases.process_id

    async def _forwarded(
        self, op: str, call: dict[str, Any]
    ) -> MatchState | MoveMade | Challenge | None:
        match_id: str = call["match_id"]
        player = _player(call.get("player"))
        if op == "state":
            return await self.state(match_id, player)
        if op == "adjudicate":
            return await self.adjudicate(match_id, call["winner"], call["reason"])
        if player is None:
            raise ValueError(f"a forwarded {op} names no player")
        if op == "move":
            search = call.get("search")
            info = None if search is None else SearchInfo.model_validate(search)
            return await self.move(match_id, player, call["text"], call["expected_seq"], info)
        if op == "move_by_hand":
            return await self.move_by_hand(match_id, player, call["text"], call["expected_seq"])
        if op == "act":
            return await self.act(match_id, player, call["action"])
        if op == "join":
            return await self.join(match_id, player, call["seat"])
        if op == "accept":
            return await self.accept(match_id, player)
        if op == "decline":
            return await self.decline(match_id, player)
        if op == "challenge":
            return await self._challenge(match_id, player)
        raise ValueError(f"unknown forwarded call {op!r}")

    # -- referee, commit, publish --------------------------------------------------------------

    async def run(self, live: LiveMatch, effects: list[Effect]) -> tuple[ServerMessage, ...]:
        """Commit the accepted events of `effects`, publish them, let the match go on; then
        raise the refusal among `effects`, if there is one. Call under the match's lock (the
        house bots and the clock ticker call it too).

        Returns the messages published (none without a listener).
        """
        published: tuple[ServerMessage, ...] = ()
        events = _events(effects)
        if events:
            await self.store.commit(live, events)
            published = await self._publisher.publish_effects(live, effects)
            await self._go_on(live)
        rejected = next((e for e in effects if isinstance(e, Rejected)), None)
        if rejected is not None:
            raise translation.refusal(live, rejected)
        return published

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


def leases_ttl_s(settings: Settings) -> float:
    """Return how long a remembered owner of a match is trusted: one lease."""
    return settings.lease_ttl_ms / 1000


def _who(player: Player) -> dict[str, Any]:
    """Return a player as a forwarded call names it: id and name."""
    return {"id": player.id, "name": player.name}


def _player(who: Any) -> Player | None:
    """Return the player a forwarded call names (not loaded: the id and name are all a call
    on a match reads of a player)."""
    if who is None:
        return None
    return Player(id=int(who["id"]), name=str(who["name"]))
