"""Independent English-draughts oracles for differential tests (open-spiel and pydraughts).

Test helper only: nothing in Arena's product code may import this module or either library.
Both libraries are optional; call `openspiel_available()` / `pydraughts_available()` (or use
`pytest.importorskip("pyspiel")` / `pytest.importorskip("draughts")`) before using them.

Conventions (those of ../shared/oracles/checkers.md): positions are PDN FENs such as
`B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12` (first letter = side to
move, `K` marks a king); moves are `11-15`, `22x15` and `11x18x25` (every landing square of a
multi-jump, which is ONE move). Every `*_legal_moves` function returns a `sorted()` list of
such strings; FENs produced here are canonical (White group first, squares ascending).

API
---
FEN helpers (no third-party import):
    `START_FEN`, `Position`, `parse_fen(fen)`, `format_fen(position)`, `canonical_fen(fen)`,
    `square_to_rc(square)`, `rc_to_square(row, col)`.
open-spiel (module `pyspiel`, game "checkers"):
    `openspiel_available()`, `openspiel_game()`, `openspiel_legal_moves(fen)`,
    `openspiel_perft(fen, depth)`, `openspiel_random_playout_positions(seed, n_positions)`,
    `openspiel_disagrees_with_rules(fen, plies_since_capture=0)`,
    `openspiel_state_from_fen(fen)`, `openspiel_setup_actions(fen)`,
    `openspiel_setup_no_capture_count(fen)`, `openspiel_fen(state, side=None)`,
    `openspiel_complete_moves(state)` -> [(notation, [actions])].
pydraughts (module `draughts`, variant "english"):
    `pydraughts_available()`, `pydraughts_legal_moves(fen)`, `pydraughts_perft(fen, depth)`,
    `pydraughts_random_playout_positions(seed, n_positions)`,
    `pydraughts_disagrees_with_rules(fen)`, `pydraughts_board(fen)`, `pydraughts_fen(board)`.
Both: `oracle_legal_moves(fen)` -> {"openspiel": [...], "pydraughts": [...]} for the installed
libraries that do not disagree with the rules on `fen`.

Findings (open-spiel 2.0.2 and pydraughts 0.6.7, checked by experiment)
-------------------------------------------------------------------------
Move generation of BOTH libraries agrees with checkers.md on everything tried: the six rule
cases (crowning ends the move, any capture may be chosen, men capture forward only, kings
capture backward, a blocked side has no move, both directions of a ring capture are listed);
perft from the start (open-spiel 1..9, pydraughts 1..5); all 14 rows of the "other positions"
table and the 5 three-move openings (open-spiel to depth 6, pydraughts to depth 4); and over
10,000 positions from random games (both libraries' playouts) and 3,000 made-up ones,
cross-checked between the two libraries. The differences are all outside move generation: see
`openspiel_disagrees_with_rules` and `pydraughts_disagrees_with_rules`.

open-spiel specifics:
- Colours and orientation: open-spiel's player 0 (its "White", `o`, king `8`) moves first, from
  the BOTTOM of its board, and is checkers.md's Black; player 1 (`+`, king `*`) is White. Its
  board is the standard diagram turned 180 degrees: the square at row r, column c (from the
  top) is open-spiel cell (7 - r, 7 - c), so square 1 (b8) is its g1 and square 12 its a3.
- A multi-jump is several actions by the same player (`current_player()` stays the mover's
  until the piece cannot jump on); every helper here follows the continuations to whole moves.
- Draws: no legal action (a draw, returns 0) once 40 consecutive ACTIONS have passed without a
  capture, man moves included; checkers.md says 80 plies without a capture AND without a man
  move. No threefold-repetition rule. `max_game_length()` says 1000 but nothing enforces it.
- `undo_action` restores neither the no-capture counter nor a pending multi-jump, so
  traversals here use `child` (clone + apply), never undo.
- Positions cannot be loaded from Python: `new_initial_state(str)` expects a JSON state struct
  that checkers does not implement, and the C++ `SetCustomBoard` is not bound. But
  `apply_action` does not check legality, so `openspiel_state_from_fen` builds the position
  from the start with actions that are not legal moves (one-step moves of any piece in any
  direction, jumps that remove surplus pieces), ends on a capture (no-capture counter 0, no
  multi-jump pending) or at most a few steps after one, and verifies board and side to move.
  All 10,000 positions from random games were built (about 95% with counter 0, the rest,
  mostly with all 24 pieces on the board, with counter <= 15), in about 10 ms each. FENs with
  a man on its own crowning row, more than 12 pieces a side, or 24 pieces and the wrong side
  to move cannot be built; of made-up positions (random pieces, 40% kings) about 1.3% cannot
  be built and 0.7% only with counter >= 40. `openspiel_disagrees_with_rules` flags these.

pydraughts specifics:
- `Board("english", fen)` assumes the White group comes first and silently misreads
  `B:B1,2:W30,31` (as `B:W1,2:B30,31`), so FENs are canonicalised before they are passed in.
- `Move.pdn_move` gives multi-jumps in the short form (`10x26`) when unambiguous; the helpers
  use `steps_move` for the full path. Its `Board.fen` lists squares in text order
  (`B1,10,11,2,...`); `parse_fen` copes.
- Draws: 80 consecutive non-capturing king plies (the same as checkers.md's 80 plies without a
  capture or a man move) and threefold repetition (position and side to move); no other cap.
  `legal_moves()` still lists moves in a drawn position (ask `is_over()`).
- Its PDN writer (`draughts/PDN.py`) numbers a game whose FEN starts with `B` as
  `1... 11-15` (chess style): the numbering bug checkers.md warns about. Not used here.
"""

from __future__ import annotations

import copy
import functools
import heapq
import itertools
import random
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

