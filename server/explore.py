"""The search-tree explorer's service: positions to play into, and traced searches, bounded.

`POST /explore/trace` is public, so everything it may cost is bounded here, by the settings:
the depth (`explore_max_depth`), the nodes of the traced tree (`explore_max_nodes`: a larger
tree raises `TRACE_TOO_LARGE` as soon as it passes the limit), the time (`explore_max_seconds`,
waiting for a thread included: the trace is then stopped through `bots.trace`'s `stop`, asked
every 64 nodes, and refused with `TRACE_TIMEOUT`), Nim's sizes
(`server.limits.compute.oversize`), and the threads (`explore_threads`: traces run on threads of
their own, never on the event loop or the default executor that requests and grading share). A
position (`POST /explore/position`, and a trace's before it is traced: up to `MAX_EXPLORE_MOVES`
moves played and checked) is worked out on `explore_position_threads` threads of its own too.
The body's size and the rate per client are limited in front of it (server.limits.bodies,
server.limits.rates).

Bad input is a `ProtocolError` naming what is wrong: VALIDATION_ERROR with the field for an
unknown game, bad options, an unreadable position, a depth over the limit, a finished game, an
unknown evaluation; INVALID_MOVE or ILLEGAL_MOVE (with the legal moves) for a move of `moves`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from bots.trace.tree import TraceError, TraceLimitError, TraceStopped, trace
from games import game_names
from games.base import GameError, IllegalMoveError, State
from games.registry import get_game
from protocol.errors import ErrorCode, ProtocolError
from protocol.explore import PositionAnswer, PositionRequest, TraceRequest
from server.limits.compute import oversize
from server.settings import Settings

T = TypeVar("T")


def invalid(field_name: str, message: str) -> ProtocolError:
    """Return the VALIDATION_ERROR naming `field_name` of a request."""
    return ProtocolError(
        ErrorCode.VALIDATION_ERROR, f"{field_name}: {message}", {field_name: message}
    )


def reach(body: PositionRequest, settings: Settings) -> State[Any]:
    """Return the state `body` names: its position (or the start), then its moves played.

    Raises ProtocolError: VALIDATION_ERROR naming `game`, `options` or `position`;
    INVALID_MOVE or ILLEGAL_MOVE (with the legal moves) naming the move's index.
    """
    try:
        game = get_game(body.game, body.options)
    except GameError as error:
        raise invalid("options" if body.game in game_names() else "game", str(error)) from None
    try:
        state = game.position_or_initial(body.position)
    except (GameError, ValueError) as error:
        raise invalid("position", str(error)) from None
    too_large = oversize(state, settings)
    if too_large is not None:
        raise invalid("options" if body.position is None else "position", too_large)
    for index, text in enumerate(body.moves):
        if state.is_terminal():
            raise invalid(f"moves.{index}", "the game is over before this move")
        try:
            move = state.parse_move(text)
            state = state.apply(move)
        except IllegalMoveError as error:
            legal = [state.format_move(m) for m in state.legal_moves()]
            raise ProtocolError(
                ErrorCode.ILLEGAL_MOVE,
                f"moves.{index}: {error}",
                {"index": index},
                legal_moves=legal,
            ) from None
        except (GameError, ValueError) as error:
            raise ProtocolError(
                ErrorCode.INVALID_MOVE, f"moves.{index}: {error}", {"index": index}
            ) from None
    return state


def describe(state: State[Any]) -> PositionAnswer:
    """Return the position `state` is, who is to move, and its legal moves."""
    over = state.is_terminal()
    return PositionAnswer(
        game=state.game.name,
        position=state.game.format_position(state),
        to_move=state.game.player_names[state.to_move],
        legal_moves=[] if over else [state.format_move(m) for m in state.legal_moves()],
        over=over,
    )


def _bound(value: float | str) -> float:
    if value == "inf":
        return math.inf
    if value == "-inf":
        return -math.inf
    assert isinstance(value, float | int)
    return float(value)


class Explorer:
    """Runs traces for the explorer on `explore_threads` threads of its own, within limits, and
    works out positions on `explore_position_threads` others.

    Build it once per application and `close` it at shutdown (running traces are stopped).
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_depth = settings.explore.max_depth
        self.max_nodes = settings.explore.max_nodes
        self.max_seconds = settings.explore.max_seconds
        self._settings = settings
        self._clock = clock
        self._executor = ThreadPoolExecutor(
            settings.explore.threads, thread_name_prefix="arena-trace"
        )
        self._slots = asyncio.Semaphore(settings.explore.threads)
        self._stops: set[threading.Event] = set()
        self._positions = ThreadPoolExecutor(
            settings.explore.position_threads, thread_name_prefix="arena-position"
        )

    def close(self) -> None:
        """Stop every running trace and the threads (a trace or position asked later is
        refused)."""
        for stop in list(self._stops):
            stop.set()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._positions.shutdown(wait=False, cancel_futures=True)

    async def position(self, body: PositionRequest) -> PositionAnswer:
        """Return the position `body` reaches (see `reach`), with its legal moves."""
        return await self._off_loop(lambda: describe(reach(body, self._settings)))

    async def _off_loop(self, work: Callable[[], T]) -> T:
        """Return `work()`, run on a position thread (its errors raised here)."""
        try:
            job = self._positions.submit(work)
        except RuntimeError:  # shut down: the server is stopping
            raise ProtocolError(ErrorCode.UNAVAILABLE, "the server is stopping") from None
        return await asyncio.wrap_future(job)

    def check(self, body: TraceRequest) -> tuple[State[Any], dict[str, Any]]:
        """Return the state to trace and `bots.trace.trace`'s keyword arguments for `body`.

        Raises ProtocolError (VALIDATION_ERROR naming the field, INVALID_MOVE, ILLEGAL_MOVE).
        """
        state = reach(body, self._settings)
        if state.is_terminal():
            raise invalid("position", "the game is over in this position: nothing to search")
        if body.depth > self.max_depth:
            raise invalid("depth", f"at most {self.max_depth} on this server, not {body.depth}")
        if body.max_nodes is not None and body.max_nodes > self.max_nodes:
            raise invalid(
                "max_nodes", f"at most {self.max_nodes:,} on this server, not {body.max_nodes:,}"
            )
        window = (-math.inf, math.inf)
        if body.window is not None:
            window = (_bound(body.window[0]), _bound(body.window[1]))
            if not window[0] < window[1]:
                raise invalid("window", "alpha must be less than beta")
        options: dict[str, Any] = {
            "evaluation": body.evaluation,
            "tt": body.tt,
            "ordering": body.ordering,
            "max_nodes": body.max_nodes or self.max_nodes,
            "scoring": body.scoring,
            "window": window,
        }
        return state, options

    async def trace(self, body: TraceRequest) -> str:
        """Return the trace `body` asks for as JSON text: `Trace.as_dict()`, encoded on the
        trace's thread (a tree of thousands of nodes is not encoded on the event loop).

        Raises ProtocolError: as `check`; TRACE_TOO_LARGE past the node limit; TRACE_TIMEOUT
        when the trace (its wait for a thread included) passes `explore_max_seconds`.
        """
        state, options = await self._off_loop(lambda: self.check(body))
        deadline = self._clock() + self.max_seconds
        try:
            async with asyncio.timeout(self.max_seconds):
                await self._slots.acquire()
        except TimeoutError:
            raise self._timeout("waited for a free thread") from None
        stop = threading.Event()
        clock = self._clock

        def should_stop() -> bool:
            return stop.is_set() or clock() >= deadline

        loop = asyncio.get_running_loop()
        try:
            job = self._executor.submit(
                lambda: json.dumps(
                    trace(state, body.search, body.depth, stop=should_stop, **options).as_dict(),
                    separators=(",", ":"),
                )
            )
        except RuntimeError:  # shut down: the server is stopping
            self._slots.release()
            raise ProtocolError(ErrorCode.UNAVAILABLE, "the server is stopping") from None
        self._stops.add(stop)

        def finished(_: Future[str]) -> None:
            # The thread is free only once the trace has really ended (a cancelled request
            # stops it within 64 nodes): only then may another trace have it.
            self._stops.discard(stop)
            with contextlib.suppress(RuntimeError):  # the loop closed: nothing to hand on
                loop.call_soon_threadsafe(self._slots.release)

        job.add_done_callback(finished)
        try:
            return await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            stop.set()
            raise
        except TraceLimitError:
            limit = options["max_nodes"]
            raise ProtocolError(
                ErrorCode.TRACE_TOO_LARGE,
                f"the search tree has more than {limit:,} nodes, the limit; ask a smaller "
                "depth or a narrower window",
                {"limit": limit},
            ) from None
        except TraceStopped:
            raise self._timeout("ran") from None
        except TraceError as error:
            field_name = "evaluation" if body.evaluation is not None else "search"
            raise invalid(field_name, str(error)) from None

    def _timeout(self, what: str) -> ProtocolError:
        return ProtocolError(
            ErrorCode.TRACE_TIMEOUT,
            f"the trace {what} for the server's limit of {self.max_seconds:g} s and was "
            "stopped; ask a smaller depth",
            {"limit_s": self.max_seconds},
        )
