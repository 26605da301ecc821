"""The network client that plays a bot on an Arena server over the WebSocket protocol.

`BotClient(server_url, token, spec)` connects to `<server>/ws`, says `hello`, and plays every
match the server gives it: whenever a `match_state` or `move_made` shows an active match with
its seat to move, it rebuilds the game state, asks the bot for a move in a worker thread with a
time budget taken from its clock, and sends the move with `expected_seq`. It reconnects with
exponential backoff and jitter when the connection drops and resyncs from the `match_state`
messages the server sends on every new connection (docs/PROTOCOL.md). A match that ended while
the client was away gets no `match_state` on the new connection (the server resyncs only live
matches), so after each `welcome` the client asks the REST API (`GET /matches/{id}`) about
every match it was tracking and treats one that is over as if its `match_ended` had arrived.

It is not search code, so it reads the clock: for the latency margin and to subtract the time
a move waited for the searcher from the clock the server reported.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import TypeAdapter, ValidationError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from bots import timing
from bots.result import SearchResult
from bots.spec import Bot, BotSpec, BotSpecError, create_bot, parse_bot_spec
from bots.wire import search_info
from games import Game, GameError, State, get_game
from protocol.errors import ErrorCode
from protocol.messages import (
    AcceptChallenge,
    AcceptDraw,
    BotAvailable,
    Challenge,
    Clocks,
    DeclineChallenge,
    DrawDeclined,
    DrawOffered,
    ErrorMessage,
    Hello,
    MatchCreate,
    MatchEnded,
    MatchResult,
    MatchStarted,
    MatchState,
    Move,
    MoveMade,
    OnlineBots,
    Resign,
    SearchInfo,
    ServerMessage,
    TimeControl,
    Welcome,
    dump_client_message,
)
from protocol.version import PROTOCOL_VERSION, VERSION_HEADER, parse_version

LOGGER = logging.getLogger("arena.bot")
"""The default logger of the client (each move with its search statistics goes here)."""

CLIENT_NAME = "arena-bot/1.0 (python)"
"""The program name sent in `hello`."""

FATAL_CLOSE_CODES = {
    4000: "bad protocol",
    4001: "unauthorized",
    4002: "replaced by a newer connection with the same token",
    4003: "protocol version not supported",
}
"""WebSocket close codes after which reconnecting cannot help (docs/PROTOCOL.md)."""

# Server messages may exceed MAX_MESSAGE_BYTES (a long game's match_state), so the client
# validates them without the size check `parse_server_message` applies.
_SERVER_ADAPTER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)

ACTIVE = "active"
OVER = ("finished", "aborted")
"""The statuses of a match that has ended."""

REST_TIMEOUT = 10.0
"""Seconds a REST request about a match may take."""

FetchState = Callable[[str, str, str], Awaitable[MatchState]]
"""`fetch(http_base, token, match_id)`: the current state of a match from the REST API."""


class ClientError(Exception):
    """A failure that reconnecting cannot fix: a refused token, a replaced connection, ..."""


class ServerUnreachable(ClientError):  # noqa: N818 - read as "the server is unreachable"
    """No server answered at the URL for as long as the client was told to wait."""


def websocket_url(server_url: str) -> str:
    """Return the `/ws` URL of the server at `server_url`.

    `http://` becomes `ws://` and `https://` becomes `wss://` (`ws(s)://` is kept); a path
    already ending in `/ws` is kept, otherwise `/ws` is appended. Raises ValueError for any
    other scheme or a URL without a host.
    """
    parts = urlsplit(server_url.strip())
    schemes = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
    scheme = schemes.get(parts.scheme.lower())
    if scheme is None or not parts.netloc:
        raise ValueError(
            f"server URL must be http(s)://HOST[:PORT] or ws(s)://HOST[:PORT], not {server_url!r}"
        )
    path = parts.path.rstrip("/")
    if not path.endswith("/ws"):
        path += "/ws"
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def http_base_url(ws_url: str) -> str:
    """Return the HTTP base URL of the server whose `/ws` URL is `ws_url`.

    `ws://h:p/ws` becomes `http://h:p` and `wss://h/base/ws` becomes `https://h/base`.
    """
    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme.lower() in ("wss", "https") else "http"
    path = parts.path.rstrip("/").removesuffix("/ws")
    return urlunsplit((scheme, parts.netloc, path, "", ""))


async def fetch_match_state(http_base: str, token: str, match_id: str) -> MatchState:
    """Return the state of match `match_id` from `GET {http_base}/matches/{match_id}`.

    Raises httpx.HTTPError for a failed request or an error status and ValueError (a pydantic
    ValidationError) for a body that is not a match state.
    """
    headers = {"Authorization": f"Bearer {token}", VERSION_HEADER: PROTOCOL_VERSION}
    async with httpx.AsyncClient(timeout=REST_TIMEOUT) as http:
        response = await http.get(f"{http_base}/matches/{match_id}", headers=headers)
        response.raise_for_status()
    return MatchState.model_validate_json(response.content)


def time_budget(remaining_ms: int, time_control: TimeControl, *, margin_ms: int = 100) -> float:
    """Return the seconds to spend on a move with `remaining_ms` left (see bots.timing)."""
    return timing.time_budget(
        remaining_ms, time_control.increment_ms, time_control.move_cap_ms, margin_ms=margin_ms
    )


def backoff_delays(
    rng: random.Random, *, first: float = 0.5, factor: float = 2.0, cap: float = 30.0
) -> Iterator[float]:
    """Yield the seconds to wait before each reconnection attempt, forever.

    The base doubles from `first` up to `cap`; each delay is drawn uniformly from the upper
    half of its base ("equal jitter"), so many clients never reconnect in lockstep.
    """
    base = first
    while True:
        yield base / 2 + rng.uniform(0.0, base / 2)
        base = min(cap, base * factor)


def rebuild_state(game: Game, message: MatchState) -> State[Any]:
    """Return the current game state described by a `match_state` message.

    Replays `moves` from `start_position` (keeping the history that the game rules may use);
    when that fails or does not reach `position`, falls back to parsing `position` alone.
    """
    try:
        state = game.parse_position(message.start_position).play(*message.moves)
        if game.format_position(state) == message.position:
            return state
    except GameError:
        pass
    return game.parse_position(message.position)


def seat_to_move_is(seat: int | None, status: str, to_move: int | None) -> bool:
    """Return True when a match with `status` is active and `seat` (ours) is to move."""
    return seat is not None and status == ACTIVE and to_move == seat


@dataclass
class MatchView:
    """What the client knows of one match it sits in, kept up to date by server messages."""

    match_id: str
    game: Game
    seat: int | None
    state: State[Any]
    seq: int
    status: str
    to_move: int | None
    legal_moves: tuple[str, ...]
    time_control: TimeControl | None = None
    clocks: Clocks | None = None
    ply: int = 0
    received: float = field(default_factory=time.monotonic)
    sent_seq: int | None = None
    fallback_seq: int | None = None
    last_move: tuple[int, str, SearchInfo | None] | None = None
    """The last move sent and the seq it expects, to send again after RATE_LIMITED."""
    last_move_ply: int | None = None
    """The ply `last_move` was played at: it is sent again after STALE_SEQ while the match is
    still there (a draw offer or its answer moved the seq on, not a move)."""
    draw_offer: int | None = None
    """The seat whose draw offer stands, else None."""

    @property
    def our_turn(self) -> bool:
        """True when the match is active and our seat is to move."""
        return seat_to_move_is(self.seat, self.status, self.to_move)

    def remaining_ms(self, now: float) -> int | None:
        """Return our clock's time left at monotonic time `now`, or None in an untimed match."""
        if self.clocks is None or self.seat is None:
            return None
        remaining = self.clocks.remaining_ms[self.seat]
        if self.clocks.running == self.seat:
            remaining -= int((now - self.received) * 1000)
        return max(remaining, 0)

    def budget(self, now: float, margin_ms: int) -> float | None:
        """Return the time budget for our next move in seconds, or None in an untimed match."""
        remaining = self.remaining_ms(now)
        if remaining is None or self.time_control is None:
            return None
        return time_budget(remaining, self.time_control, margin_ms=margin_ms)