START_FEN = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
"""The standard start position, Black to move."""

BLACK = "B"
WHITE = "W"

# Standard diagonal directions as (row delta, column delta), rows counted from the top.
_DIRECTIONS: tuple[tuple[int, int], ...] = ((-1, -1), (-1, 1), (1, 1), (1, -1))
_MAX_SETUP_ATTEMPTS = 40
_SETUP_ATTEMPTS_FOR_COUNTER_0 = 8
_GOOD_ENOUGH_NO_CAPTURE = 2  # a set-up ending this close to its last capture is kept
_MAX_STEPS_AFTER_LAST_CAPTURE = 3
_MAX_ENDING_FRONTIER = 400
_ENDINGS_PER_ATTEMPT = 8
_OPENSPIEL_NO_CAPTURE_LIMIT = 40


# --------------------------------------------------------------------------------------------
# Squares and FENs
# --------------------------------------------------------------------------------------------


def square_to_rc(square: int) -> tuple[int, int]:
    """Return (row, column) from the top-left for a square 1..32 (checkers.md rule 2)."""
    row = (square - 1) // 4
    col = 2 * ((square - 1) % 4) + (1 if row % 2 == 0 else 0)
    return row, col


def rc_to_square(row: int, col: int) -> int | None:
    """Return the square number of a dark (row, column), or None off the board / on light."""
    if not (0 <= row < 8 and 0 <= col < 8) or (row + col) % 2 == 0:
        return None
    return row * 4 + col // 2 + 1


def _build_tables() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    steps: list[tuple[int, ...]] = [()]
    jumps: list[tuple[int, ...]] = [()]
    for square in range(1, 33):
        row, col = square_to_rc(square)
        steps.append(tuple(rc_to_square(row + dr, col + dc) or 0 for dr, dc in _DIRECTIONS))
        jumps.append(tuple(rc_to_square(row + 2 * dr, col + 2 * dc) or 0 for dr, dc in _DIRECTIONS))
    return tuple(steps), tuple(jumps)


# _STEP[s][d] / _JUMP[s][d]: the square one / two steps from s in direction d (0 = off board).
_STEP, _JUMP = _build_tables()


def _crown_row(piece: str) -> int:
    """The row on which a man of `piece`'s colour is crowned (Black men move down)."""
    return 7 if piece.lower() == "b" else 0


def _is_king(piece: str) -> bool:
    return piece.isupper()


def _crowned(piece: str, square: int) -> str:
    if not _is_king(piece) and square_to_rc(square)[0] == _crown_row(piece):
        return piece.upper()
    return piece


@dataclass(frozen=True)
class Position:
    """A position: `side` ("B" or "W") to move and `pieces` {square: piece}.

    Pieces are "b"/"B" (Black man/king) and "w"/"W" (White man/king).
    """

    side: str
    pieces: Mapping[int, str] = field(default_factory=dict)


def parse_fen(fen: str) -> Position:
    """Parse a PDN FEN (`B:W21,22:B1,K2`); groups in either order, ranges `5-8` allowed.

    Raises ValueError for malformed text, squares off 1..32 or a square given twice.
    """
    parts = [part.strip() for part in fen.strip().rstrip(".").split(":")]
    if len(parts) != 3 or parts[0].upper() not in (BLACK, WHITE):
        raise ValueError(f"not a PDN FEN: {fen!r}")
    pieces: dict[int, str] = {}
    for group in parts[1:]:
        if not group or group[0].upper() not in (BLACK, WHITE):
            raise ValueError(f"bad piece group {group!r} in {fen!r}")
        colour = group[0].lower()
        for raw_item in group[1:].split(","):
            item = raw_item.strip()
            if not item:
                continue
            king = item[0].upper() == "K"
            body = item[1:] if king else item
            if "-" in body:
                first, last = (int(x) for x in body.split("-"))
                squares = list(range(first, last + 1))
            else:
                squares = [int(body)]
            for square in squares:
                if not 1 <= square <= 32:
                    raise ValueError(f"square {square} off the board in {fen!r}")
                if square in pieces:
                    raise ValueError(f"square {square} given twice in {fen!r}")
                pieces[square] = colour.upper() if king else colour
    return Position(parts[0].upper(), pieces)


def format_fen(position: Position) -> str:
    """Format a position as a canonical PDN FEN: White group first, squares ascending."""

    def group(colour: str) -> str:
        items = [
            ("K" if _is_king(piece) else "") + str(square)
            for square, piece in sorted(position.pieces.items())
            if piece.lower() == colour
        ]
        return ",".join(items)

    return f"{position.side}:W{group('w')}:B{group('b')}"


def canonical_fen(fen: str) -> str:
    """Return `fen` in canonical form (White group first, squares ascending)."""
    return format_fen(parse_fen(fen))


def _format_path(squares: list[int], capture: bool) -> str:
    return ("x" if capture else "-").join(str(square) for square in squares)


# --------------------------------------------------------------------------------------------
# open-spiel
# --------------------------------------------------------------------------------------------

# open-spiel cell characters -> standard pieces (player 0 = Black, moves first).
_OS_TO_PIECE = {"o": "b", "8": "B", "+": "w", "*": "W"}


def openspiel_available() -> bool:
    """True when `pyspiel` (open-spiel) can be imported."""
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def openspiel_game() -> Any:
    """Return the cached `pyspiel.load_game("checkers")`."""
    import pyspiel

    return pyspiel.load_game("checkers")


def _os_action(square: int, direction: int, capture: bool) -> int:
    """The open-spiel action moving the piece on standard `square` in standard `direction`."""
    row, col = square_to_rc(square)
    os_row, os_col = 7 - row, 7 - col
    os_direction = (direction + 2) % 4  # the board is turned 180 degrees
    return ((os_row * 8 + os_col) * 4 + os_direction) * 2 + int(capture)


