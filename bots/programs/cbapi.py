"""Play a CheckerBoard-API checkers engine (a shared library) as an Arena bot.

CheckerBoard's engine API (Martin Fierz) is two C functions of the library:
`int getmove(int board[8][8], int color, double maxtime, char str[1024], int *playnow,
int info, int moreinfo, struct CBmove *move)` and `int enginecommand(char command[256],
char reply[1024])`. The board holds WHITE 1 / BLACK 2 with MAN 4 / KING 8 (0 empty);
`board[x][y]` has Black's home row at y = 0 with square 1 at (6, 0) and square 4 at (0, 0),
square 5 at (7, 1), up to square 32 at (1, 7): square s on row r = (s - 1) // 4 and column c
(`games.checkers.square_column`, seen from White) is (7 - c, r). Black (Arena's player 0)
moves first. The engine plays by writing its move into the board.

Each engine runs in a child process of its own (bots/programs/cbhost.py), never in this one:

- an engine keeps its state in C globals (tables, repetition history) and is not re-entrant:
  two bots of one library in one process would share them, a process each gives each bot its
  own, and a new bot starts clean;
- an engine that crashes or hangs ends its game as a bot failure (the child dies, or is
  killed when it does not play after being told to play now: bots.programs.child, the channel every
  bot run as a child process shares), not the tournament;
- the engine's own printing cannot mix with the caller's output.

The move is read from the board the engine returns: the one legal move whose resulting
position is that board (the CBmove's from, to and path decide between captures that end on
the same board; any other board is a failure naming what the engine returned). The text the
engine writes into `str` is parsed for `depth N`, `nodes N` and `value N` / `eval N` /
`score N` and a `pv: ...`; a number not given is left 0 (the score NaN).

Depth: with `info` bit 3 set, the API's `maxtime` is a search depth (an extension of the
protocol; engines that do not know it search that many seconds). Bit 0 says the game's
course was interrupted (a new game or a position out of sequence): the engine resets its
repetition history.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bots.programs.child import ChildProcess, EngineError
from bots.result import Clock, SearchResult, SearchStats, Stop
from games.checkers import (
    BLACK,
    NUM_SQUARES,
    CheckersMove,
    CheckersState,
    square_column,
    square_row,
)

WHITE_PIECE: Final = 1
BLACK_PIECE: Final = 2
MAN: Final = 4
KING: Final = 8

INFO_RESET: Final = 1
"""getmove's `info` bit 0: the natural course of the game was interrupted."""
INFO_DEPTH: Final = 8
"""getmove's `info` bit 3: `maxtime` is a search depth."""

RESEND_SECONDS: Final = 0.5
"""How often the play-now request is repeated while the engine has not answered."""

_HOST: Final = Path(__file__).with_name("cbhost.py")


def cb_square(square: int) -> tuple[int, int]:
    """Return CheckerBoard's (x, y) of Arena's square 1-32."""
    return 7 - square_column(square), square_row(square)


_SQUARE_AT: Final = {cb_square(s): s for s in range(1, NUM_SQUARES + 1)}


def cb_board(state: CheckersState) -> list[int]:
    """Return CheckerBoard's board of `state`, board[x][y] at index 8x + y."""
    cells = [0] * 64
    for square in range(1, NUM_SQUARES + 1):
        piece = state.piece_at(square)
        if piece == ".":
            continue
        value = (BLACK_PIECE if piece in "bB" else WHITE_PIECE) | (KING if piece.isupper() else MAN)
        x, y = cb_square(square)
        cells[8 * x + y] = value
    return cells


def cb_colour(state: CheckersState) -> int:
    """Return CheckerBoard's colour of the side to move."""
    return BLACK_PIECE if state.turn == BLACK else WHITE_PIECE


def _dark_cells(cells: Sequence[int]) -> tuple[int, ...]:
    return tuple(cells[8 * x + y] for x, y in _SQUARE_AT)