def view_from_state(message: MatchState, game: Game) -> MatchView:
    """Return the view of a match described by a `match_state` message."""
    return MatchView(
        match_id=message.match_id,
        game=game,
        seat=message.your_seat,
        state=rebuild_state(game, message),
        seq=message.seq,
        status=message.status,
        to_move=message.to_move,
        legal_moves=message.legal_moves,
        time_control=message.time_control,
        clocks=message.clocks,
        ply=len(message.moves),
        draw_offer=message.draw_offer,
    )


def apply_move_made(view: MatchView, message: MoveMade) -> None:
    """Update `view` with a `move_made`: the move played, the new seq, clocks and turn."""
    try:
        state = view.state.play(message.move)
        if view.game.format_position(state) != message.position:
            state = view.game.parse_position(message.position)
    except GameError:
        state = view.game.parse_position(message.position)
    view.state = state
    view.seq = message.seq
    view.ply = message.ply
    if view.draw_offer == 1 - message.seat:
        view.draw_offer = None  # a move answers the opponent's offer: declined
    view.to_move = message.to_move
    view.legal_moves = message.legal_moves
    view.clocks = message.clocks
    view.received = time.monotonic()
    if message.to_move is None:
        view.status = "finished"


def ended_from_state(state: MatchState) -> MatchEnded:
    """Return the `match_ended` equivalent of the `match_state` of a match that is over."""
    result = state.result
    if result is None:
        result = MatchResult(winner=None, reason="aborted", description=state.status)
    return MatchEnded(
        match_id=state.match_id,
        seq=state.seq,
        status="aborted" if state.status == "aborted" else "finished",
        result=result,
        clocks=state.clocks,
    )