def _os_decode(action: int) -> tuple[int, int, bool]:
    """Decode an open-spiel action into (from square, landing square, is capture)."""
    capture = bool(action & 1)
    rest = action >> 1
    os_direction = rest % 4
    rest //= 4
    os_col = rest % 8
    os_row = rest // 8
    origin = rc_to_square(7 - os_row, 7 - os_col)
    if origin is None:
        raise ValueError(f"open-spiel action {action} starts on a light square")
    direction = (os_direction + 2) % 4
    landing = (_JUMP if capture else _STEP)[origin][direction]
    return origin, landing, capture


def _openspiel_board(state: Any) -> dict[int, str]:
    """Read the pieces from `str(state)` (8 lines: a row label then 8 cells)."""
    pieces: dict[int, str] = {}
    lines = str(state).splitlines()
    for os_row in range(8):
        cells = lines[os_row][1:9]
        for os_col, char in enumerate(cells):
            if char in _OS_TO_PIECE:
                square = rc_to_square(7 - os_row, 7 - os_col)
                if square is None:
                    raise ValueError(f"open-spiel piece on a light cell ({os_row}, {os_col})")
                pieces[square] = _OS_TO_PIECE[char]
    return pieces


def openspiel_fen(state: Any, side: str | None = None) -> str:
    """Return the PDN FEN of an open-spiel checkers state.

    The side to move comes from `current_player()`; a terminal state has none, so pass `side`.
    """
    if side is None:
        player = state.current_player()
        if player not in (0, 1):
            raise ValueError("terminal open-spiel state: pass the side to move explicitly")
        side = BLACK if player == 0 else WHITE
    return format_fen(Position(side, _openspiel_board(state)))


def openspiel_complete_moves(state: Any) -> list[tuple[str, list[int]]]:
    """Return every whole move of `state` as (notation, open-spiel actions), sorted by notation.

    A multi-jump is followed through its continuation actions (same `current_player()`), so
    `11x18x25` comes with two actions. A terminal state has no moves.
    """
    if state.is_terminal():
        return []
    player = state.current_player()
    out: list[tuple[str, list[int]]] = []

    def walk(node: Any, squares: list[int], actions: list[int]) -> None:
        for action in node.legal_actions():
            origin, landing, capture = _os_decode(action)
            path = [*squares, landing] if squares else [origin, landing]
            if capture:
                child = node.child(action)
                if child.current_player() == player:
                    walk(child, path, [*actions, action])
                    continue
            out.append((_format_path(path, capture), [*actions, action]))

    walk(state, [], [])
    out.sort()
    return out


