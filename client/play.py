"""The matches a bot client sits in, and the moves it answers in them.

`MatchPlayer` follows each match from the server's messages (`client.matches`), and whenever
its seat is to move, asks the bot for a move in a worker thread with a time budget taken from
its clock and sends it with `expected_seq`. It answers draw offers when its next search ends,
sends a pending move again after `RATE_LIMITED` or `UNAVAILABLE`, and resigns when the bot's
own search fails. Every move is logged with its search statistics.
"""

from __future__ import annotations

import asyncio
import logging
import time

from bots.result import SearchResult
from bots.spec import Bot, BotSpec, create_bot
from bots.wire import search_info
from client.connection import Link
from client.matches import ACTIVE, MatchView, apply_move_made, view_from_state
from games import Game, GameError, get_game
from protocol.errors import ErrorCode
from protocol.messages import (
    AcceptDraw,
    DrawDeclined,
    DrawOffered,
    ErrorMessage,
    MatchEnded,
    MatchState,
    Move,
    MoveMade,
    Resign,
    SearchInfo,
)
from protocol.version import parse_version

SEARCH_SINCE = (1, 2)
"""The protocol version from which a move may carry its `search` (`SearchInfo`)."""


def describe_result(result: SearchResult) -> str:
    """Return the search statistics of `result` as a short log text."""
    stats = result.stats
    return (
        f"depth {stats.depth}, nodes {stats.nodes}, {stats.nps:,.0f} nps, "
        f"score {result.score:+.3f}, {stats.seconds:.3f} s"
    )


class MatchPlayer:
    """Play the bot `spec` in every match the server shows, sending on `link`.

    `margin_ms` is kept off each move's time budget for latency; moves and results are logged
    on `log`. `matches` are the matches followed, `ended` those played to their end (each
    counted once), `aborted` those aborted before their first move.
    """

    def __init__(self, spec: BotSpec, link: Link, *, log: logging.Logger, margin_ms: int) -> None:
        self.spec = spec
        self.link = link
        self.log = log
        self.margin_ms = margin_ms
        self.matches: dict[str, MatchView] = {}
        self.ended: dict[str, MatchEnded] = {}
        """The matches played to their end, each counted once."""
        self.aborted: set[str] = set()
        """The matches aborted before their first move (declined or aborted): not played."""
        self._bots: dict[str, Bot] = {}
        self._games: dict[tuple[str, tuple[tuple[str, str], ...]], Game] = {}
        self._search_lock = asyncio.Lock()
        self._resending = False

    def game(self, name: str, options: dict[str, str]) -> Game:
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

    def settled(self, match_id: str) -> bool:
        """Whether match `match_id` has started or ended (a challenge to it was answered)."""
        if match_id in self.ended or match_id in self.aborted:
            return True
        view = self.matches.get(match_id)
        return view is not None and view.status == ACTIVE

    # Messages ---------------------------------------------------------------------------------

    def on_match_state(self, message: MatchState) -> None:
        """Resync a match from its full state and play if it is our turn."""
        if message.status not in (ACTIVE, "waiting"):
            self.matches.pop(message.match_id, None)
            return
        try:
            game = self.game(message.game, message.options)
            view = view_from_state(message, game)
        except GameError as exc:
            self.log.error("match %s: cannot follow the game: %s", message.match_id, exc)
            return
        self.matches[message.match_id] = view
        self._maybe_play(view)

    def on_move_made(self, message: MoveMade) -> None:
        """Follow a move in a match and play if it is our turn now."""
        view = self.matches.get(message.match_id)
        if view is None or message.seq <= view.seq:
            return
        if message.seq > view.seq + 1:
            self.log.warning(
                "match %s: seq jumped from %d to %d", view.match_id, view.seq, message.seq
            )
        apply_move_made(view, message)
        self._maybe_play(view)

    def on_draw(self, message: DrawOffered | DrawDeclined) -> None:
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

    def on_match_ended(self, message: MatchEnded) -> bool:
        """Record a finished match; return whether it was new. A match aborted before its
        first move (a declined challenge, an abort) is logged, never counted."""
        view = self.matches.pop(message.match_id, None)
        self._bots.pop(message.match_id, None)
        if message.match_id in self.ended or message.match_id in self.aborted:
            return False
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
        return True

    def on_error(self, message: ErrorMessage) -> None:
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
                self.link.start(self._resend_after(delay))
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

    def _maybe_play(self, view: MatchView) -> None:
        """Start thinking about a move in `view` when it is our turn and we have not yet."""
        if not view.our_turn or view.sent_seq == view.seq or view.state.is_terminal():
            return
        view.sent_seq = view.seq
        self.link.start(self._think(view, view.ply))

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
                    self.link.send(Resign(match_id=view.match_id))
                return
        current = self.matches.get(view.match_id) is view
        if view.ply != ply or not view.our_turn or not current or result.move is None:
            return
        if view.draw_offer is not None and view.draw_offer != view.seat:
            if bot.accepts_draw(result, to_move=True):
                self.log.info(
                    "match %s: draw accepted (%s)", view.match_id, describe_result(result)
                )
                self.link.send(AcceptDraw(match_id=view.match_id))
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
        if parse_version(self.link.server_version) >= SEARCH_SINCE:
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

    def _send_move(
        self, view: MatchView, text: str, seq: int, search: SearchInfo | None = None
    ) -> None:
        """Send `text` as our move in `view`, valid only while the match is at `seq`, with
        its search statistics (a server older than 1.2 gets none: it would refuse them)."""
        if self.link.connection is None:
            return
        view.last_move = (seq, text, search)
        view.last_move_ply = view.ply
        message = Move(match_id=view.match_id, move=text, expected_seq=seq, search=search)
        self.link.send(message, self.link.server_version)
