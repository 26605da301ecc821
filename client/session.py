"""The network client that plays a bot on an Arena server over the WebSocket protocol.

`BotClient(server_url, token, spec)` connects to `<server>/ws`, says `hello`, and plays every
match the server gives it (`client.play`). It reconnects with exponential backoff and jitter
when the connection drops and resyncs from the `match_state` messages the server sends on
every new connection (docs/PROTOCOL.md). A match that ended while the client was away gets no
`match_state` on the new connection (the server resyncs only live matches), so after each
`welcome` the client asks the REST API (`GET /matches/{id}`) about every match it was tracking
and treats one that is over as if its `match_ended` had arrived. It answers challenges by its
`ChallengeFilter` and, given a `ChallengePlan`, challenges other bots itself (`client.challenges`).
Given `pools`, it enters its player into those rated pools after each `welcome` (the pool pairs
it while it is connected: docs/PROTOCOL.md, "Rated pools").
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Iterator

import httpx
from pydantic import TypeAdapter, ValidationError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from bots.spec import BotSpec, BotSpecError, parse_bot_spec
from client.challenges import ACCEPT_ALL, ChallengeFilter, ChallengePlan, Challenger
from client.connection import Link, Patience, backoff_delays
from client.errors import describe_exception, fatal_error
from client.matches import OVER, MatchView, ended_from_state
from client.play import MatchPlayer
from client.rest import (
    FetchState,
    error_text,
    fetch_match_state,
    http_base_url,
    rest_client,
    websocket_url,
)
from games import GameError
from protocol.messages import (
    AcceptChallenge,
    BotAvailable,
    Challenge,
    DeclineChallenge,
    DrawDeclined,
    DrawOffered,
    ErrorMessage,
    Hello,
    MatchEnded,
    MatchStarted,
    MatchState,
    MoveMade,
    ServerMessage,
    Welcome,
    dump_client_message,
)
from protocol.version import PROTOCOL_VERSION, parse_version

LOGGER = logging.getLogger("arena.bot")
"""The default logger of the client (each move with its search statistics goes here)."""

CLIENT_NAME = "arena-bot/1.0 (python)"
"""The program name sent in `hello`."""

# Server messages may exceed MAX_MESSAGE_BYTES (a long game's match_state), so the client
# validates them without the size check `parse_server_message` applies.
_SERVER_ADAPTER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)


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
    always when `accept_challenges` is False. `pools` are the rated pools its player enters after
    each `welcome` (joining again resumes a pool's pause); the bot then announces itself open to
    challenges even when it declines them all, since a pool pairs only the bots online.
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
        pools: tuple[str, ...] = (),
    ) -> None:
        self.url = websocket_url(server_url)
        self.http_base = http_base_url(self.url)
        self.fetch_state = fetch_state
        self.token = token
        self.spec = parse_bot_spec(spec) if isinstance(spec, str) else spec
        self.log = log
        self.rng = rng if rng is not None else random.Random()
        self.client_name = client_name
        self.backoff_first = backoff_first
        self.backoff_cap = backoff_cap
        self.accept_challenges = accept_challenges
        self.challenges = challenges
        self.challenge_plan = challenge_plan
        self.pools = pools
        self.pools_joined: dict[str, str] = {}
        """The pools entered at the last `welcome`, each with its game."""
        self.player: str | None = None
        """The player this client plays as (from the server's `welcome`)."""
        self.link = Link()
        """The current connection, the server's protocol version and the tasks beside it."""
        self.playing = MatchPlayer(self.spec, self.link, log=log, margin_ms=margin_ms)
        """The matches this client sits in and the moves it answers."""
        self.challenger = Challenger(
            self.http_base, token, rng=self.rng, log=log, settled=self.playing.settled
        )
        self._patience = Patience(self.url, give_up_after, clock, log)
        self._welcomed = False
        """Whether the current connection got its `welcome` (the backoff restarts after it)."""
        self.connections = 0
        self._done = asyncio.Event()
        self._max_matches: int | None = None

    @property
    def matches(self) -> dict[str, MatchView]:
        """The matches this client follows, by id."""
        return self.playing.matches

    @property
    def ended(self) -> dict[str, MatchEnded]:
        """The matches played to their end, each counted once."""
        return self.playing.ended

    @property
    def aborted(self) -> set[str]:
        """The matches aborted before their first move (declined or aborted): not played."""
        return self.playing.aborted

    @property
    def challenges_sent(self) -> list[str]:
        """The matches this client created to challenge another bot, oldest first."""
        return self.challenger.sent

    @property
    def server_version(self) -> str:
        """The protocol version of the server's last `welcome` (what its moves may carry)."""
        return self.link.server_version

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
            self.link.start(self._challenge_forever(self.challenge_plan))
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
                    self._patience.failed(exc, delay)
                    await asyncio.sleep(delay)
                else:
                    if not self._done.is_set():
                        delay = next(delays)
                        self.log.warning("server closed the connection; retrying in %.1f s", delay)
                        await asyncio.sleep(delay)
        finally:
            self.link.cancel_all()
        return len(self.ended)

    def _backoff(self) -> Iterator[float]:
        """Return a fresh sequence of reconnection delays."""
        return backoff_delays(self.rng, first=self.backoff_first, cap=self.backoff_cap)

    def _check_fatal(self, exc: BaseException) -> None:
        """Raise ClientError when `exc` means reconnecting cannot help."""
        error = fatal_error(exc)
        if error is not None:
            raise error from None

    async def _session(self) -> None:
        """Connect once, say hello, and handle messages until the connection closes."""
        headers = {"Authorization": f"Bearer {self.token}"}
        async with connect(self.url, additional_headers=headers, max_size=None) as connection:
            self.link.connection = connection
            self.connections += 1
            try:
                hello = Hello(protocol_version=PROTOCOL_VERSION, client=self.client_name)
                await connection.send(dump_client_message(hello))
                async for raw in connection:
                    self._handle(raw)
                    if self._done.is_set():
                        return
            finally:
                self.link.connection = None

    # Messages ---------------------------------------------------------------------------------

    def _handle(self, raw: str | bytes) -> None:
        """Handle one message from the server."""
        try:
            message = _SERVER_ADAPTER.validate_json(raw)
        except ValidationError as exc:
            self.log.warning("ignoring a server message that does not parse: %s", exc)
            return
        if isinstance(message, Welcome):
            self._on_welcome(message)
        elif isinstance(message, MatchStarted):
            self.log.info(
                "match %s started: %s, seat %s", message.match_id, message.game, message.your_seat
            )
        elif isinstance(message, MatchState):
            self.playing.on_match_state(message)
        elif isinstance(message, MoveMade):
            self.playing.on_move_made(message)
        elif isinstance(message, DrawOffered | DrawDeclined):
            self.playing.on_draw(message)
        elif isinstance(message, MatchEnded):
            self._on_match_ended(message)
        elif isinstance(message, ErrorMessage):
            self.playing.on_error(message)
        elif isinstance(message, Challenge):
            self._on_challenge(message)
        else:
            self.log.debug("server message: %s", message.type)

    def _on_welcome(self, message: Welcome) -> None:
        """Start a session: announce the bot and check the matches tracked before it."""
        self.log.info("connected to %s as %s", self.url, message.player)
        self._patience.reached()
        self._welcomed = True
        self.link.server_version = message.protocol_version
        self.player = message.player
        self._announce()
        if self.pools:
            self.link.start(self._join_pools(message.player))
        if self.matches:
            self.link.start(self._check_tracked(sorted(self.matches), self.link.connection))

    def _announce(self) -> None:
        """Tell a server of 1.3 or later that this bot is open to challenges (to the games of
        its filter), so other bots, and the pools it joins, find it in `GET /bots/online`."""
        open_to_challenges = self.accept_challenges or bool(self.pools)
        if not open_to_challenges or parse_version(self.server_version) < (1, 3):
            return
        games = self.challenges.games
        self.link.send(BotAvailable(games=None if games is None else tuple(sorted(games))))

    async def _join_pools(self, player: str | None) -> None:
        """Enter this player into each of `pools`; log each answer (a refusal says why, and
        playing goes on)."""
        if player is None:
            return
        if parse_version(self.server_version) < (1, 5):
            self.log.error(
                "the server speaks protocol %s: connected bots join pools from 1.5",
                self.server_version,
            )
            return
        async with rest_client(self.token) as http:
            for pool in self.pools:
                try:
                    response = await http.post(
                        f"{self.http_base}/pools/{pool}/members", json={"bot": player}
                    )
                except httpx.HTTPError as error:
                    self.log.error("could not enter pool %s: %s", pool, describe_exception(error))
                    continue
                if response.status_code != 201:
                    self.log.error("pool %s refused %s: %s", pool, player, error_text(response))
                    continue
                game = str(response.json().get("game", "?"))
                self.pools_joined[pool] = game
                if self.challenges.games is not None and game not in self.challenges.games:
                    self.log.warning(
                        "pool %s plays %s, which this bot's --games leaves out: the pool "
                        "pairs it only when it is open to %s",
                        pool,
                        game,
                        game,
                    )
                self.log.info("entered pool %s (%s) as %s", pool, game, player)

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
        self.link.send(answer)

    def _refusal(self, message: Challenge) -> str | None:
        """Why this client declines `message`, or None when it accepts it."""
        if not self.accept_challenges:
            return "this bot declines every challenge"
        refusal = self.challenges.refusal(message)
        if refusal is not None:
            return refusal
        try:
            game = self.playing.game(message.game, message.options)
            self.playing.bot_for(message.match_id, game)
        except (BotSpecError, GameError) as exc:
            return f"{self.spec} cannot play {message.game}: {exc}"
        return None

    def _on_match_ended(self, message: MatchEnded) -> None:
        """Record a finished match; stop once `max_matches` have been played."""
        if not self.playing.on_match_ended(message):
            return
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

    # Challenging ------------------------------------------------------------------------------

    async def _challenge_forever(self, plan: ChallengePlan) -> None:
        """Challenge an online bot every `plan.every_s` seconds while idle."""
        while not self._done.is_set():
            await asyncio.sleep(plan.every_s)
            if self.link.connection is None or not self._welcomed or self.matches:
                continue
            try:
                await self.challenge_once(plan)
            except (httpx.HTTPError, ValidationError) as exc:
                self.log.warning(
                    "challenging failed (%s); trying again in %g s",
                    describe_exception(exc),
                    plan.every_s,
                )

    async def challenge_once(self, plan: ChallengePlan) -> str | None:
        """Challenge one idle online bot as `plan` says and wait for its answer (aborting the
        match after `plan.timeout_s` without one); return the match's id, or None when no
        bot could be challenged or this client has not been welcomed yet."""
        if self.player is None:
            return None
        return await self.challenger.challenge_once(plan, self.player)