@dataclass
class _Setup:
    """A simulation of open-spiel checkers under arbitrary (unchecked) actions."""

    board: dict[int, str]
    player: int = 0  # open-spiel's current_player_: 0 = Black, 1 = White
    pending_jump: bool = False  # True when the last action left a multi-jump pending
    no_capture: int = 0  # open-spiel's moves_without_capture_
    actions: list[int] = field(default_factory=list)
    locked: set[int] = field(default_factory=set)

    def step(self, origin: int, target: int) -> None:
        """Apply a one-step move of the piece on `origin` to the adjacent empty `target`."""
        direction = _STEP[origin].index(target)
        piece = self.board.pop(origin)
        assert target not in self.board, "set-up step onto an occupied square"
        self.board[target] = _crowned(piece, target)
        self.actions.append(_os_action(origin, direction, capture=False))
        self.no_capture += 1
        self.pending_jump = False
        self.player = 1 - self.player

    def jump(self, origin: int, target: int) -> None:
        """Apply a jump from `origin` to `target` over any piece, as open-spiel does.

        Like open-spiel, the move stays with the mover if the jumping piece is the mover's, was
        not crowned by the jump and can jump again (a pending multi-jump).
        """
        direction = _JUMP[origin].index(target)
        over = _STEP[origin][direction]
        piece = self.board.pop(origin)
        assert over in self.board and target not in self.board, "bad set-up jump"
        del self.board[over]
        landed = _crowned(piece, target)
        self.board[target] = landed
        self.actions.append(_os_action(origin, direction, capture=True))
        self.no_capture = 0
        mover_colour = "b" if self.player == 0 else "w"
        self.pending_jump = (
            landed.lower() == mover_colour and landed == piece and self._can_jump(target)
        )
        if not self.pending_jump:
            self.player = 1 - self.player

    def _can_jump(self, square: int) -> bool:
        """Whether the piece on `square` has a capture by the rules (open-spiel's test)."""
        piece = self.board[square]
        for direction in range(4):
            if not _is_king(piece) and (direction >= 2) != (piece == "b"):
                continue  # men jump forward only: Black down (directions 2, 3), White up
            over, land = _STEP[square][direction], _JUMP[square][direction]
            if (
                land
                and land not in self.board
                and over in self.board
                and self.board[over].lower() != piece.lower()
            ):
                return True
        return False

    def walk(self, path: list[int]) -> None:
        """Step the piece on `path[0]` along `path`."""
        for origin, target in itertools.pairwise(path):
            self.step(origin, target)

    def route(
        self,
        sources: list[int],
        goal: Callable[[int, str], bool],
        *,
        allow_crown: bool,
        avoid: frozenset[int] = frozenset(),
    ) -> list[int] | None:
        """Shortest empty-square path from one of `sources` to a (square, piece) `goal`."""
        best: list[int] | None = None
        for source in sources:
            piece = self.board[source]
            start = (source, piece)
            parents: dict[tuple[int, str], tuple[int, str] | None] = {start: None}
            queue = deque([start])
            found: tuple[int, str] | None = None
            while queue:
                node = queue.popleft()
                if goal(*node) and node != start:
                    found = node
                    break
                square, current = node
                for nxt in _STEP[square]:
                    if not nxt or nxt in avoid or (nxt in self.board and nxt != source):
                        continue
                    after = _crowned(current, nxt)
                    if after != current and not allow_crown:
                        continue
                    key = (nxt, after)
                    if key not in parents:
                        parents[key] = node
                        queue.append(key)
            if found is None:
                continue
            path: list[int] = []
            walk_node: tuple[int, str] | None = found
            while walk_node is not None:
                path.append(walk_node[0])
                walk_node = parents[walk_node]
            path.reverse()
            if best is None or len(path) < len(best):
                best = path
        return best

    def free_pieces(self, colour: str | None = None) -> list[int]:
        """Squares of the pieces not yet locked on their target (of `colour` if given)."""
        return sorted(
            square
            for square, piece in self.board.items()
            if square not in self.locked and (colour is None or piece.lower() == colour)
        )

    def evict(self, square: int, forbidden: frozenset[int]) -> bool:
        """Move the unlocked piece on `square` to the nearest empty square not in `forbidden`.

        If free pieces hem it in, they are pushed along: on a path through free pieces to an
        empty square, the last of them moves on first, then the one before takes its place,
        and so on (no man may enter its crowning row).
        """
        path = self.route(
            [square],
            lambda s, _p: s not in forbidden,
            allow_crown=False,
            avoid=frozenset(),
        )
        if path is not None:
            self.walk(path)
            return True
        parents: dict[int, int | None] = {square: None}
        queue = deque([square])
        end: int | None = None
        while queue and end is None:
            at = queue.popleft()
            for nxt in _STEP[at]:
                if not nxt or nxt in parents or nxt in self.locked:
                    continue
                parents[nxt] = at
                if nxt not in self.board and nxt not in forbidden:
                    end = nxt
                    break
                queue.append(nxt)
        if end is None:
            return False
        chain: list[int] = []
        node: int | None = end
        while node is not None:
            chain.append(node)
            node = parents[node]
        chain.reverse()
        stops = [i for i, s in enumerate(chain) if s in self.board] + [len(chain) - 1]
        segments = list(itertools.pairwise(stops))
        for begin, finish in segments:
            piece = self.board[chain[begin]]
            if any(_crowned(piece, s) != piece for s in chain[begin + 1 : finish + 1]):
                return False
        for begin, finish in reversed(segments):
            self.walk(chain[begin : finish + 1])
        return True

    def reach(self, source: int, *, allow_crown: bool) -> dict[int, list[int]]:
        """Shortest paths over empty squares from `source` to every square it can reach.

        Set-up steps ignore direction, so only crowning matters: without `allow_crown` a man
        keeps off its crowning row.
        """
        piece = self.board[source]
        paths: dict[int, list[int]] = {source: [source]}
        queue = deque([source])
        while queue:
            at = queue.popleft()
            for nxt in _STEP[at]:
                if not nxt or nxt in paths or nxt in self.board:
                    continue
                if not allow_crown and _crowned(piece, nxt) != piece:
                    continue
                paths[nxt] = [*paths[at], nxt]
                queue.append(nxt)
        return paths

    def removal_plans(self, victim_colours: set[str]) -> list[tuple[int, list[int], list[int]]]:
        """Ways to capture one free piece of a colour in `victim_colours`, cheapest first.

        Each plan is (cost, victim path, jumper path): the victim walks its path, the jumper
        walks its path, then jumps over the victim. Only one of the two walks; jumpers are
        never crowned by the jump.
        """
        plans: list[tuple[int, list[int], list[int]]] = []
        free = self.free_pieces()
        walks = {square: self.reach(square, allow_crown=False) for square in free}
        for victim in free:
            if self.board[victim].lower() not in victim_colours:
                continue
            victim_walks = self.reach(victim, allow_crown=True)
            for jumper in free:
                if jumper == victim:
                    continue
                piece = self.board[jumper]
                # The victim walks next to the standing jumper.
                for direction in range(4):
                    over, land = _STEP[jumper][direction], _JUMP[jumper][direction]
                    if not land or _crowned(piece, land) != piece or over not in victim_walks:
                        continue
                    if land in self.board and land != victim:
                        continue
                    path = victim_walks[over]
                    plans.append((len(path) - 1, path, [jumper]))
                # The jumper walks next to the standing victim.
                for direction in range(4):
                    start = _STEP[victim][(direction + 2) % 4]
                    land = _STEP[victim][direction]
                    if not start or not land or land in self.board:
                        continue
                    if start not in walks[jumper] or _crowned(piece, land) != piece:
                        continue
                    path = walks[jumper][start]
                    plans.append((len(path) - 1, [victim], path))
        plans.sort(key=lambda plan: plan[0])
        return plans

    def remove_one(
        self, victim_colours: set[str], accept: Callable[[_Setup], bool] | None = None
    ) -> bool:
        """Capture one free piece of a colour in `victim_colours` by the cheapest plan.

        With `accept`, the cheapest plan whose result satisfies it (tried on a copy).
        """
        for _cost, victim_path, jumper_path in self.removal_plans(victim_colours):
            trial = copy.deepcopy(self)
            trial.walk(victim_path)
            trial.walk(jumper_path)
            direction = _STEP[jumper_path[-1]].index(victim_path[-1])
            trial.jump(jumper_path[-1], _JUMP[jumper_path[-1]][direction])
            if accept is None or accept(trial):
                self.__dict__.update(trial.__dict__)
                return True
        return False

    def place(self, square: int, piece: str, unfilled: frozenset[int]) -> list[int] | None:
        """Bring a suitable piece to `square` and lock it there.

        Returns the target squares whose locked pieces had to be moved (to be filled again),
        or None on failure.
        """
        if square in self.board:
            if self.board[square] == piece:
                self.locked.add(square)
                return []
            if square in self.locked:
                return None
            if not (
                self.evict(square, unfilled | {square}) or self.evict(square, frozenset({square}))
            ):
                return None
        displaced: list[int] = []

        def fits(source: int) -> bool:
            have = self.board[source]
            if have.lower() != piece.lower():
                return False
            return have == piece or (_is_king(piece) and not _is_king(have))

        def arrives(s: int, p: str) -> bool:
            return s == square and p == piece

        for _ in range(8):
            free = [s for s in self.free_pieces() if fits(s)]
            path = self.route(free, arrives, allow_crown=_is_king(piece))
            if path is not None:
                self.walk(path)
                self.locked.add(square)
                return displaced
            if self._chain(free, square, piece):
                return displaced
            cleared = self._clear_way(free, square, piece)
            if cleared is None:
                return None
            displaced.extend(cleared)
        return None

    def _chain(self, sources: list[int], square: int, piece: str) -> bool:
        """Reach `square` through locked pieces of the same kind, each moving one place on.

        With the path source -> ... -> locked a -> ... -> locked b -> ... -> square, b walks
        to `square`, a to b's square and the source to a's: the locked set only grows.
        """
        starts = [s for s in sources if self.board[s] == piece]
        parents: dict[int, int | None] = dict.fromkeys(starts)
        queue = deque(starts)
        while queue:
            at = queue.popleft()
            if at == square:
                break
            for nxt in _STEP[at]:
                if not nxt or nxt in parents or _crowned(piece, nxt) != piece:
                    continue
                if nxt in self.board and not (nxt in self.locked and self.board[nxt] == piece):
                    continue
                parents[nxt] = at
                queue.append(nxt)
        if square not in parents:
            return False
        path: list[int] = []
        node: int | None = square
        while node is not None:
            path.append(node)
            node = parents[node]
        path.reverse()
        stops = [i for i, s in enumerate(path) if s in self.board] + [len(path) - 1]
        for begin, end in reversed(list(itertools.pairwise(stops))):
            self.walk(path[begin : end + 1])
        self.locked.add(square)
        return True

    def _clear_way(self, sources: list[int], square: int, piece: str) -> list[int] | None:
        """Find a cheap path that may cross other pieces, then move those pieces off it.

        Crossing a locked piece costs more than crossing a free one; locked pieces moved away
        are unlocked and their squares returned. None if the blockers cannot be moved.
        """
        heap: list[tuple[int, int, str, tuple[int, ...]]] = []
        for source in sources:
            heapq.heappush(heap, (0, source, self.board[source], (source,)))
        seen: set[tuple[int, str]] = set()
        while heap:
            cost, at, current, path = heapq.heappop(heap)
            if (at, current) in seen:
                continue
            seen.add((at, current))
            if at == square and current == piece:
                blockers = sorted({s for s in path[1:] if s in self.board})
                return self._evict_all(blockers, path)
            for nxt in _STEP[at]:
                if not nxt:
                    continue
                after = _crowned(current, nxt)
                if after != current and not _is_king(piece):
                    continue
                extra = 40 if nxt in self.locked else 10 if nxt in self.board else 1
                heapq.heappush(heap, (cost + extra, nxt, after, (*path, nxt)))
        return None

    def _evict_all(self, blockers: list[int], path: tuple[int, ...]) -> list[int] | None:
        displaced = [b for b in blockers if b in self.locked]
        self.locked.difference_update(displaced)
        remaining = list(blockers)
        while remaining:
            forbidden = frozenset(path) | self.locked
            moved = [b for b in remaining if b not in self.board or self.evict(b, forbidden)]
            if not moved:
                return None
            remaining = [b for b in remaining if b not in moved]
        return displaced

    def fill(self, pieces: Mapping[int, str], order: list[int]) -> bool:
        """Place every piece of `pieces` (all other pieces must already be gone)."""
        pending = deque(order)
        stalled = 0
        for _ in range(6 * len(order) + 8):
            if not pending:
                return self.board == dict(pieces)
            square = pending.popleft()
            displaced = self.place(square, pieces[square], frozenset(pending))
            if displaced is None:  # try the others first; give up when none can be placed
                pending.append(square)
                stalled += 1
                if stalled > len(pending):
                    return False
                continue
            stalled = 0
            pending.extendleft(reversed(displaced))
        return False


