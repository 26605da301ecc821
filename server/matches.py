"""The match service: live referees in memory, their events in the database, house bots.

`MatchService` adapts the pure referee (games.referee) to the server: one per application, built
in the lifespan and kept on `app.state.service`. Every match being played has a `LiveMatch` in
memory (its referee, seats and house bots) and one `asyncio.Lock`; every call on a match runs
under that lock, in this order:

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

Flag falls are noticed when the match is next touched: every call, a REST GET included, ticks
the referee first, and the background ticker (`start_ticker`) ticks every active timed match a
few times a second, so an idle match (a disconnected player's, say) also ends on time.

Broadcasting: after every commit of accepted events, each of `listeners` is awaited with a
`Broadcast` (the match id, its seats' player ids and the protocol messages of the events, in seq
order) while the match lock is still held, so listeners see every match's events in order. A
listener must not block (the WebSocket hub only queues the messages).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import aliased

from bots.result import SearchResult, SearchStopped
from bots.spec import Bot, BotSpecError, check_limits, create_bot, parse_bot_spec
from bots.timing import time_budget
from games import game_names
from games.base import Game, GameError
from games.match import (
    MAX_ADJUDICATION_REASON,
    DrawDeclined,
    DrawOffered,
    Effect,
    Event,
    EventKind,
    MatchConfig,
    MatchEnded,
    MatchView,
    MoveAccepted,
    Rejected,
    Status,
    TimeControl,
)
from games.match import (
    ErrorCode as RefereeCode,
)
from games.match import (
    MatchStarted as RefereeMatchStarted,
)
from games.records import match_record, to_pdn
from games.referee import Referee
from games.registry import get_game
from protocol.errors import ErrorCode, ProtocolError, ScalarValue
from protocol.messages import (
    MAX_MOVE_LENGTH,
    RESULT_REASONS,
    Challenge,
    Clocks,
    HouseBot,
    MatchCreate,
    MatchList,
    MatchRecord,
    MatchResult,
    MatchState,
    MatchSummary,
    MoveMade,
    SeatInfo,
    ServerMessage,
    next_offset,
)
from protocol.messages import DrawDeclined as WireDrawDeclined
from protocol.messages import DrawOffered as WireDrawOffered
from protocol.messages import MatchEnded as WireMatchEnded
from protocol.messages import MatchStarted as WireMatchStarted
from protocol.messages import TimeControl as WireTimeControl
from server.db.models import Match, MatchEvent, Player, epoch_ms
from server.db.writer import BatchWriter, MatchWrite, WriterClosedError
from server.limits import oversize, search_limits
from server.playahead import Item, PlayAhead
from server.searches import SearchPool
from server.settings import Settings

log = logging.getLogger(__name__)

Clock = Callable[[], float]
"""A clock in seconds: `time.monotonic` for the referee's time, `time.time` for epoch times."""

UNFINISHED = (Status.WAITING.value, Status.ACTIVE.value)


PLAYER_CACHE = 10_000
"""Players kept in memory by token and by name (the cache starts over when full)."""

BUILT_BOTS_PER_THREAD = 4
"""House bots kept built (with their tables) per search thread; see `MatchService._bot`."""

PLY_CAP_REASON = "ply cap"
"""The description of a match drawn at a host's ply cap (`MatchService.limit_plies`)."""

TICK_SECONDS = 0.1
"""How often the background ticker lets fallen flags end active timed matches."""


@dataclass(frozen=True)
class Broadcast:
    """The messages of a match's newly committed events, for everyone following the match.

    `players` holds each seat's player id (None: a bot or an open seat). `messages` are in seq
    order; a `match_started` is followed by the match's `match_state` (with `your_seat` None:
    a sender fills in each receiver's seat).
    """

    match_id: str
    players: tuple[int | None, int | None]
    messages: tuple[ServerMessage, ...]


Listener = Callable[[Broadcast], Awaitable[None]]
"""An async callback awaited after each commit, under the match's lock; it must not block."""


class MatchError(ProtocolError):
    """A refused call on a match: a protocol error with the match id and, for moves, legal moves."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        match_id: str | None = None,
        legal_moves: Sequence[str] | None = None,
        details: dict[str, ScalarValue] | None = None,
    ) -> None:
        super().__init__(code, message, details, match_id=match_id, legal_moves=legal_moves)


@dataclass
class LiveMatch:
    """A match held in memory: its referee, who sits where, its house bots and its lock.

    `players` holds each seat's player id and `names` its player name (None: a bot or open).
    """

    id: str
    referee: Referee
    options: dict[str, str]
    players: list[int | None]
    names: list[str | None]
    bot_specs: list[str | None]
    created_ms: int
    challenged: list[int | None] = field(default_factory=lambda: [None, None])
    """Each seat's challenged player id, until they accept (then a player) or decline."""
    challenged_names: list[str | None] = field(default_factory=lambda: [None, None])
    created_by: int | None = None
    creator_name: str | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    bot_task: asyncio.Task[None] | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    """Set when the match is over (or the server stops): its bots' searches end at once."""
    owner: str | None = None
    """Whose turn in the search pool this match's searches wait for (see `MatchService`)."""
    last_move_made: MoveMade | None = None
    """The `move_made` of the newest move, as broadcast (a REST reply reuses it)."""

    def seat_of(self, player_id: int) -> int | None:
        """Return the seat `player_id` holds, or None."""
        for seat, holder in enumerate(self.players):
            if holder == player_id:
                return seat
        return None

    def is_open(self, seat: int) -> bool:
        """Return True when anyone may join `seat`: no player, no bot, nobody challenged."""
        return (
            self.players[seat] is None
            and self.bot_specs[seat] is None
            and self.challenged[seat] is None
        )

    def challenged_seat(self, player_id: int) -> int | None:
        """Return the seat a pending challenge invites `player_id` to, or None."""
        for seat, invited in enumerate(self.challenged):
            if invited == player_id:
                return seat
        return None

    def is_ready(self) -> bool:
        """Return True when every seat is taken: no seat open, no challenge pending."""
        return all(
            self.players[seat] is not None or self.bot_specs[seat] is not None for seat in (0, 1)
        )

    def recipients(self) -> tuple[int | None, int | None]:
        """Return each seat's player id, or its challenged player's while the challenge waits."""
        return (
            self.players[0] if self.players[0] is not None else self.challenged[0],
            self.players[1] if self.players[1] is not None else self.challenged[1],
        )