def _describe(cells: Sequence[int]) -> str:
    """The board as a FEN-like list of pieces, for messages."""
    names = {BLACK_PIECE | MAN: "b", BLACK_PIECE | KING: "B", WHITE_PIECE | MAN: "w"}
    names[WHITE_PIECE | KING] = "W"
    pieces = []
    for (x, y), square in sorted(_SQUARE_AT.items(), key=lambda item: item[1]):
        value = cells[8 * x + y]
        if value:
            pieces.append(f"{square}{names.get(value, f'?{value}')}")
    return " ".join(pieces) or "an empty board"


def identify_move(
    state: CheckersState, cells: Sequence[int], move: dict[str, Any] | None = None
) -> CheckersMove:
    """Return the legal move of `state` after which the board is `cells`.

    Captures that end on the same board are told apart by the CBmove's from, to and path
    squares; EngineError when no legal move, or more than one, matches.
    """
    returned = _dark_cells(cells)
    matches = [
        m
        for m in state.legal_moves()
        if _dark_cells(cb_board(state.apply_unchecked(m))) == returned
    ]
    if len(matches) > 1 and move is not None:
        matches = _by_cbmove(matches, move)
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise EngineError(
            "the engine's board fits several captures ("
            + ", ".join(str(m) for m in matches)
            + ") and its CBmove names none of them"
        )
    if returned == _dark_cells(cb_board(state)):
        raise EngineError("the engine returned the board unchanged: it made no move")
    raise EngineError(f"the engine's board after its move is no legal move: {_describe(cells)}")


def _by_cbmove(matches: list[CheckersMove], move: dict[str, Any]) -> list[CheckersMove]:
    """Keep the moves the CBmove's from and to, then its path, name (all of them if none)."""

    def square(coordinates: Any) -> int | None:
        return _SQUARE_AT.get((int(coordinates[0]), int(coordinates[1])))

    ends = [
        m for m in matches if (m.path[0], m.path[-1]) == (square(move["from"]), square(move["to"]))
    ]
    path = [square(c) for c in move.get("path", [])]
    exact = [m for m in ends if list(m.path[1:]) == path]
    return exact or ends or matches


_NUMBER: Final = r"[:=]?\s*[<>]?\s*(-?\d+)"
_DEPTH: Final = re.compile(r"\bdepth\s*" + _NUMBER, re.IGNORECASE)
_NODES: Final = re.compile(r"\bnodes\s*" + _NUMBER, re.IGNORECASE)
_SCORE: Final = re.compile(r"\b(?:value|eval|score)\s*" + _NUMBER, re.IGNORECASE)
_PV: Final = re.compile(r"\bpv\s*:?\s*(.*)$", re.IGNORECASE)
_PV_MOVE: Final = re.compile(r"^\d{1,2}(?:[-x]\d{1,2})+$")


def parse_search_text(text: str) -> tuple[SearchStats, float]:
    """Return the statistics and score an engine's status text states (0 and NaN if not)."""
    stats = SearchStats()
    depth = _DEPTH.search(text)
    nodes = _NODES.search(text)
    score = _SCORE.search(text)
    pv = _PV.search(text)
    if depth:
        stats.depth = int(depth.group(1))
    if nodes:
        stats.nodes = int(nodes.group(1))
    if pv:
        # Cake writes "4- 8" for 4-8: squares are padded to two characters.
        joined = re.sub(r"\s*([-x])\s*", r"\1", pv.group(1))
        stats.pv = [token for token in joined.split() if _PV_MOVE.match(token)]
    return stats, float(score.group(1)) if score else math.nan


@dataclass(frozen=True, slots=True)
class EngineReply:
    """What getmove wrote: the board, its return value, its status text and its CBmove."""

    board: list[int]
    result: int
    text: str
    move: dict[str, Any]