def _row_parity(pieces: Mapping[int, str]) -> int:
    return sum(square_to_rc(square)[0] for square in pieces) % 2


@dataclass(frozen=True)
class _Ending:
    """How a set-up ends: with `staged` built, the piece on `start` jumps to `land` over the
    spare piece between them, then the plain `steps` (origin, target) are played."""

    staged: Mapping[int, str]
    start: int
    land: int
    steps: tuple[tuple[int, int], ...]


def _endings(target: Position, rng: random.Random, attempt: int) -> Iterator[_Ending]:
    """Candidate endings for building `target`, those with the fewest steps after the jump first.

    Searches backwards from `target`: up to `_MAX_STEPS_AFTER_LAST_CAPTURE` steps are taken
    back, then a capture is taken back (a piece on `land` returns to `start` and a spare man
    reappears between them).
    """
    counts = {c: sum(1 for p in target.pieces.values() if p.lower() == c) for c in "bw"}
    frontier: list[tuple[dict[int, str], tuple[tuple[int, int], ...]]] = [(dict(target.pieces), ())]
    seen = {frozenset(target.pieces.items())}
    for depth in range(_MAX_STEPS_AFTER_LAST_CAPTURE + 1):
        found: list[_Ending] = []
        for board, back in frontier:
            steps = tuple((to, origin) for origin, to in reversed(back))
            for land, piece in sorted(board.items()):
                for direction in range(4):
                    victim, start = _STEP[land][direction], _JUMP[land][direction]
                    if not start or victim in board or start in board:
                        continue
                    if _crowned(piece, start) != piece:
                        continue  # a man never stands on its crowning row
                    for colour in "bw":
                        if counts[colour] >= 12 or _crowned(colour, victim) != colour:
                            continue
                        staged = dict(board)
                        del staged[land]
                        staged[start] = piece
                        staged[victim] = colour
                        found.append(_Ending(staged, start, land, steps))
        if attempt:
            rng.shuffle(found)
        yield from found
        if depth == _MAX_STEPS_AFTER_LAST_CAPTURE:
            return
        expanded: list[tuple[dict[int, str], tuple[tuple[int, int], ...]]] = []
        for board, back in frontier:
            for square, piece in sorted(board.items()):
                for nxt in _STEP[square]:
                    if not nxt or nxt in board or _crowned(piece, nxt) != piece:
                        continue
                    moved = dict(board)
                    del moved[square]
                    moved[nxt] = piece
                    key = frozenset(moved.items())
                    if key not in seen:
                        seen.add(key)
                        expanded.append((moved, (*back, (square, nxt))))
        if len(expanded) > _MAX_ENDING_FRONTIER:
            expanded = rng.sample(expanded, _MAX_ENDING_FRONTIER)
        frontier = expanded


