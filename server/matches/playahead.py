"""Play-ahead for matches between two house bots: the searches run in their own process.

A house bot's search is CPU-bound Python. Run in a thread of the server, it shares the GIL
with the event loop, and on a small VM every hand-over of the GIL between the two costs about
as much as a depth-4 checkers search: a match between two house bots ran at half the speed of
the same game played in a plain process. `PlayAhead` instead plays the game ahead in a child
process (forked, so it starts in milliseconds with the bots' code loaded; it uses no server
thread, lock or connection):
the child searches each bot's move on its own copy of the position and writes it to a pipe,
then searches the reply at once; the event loop reads the moves as they come and plays them
through the referee, committing each in order. The child never waits for the server.

Only bots built from specs (house bots) are played this way; their moves are the ones they
would play in the server, since a bot is a pure function of its spec and the position for
fixed limits (which is why only untimed matches use it).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import pickle
import signal
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from typing import Any

from bots.spec import create_bot
from bots.wire import search_info
from games.base import State
from protocol.messages import SearchInfo

Item = tuple[int, int, str | BaseException | None, SearchInfo | None]
"""(seq before the move, seat, the move's text | the bot's error | None for no move, the
search's statistics)."""

_context: BaseContext | None = None


def _get_context() -> BaseContext:
    # Forked: a fork server or spawn would import the `arena` script's __main__ (the whole
    # server) again in every child. The child runs only bot code and the pipe: it takes no lock
    # another server thread could hold (no logging, no database, no event loop).
    global _context  # made on first use
    if _context is None:
        _context = multiprocessing.get_context("fork")
    return _context


def _play(specs: tuple[str, str], state_bytes: bytes, seq: int, out: Connection) -> None:
    """The child: play both bots from the pickled state, writing each move to `out`."""
    # A fork inherits the server's signal handling: uvicorn's SIGTERM handler (which only sets
    # a flag of the server object, so `terminate()` did nothing and a stopping server waited
    # for the child) and the event loop's wake-up descriptor. The child dies on SIGTERM, and
    # leaves Ctrl-C to its server, which ends it.
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    state: State[Any] = pickle.loads(state_bytes)
    bots = [create_bot(spec, state.game) for spec in specs]
    parent = os.getppid()

    def orphaned() -> bool:
        # A server killed outright (SIGKILL) cannot end its children: each search asks this
        # every 64 nodes, so a child never searches on for a server that is gone.
        return os.getppid() != parent

    try:
        while not state.is_terminal():
            seat = state.to_move
            try:
                result = bots[seat].choose(state, stop=orphaned)
                if orphaned():
                    return
            except Exception as error:  # noqa: BLE001 -- reported to the server, which decides
                out.send((seq, seat, RuntimeError(f"{type(error).__name__}: {error}"), None))
                return
            if result.move is None:
                out.send((seq, seat, None, None))
                return
            out.send((seq, seat, state.format_move(result.move), search_info(result)))
            state = state.apply_unchecked(result.move)
            seq += 1
    except (BrokenPipeError, EOFError, OSError):
        return  # the server stopped listening
    finally:
        out.close()


class PlayAhead:
    """A child process playing two house bots' moves ahead; `next()` returns them in order."""

    def __init__(self, specs: tuple[str, str], state: State[Any], seq: int) -> None:
        context = _get_context()
        reader, writer = context.Pipe(duplex=False)
        self._reader = reader
        self._process = context.Process(  # type: ignore[attr-defined]
            target=_play, args=(specs, pickle.dumps(state), seq, writer), daemon=True
        )
        self._process.start()
        writer.close()
        self._items: asyncio.Queue[Item | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(reader.fileno(), self._readable)

    def _readable(self) -> None:
        try:
            item: Item = self._reader.recv()
        except (EOFError, OSError):
            self._loop.remove_reader(self._reader.fileno())
            self._items.put_nowait(None)
            return
        self._items.put_nowait(item)

    async def next(self) -> Item | None:
        """Return the next move (None: the child has nothing more to say)."""
        return await self._items.get()

    def interrupt(self) -> None:
        """Make `next()` return None (after the moves already arrived): stop playing ahead."""
        self._items.put_nowait(None)

    def ready(self) -> list[Item | None]:
        """Return the moves that have arrived already, without waiting."""
        items = []
        while not self._items.empty():
            items.append(self._items.get_nowait())
        return items

    @property
    def alive(self) -> bool:
        """Return True while the child process runs."""
        alive: bool = self._process.is_alive()
        return alive

    async def close(self) -> None:
        """Stop the child (a search in progress is abandoned) and release the pipe."""
        with contextlib.suppress(ValueError, OSError):
            self._loop.remove_reader(self._reader.fileno())
        if self._process.is_alive():
            self._process.terminate()
        await asyncio.to_thread(self._process.join, 5)
        self._reader.close()