class Engine:
    """One CheckerBoard-API library, loaded in a child process of its own (bots.programs.child).

    Raises EngineError when the library is missing, cannot be loaded or has no `getmove`.
    The child ends with `close()`, or when this object is collected.
    """

    def __init__(self, library: str | Path, clock: Clock) -> None:
        path = Path(library).expanduser()
        if not path.is_file():
            raise EngineError(f"no engine library at {str(path)!r}")
        self.path = path.resolve()
        self._clock = clock
        self._next_id = 0
        self._child = ChildProcess(
            [sys.executable, "-I", "-S", str(_HOST), str(self.path)], clock, what="the engine"
        )
        hello = json.loads(self._child.read_line(starting=True))
        if "error" in hello:
            self.close()
            raise EngineError(f"cannot load engine {str(self.path)!r}: {hello['error']}")
        self.name: str | None = hello.get("name")

    def close(self) -> None:
        """End the child process."""
        self._child.close()

    def command(self, text: str) -> tuple[bool, str]:
        """Send `text` to enginecommand; return (handled, reply)."""
        reply = self._ask({"command": text}, None, None)
        return bool(reply.get("handled")), str(reply.get("reply", ""))

    def getmove(
        self,
        board: list[int],
        colour: int,
        maxtime: float,
        info: int,
        *,
        play_now_at: float | None = None,
        stop: Stop | None = None,
    ) -> EngineReply:
        """Call getmove; `play_now_at` (clock time) or `stop` set its playnow flag."""
        request = {"board": board, "color": colour, "maxtime": maxtime, "info": info}
        reply = self._ask({"getmove": request}, play_now_at, stop)
        cells = reply.get("board")
        if not isinstance(cells, list) or len(cells) != 64:
            raise EngineError("the engine host sent no board")
        return EngineReply(cells, int(reply["result"]), str(reply["text"]), reply["move"])

    def _ask(
        self, message: dict[str, Any], play_now_at: float | None, stop: Stop | None
    ) -> dict[str, Any]:
        """Send a request and return its answer.

        From `play_now_at` (clock time), or once `stop` returns True, the engine is told to
        play now, again every RESEND_SECONDS; it is killed GRACE_SECONDS (bots.programs.child)
        later.
        """
        ident = self._next_id
        self._next_id += 1
        child = self._child
        child.send(json.dumps({"id": ident, **message}))
        while True:
            line = child.read_line(
                answer_at=play_now_at,
                stop=stop,
                tell=lambda: child.send(json.dumps({"stop": ident})),
                resend=RESEND_SECONDS,
            )
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == ident:
                return answer


class CheckerBoardBot:
    """A search that asks a CheckerBoard engine for each move of a checkers game.

    `seconds` is getmove's `maxtime` (capped by the caller's budget); `depth` > 0 asks for a
    fixed depth instead (info bit 3). The engine is told to play now at the caller's budget
    (or, without one, at 4 x maxtime + 1 s) and whenever `stop` says so.
    """

    def __init__(self, engine: Engine, seconds: float, depth: int) -> None:
        self.engine = engine
        self.seconds = seconds
        self.depth = depth
        self._after: CheckersState | None = None

    def choose(self, state: CheckersState, budget: float | None, stop: Stop | None) -> SearchResult:
        """Return the engine's move for `state` with the statistics it reported."""
        clock = self.engine._clock
        started = clock()
        info = 0 if self._continues(state) else INFO_RESET
        if self.depth:
            maxtime: float = self.depth
            info |= INFO_DEPTH
            play_now_at = None if budget is None else started + budget
        else:
            maxtime = self.seconds if budget is None else min(self.seconds, budget)
            play_now_at = started + (budget if budget is not None else 4 * maxtime + 1.0)
        reply = self.engine.getmove(
            cb_board(state), cb_colour(state), maxtime, info, play_now_at=play_now_at, stop=stop
        )
        try:
            move = identify_move(state, reply.board, reply.move)
        except EngineError as exc:
            said = f" (it said {reply.text.strip()!r})" if reply.text.strip() else ""
            raise EngineError(f"{exc}{said}") from None
        self._after = state.apply_unchecked(move)
        stats, score = parse_search_text(reply.text)
        stats.seconds = clock() - started
        return SearchResult(move, score, [move], stats)

    def _continues(self, state: CheckersState) -> bool:
        """True when `state` follows the engine's last move by one move of the opponent."""
        after = self._after
        if after is None or after.turn == state.turn:
            return False
        return any(after.apply_unchecked(m).key() == state.key() for m in after.legal_moves())