def _plan_setup(target: Position, rng: random.Random, attempt: int) -> _Setup | None:
    """One attempt at a set-up plan for `target` (attempt 0 deterministic, then randomised)."""
    want = 0 if target.side == BLACK else 1

    def fill_order(pieces: Mapping[int, str]) -> list[int]:
        def depth(square: int) -> int:
            row = square_to_rc(square)[0]
            return row if pieces[square].lower() == "b" else 7 - row

        # Kings first (a man must reach the far row to be crowned, which gets harder as the
        # board fills), then the squares farthest from their own side; later attempts shuffle.
        def key(square: int) -> tuple[bool, float]:
            noise = rng.random() * 8 if attempt else 0.0
            kings_first = attempt % 3 != 2
            return (kings_first and not _is_king(pieces[square]), -depth(square) + noise)

        return sorted(pieces, key=key)

    if len(target.pieces) == 24:  # no capture possible: plain steps, parity is forced
        plan = _Setup(board=dict(parse_fen(START_FEN).pieces))
        if plan.fill(target.pieces, fill_order(target.pieces)) and plan.player == want:
            return plan
        return None
    tried = 0
    for ending in _endings(target, rng, attempt):
        staged = ending.staged
        need = {c: sum(1 for p in staged.values() if p.lower() == c) for c in "bw"}

        def parity_ok(plan: _Setup, staged: Mapping[int, str] = staged, after: int = 0) -> bool:
            # Everything after the removals is steps (each hands the move over; their number
            # has the parity of the change in the row sum) except the final jump, which
            # hands the move over too.
            steps = (_row_parity(staged) - _row_parity(plan.board)) % 2
            return plan.player ^ steps ^ 1 ^ after == want

        check = functools.partial(parity_ok, after=len(ending.steps) % 2)
        plan = _Setup(board=dict(parse_fen(START_FEN).pieces))
        if len(plan.board) == len(staged) + 1 and not check(plan):
            continue  # the parity cannot be changed without a removal before the last one
        tried += 1
        if tried > _ENDINGS_PER_ATTEMPT:
            break
        ok = True
        while ok and len(plan.board) > len(staged):
            colours = {c for c in "bw" if len(plan.free_pieces(c)) > need[c]}
            last = len(plan.board) == len(staged) + 1
            ok = plan.remove_one(colours, check if last else None)
        if not ok or not check(plan) or not plan.fill(staged, fill_order(staged)):
            continue
        plan.jump(ending.start, ending.land)
        if plan.pending_jump:
            continue
        for origin, to in ending.steps:
            plan.step(origin, to)
        if plan.board == dict(target.pieces) and plan.player == want:
            return plan
    # Fallback when no ending fits between the target's pieces: capture every spare first,
    # then place all the pieces (the no-capture counter then ends at the number of steps;
    # `openspiel_disagrees_with_rules` reports the cases where that reaches 40).
    plan = _Setup(board=dict(parse_fen(START_FEN).pieces))
    need = {c: sum(1 for p in target.pieces.values() if p.lower() == c) for c in "bw"}

    def loose_parity_ok(plan: _Setup) -> bool:
        steps = (_row_parity(target.pieces) - _row_parity(plan.board)) % 2
        return plan.player ^ steps == want

    while len(plan.board) > len(target.pieces):
        colours = {c for c in "bw" if len(plan.free_pieces(c)) > need[c]}
        last = len(plan.board) == len(target.pieces) + 1
        if not plan.remove_one(colours, loose_parity_ok if last else None):
            return None
    if not loose_parity_ok(plan) or not plan.fill(target.pieces, fill_order(target.pieces)):
        return None
    return None if plan.pending_jump else plan


def _validate_for_openspiel(position: Position) -> str | None:
    """Why open-spiel cannot hold `position`, or None if it can."""
    for colour in "bw":
        if sum(1 for p in position.pieces.values() if p.lower() == colour) > 12:
            return f"more than 12 {'Black' if colour == 'b' else 'White'} pieces"
    for square, piece in position.pieces.items():
        if not _is_king(piece) and square_to_rc(square)[0] == _crown_row(piece):
            return f"a man on its own crowning row (square {square})"
    return None