def describe_result(result: SearchResult) -> str:
    """Return the search statistics of `result` as a short log text."""
    stats = result.stats
    return (
        f"depth {stats.depth}, nodes {stats.nodes}, {stats.nps:,.0f} nps, "
        f"score {result.score:+.3f}, {stats.seconds:.3f} s"
    )


SEARCH_SINCE = (1, 2)
"""The protocol version from which a move may carry its `search` (`SearchInfo`)."""


@dataclass(frozen=True)
class ChallengeFilter:
    """Which challenges a bot accepts (as lichess-bot's challenge section): each field that is
    set must hold. `games` and `opponents` are names (the challenger's player name);
    `min_base_ms`/`max_base_ms` bound the clock's base time and `max_increment_ms` its
    increment; `untimed` says whether a match without a clock is accepted."""

    games: frozenset[str] | None = None
    opponents: frozenset[str] | None = None
    min_base_ms: int | None = None
    max_base_ms: int | None = None
    max_increment_ms: int | None = None
    untimed: bool = True

    def refusal(self, challenge: Challenge) -> str | None:
        """Return why `challenge` is declined, in words for the log, or None to accept it."""
        if self.games is not None and challenge.game not in self.games:
            return f"{challenge.game} is not among the games accepted ({_listed(self.games)})"
        challenger = challenge.challenger
        if self.opponents is not None and challenger not in self.opponents:
            who = challenger or "the server"
            return f"{who} is not among the opponents accepted ({_listed(self.opponents)})"
        control = challenge.time_control
        if control is None:
            return None if self.untimed else "the match has no clock and untimed is refused"
        base = control.base_ms
        if self.min_base_ms is not None and base < self.min_base_ms:
            return (
                f"base time {base / 1000:g} s is below the {self.min_base_ms / 1000:g} s accepted"
            )
        if self.max_base_ms is not None and base > self.max_base_ms:
            return (
                f"base time {base / 1000:g} s is above the {self.max_base_ms / 1000:g} s accepted"
            )
        increment = control.increment_ms
        if self.max_increment_ms is not None and increment > self.max_increment_ms:
            return (
                f"increment {increment / 1000:g} s is above the "
                f"{self.max_increment_ms / 1000:g} s accepted"
            )
        return None


ACCEPT_ALL = ChallengeFilter()


@dataclass(frozen=True)
class ChallengePlan:
    """The challenges a bot sends by itself (as lichess-bot's matchmaking): every `every_s`
    seconds while it sits in no match, one idle online bot (`GET /bots/online`) that accepts
    `game`, drawn at random among `opponents` when they are given, on a random seat, with
    `time_control` (None: untimed). A challenge not answered within `timeout_s` is aborted."""

    game: str
    every_s: float
    time_control: TimeControl | None = None
    options: tuple[tuple[str, str], ...] = ()
    opponents: frozenset[str] | None = None
    timeout_s: float = 60.0


def _listed(names: frozenset[str]) -> str:
    return ", ".join(sorted(names)) or "none"