class MatchService:
    """Hosts matches: creates, loads, plays and resumes them; one per application.

    `clock` (seconds, monotonic) times the referee; `wall` (seconds since the epoch) stamps the
    `*_time_ms` fields and stored events. Every change of a match is stored through `writer`
    (group commit, server.db.writer; by default one on the session maker's engine).
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
    ) -> None:
        self._sessions = sessions
        if writer is None:
            bind = sessions.kw.get("bind")
            if not isinstance(bind, AsyncEngine):
                raise TypeError("MatchService needs a writer or a session maker bound to an engine")
            writer = BatchWriter(bind)
        self._writer = writer
        self._settings = settings
        self._limits = search_limits(settings)
        self.pool = pool or SearchPool(
            settings.bot_threads, settings.bot_searches_per_player, settings.bot_max_seconds
        )
        """Where house bots search (server.searches): threads of their own, shared fairly."""
        self._built: OrderedDict[tuple[str, int], Bot] = OrderedDict()
        self._built_limit = BUILT_BOTS_PER_THREAD * settings.bot_threads
        self._clock = clock
        self._wall = wall
        self._live: dict[str, LiveMatch] = {}
        self._players_by_token: dict[str, Player] = {}
        self._ply_caps: dict[str, int] = {}
        self._checked_bots: set[tuple[str, Hashable]] = set()
        self._players_by_name: dict[str, Player] = {}
        self._load_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._ticker: asyncio.Task[None] | None = None
        self.listeners: list[Listener] = []
        """Awaited with a `Broadcast` after every commit of accepted events (see the module)."""

    @property
    def settings(self) -> Settings:
        """The server's settings (their limits apply to tournaments too)."""
        return self._settings

    # -- time ----------------------------------------------------------------------------------

    def _now(self) -> int:
        return int(self._clock() * 1000)

    def _epoch_ms(self) -> int:
        return int(self._wall() * 1000)

    # -- life cycle ----------------------------------------------------------------------------

    async def resume(self) -> int:
        """Rebuild every unfinished match from its stored events; return how many were resumed."""
        async with self._sessions() as session:
            ids = (
                await session.scalars(select(Match.id).where(Match.status.in_(UNFINISHED)))
            ).all()
        for match_id in ids:
            live = await self._load(match_id)
            async with live.lock:
                await self._run(live, live.referee.tick(self._now()))
                await self._enforce_ply_cap(live)
                self._schedule_bot(live)
        return len(ids)

    def start_ticker(self) -> None:
        """Start the background task that ends active timed matches whose flag has fallen."""
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.create_task(self._tick_forever())
            self._tasks.add(self._ticker)
            self._ticker.add_done_callback(self._tasks.discard)

    async def _tick_forever(self) -> None:
        """Tick every active timed match every TICK_SECONDS; a failure is logged, not fatal."""
        while True:
            await asyncio.sleep(TICK_SECONDS)
            now = self._now()
            for live in list(self._live.values()):
                deadline = live.referee.deadline_ms()
                if deadline is None or now < deadline:
                    continue
                try:
                    async with live.lock:
                        if self._live.get(live.id) is live:
                            await self._run(live, live.referee.tick(self._now()))
                except MatchError as error:
                    log.error("ticking match %s: %s", live.id, error)
                except Exception:
                    log.exception("ticking match %s failed", live.id)

    async def close(self) -> None:
        """Stop the ticker, the house bots' tasks and their searches, then the writer.

        Every search is told to stop and ends within milliseconds, so the server exits
        promptly; moves already acknowledged are stored (commit before acknowledge), and a
        move a stopped search had not played is searched again after a restart.
        """
        for live in self._live.values():
            live.stop.set()
        self.pool.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._writer.close()

    # -- players -------------------------------------------------------------------------------

    async def register_player(self, name: str, token_hash: str) -> Player:
        """Store a new player; raise MatchError SEAT_TAKEN when the name is registered."""
        taken = MatchError(ErrorCode.SEAT_TAKEN, f"the player name {name!r} is already taken")
        async with self._sessions() as session:
            existing = await session.scalar(
                select(Player.id).where(func.lower(Player.name) == name.lower())
            )
            if existing is not None:
                raise taken
            player = Player(name=name, token_hash=token_hash)
            session.add(player)
            try:
                await session.commit()
            except IntegrityError:
                raise taken from None
            return player

    async def player_by_token_hash(self, token_hash: str) -> Player | None:
        """Return the player whose token hashes to `token_hash`, or None."""
        player = self._players_by_token.get(token_hash)
        if player is None:
            async with self._sessions() as session:
                player = await session.scalar(select(Player).where(Player.token_hash == token_hash))
            if player is not None:
                self._remember(player)
        return player

    async def player_named(self, name: str) -> Player | None:
        """Return the registered player called `name`, or None."""
        async with self._sessions() as session:
            return await self._player_named(session, name)

    async def _player_named(self, session: AsyncSession, name: str) -> Player | None:
        player = self._players_by_name.get(name)
        if player is None:
            player = await session.scalar(select(Player).where(Player.name == name))
            if player is not None:
                self._remember(player)
        return player

    def _remember(self, player: Player) -> None:
        """Cache a player (players never change): every request authenticates by token."""
        if len(self._players_by_token) >= PLAYER_CACHE:
            self._players_by_token.clear()
            self._players_by_name.clear()
        self._players_by_token[player.token_hash] = player
        self._players_by_name[player.name] = player

    # -- matches: create and join --------------------------------------------------------------

    async def create_match(
        self,
        body: MatchCreate,
        *,
        creator: Player | None = None,
        ply_cap: int | None = None,
        match_id: str | None = None,
        owner: str | None = None,
    ) -> MatchState:
        """Create a match from `body`; it starts at once unless a seat is open or challenged.

        `creator` is the player asking (None: the server itself, for a tournament, whose
        players consented when they accepted its invitation). A player is seated only by
        themself: a seat naming another player challenges them, and the match waits until they
        accept (`accept`) or decline (`decline`). The state returned is seen by `creator` (its
        `your_seat` is the creator's seat, if any), as `state(match_id, creator)` would show it.

        For the server's own use (tournaments): `ply_cap` draws the match once that many moves
        are played, as `limit_plies` does; `match_id` (from `new_match_id`) is the id to use,
        so the caller can record it before the match exists; `owner` is whose turn its house
        bots' searches wait for in the search pool (a tournament's owner; default: the creator).

        Raises MatchError VALIDATION_ERROR naming the field for an unknown game, bad options,
        a bad start position, a game larger than the server's maxima, an unknown player or a
        bad bot spec (or one beyond the server's search maxima).
        """
        try:
            game = get_game(body.game, body.options)
        except GameError as error:
            field_name = "options" if body.game in game_names() else "game"
            raise _invalid(field_name, str(error)) from None
        tc = body.time_control
        config_tc = None if tc is None else TimeControl(tc.base_ms, tc.increment_ms, tc.move_cap_ms)
        try:
            config = MatchConfig(
                game, body.start_position, config_tc, self._settings.max_illegal_moves
            )
            referee = Referee(config)
        except (GameError, ValueError) as error:
            raise _invalid("start_position", str(error)) from None
        too_large = oversize(referee.state, self._settings)
        if too_large is not None:
            raise _invalid(
                "options" if body.start_position is None else "start_position", too_large
            )
        live = LiveMatch(
            id=match_id or new_match_id(),
            referee=referee,
            options=dict(game.option_texts),
            players=[None, None],
            names=[None, None],
            bot_specs=[None, None],
            created_ms=self._epoch_ms(),
            created_by=None if creator is None else creator.id,
            creator_name=None if creator is None else creator.name,
            owner=owner,
        )
        async with self._sessions() as session:
            for seat, request in enumerate(body.seats):
                if isinstance(request, HouseBot):
                    try:
                        self._check_bot(request.bot, game)
                    except BotSpecError as error:
                        raise _invalid(f"seats.{seat}.bot", str(error)) from None
                    live.bot_specs[seat] = request.bot
                elif request.lower() != "open":
                    player = await self._player_named(session, request)
                    if player is None:
                        raise _invalid(f"seats.{seat}", f"no player is named {request!r}")
                    if creator is None or player.id == creator.id:
                        live.players[seat], live.names[seat] = player.id, player.name
                    else:
                        live.challenged[seat] = player.id
                        live.challenged_names[seat] = player.name
        named = [p for p in (*live.players, *live.challenged) if p is not None]
        if len(named) != len(set(named)):
            raise _invalid("seats", "a player cannot hold both seats of a match")
        effects: list[Effect] = []
        if live.is_ready():
            effects = referee.start(self._now())
        row = {
            "id": live.id,
            "game": game.name,
            "options": live.options,
            "start_position": body.start_position,
            "base_ms": None if tc is None else tc.base_ms,
            "increment_ms": 0 if tc is None else tc.increment_ms,
            "move_cap_ms": None if tc is None else tc.move_cap_ms,
            "created_by": live.created_by,
        }
        if ply_cap is not None:
            self._ply_caps[live.id] = ply_cap
        async with live.lock:
            await self._commit(live, _events(effects), new_match=row)
            self._live[live.id] = live
            await self._broadcast(live, effects)
            await self._announce_challenges(live)
            self._schedule_bot(live)
            return self._state(live, None if creator is None else live.seat_of(creator.id))

    async def join(self, match_id: str, player: Player, seat: int | None) -> MatchState:
        """Seat `player` in an open seat (`seat` None: any); the match starts when full."""
        live = await self._load(match_id)
        async with live.lock:
            if live.seat_of(player.id) is not None or live.challenged_seat(player.id) is not None:
                held = live.seat_of(player.id)
                raise MatchError(
                    ErrorCode.SEAT_TAKEN,
                    f"{player.name} already holds seat {held} of this match"
                    if held is not None
                    else f"{player.name} is challenged to this match: accept the challenge",
                    match_id=match_id,
                )
            open_seats = [s for s in (0, 1) if live.is_open(s)]
            if seat is None:
                seat = open_seats[0] if open_seats else None
            if seat is None or seat not in open_seats:
                raise MatchError(
                    ErrorCode.SEAT_TAKEN,
                    "this match has no open seat"
                    if not open_seats
                    else f"seat {seat} is not open (open: {open_seats})",
                    match_id=match_id,
                )
            return await self._take_seat(live, seat, player)

    async def accept(self, match_id: str, player: Player) -> MatchState:
        """Accept the challenge inviting `player` to this match: take the seat it offers.

        The match starts when no seat is open or challenged any more. MatchError
        NOT_CHALLENGED when no pending challenge of this match invites `player`.
        """
        live = await self._load(match_id)
        async with live.lock:
            seat = self._challenged_seat(live, player)
            live.challenged[seat], live.challenged_names[seat] = None, None
            try:
                return await self._take_seat(live, seat, player)
            except MatchError:
                live.challenged[seat], live.challenged_names[seat] = player.id, player.name
                raise

    async def decline(self, match_id: str, player: Player) -> MatchState:
        """Decline the challenge inviting `player` to this match: the match is aborted.

        MatchError NOT_CHALLENGED when no pending challenge of this match invites `player`.
        """
        live = await self._load(match_id)
        async with live.lock:
            seat = self._challenged_seat(live, player)
            await self._run(live, live.referee.decline(seat, self._now()))
            return self._state(live, None)

    async def challenges(self, player: Player) -> list[Challenge]:
        """Return the challenges waiting for `player`'s answer, oldest first."""
        async with self._sessions() as session:
            ids = (
                await session.scalars(
                    select(Match.id)
                    .where(
                        Match.status == Status.WAITING.value,
                        or_(
                            Match.seat0_challenged_id == player.id,
                            Match.seat1_challenged_id == player.id,
                        ),
                    )
                    .order_by(Match.created_at, Match.id)
                )
            ).all()
        pending = []
        for match_id in ids:
            live = await self._load(match_id)
            async with live.lock:
                seat = live.challenged_seat(player.id)
                if seat is not None and live.referee.status is Status.WAITING:
                    pending.append(self._challenge(live, seat))
        return pending

    async def _take_seat(self, live: LiveMatch, seat: int, player: Player) -> MatchState:
        """Seat `player` in `seat` and start the match if it is full (call under the lock)."""
        live.players[seat], live.names[seat] = player.id, player.name
        effects: list[Effect] = []
        if live.is_ready():
            effects = live.referee.start(self._now())
        try:
            await self._commit(live, _events(effects))
        except MatchError:
            live.players[seat], live.names[seat] = None, None
            raise
        await self._broadcast(live, effects)
        self._schedule_bot(live)
        return self._state(live, seat)

    def _challenged_seat(self, live: LiveMatch, player: Player) -> int:
        """Return the seat a pending challenge of `live` invites `player` to; else refuse."""
        seat = live.challenged_seat(player.id)
        if seat is None or live.referee.status is not Status.WAITING:
            raise MatchError(
                ErrorCode.NOT_CHALLENGED,
                f"no pending challenge of this match invites {player.name}",
                match_id=live.id,
            )
        return seat

    async def _announce_challenges(self, live: LiveMatch) -> None:
        """Send each challenged player (if connected) its `challenge` (call under the lock)."""
        for seat, invited in enumerate(live.challenged):
            if invited is not None and self.listeners:
                players = (invited, None) if seat == 0 else (None, invited)
                await self._publish(Broadcast(live.id, players, (self._challenge(live, seat),)))

    def _challenge(self, live: LiveMatch, seat: int) -> Challenge:
        view = live.referee.view(self._now())
        return Challenge(
            match_id=live.id,
            game=view.game,
            options=live.options,
            start_position=view.start_position,
            seats=self._seats(live),
            your_seat=seat,
            challenger=live.creator_name,
            time_control=_wire_time_control(view.time_control),
            seq=view.seq,
        )

    # -- matches: play -------------------------------------------------------------------------

    async def move(
        self, match_id: str, player: Player, text: str, expected_seq: int | None
    ) -> MoveMade:
        """Play `player`'s move; raise MatchError for a refused move (the match is unchanged)."""
        live = await self._load(match_id)
        async with live.lock:
            seat = self._seat(live, player)
            if expected_seq is not None and expected_seq != live.referee.seq:
                await self._run(live, live.referee.tick(self._now()))
                raise MatchError(
                    ErrorCode.STALE_SEQ,
                    f"expected_seq is {expected_seq} but the match is at seq {live.referee.seq}",
                    match_id=match_id,
                    details={"seq": live.referee.seq},
                )
            effects = live.referee.move(seat, text, self._now())
            await self._run(live, effects)
            accepted = next(e for e in effects if isinstance(e, MoveAccepted))
            made = live.last_move_made
            if made is not None and made.seq == accepted.seq:
                return made
            return self._move_made(live, accepted)

    async def act(self, match_id: str, player: Player, action: str) -> MatchState:
        """Run `action` (resign, offer_draw, accept_draw, decline_draw, abort) for `player`."""
        live = await self._load(match_id)
        async with live.lock:
            seat = self._seat(live, player)
            referee = live.referee
            handlers: dict[str, Callable[[int, int], list[Effect]]] = {
                "resign": referee.resign,
                "offer_draw": referee.offer_draw,
                "accept_draw": referee.accept_draw,
                "decline_draw": referee.decline_draw,
                "abort": referee.abort,
            }
            await self._run(live, handlers[action](seat, self._now()))
            return self._state(live, seat)

    def limit_plies(self, match_id: str, plies: int) -> None:
        """Draw the match ("ply cap") once `plies` moves are played: a host's rule.

        Checked after every accepted event, under the match's lock, so no move is played past
        the cap. Kept in memory only: after a restart, call it again before `resume`.
        """
        self._ply_caps[match_id] = plies

    async def _enforce_ply_cap(self, live: LiveMatch) -> None:
        """Draw `live` if it is active at its ply cap (call under its lock)."""
        cap = self._ply_caps.get(live.id)
        referee = live.referee
        if cap is not None and referee.status is Status.ACTIVE and referee.ply >= cap:
            await self._run(live, referee.adjudicate(None, PLY_CAP_REASON, self._now()))

    async def adjudicate(self, match_id: str, winner: int | None, reason: str) -> MatchState:
        """End an active match by the server's decision: `winner` wins (None: a draw).

        For the server itself (a tournament's ply cap), not for players: stored and replayed
        as a referee event. Raises MatchError MATCH_OVER (NOT_STARTED) when the match is over
        (still waiting) and UNKNOWN_MATCH for no such match.
        """
        live = await self._load(match_id)
        async with live.lock:
            effects = live.referee.adjudicate(winner, reason, self._now())
            await self._run(live, effects)
            if not any(isinstance(e, Event) and e.kind is EventKind.ADJUDICATE for e in effects):
                result = live.referee.result
                if result is None:
                    raise MatchError(
                        ErrorCode.NOT_STARTED, "the match has not started yet", match_id=match_id
                    )
                raise MatchError(
                    ErrorCode.MATCH_OVER, f"the match is over: {result.reason}", match_id=match_id
                )
            return self._state(live, None)

    # -- matches: read -------------------------------------------------------------------------

    async def exists(self, match_id: str) -> bool:
        """Return True when a match has id `match_id`."""
        try:
            await self._load(match_id)
        except MatchError as error:
            if error.code is ErrorCode.UNKNOWN_MATCH:
                return False
            raise
        return True

    async def live_states(self, player: Player) -> list[MatchState]:
        """Return the state of every live (waiting or active) match `player` holds a seat in.

        Each state is taken under its match's lock, after letting a fallen flag end it.
        """
        async with self._sessions() as session:
            ids = (
                await session.scalars(
                    select(Match.id)
                    .where(
                        Match.status.in_(UNFINISHED),
                        or_(
                            Match.seat0_player_id == player.id,
                            Match.seat1_player_id == player.id,
                        ),
                    )
                    .order_by(Match.created_at, Match.id)
                )
            ).all()
        states = []
        for match_id in ids:
            state = await self.state(match_id, player)
            if state.status in UNFINISHED:
                states.append(state)
        return states

    async def state(self, match_id: str, viewer: Player | None = None) -> MatchState:
        """Return the full state of a match (after letting a fallen flag end it)."""
        live = await self._load(match_id)
        async with live.lock:
            await self._run(live, live.referee.tick(self._now()))
            return self._state(live, None if viewer is None else live.seat_of(viewer.id))

    async def record(self, match_id: str) -> MatchRecord:
        """Return the record of a match: set-up, seats, every move with its time, result."""
        live = await self._load(match_id)
        async with live.lock:
            await self._run(live, live.referee.tick(self._now()))
            record = match_record(live.referee, self._now())
            return MatchRecord(match_id=live.id, seats=self._seats(live), **record)

    async def pdn(self, match_id: str) -> str:
        """Return a checkers match as PDN; MatchError BAD_MESSAGE for any other game."""
        live = await self._load(match_id)
        async with live.lock:
            await self._run(live, live.referee.tick(self._now()))
            if live.referee.game.name != "checkers":
                raise MatchError(
                    ErrorCode.BAD_MESSAGE,
                    f"PDN is for checkers only; this match is {live.referee.game.name} "
                    "(use /matches/{id}/record)",
                    match_id=match_id,
                )
            seats = self._seats(live)
            headers = {
                "Event": f"Arena match {live.id}",
                "Black": seats[0].player or seats[0].bot or "?",
                "White": seats[1].player or seats[1].bot or "?",
            }
            return to_pdn(live.referee, headers)

    async def list_matches(
        self,
        *,
        status: str | None = None,
        game: str | None = None,
        player: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> MatchList:
        """Return a page of matches, newest first; every filter given must hold."""
        seat0, seat1 = aliased(Player), aliased(Player)
        asked0, asked1 = aliased(Player), aliased(Player)
        query = (
            select(Match, seat0.name, seat1.name, asked0.name, asked1.name)
            .outerjoin(seat0, Match.seat0_player_id == seat0.id)
            .outerjoin(seat1, Match.seat1_player_id == seat1.id)
            .outerjoin(asked0, Match.seat0_challenged_id == asked0.id)
            .outerjoin(asked1, Match.seat1_challenged_id == asked1.id)
            .order_by(Match.created_at.desc(), Match.id)
            .limit(limit + 1)
            .offset(offset)
        )
        if status is not None:
            query = query.where(Match.status == status)
        if game is not None:
            query = query.where(Match.game == game)
        if player is not None:
            query = query.where(or_(seat0.name == player, seat1.name == player))
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
            ids = [row[0].id for row in rows if row[0].id not in self._live]
            plies: dict[str, int] = {}
            if ids:
                counted = await session.execute(
                    select(MatchEvent.match_id, func.count())
                    .where(MatchEvent.match_id.in_(ids), MatchEvent.kind == EventKind.MOVE.value)
                    .group_by(MatchEvent.match_id)
                )
                plies = {match_id: count for match_id, count in counted}
        summaries = [
            self._summary(match, (name0, name1), (asked0, asked1), plies.get(match.id, 0))
            for match, name0, name1, asked0, asked1 in rows[:limit]
        ]
        return MatchList(
            matches=tuple(summaries), next_offset=next_offset(offset, limit, len(rows))
        )

    # -- internals: loading and committing -----------------------------------------------------

    async def _load(self, match_id: str) -> LiveMatch:
        """Return the live match `match_id`, rebuilding it from the database if needed."""
        live = self._live.get(match_id)
        if live is not None:
            return live
        async with self._load_lock:
            live = self._live.get(match_id)
            if live is not None:
                return live
            async with self._sessions() as session:
                row = await session.get(Match, match_id)
                if row is None:
                    raise MatchError(
                        ErrorCode.UNKNOWN_MATCH, f"no match has id {match_id!r}", match_id=match_id
                    )
                stored = (
                    await session.scalars(
                        select(MatchEvent)
                        .where(MatchEvent.match_id == match_id)
                        .order_by(MatchEvent.seq)
                    )
                ).all()
                ids = (
                    row.seat0_player_id,
                    row.seat1_player_id,
                    row.seat0_challenged_id,
                    row.seat1_challenged_id,
                    row.created_by,
                )
                known = [i for i in ids if i is not None]
                found = await session.execute(
                    select(Player.id, Player.name).where(Player.id.in_(known))
                )
                by_id = {player_id: name for player_id, name in found}
                names = [None if i is None else by_id.get(i) for i in ids]
            live = self._rebuild(row, stored, names)
            if live.referee.status not in (Status.FINISHED, Status.ABORTED):
                self._live[match_id] = live
            return live

    def _rebuild(
        self, row: Match, stored: Sequence[MatchEvent], names: list[str | None]
    ) -> LiveMatch:
        """Return the live match of `row` and its events; `names` are the names of seat 0's
        and seat 1's players, their challenged players, and the creator."""
        game = get_game(row.game, row.options)
        tc = None
        if row.base_ms is not None:
            tc = TimeControl(row.base_ms, row.increment_ms, row.move_cap_ms)
        config = MatchConfig(game, row.start_position, tc, self._settings.max_illegal_moves)
        events = [
            Event(e.seq, EventKind(e.kind), e.player, e.move, e.elapsed_ms or 0) for e in stored
        ]
        referee = Referee.restore(config, events, self._now(), downtime_ms=0)
        specs = [row.seat0_bot, row.seat1_bot]
        return LiveMatch(
            id=row.id,
            referee=referee,
            options=dict(row.options),
            players=[row.seat0_player_id, row.seat1_player_id],
            names=names[:2],
            bot_specs=specs,
            created_ms=epoch_ms(row.created_at),
            challenged=[row.seat0_challenged_id, row.seat1_challenged_id],
            challenged_names=names[2:4],
            created_by=row.created_by,
            creator_name=names[4],
        )

    async def _commit(
        self, live: LiveMatch, events: list[Event], *, new_match: dict[str, Any] | None = None
    ) -> None:
        """Store `events` and the match row in one transaction; on failure evict and raise.

        The write goes through the group-commit writer (server.db.writer): the changes of
        every match waiting at the same moment share one commit. The values are taken now,
        under the match's lock.
        """
        referee = live.referee
        result = referee.result
        state: dict[str, Any] = {
            "seat0_player_id": live.players[0],
            "seat1_player_id": live.players[1],
            "seat0_challenged_id": live.challenged[0],
            "seat1_challenged_id": live.challenged[1],
            "seat0_bot": live.bot_specs[0],
            "seat1_bot": live.bot_specs[1],
            "status": referee.status.value,
            "seq": referee.seq,
            "result_winner": None if result is None else result.winner,
            "result_reason": None if result is None else result.code.value,
            "result_detail": None if result is None else result.reason[:500],
        }
        now = self._epoch_ms()
        rows = [
            {
                "match_id": live.id,
                "seq": event.seq,
                "kind": event.kind.value,
                "player": event.player,
                "move": event.move,
                "elapsed_ms": event.elapsed_ms,
                "at_ms": now,
            }
            for event in events
        ]
        change = MatchWrite(live.id, state, new_match, rows)
        try:
            await self._writer.write(change)
        except (SQLAlchemyError, WriterClosedError, ValueError, TypeError):
            # The in-memory match ran ahead of the database: evict it (it reloads as stored).
            log.exception("could not store match %s", live.id)
            self._live.pop(live.id, None)
            raise MatchError(
                ErrorCode.INTERNAL_ERROR,
                "the server could not store the match; nothing was changed, retry",
                match_id=live.id,
            ) from None

    async def _run(self, live: LiveMatch, effects: list[Effect]) -> None:
        """Commit the accepted events of `effects`, then raise the rejection if there is one."""
        events = _events(effects)
        if events:
            await self._commit(live, events)
            await self._broadcast(live, effects)
            await self._enforce_ply_cap(live)
            self._schedule_bot(live)
            if live.referee.status in (Status.FINISHED, Status.ABORTED):
                self._stop_bots(live)
                self._ply_caps.pop(live.id, None)
                # A match over never changes again: it is reloaded from the database if asked
                # for, so the memory and the clock ticker hold only live matches.
                self._live.pop(live.id, None)
        rejected = next((e for e in effects if isinstance(e, Rejected)), None)
        if rejected is not None:
            details: dict[str, ScalarValue] = {"seq": live.referee.seq}
            move_error = _is_move_error(rejected.code)
            if move_error:
                details["move"] = (rejected.text or "")[:MAX_MOVE_LENGTH]
                details["rejections"] = rejected.rejections
                details["limit"] = live.referee.config.max_illegal_moves
            raise MatchError(
                ErrorCode(rejected.code.value),
                rejected.reason,
                match_id=live.id,
                legal_moves=rejected.legal_moves if move_error else None,
                details=details,
            )

    async def _broadcast(self, live: LiveMatch, effects: list[Effect]) -> None:
        """Await every listener with the messages of `effects` (committed already)."""
        if not self.listeners:
            return
        messages = self._messages(live, effects)
        if not messages:
            return
        await self._publish(Broadcast(live.id, live.recipients(), tuple(messages)))

    async def _publish(self, broadcast: Broadcast) -> None:
        """Await every listener with `broadcast`; a failing listener is logged, not raised."""
        for listener in self.listeners:
            try:
                await listener(broadcast)
            except Exception:
                log.exception("a listener failed on match %s", broadcast.match_id)

    def _messages(self, live: LiveMatch, effects: list[Effect]) -> list[ServerMessage]:
        """Return the protocol messages announcing the accepted events among `effects`."""
        messages: list[ServerMessage] = []
        for effect in effects:
            if isinstance(effect, RefereeMatchStarted):
                state = self._state(live, None)
                messages.append(
                    WireMatchStarted(
                        match_id=live.id,
                        game=state.game,
                        options=state.options,
                        seats=state.seats,
                        time_control=state.time_control,
                        seq=effect.seq,
                    )
                )
                messages.append(state)
            elif isinstance(effect, MoveAccepted):
                live.last_move_made = self._move_made(live, effect)
                messages.append(live.last_move_made)
            elif isinstance(effect, DrawOffered):
                messages.append(
                    WireDrawOffered(match_id=live.id, seq=effect.seq, seat=effect.player)
                )
            elif isinstance(effect, DrawDeclined):
                messages.append(
                    WireDrawDeclined(match_id=live.id, seq=effect.seq, seat=effect.player)
                )
            elif isinstance(effect, MatchEnded):
                clocks = None
                if effect.clocks_ms is not None:
                    clocks = Clocks(
                        remaining_ms=effect.clocks_ms, running=None, server_time_ms=self._epoch_ms()
                    )
                messages.append(
                    WireMatchEnded(
                        match_id=live.id,
                        seq=effect.seq,
                        status="aborted" if effect.status is Status.ABORTED else "finished",
                        result=MatchResult.of_code(
                            effect.result.winner, effect.result.code.value, effect.result.reason
                        ),
                        clocks=clocks,
                    )
                )
        return messages

    def _move_made(self, live: LiveMatch, accepted: MoveAccepted) -> MoveMade:
        """Return the `move_made` of `accepted`, described after the move (the match as now)."""
        referee = live.referee
        active = referee.status is Status.ACTIVE
        # Built from the referee's own values on every move: not validated again (the tests
        # check these messages against the schema).
        clocks = None
        if accepted.clocks_ms is not None:
            clocks = Clocks.model_construct(
                remaining_ms=accepted.clocks_ms,
                running=referee.state.to_move if active else None,
                server_time_ms=self._epoch_ms(),
            )
        return MoveMade.model_construct(
            type="move_made",
            match_id=live.id,
            seq=accepted.seq,
            ply=accepted.ply,
            seat=accepted.player,
            move=accepted.move,
            position=accepted.position,
            to_move=referee.state.to_move if active else None,
            legal_moves=referee.legal_texts(),
            clocks=clocks,
        )

    def _check_bot(self, spec: str, game: Game) -> None:
        """Raise BotSpecError unless `spec` makes a bot for `game` within the server's search
        maxima (checked once per pair)."""
        key = (spec, game.rules_key())
        if key not in self._checked_bots:
            check_limits(parse_bot_spec(spec), self._limits)
            create_bot(spec, game)
            if len(self._checked_bots) >= PLAYER_CACHE:
                self._checked_bots.clear()
            self._checked_bots.add(key)

    def _seat(self, live: LiveMatch, player: Player) -> int:
        seat = live.seat_of(player.id)
        if seat is None:
            raise MatchError(
                ErrorCode.NOT_A_PLAYER,
                f"{player.name} holds no seat in match {live.id}",
                match_id=live.id,
            )
        return seat

    # -- internals: house bots -----------------------------------------------------------------

    def _bot(self, live: LiveMatch, seat: int) -> Bot | None:
        """Return the house bot of `seat`, or None for a player's seat.

        A bot keeps its table (8 MB and more for alphabeta and id) from move to move, so only
        the most recently used few (BUILT_BOTS_PER_THREAD per search thread) are kept: a match
        waiting for its human player holds none, and an evicted bot is built again (a fresh
        table and random generator) when next needed. Memory stays bounded by the pool's size,
        not by the number of matches.
        """
        spec = live.bot_specs[seat]
        if spec is None:
            return None
        key = (live.id, seat)
        built = self._built.get(key)
        if built is None:
            built = self._built[key] = create_bot(spec, live.referee.game)
            while len(self._built) > self._built_limit:
                self._built.popitem(last=False)
        else:
            self._built.move_to_end(key)
        return built

    def _stop_bots(self, live: LiveMatch) -> None:
        """Stop the searches of a match that is over: its pool threads are free in moments."""
        live.stop.set()
        for seat in (0, 1):
            self._built.pop((live.id, seat), None)
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

    def _schedule_bot(self, live: LiveMatch) -> None:
        """Start the house bot's task if it is a bot's turn and none is running."""
        referee = live.referee
        if referee.status is not Status.ACTIVE or live.bot_specs[referee.state.to_move] is None:
            return
        if live.bot_task is not None and not live.bot_task.done():
            return
        task = asyncio.create_task(self._play_bots(live))
        live.bot_task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _play_bots(self, live: LiveMatch) -> None:
        """Play house-bot moves while a bot is to move (a match between two untimed house bots
        is played through `_play_pipelined` first)."""
        both_bots = live.bot_specs[0] is not None and live.bot_specs[1] is not None
        if both_bots and live.referee.config.time_control is None:
            await self._play_pipelined(live)
        await self._play_turns(live)

    async def _play_pipelined(self, live: LiveMatch) -> None:
        """Play a match between two untimed house bots with their searches back to back.

        A child process plays the game ahead (server.playahead): each bot's move is handed to
        the event loop, which plays it through the referee and commits it in order, while the
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
                        _, seat, move = item
                        if not isinstance(move, str):
                            failure = item
                            break
                        played = referee.move(seat, move, self._now())
                        effects += played
                        if not any(isinstance(e, MoveAccepted) for e in played):
                            break  # refused: _run raises it below
                    try:
                        await self._run(live, effects)
                    except MatchError as error:
                        if error.code not in (ErrorCode.ILLEGAL_MOVE, ErrorCode.INVALID_MOVE):
                            raise  # not the bot's fault (the database): logged by the task
                        failure = (referee.seq, referee.state.to_move, error.message)
                if failure is not None:
                    await self._pipelined_failure(live, failure)
                    return
                if stop:
                    return
        finally:
            try:
                await ahead.close()
            finally:
                self.pool.end(lease)

    def _plays_on(self, live: LiveMatch, item: Item) -> bool:
        """Return True when `item` is the next move of the active match, within its ply cap."""
        referee = live.referee
        seq, seat, _ = item
        cap = self._ply_caps.get(live.id)
        return (
            self._live.get(live.id) is live
            and referee.status is Status.ACTIVE
            and referee.seq == seq
            and referee.state.to_move == seat
            and (cap is None or referee.ply < cap)
        )

    async def _pipelined_failure(self, live: LiveMatch, failure: Item) -> None:
        """End the match after a played-ahead bot failed: crashed, no move, illegal move."""
        seq, seat, what = failure
        if isinstance(what, BaseException):
            log.error("house bot %s failed in match %s: %s", live.bot_specs[seat], live.id, what)
            why = f"crashed: {what}"
        elif what is None:
            why = "returned no move"
        else:
            why = f"played an illegal move: {what}"
        await self._bot_loses(live, seat, seq, why)

    async def _play_turns(self, live: LiveMatch) -> None:
        """Play house-bot moves while a bot is to move; the search runs in a thread.

        When a house bot's move is accepted and the other side is a house bot too, that bot
        starts thinking at once, while the move is being committed (the commit's latency is
        hidden behind the search); its move is played only after the commit, in order.
        """
        ahead: tuple[int, asyncio.Future[SearchResult]] | None = None
        while True:
            async with live.lock:
                referee = live.referee
                if self._live.get(live.id) is not live or referee.status is not Status.ACTIVE:
                    return
                seat = referee.state.to_move
                bot = self._bot(live, seat)
                if bot is None:
                    return
                state, seq = referee.state, referee.seq
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
                await self._bot_loses(live, seat, seq, str(stopped))
                return
            except Exception as error:
                log.exception("house bot %s failed in match %s", bot.name, live.id)
                await self._bot_loses(live, seat, seq, f"crashed: {type(error).__name__}: {error}")
                return
            if result.move is None:
                await self._bot_loses(live, seat, seq, "returned no move")
                return
            async with live.lock:
                if referee.seq != seq:
                    continue  # the match moved on while the bot thought (a resign, a flag)
                effects = referee.move(seat, state.format_move(result.move), self._now())
                if any(isinstance(effect, MoveAccepted) for effect in effects):
                    after = self._bot(live, referee.state.to_move)
                    if referee.status is Status.ACTIVE and after is not None:
                        ahead = (referee.seq, self._search(live, after, referee.state.to_move))
                try:
                    await self._run(live, effects)
                except MatchError as error:
                    log.error("house bot %s in match %s: %s", bot.name, live.id, error)
                    illegal = error.message
                else:
                    continue
            await self._bot_loses(live, seat, seq, f"played an illegal move: {illegal}")
            return

    def _search(self, live: LiveMatch, bot: Bot, seat: int) -> asyncio.Future[SearchResult]:
        """Start `bot`'s search of the match's position in the pool (call under the lock)."""
        referee = live.referee
        budget = self._bot_budget(referee, seat)
        search = asyncio.ensure_future(
            self.pool.run(self._owner(live), bot, referee.state, time_budget=budget, stop=live.stop)
        )
        # A search started ahead may go unused (the match moved on): never an unread error.
        search.add_done_callback(lambda done: done.cancelled() or done.exception())
        return search

    async def _bot_loses(self, live: LiveMatch, seat: int, seq: int, why: str) -> None:
        """End the match as a loss for the house bot in `seat` that failed (crash, no move,
        illegal move), unless the match moved on past `seq` meanwhile."""
        async with live.lock:
            referee = live.referee
            if referee.status is not Status.ACTIVE or referee.seq > seq:
                return
            side = referee.game.player_names[seat].capitalize()
            name = f"{side} (house bot {live.bot_specs[seat]})"
            try:
                reason = f"{name} {why}"[:MAX_ADJUDICATION_REASON]
                await self._run(live, referee.adjudicate(1 - seat, reason, self._now()))
            except MatchError as error:
                log.error("ending match %s after its house bot failed: %s", live.id, error)

    def _bot_budget(self, referee: Referee, seat: int) -> float | None:
        """Seconds a house bot may think: the clients' policy (bots.timing), no latency."""
        tc = referee.config.time_control
        clocks = referee.clocks_at(self._now())
        if tc is None or clocks is None:
            return None
        return time_budget(clocks[seat], tc.increment_ms, tc.move_cap_ms, margin_ms=0)

    # -- internals: wire models ----------------------------------------------------------------

    def _seats(self, live: LiveMatch) -> tuple[SeatInfo, SeatInfo]:
        sides = live.referee.game.player_names
        return (
            SeatInfo(
                seat=0,
                side=sides[0],
                player=live.names[0],
                bot=live.bot_specs[0],
                challenged=live.challenged_names[0],
            ),
            SeatInfo(
                seat=1,
                side=sides[1],
                player=live.names[1],
                bot=live.bot_specs[1],
                challenged=live.challenged_names[1],
            ),
        )

    def _clocks(self, view: MatchView) -> Clocks | None:
        if view.clocks_ms is None:
            return None
        running = view.to_move if view.status is Status.ACTIVE else None
        return Clocks(remaining_ms=view.clocks_ms, running=running, server_time_ms=self._epoch_ms())

    def _state(self, live: LiveMatch, your_seat: int | None) -> MatchState:
        view = live.referee.view(self._now())
        return MatchState(
            match_id=live.id,
            game=view.game,
            options=live.options,
            start_position=view.start_position,
            position=view.position,
            moves=view.moves,
            to_move=view.to_move if view.status is Status.ACTIVE else None,
            seats=self._seats(live),
            your_seat=your_seat,
            time_control=_wire_time_control(view.time_control),
            clocks=self._clocks(view),
            legal_moves=view.legal_moves if view.status is Status.ACTIVE else (),
            status=view.status.value,
            result=None
            if view.result is None
            else MatchResult.of_code(
                view.result.winner, view.result.code.value, view.result.reason
            ),
            draw_offer=view.draw_offer,
            seq=view.seq,
        )

    def _summary(
        self,
        row: Match,
        names: tuple[str | None, str | None],
        challenged: tuple[str | None, str | None],
        ply: int,
    ) -> MatchSummary:
        live = self._live.get(row.id)
        if live is not None:
            state = self._state(live, None)
            return MatchSummary(
                match_id=row.id,
                game=state.game,
                options=state.options,
                status=state.status,
                seats=state.seats,
                time_control=state.time_control,
                to_move=state.to_move,
                ply=len(state.moves),
                result=state.result,
                created_time_ms=live.created_ms,
            )
        sides = get_game(row.game, row.options).player_names
        tc = None
        if row.base_ms is not None:
            tc = WireTimeControl(
                base_ms=row.base_ms, increment_ms=row.increment_ms, move_cap_ms=row.move_cap_ms
            )
        result = None
        if row.result_reason is not None:
            result = stored_result(row.result_winner, row.result_reason, row.result_detail)
        return MatchSummary(
            match_id=row.id,
            game=row.game,
            options=row.options,
            status=row.status,
            seats=(
                SeatInfo(
                    seat=0,
                    side=sides[0],
                    player=names[0],
                    bot=row.seat0_bot,
                    challenged=challenged[0],
                ),
                SeatInfo(
                    seat=1,
                    side=sides[1],
                    player=names[1],
                    bot=row.seat1_bot,
                    challenged=challenged[1],
                ),
            ),
            time_control=tc,
            ply=ply,
            result=result,
            created_time_ms=epoch_ms(row.created_at),
        )


def new_match_id() -> str:
    """Return a fresh match id."""
    return "m_" + uuid.uuid4().hex[:16]


def _events(effects: list[Effect]) -> list[Event]:
    return [effect for effect in effects if isinstance(effect, Event)]


def stored_result(winner: int | None, stored: str, detail: str | None) -> MatchResult:
    """Return the wire result of a match row: `stored` is its result code, or, for a match
    finished before the codes were fine-grained, its broad reason (`rules`), kept as is."""
    if stored in RESULT_REASONS:
        return MatchResult.of_code(winner, stored, detail or "")
    return MatchResult.model_validate(
        {"winner": winner, "reason": stored, "description": detail or ""}
    )


def _is_move_error(code: RefereeCode) -> bool:
    return code in (RefereeCode.ILLEGAL_MOVE, RefereeCode.INVALID_MOVE, RefereeCode.NOT_YOUR_TURN)


def _invalid(field_name: str, message: str) -> MatchError:
    return MatchError(
        ErrorCode.VALIDATION_ERROR, f"{field_name}: {message}", details={field_name: message}
    )


def _wire_time_control(tc: TimeControl | None) -> WireTimeControl | None:
    if tc is None:
        return None
    return WireTimeControl(
        base_ms=tc.base_ms, increment_ms=tc.increment_ms, move_cap_ms=tc.move_cap_ms
    )