@functools.lru_cache(maxsize=8192)
def _setup_plan(fen: str) -> tuple[int, ...] | str:
    """The set-up actions for canonical `fen`, or the reason there are none (cached)."""
    target = parse_fen(fen)
    if fen == START_FEN:
        return ()
    reason = _validate_for_openspiel(target)
    if reason is not None:
        return f"open-spiel cannot hold {fen!r}: {reason}"
    rng = random.Random(fen)
    best: tuple[int, ...] | None = None
    for attempt in range(_MAX_SETUP_ATTEMPTS):
        plan = _plan_setup(target, rng, attempt)
        if plan is not None and (best is None or plan.no_capture < _setup_no_capture_count(best)):
            best = tuple(plan.actions)
            if plan.no_capture <= _GOOD_ENOUGH_NO_CAPTURE:
                break
        if best is not None and attempt >= _SETUP_ATTEMPTS_FOR_COUNTER_0:
            break
    if best is None:
        return f"could not build {fen!r} in open-spiel (no set-up plan found)"
    return best


def openspiel_setup_actions(fen: str) -> tuple[int, ...]:
    """Return open-spiel actions that build `fen` from the start (see `openspiel_state_from_fen`).

    Deterministic for a given position (cached). Raises ValueError if the position cannot be
    built: a man on its own crowning row, more than 12 pieces a side, all 24 pieces with the
    side to move of the wrong parity, or (rarely, for crowded made-up positions) no plan found.
    """
    plan = _setup_plan(canonical_fen(fen))
    if isinstance(plan, str):
        raise ValueError(plan)
    return plan


def openspiel_setup_no_capture_count(fen: str) -> int:
    """The no-capture counter (open-spiel's `moves_without_capture_`) of the built `fen`.

    0 for most positions; small for crowded ones (with all 24 pieces it is the number of set-up
    steps). open-spiel has no legal action once it reaches 40. Raises like the set-up.
    """
    return _setup_no_capture_count(openspiel_setup_actions(fen))


def openspiel_state_from_fen(fen: str) -> Any:
    """Return a fresh open-spiel checkers state holding the position `fen`.

    open-spiel's Python API cannot load a position, so the state is reached from the start by
    `apply_action` with actions that are not legal moves (open-spiel does not check): one-step
    moves of any piece in any direction, and jumps that remove the surplus pieces. The set-up
    ends with its last capture (no-capture counter 0, no multi-jump pending) or a few steps
    after it (see `openspiel_setup_no_capture_count`). The board and side to move are checked
    against the FEN, so its legal moves are those of the FEN under open-spiel's rules.
    Raises ValueError for a position that cannot be built (see `openspiel_setup_actions`).
    """
    target = parse_fen(fen)
    actions = openspiel_setup_actions(fen)
    state = openspiel_game().new_initial_state()
    for action in actions:
        state.apply_action(action)
    board = _openspiel_board(state)
    if board != dict(target.pieces):
        raise AssertionError(
            f"open-spiel set-up of {fen!r} produced {format_fen(Position(target.side, board))}"
        )
    if not state.is_terminal():
        want = 0 if target.side == BLACK else 1
        if state.current_player() != want:
            raise AssertionError(f"open-spiel set-up of {fen!r} has the wrong side to move")
    return state


def _setup_no_capture_count(actions: tuple[int, ...]) -> int:
    count = 0
    for action in actions:
        count = 0 if action & 1 else count + 1
    return count


def openspiel_legal_moves(fen: str) -> list[str]:
    """Return open-spiel's legal moves for `fen` in standard notation, sorted."""
    return [text for text, _ in openspiel_complete_moves(openspiel_state_from_fen(fen))]


def openspiel_perft(fen: str, depth: int) -> int:
    """Count whole-move paths of `depth` plies from `fen` in open-spiel (multi-jump = 1 ply).

    Exact for the rules as long as open-spiel's 40-action no-capture draw cannot trigger:
    raises ValueError when depth + `openspiel_setup_no_capture_count(fen)` exceeds 40.
    """
    if depth < 0:
        raise ValueError("depth must be >= 0")
    counter = openspiel_setup_no_capture_count(fen)
    if counter + depth > _OPENSPIEL_NO_CAPTURE_LIMIT:
        raise ValueError(
            f"open-spiel's no-capture draw could cut perft({depth}) short: the set-up of {fen!r}"
            f" starts {counter} actions after its last capture"
        )
    return _openspiel_perft_state(openspiel_state_from_fen(fen), depth)


def _openspiel_count_moves(state: Any, player: int) -> int:
    count = 0
    for action in state.legal_actions():
        if action & 1:
            child = state.child(action)
            if child.current_player() == player:
                count += _openspiel_count_moves(child, player)
                continue
        count += 1
    return count


def _openspiel_perft_state(state: Any, depth: int) -> int:
    if depth == 0:
        return 1
    if state.is_terminal():
        return 0
    player = state.current_player()
    if depth == 1:
        return _openspiel_count_moves(state, player)
    return _openspiel_perft_children(state, depth, player)


def _openspiel_perft_children(state: Any, depth: int, player: int) -> int:
    total = 0
    for action in state.legal_actions():
        child = state.child(action)
        if child.current_player() == player:  # a multi-jump goes on: still the same ply
            total += _openspiel_perft_children(child, depth, player)
        else:
            total += _openspiel_perft_state(child, depth - 1)
    return total