class BotClient:
    """Play the bot `spec` on the server at `server_url` with the player token `token`.

    `run()` plays until cancelled (or until `max_matches` matches have been played), reconnecting
    with backoff drawn from `rng` (from `backoff_first` seconds doubling to `backoff_cap`).
    `give_up_after` (seconds; None: never) is how long it keeps trying to reach a server that
    does not answer, counted on `clock` from the first failed attempt since it was last
    connected; then `run` raises ServerUnreachable. Each retry is logged, saying what it waits
    for. `margin_ms` is kept off each move's time budget for latency. Every move is logged on `log`
    with its search statistics. `fetch_state` reads a match's state over REST after a
    reconnection (default: `fetch_match_state`; tests inject their own). A challenge (a match
    someone else created with this player in a seat) is accepted when `challenges` lets it
    through and the bot can play its game, and declined with the reason logged otherwise, or
    always when `accept_challenges` is False.
    Raises BotSpecError at construction for a bad spec and ValueError for a bad URL.
    """

    def __init__(
        self,
        server_url: str,
        token: str,
        spec: str | BotSpec,
        *,
        log: logging.Logger = LOGGER,
        rng: random.Random | None = None,
        margin_ms: int = 150,
        client_name: str = CLIENT_NAME,
        backoff_first: float = 0.5,
        backoff_cap: float = 30.0,
        fetch_state: FetchState = fetch_match_state,
        accept_challenges: bool = True,
        challenges: ChallengeFilter = ACCEPT_ALL,
        give_up_after: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        challenge_plan: ChallengePlan | None = None,
    ) -> None:
        self.url = websocket_url(server_url)
        self.http_base = http_base_url(self.url)
        self.fetch_state = fetch_state
        self.token = token
        self.spec = parse_bot_spec(spec) if isinstance(spec, str) else spec
        self.log = log
        self.rng = rng if rng is not None else random.Random()
        self.margin_ms = margin_ms
        self.client_name = client_name
        self.backoff_first = backoff_first
        self.backoff_cap = backoff_cap
        self.accept_challenges = accept_challenges
        self.challenges = challenges
        self.give_up_after = give_up_after
        self.challenge_plan = challenge_plan
        self.player: str | None = None
        """The player this client plays as (from the server's `welcome`)."""
        self.challenges_sent: list[str] = []
        """The matches this client created to challenge another bot, oldest first."""
        self._clock = clock
        self._unreachable_since: float | None = None
        """When the first attempt to reach the server failed since it was last connected."""
        self._welcomed = False
        """Whether the current connection got its `welcome` (the backoff restarts after it)."""
        self.connections = 0
        self.server_version = "1.0"
        """The protocol version of the server's last `welcome` (what its moves may carry)."""
        self.matches: dict[str, MatchView] = {}
        self.ended: dict[str, MatchEnded] = {}
        """The matches played to their end, each counted once."""
        self.aborted: set[str] = set()
        """The matches aborted before their first move (declined or aborted): not played."""
        self._bots: dict[str, Bot] = {}
        self._games: dict[tuple[str, tuple[tuple[str, str], ...]], Game] = {}
        self._search_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._done = asyncio.Event()
        self._max_matches: int | None = None
        self._connection: ClientConnection | None = None
        self._resending = False

    # Running ----------------------------------------------------------------------------------

    async def run(self, max_matches: int | None = None) -> int:
        """Play until cancelled, or until `max_matches` matches have been played to their end
        (one aborted before its first move does not count); return that count.

        Raises ClientError when the server refuses the token, the protocol version, or
        replaces this connection with a newer one (reconnecting would not help).
        """
        self._max_matches = max_matches
        delays = self._backoff()
        if self.challenge_plan is not None:
            self._keep(asyncio.get_running_loop().create_task(self._challenge_forever()))
        try:
            while not self._done.is_set():
                self._welcomed = False
                try:
                    await self._session()
                    delays = self._backoff()
                except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError) as exc:
                    self._check_fatal(exc)
                    if self._done.is_set():
                        break
                    if self._welcomed:
                        # The server answered this time: a drop after a session starts the
                        # backoff afresh, however many drops came before.
                        delays = self._backoff()
                    delay = next(delays)
                    self._wait_for_server(exc, delay)
                    await asyncio.sleep(delay)
                else:
                    if not self._done.is_set():
                        delay = next(delays)
                        self.log.warning("server closed the connection; retrying in %.1f s", delay)
                        await asyncio.sleep(delay)
        finally:
            for task in list(self._tasks):
                task.cancel()
        return len(self.ended)

    def _wait_for_server(self, exc: BaseException, delay: float) -> None:
        """Log what the client waits for after a failed connection, or raise ServerUnreachable
        once it has waited `give_up_after` seconds."""
        why = _describe_exception(exc)
        now = self._clock()
        if self._unreachable_since is None:
            self._unreachable_since = now
        waited = now - self._unreachable_since
        limit = self.give_up_after
        if limit is not None and waited >= limit:
            raise ServerUnreachable(
                f"no Arena server answered at {self.url} for {limit:g} s ({why}); is `arena "
                "serve` running there? (--wait sets how long to wait; 0 waits forever)"
            )
        left = "" if limit is None else f"; giving up in {max(0.0, limit - waited):.0f} s"
        self.log.warning(
            "waiting for the Arena server at %s (%s); retrying in %.1f s%s",
            self.url,
            why,
            delay,
            left,
        )

    def _backoff(self) -> Iterator[float]:
        """Return a fresh sequence of reconnection delays."""
        return backoff_delays(self.rng, first=self.backoff_first, cap=self.backoff_cap)

    def _check_fatal(self, exc: BaseException) -> None:
        """Raise ClientError when `exc` means reconnecting cannot help."""
        if isinstance(exc, InvalidStatus) and exc.response.status_code in (401, 403):
            raise ClientError(
                f"the server refused the token (HTTP {exc.response.status_code})"
            ) from None
        if isinstance(exc, ConnectionClosed) and exc.rcvd is not None:
            reason = FATAL_CLOSE_CODES.get(exc.rcvd.code)
            if reason is not None:
                raise ClientError(
                    f"the server closed the connection with code {exc.rcvd.code}: {reason}"
                    + (f" ({exc.rcvd.reason})" if exc.rcvd.reason else "")
                ) from None

    async def _session(self) -> None:
        """Connect once, say hello, and handle messages until the connection closes."""
        headers = {"Authorization": f"Bearer {self.token}"}
        async with connect(self.url, additional_headers=headers, max_size=None) as connection:
            self._connection = connection
            self.connections += 1
            try:
                hello = Hello(protocol_version=PROTOCOL_VERSION, client=self.client_name)
                await connection.send(dump_client_message(hello))
                async for raw in connection:
                    self._handle(raw)
                    if self._done.is_set():
                        return
            finally:
                self._connection = None

    # Messages ---------------------------------------------------------------------------------

    def _handle(self, raw: str | bytes) -> None:
        """Handle one message from the server."""
        try:
            message = _SERVER_ADAPTER.validate_json(raw)
        except ValidationError as exc:
            self.log.warning("ignoring a server message that does not parse: %s", exc)
            return
        if isinstance(message, Welcome):
            self.log.info("connected to %s as %s", self.url, message.player)
            self._unreachable_since = None
            self._welcomed = True
            self.server_version = message.protocol_version
            self.player = message.player
            self._announce()
            if self.matches:
                task = self._check_tracked(sorted(self.matches), self._connection)
                self._keep(asyncio.get_running_loop().create_task(task))
        elif isinstance(message, MatchStarted):
            self.log.info(
                "match %s started: %s, seat %s", message.match_id, message.game, message.your_seat
            )
        elif isinstance(message, MatchState):
            self._on_match_state(message)
        elif isinstance(message, MoveMade):
            view = self.matches.get(message.match_id)
            if view is None or message.seq <= view.seq:
                return
            if message.seq > view.seq + 1:
                self.log.warning(
                    "match %s: seq jumped from %d to %d", view.match_id, view.seq, message.seq
                )
            apply_move_made(view, message)
            self._maybe_play(view)
        elif isinstance(message, DrawOffered | DrawDeclined):
            self._on_draw(message)
        elif isinstance(message, MatchEnded):
            self._on_match_ended(message)
        elif isinstance(message, ErrorMessage):
            self._on_error(message)
        elif isinstance(message, Challenge):
            self._on_challenge(message)
        else:
            self.log.debug("server message: %s", message.type)

    def _announce(self) -> None:
        """Tell a server of 1.3 or later that this bot is open to challenges (to the games of
        its filter), so other bots find it in `GET /bots/online`."""
        if not self.accept_challenges or self._connection is None:
            return
        if parse_version(self.server_version) < (1, 3):
            return
        games = self.challenges.games
        available = BotAvailable(games=None if games is None else tuple(sorted(games)))
        text = dump_client_message(available)
        self._keep(asyncio.get_running_loop().create_task(_send_quietly(self._connection, text)))

    async def _challenge_forever(self) -> None:
        """Challenge an online bot every `challenge_plan.every_s` seconds while idle."""
        plan = self.challenge_plan
        assert plan is not None
        while not self._done.is_set():
            await asyncio.sleep(plan.every_s)
            if self._connection is None or not self._welcomed or self.matches:
                continue
            try:
                await self.challenge_once(plan)
            except (httpx.HTTPError, ValidationError) as exc:
                self.log.warning(
                    "challenging failed (%s); trying again in %g s",
                    _describe_exception(exc),
                    plan.every_s,
                )

    async def challenge_once(self, plan: ChallengePlan) -> str | None:
        """Challenge one idle online bot as `plan` says and wait for its answer (aborting the
        match after `plan.timeout_s` without one); return the match's id, or None when no
        bot could be challenged (each reason logged)."""
        if self.player is None:
            return None
        headers = {"Authorization": f"Bearer {self.token}", VERSION_HEADER: PROTOCOL_VERSION}
        async with httpx.AsyncClient(timeout=REST_TIMEOUT, headers=headers) as http:
            response = await http.get(
                f"{self.http_base}/bots/online", params={"game": plan.game, "limit": 200}
            )
            response.raise_for_status()
            online = OnlineBots.model_validate_json(response.content)
            names = [
                bot.name
                for bot in online.bots
                if bot.name != self.player
                and bot.playing == 0
                and (plan.opponents is None or bot.name in plan.opponents)
            ]
            if not names:
                self.log.info(
                    "no idle bot online takes %s; trying again in %g s", plan.game, plan.every_s
                )
                return None
            opponent = self.rng.choice(sorted(names))
            seats = (self.player, opponent)
            if self.rng.random() < 0.5:
                seats = (opponent, self.player)
            body = MatchCreate(
                game=plan.game,
                options=dict(plan.options),
                time_control=plan.time_control,
                seats=seats,
            )
            response = await http.post(
                f"{self.http_base}/matches",
                content=body.model_dump_json(),
                headers={"Content-Type": "application/json"},
            )
            if response.is_error:
                self.log.warning(
                    "challenging %s was refused (HTTP %d): %s",
                    opponent,
                    response.status_code,
                    _error_text(response),
                )
                return None
            match_id = MatchState.model_validate_json(response.content).match_id
            self.challenges_sent.append(match_id)
            self.log.info(
                "challenged %s to %s (match %s, seat %d)",
                opponent,
                plan.game,
                match_id,
                seats.index(self.player),
            )
            await self._await_answer(http, match_id, opponent, plan.timeout_s)
        return match_id

    async def _await_answer(
        self, http: httpx.AsyncClient, match_id: str, opponent: str, timeout_s: float
    ) -> None:
        """Wait until the challenge `match_id` is answered; abort it after `timeout_s`."""
        waited = 0.0
        while waited < timeout_s:
            if match_id in self.ended or match_id in self.aborted:
                return
            view = self.matches.get(match_id)
            if view is not None and view.status == ACTIVE:
                return
            step = min(0.5, timeout_s - waited)
            await asyncio.sleep(step)
            waited += step
        state = MatchState.model_validate_json(
            (await http.get(f"{self.http_base}/matches/{match_id}")).content
        )
        if state.status == "waiting":
            await http.post(f"{self.http_base}/matches/{match_id}/abort")
            self.log.info(
                "%s did not answer the challenge %s within %g s: aborted",
                opponent,
                match_id,
                timeout_s,
            )

    def _on_draw(self, message: DrawOffered | DrawDeclined) -> None:
        """Follow a draw offer or its refusal: the match's seq moves on, its position does not.

        A search under way goes on (its move is sent with the new seq); an offer from the
        opponent is answered when our next search ends (`_think`), as the house bots answer.
        """
        view = self.matches.get(message.match_id)
        if view is None or message.seq <= view.seq:
            return
        if view.sent_seq == view.seq:
            view.sent_seq = message.seq  # the search for this position stands
        view.seq = message.seq
        if isinstance(message, DrawOffered):
            view.draw_offer = message.seat
            if message.seat != view.seat:
                self.log.info(
                    "match %s: a draw is offered; our next search answers it", message.match_id
                )
        else:
            view.draw_offer = None

    def _on_challenge(self, message: Challenge) -> None:
        """Answer a challenge: accept it when the filter lets it through and the bot can play
        its game (the bot is built then, for the match), else decline it saying why."""
        refusal = self._refusal(message)
        answer: AcceptChallenge | DeclineChallenge
        if refusal is None:
            answer = AcceptChallenge(match_id=message.match_id)
        else:
            answer = DeclineChallenge(match_id=message.match_id)
        self.log.info(
            "challenge %s from %s (%s, seat %d): %s",
            message.match_id,
            message.challenger or "the server",
            message.game,
            message.your_seat,
            "accepted" if refusal is None else f"declined: {refusal}",
        )
        if self._connection is not None:
            self._keep(
                asyncio.get_running_loop().create_task(
                    _send_quietly(self._connection, dump_client_message(answer))
                )
            )

    def _refusal(self, message: Challenge) -> str | None:
        """Why this client declines `message`, or None when it accepts it."""
        if not self.accept_challenges:
            return "this bot declines every challenge"
        refusal = self.challenges.refusal(message)
        if refusal is not None:
            return refusal
        try:
            self.bot_for(message.match_id, self._game(message.game, message.options))
        except (BotSpecError, GameError) as exc:
            return f"{self.spec} cannot play {message.game}: {exc}"
        return None

    def _on_match_state(self, message: MatchState) -> None:
        """Resync a match from its full state and play if it is our turn."""
        if message.status not in (ACTIVE, "waiting"):
            self.matches.pop(message.match_id, None)
            return
        try:
            game = self._game(message.game, message.options)
            view = view_from_state(message, game)
        except GameError as exc:
            self.log.error("match %s: cannot follow the game: %s", message.match_id, exc)
            return
        self.matches[message.match_id] = view
        self._maybe_play(view)

    def _on_match_ended(self, message: MatchEnded) -> None:
        """Record a finished match; stop once `max_matches` have been played. A match aborted
        before its first move (a declined challenge, an abort) is logged, never counted."""
        view = self.matches.pop(message.match_id, None)
        self._bots.pop(message.match_id, None)
        if message.match_id in self.ended or message.match_id in self.aborted:
            return
        if message.status == "aborted":
            self.aborted.add(message.match_id)
        else:
            self.ended[message.match_id] = message
        result = message.result
        if view is not None and view.seat is not None and result.winner is not None:
            outcome = "won" if result.winner == view.seat else "lost"
        else:
            outcome = "drawn" if message.status == "finished" else "aborted"
        self.log.info(
            "match %s %s (%s: %s)", message.match_id, outcome, result.reason, result.description
        )
        if self._max_matches is not None and len(self.ended) >= self._max_matches:
            self._done.set()  # the session loop closes the connection

    async def _check_tracked(
        self, match_ids: list[str], connection: ClientConnection | None
    ) -> None:
        """End each of `match_ids` that REST reports over and that is still tracked.

        Called on a new connection's `welcome` with the matches tracked before it: one that
        ended while we were away gets no `match_state` and no `match_ended` any more. A live
        one is kept (the server sends its state); a `match_state` or `match_ended` received
        meanwhile wins. A failed request is logged and retried on the next reconnection.
        """
        states = await asyncio.gather(
            *(self.fetch_state(self.http_base, self.token, match_id) for match_id in match_ids),
            return_exceptions=True,
        )
        for match_id, state in zip(match_ids, states, strict=True):
            if isinstance(state, Exception):
                self.log.warning(
                    "match %s: cannot read its state over REST (%s: %s); retrying on reconnect",
                    match_id,
                    type(state).__name__,
                    state,
                )
            elif isinstance(state, BaseException):
                raise state  # cancelled
            elif state.status in OVER and match_id in self.matches:
                self.log.info("match %s ended while we were disconnected", match_id)
                self._on_match_ended(ended_from_state(state))
        if self._done.is_set() and connection is not None:
            await connection.close()  # ends the session loop, which waits for messages

    def _on_error(self, message: ErrorMessage) -> None:
        """Log an error; an illegal move of our own bot is a bug: log it loudly and recover."""
        view = self.matches.get(message.match_id) if message.match_id else None
        if message.code in (ErrorCode.ILLEGAL_MOVE, ErrorCode.INVALID_MOVE):
            self.log.error(
                "BUG: the server refused our move in match %s as %s: %s (legal: %s)",
                message.match_id,
                message.code,
                message.message,
                ", ".join(message.legal_moves or ()),
            )
            if (
                view is not None
                and view.our_turn
                and message.legal_moves
                and view.fallback_seq != view.seq
            ):
                # Play a legal move (once per position) rather than lose on time or by forfeit.
                view.fallback_seq = view.seq
                self._send_move(view, message.legal_moves[0], view.seq)
            return
        if message.code in (ErrorCode.RATE_LIMITED, ErrorCode.UNAVAILABLE):
            # Nothing was done: RATE_LIMITED, or UNAVAILABLE (the server process playing the
            # match stopped and another is taking it over, docs/SCALING.md).
            wait_ms = message.details.get("retry_after_ms")
            delay = wait_ms / 1000 if isinstance(wait_ms, int) else 1.0
            why = "rate limited" if message.code == ErrorCode.RATE_LIMITED else "unavailable"
            self.log.info("%s: sending our pending moves again in %.3f s", why, delay)
            if not self._resending:
                self._resending = True
                self._keep(asyncio.get_running_loop().create_task(self._resend_after(delay)))
            return
        if message.code in (ErrorCode.STALE_SEQ, ErrorCode.NOT_YOUR_TURN, ErrorCode.MATCH_OVER):
            self.log.info("match %s: %s: %s", message.match_id, message.code, message.message)
            view = self.matches.get(message.match_id or "")
            if (
                message.code == ErrorCode.STALE_SEQ
                and view is not None
                and view.our_turn
                and view.last_move is not None
                and view.last_move_ply == view.ply
                and view.last_move[0] < view.seq
            ):
                # A draw offer crossed our move: the position is the same, the seq is not.
                self._send_move(view, view.last_move[1], view.seq, view.last_move[2])
            return
        self.log.warning("server error %s: %s", message.code, message.message)

    # Playing ----------------------------------------------------------------------------------

    def _game(self, name: str, options: dict[str, str]) -> Game:
        """Return the game `name` with `options`, cached."""
        key = (name, tuple(sorted(options.items())))
        if key not in self._games:
            self._games[key] = get_game(name, options)
        return self._games[key]

    def bot_for(self, match_id: str, game: Game) -> Bot:
        """Return this client's bot for match `match_id` (a fresh bot per match, as a local
        tournament makes one per game: a bot's table and random state never carry from one
        match into another, so deterministic bots play the same games everywhere)."""
        if match_id not in self._bots:
            self._bots[match_id] = create_bot(self.spec, game)
        return self._bots[match_id]

    def _maybe_play(self, view: MatchView) -> None:
        """Start thinking about a move in `view` when it is our turn and we have not yet."""
        if not view.our_turn or view.sent_seq == view.seq or view.state.is_terminal():
            return
        view.sent_seq = view.seq
        self._keep(asyncio.get_running_loop().create_task(self._think(view, view.ply)))

    def _keep(self, task: asyncio.Task[Any]) -> None:
        """Hold a reference to `task` until it finishes."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _think(self, view: MatchView, ply: int) -> None:
        """Search a move for `view` at `ply` in a worker thread and send it if still current.

        A draw offer or its answer moves the match's seq on but not its position: the move
        found is sent with the seq of the moment. An offer of the opponent's is answered here.
        """
        async with self._search_lock:
            if view.ply != ply or not view.our_turn or self.matches.get(view.match_id) is not view:
                return
            bot = self.bot_for(view.match_id, view.game)
            budget = view.budget(time.monotonic(), self.margin_ms)
            state = view.state
            try:
                result = await asyncio.to_thread(bot.choose, state, time_budget=budget)
            except Exception as error:  # noqa: BLE001 - any failure of the bot's own search
                # A search that fails would fail again on the same position: resign rather
                # than leave the match waiting for a move until the clock runs out.
                self.log.error(
                    "match %s ply %d: the bot's search failed (%s: %s); resigning",
                    view.match_id,
                    view.ply + 1,
                    type(error).__name__,
                    error,
                )
                if self.matches.get(view.match_id) is view:
                    self._send(Resign(match_id=view.match_id))
                return
        current = self.matches.get(view.match_id) is view
        if view.ply != ply or not view.our_turn or not current or result.move is None:
            return
        if view.draw_offer is not None and view.draw_offer != view.seat:
            if bot.accepts_draw(result, to_move=True):
                self.log.info(
                    "match %s: draw accepted (%s)", view.match_id, describe_result(result)
                )
                self._send(AcceptDraw(match_id=view.match_id))
                return
            self.log.info("match %s: draw declined: we play on", view.match_id)
        text = state.format_move(result.move)
        budget_text = "untimed" if budget is None else f"budget {budget:.2f} s"
        self.log.info(
            "match %s ply %d: %s (%s; %s)",
            view.match_id,
            view.ply + 1,
            text,
            describe_result(result),
            budget_text,
        )
        search = None
        if parse_version(self.server_version) >= SEARCH_SINCE:
            search = search_info(result)
        self._send_move(view, text, view.seq, search)

    async def _resend_after(self, delay: float) -> None:
        """After `delay`, send again each move still waiting for its match to move on.

        The server dropped a message unread (RATE_LIMITED names no match), so every pending
        move is sent again; one that did arrive is refused as stale, which changes nothing.
        """
        await asyncio.sleep(delay)
        self._resending = False
        for view in list(self.matches.values()):
            if view.our_turn and view.last_move is not None and view.last_move[0] == view.seq:
                self._send_move(view, view.last_move[1], view.seq, view.last_move[2])

    def _send(self, message: AcceptDraw | Resign) -> None:
        """Send `message` on the current connection, if there is one."""
        if self._connection is not None:
            self._keep(
                asyncio.get_running_loop().create_task(
                    _send_quietly(self._connection, dump_client_message(message))
                )
            )

    def _send_move(
        self, view: MatchView, text: str, seq: int, search: SearchInfo | None = None
    ) -> None:
        """Send `text` as our move in `view`, valid only while the match is at `seq`, with
        its search statistics (a server older than 1.2 gets none: it would refuse them)."""
        if self._connection is None:
            return
        view.last_move = (seq, text, search)
        view.last_move_ply = view.ply
        message = Move(match_id=view.match_id, move=text, expected_seq=seq, search=search)
        self._keep(
            asyncio.get_running_loop().create_task(
                _send_quietly(self._connection, dump_client_message(message, self.server_version))
            )
        )


async def _send_quietly(connection: ClientConnection, text: str) -> None:
    """Send `text`; a closed connection is fine (the next connection resyncs)."""
    with contextlib.suppress(ConnectionClosed):
        await connection.send(text)


def _error_text(response: httpx.Response) -> str:
    """The message of an Arena error body, or the start of whatever else came."""
    try:
        message = response.json().get("message")
    except (ValueError, AttributeError):
        message = None
    return str(message) if message else response.text[:200]


def _describe_exception(exc: BaseException) -> str:
    """Return a one-line description of a connection failure."""
    if isinstance(exc, ConnectionClosed):
        code = exc.rcvd.code if exc.rcvd is not None else None
        return f"closed with code {code}" if code is not None else "connection closed"
    return str(exc) or type(exc).__name__