def openspiel_random_playout_positions(
    seed: int, n_positions: int, *, max_plies: int = 400
) -> Iterator[tuple[str, list[str]]]:
    """Yield `n_positions` (fen, sorted legal moves) pairs from random open-spiel games.

    Games start from the standard position and pick a uniformly random whole move each ply;
    every position before a move is yielded, and so is a final position whose side to move
    has no move (its list is empty: that side has lost). Games that reach open-spiel's
    40-action no-capture draw stop without yielding the drawn position (its empty move list
    would disagree with the rules), as do games longer than `max_plies`.
    """
    rng = random.Random(seed)
    yielded = 0
    game = openspiel_game()
    while yielded < n_positions:
        state = game.new_initial_state()
        no_capture = 0
        for _ply in range(max_plies):
            if no_capture >= _OPENSPIEL_NO_CAPTURE_LIMIT:
                break
            if state.is_terminal():
                loser = 0 if state.returns()[0] < 0 else 1
                yield openspiel_fen(state, BLACK if loser == 0 else WHITE), []
                yielded += 1
                break
            moves = openspiel_complete_moves(state)
            yield openspiel_fen(state), [text for text, _ in moves]
            yielded += 1
            if yielded >= n_positions:
                return
            _, actions = moves[rng.randrange(len(moves))]
            for action in actions:
                state.apply_action(action)
                no_capture = 0 if action & 1 else no_capture + 1


def openspiel_disagrees_with_rules(fen: str, plies_since_capture: int = 0) -> bool:
    """True if open-spiel's legal moves for `fen` are known to differ from checkers.md's rules.

    Move generation agrees everywhere; what differs is the draw rule: open-spiel has no legal
    action once 40 plies (ANY plies, man moves included) have passed without a capture. So this
    is True when `plies_since_capture` (the history the caller knows of) is 40 or more, when
    the set-up of `fen` itself ends 40 or more actions after its last capture, and when open-spiel
    cannot hold or build `fen` at all (see `openspiel_setup_actions`; none of those arise in a
    real game), so that differential tests skip exactly these positions.
    """
    if plies_since_capture >= _OPENSPIEL_NO_CAPTURE_LIMIT:
        return True
    try:
        counter = openspiel_setup_no_capture_count(fen)
    except ValueError:
        return True
    return counter >= _OPENSPIEL_NO_CAPTURE_LIMIT


# --------------------------------------------------------------------------------------------
# pydraughts
# --------------------------------------------------------------------------------------------


def pydraughts_available() -> bool:
    """True when `draughts` (pydraughts) can be imported."""
    try:
        import draughts  # noqa: F401
    except ImportError:
        return False
    return True


def pydraughts_board(fen: str) -> Any:
    """Return a `draughts.Board("english", ...)` for `fen` (canonicalised first)."""
    from draughts import Board

    return Board("english", canonical_fen(fen))


def _pydraughts_moves(board: Any) -> list[tuple[str, Any]]:
    out = [
        (_format_path(list(move.steps_move), bool(move.has_captures)), move)
        for move in board.legal_moves()
    ]
    out.sort(key=lambda item: item[0])
    return out


def pydraughts_legal_moves(fen: str) -> list[str]:
    """Return pydraughts' legal moves for `fen` in standard notation, sorted."""
    return [text for text, _ in _pydraughts_moves(pydraughts_board(fen))]


def pydraughts_perft(fen: str, depth: int) -> int:
    """Count whole-move paths of `depth` plies from `fen` with pydraughts (slow: ~1,500/s)."""
    if depth < 0:
        raise ValueError("depth must be >= 0")

    def walk(board: Any, left: int) -> int:
        moves = board.legal_moves()
        if left == 1:
            return len(moves)
        total = 0
        for move in moves:
            board.push(move)
            total += walk(board, left - 1)
            board.pop()
        return total

    return 1 if depth == 0 else walk(pydraughts_board(fen), depth)


def pydraughts_fen(board: Any) -> str:
    """Return the canonical PDN FEN of a pydraughts English board."""
    return canonical_fen(board.fen)


def pydraughts_random_playout_positions(
    seed: int, n_positions: int, *, max_plies: int = 300
) -> Iterator[tuple[str, list[str]]]:
    """Yield `n_positions` (fen, sorted legal moves) pairs from random pydraughts games.

    Uniform random whole moves from the start; a game stops at a win (the final position is
    yielded with an empty move list), a pydraughts draw (threefold repetition or 80 non-capture
    king plies; not yielded) or after `max_plies`.
    """
    rng = random.Random(seed)
    yielded = 0
    while yielded < n_positions:
        board = pydraughts_board(START_FEN)
        for _ply in range(max_plies):
            moves = _pydraughts_moves(board)
            if not moves:
                yield pydraughts_fen(board), []
                yielded += 1
                break
            if board.is_over():
                break
            yield pydraughts_fen(board), [text for text, _ in moves]
            yielded += 1
            if yielded >= n_positions:
                return
            board.push(moves[rng.randrange(len(moves))][1])


def pydraughts_disagrees_with_rules(fen: str) -> bool:
    """True if pydraughts' legal moves for `fen` are known to differ from checkers.md's rules.

    None found: legal moves from a FEN agree with the rules for every position tried. (Its
    draw rules equal checkers.md's; game history is not part of a FEN.) Malformed FENs return
    True so that tests skip them.
    """
    try:
        parse_fen(fen)
    except ValueError:
        return True
    return False


# --------------------------------------------------------------------------------------------
# Both
# --------------------------------------------------------------------------------------------


def oracle_legal_moves(fen: str) -> dict[str, list[str]]:
    """Return {"openspiel": moves, "pydraughts": moves} for the installed libraries."""
    out: dict[str, list[str]] = {}
    if openspiel_available() and not openspiel_disagrees_with_rules(fen):
        out["openspiel"] = openspiel_legal_moves(fen)
    if pydraughts_available() and not pydraughts_disagrees_with_rules(fen):
        out["pydraughts"] = pydraughts_legal_moves(fen)
    return out
