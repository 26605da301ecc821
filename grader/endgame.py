"""The "Endgame solver" profile: check a student's line from a puzzle to red's fastest win.

A puzzle is a course-format board (docs/GAMES.md, "Course board format"), red
to move. The student's program writes the sequence of states from the puzzle to the end of the
game, boards separated by blank lines. `check_solution` judges that text against Arena's rules
(games.checkers) and Arena's exact solver (bots.solve); it runs no student code.

Scoring: a `PuzzleVerdict` has four components, each worth `WEIGHTS[name]` of the puzzle's score
(a number in [0, 1]); a component earns all of its weight or none.

- ``legal line`` (0.25): the first state is the puzzle and every transition is one legal move of
  the side to move (red at even plies, black at odd plies): captures are compulsory, a
  multi-jump is completed, crowning ends the move, and the game is not already over.
- ``reaches a win`` (0.25): the line is legal and its last state is a win for red (black to
  move with no legal move or no pieces).
- ``optimal length`` (0.25): the line wins in exactly the number of plies of the fastest forced
  win (red winning as fast as possible, black resisting as long as possible).
- ``black resists`` (0.25): the line wins and every black move is among those that delay the
  loss longest.

A line that cannot be read (malformed board, garbage, empty file) scores 0 with the reason.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from bots.solve import Solver
from games.checkers import (
    BIT_OF_SQUARE,
    WHITE,
    Checkers,
    CheckersMove,
    CheckersState,
    format_board,
    parse_board,
    square_at,
    square_column,
    square_row,
)

LEGAL_LINE: Final = "legal line"
REACHES_WIN: Final = "reaches a win"
OPTIMAL_LENGTH: Final = "optimal length"
BLACK_RESISTS: Final = "black resists"
WEIGHTS: Final = {LEGAL_LINE: 0.25, REACHES_WIN: 0.25, OPTIMAL_LENGTH: 0.25, BLACK_RESISTS: 0.25}
"""The share of a puzzle's score earned by each component; the shares sum to 1."""

MAX_STATES: Final = 400
"""More boards than any puzzle line needs: a longer output is rejected before it is checked."""
DEFAULT_MAX_PLIES: Final = 30
"""How deep the solver looks for a proof (the puzzle's win and each judged move)."""

BOARD_CHARS: Final = frozenset(".rbRB")
SIDE_NAMES: Final = ("black", "red")  # indexed by games.checkers colour: Black 0, White (red) 1


class OutputError(ValueError):
    """A student's output that is not a sequence of course-format boards.

    `state` is the 1-based number of the board, `line` the 1-based line of the file (None when
    the whole file is at fault), `reason` the problem in words.
    """

    def __init__(self, reason: str, state: int | None = None, line: int | None = None) -> None:
        self.reason = reason
        self.state = state
        self.line = line
        where = []
        if state is not None:
            where.append(f"state {state}")
        if line is not None:
            where.append(f"line {line}")
        prefix = f"{', '.join(where)}: " if where else ""
        super().__init__(prefix + reason)


class PuzzleError(ValueError):
    """A puzzle that the grader cannot use (not a board, or no forced win for red)."""


@dataclass(frozen=True, slots=True)
class Board:
    """One course-format board as read from a file: 8 rows of 8 characters, row 0 at the top.

    `line` is the 1-based line of the file where the board starts.
    """

    rows: tuple[str, ...]
    line: int = 1

    @property
    def text(self) -> str:
        """The board as 8 lines (no trailing newline), comparable with `format_board`."""
        return "\n".join(self.rows)


@dataclass(slots=True)
class PuzzleVerdict:
    """The judgement of one puzzle: the earned components, the line's facts, and the reasons.

    `plies` is the length of the student's line (None if it could not be read), `optimal_plies`
    the length of the fastest forced win. `messages` explain every point lost (and what was
    right); `score` is the weighted sum of `components` (see the module docstring).
    """

    components: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(WEIGHTS, False))
    plies: int | None = None
    optimal_plies: int | None = None
    messages: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """The puzzle's score in [0, 1]."""
        return sum(WEIGHTS[name] for name, earned in self.components.items() if earned)

    @property
    def is_full_marks(self) -> bool:
        """True when every component is earned."""
        return all(self.components.values())


def read_states(text: str) -> list[Board]:
    """Read the boards of an output file: course-format boards separated by blank lines.

    Raises OutputError (with the state number and line) for an empty file, a board without 8
    rows of 8 characters, an unknown character, a piece on a light square, or an uncrowned man
    on its far row.
    """
    if "\x00" in text:
        raise OutputError("the output contains NUL bytes: it is not a text file of boards")
    groups: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            if current:
                groups.append((start, current))
                current = []
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        groups.append((start, current))
    if not groups:
        raise OutputError(
            "the output file is empty: expected the puzzle's board, then one board after each "
            "move, separated by blank lines"
        )
    if len(groups) > MAX_STATES:
        raise OutputError(f"{len(groups)} boards: more than the {MAX_STATES} any puzzle needs")
    return [_read_board(rows, index, start) for index, (start, rows) in enumerate(groups, 1)]


def _read_board(rows: list[str], state: int, start: int) -> Board:
    if len(rows) != 8:
        hint = (
            " (separate boards with a blank line)" if len(rows) > 8 and len(rows) % 8 == 0 else ""
        )
        raise OutputError(
            f"a board has 8 rows of 8 characters, this one has {len(rows)} rows{hint}",
            state,
            start,
        )
    for r, row in enumerate(rows):
        line = start + r
        if len(row) != 8:
            raise OutputError(
                f"row {r} has {len(row)} characters, expected 8: {row[:40]!r}", state, line
            )
        for c, char in enumerate(row):
            if char not in BOARD_CHARS:
                raise OutputError(
                    f"row {r} column {c}: unexpected {char!r} (use . r b R B)", state, line
                )
            if char != "." and (r + c) % 2 == 0:
                raise OutputError(
                    f"row {r} column {c}: a piece on a light square (pieces stand where "
                    "row+column is odd)",
                    state,
                    line,
                )
            if char == "r" and r == 0:
                raise OutputError(
                    f"row 0 column {c}: a red man that reaches row 0 is crowned (R)", state, line
                )
            if char == "b" and r == 7:
                raise OutputError(
                    f"row 7 column {c}: a black man that reaches row 7 is crowned (B)",
                    state,
                    line,
                )
    return Board(tuple(rows), start)


def describe_move(move: CheckersMove) -> str:
    """Return a move in course coordinates: (row,column) squares joined by - or x."""
    sep = "x" if move.is_capture else "-"
    return sep.join(f"({square_row(s)},{square_column(s)})" for s in move.path)


def _describe_moves(moves: Sequence[CheckersMove]) -> str:
    return ", ".join(describe_move(m) for m in sorted(moves, key=lambda m: m.path))


def check_solution(
    puzzle_text: str,
    output_text: str,
    solver: Solver | None = None,
    *,
    max_plies: int = DEFAULT_MAX_PLIES,
) -> PuzzleVerdict:
    """Judge a student's output for one puzzle (red to move); see the module docstring.

    Raises PuzzleError when the puzzle is not a board or red has no forced win within
    `max_plies` (the grader's fault, never the student's). Pass one `Solver` for a whole suite
    to share its search table.
    """
    solver = solver or Solver()
    game = Checkers()
    try:
        puzzle = parse_board(game, puzzle_text, "red")
    except ValueError as error:
        raise PuzzleError(f"the puzzle is not a course board: {error}") from error
    solution = solver.solve(puzzle, max_plies=max_plies)
    if solution.value != "win" or solution.plies is None:
        raise PuzzleError(f"red has no forced win within {max_plies} plies in this puzzle")
    verdict = PuzzleVerdict(optimal_plies=solution.plies)
    try:
        boards = read_states(output_text)
    except OutputError as error:
        verdict.messages.append(f"cannot read the output: {error}")
        return verdict
    verdict.plies = len(boards) - 1
    if boards[0].text != format_board(puzzle):
        verdict.messages.append(
            f"state 1 (line {boards[0].line}) is not the puzzle: the output must start with "
            "the input board"
        )
        return verdict
    line = _follow(puzzle, boards, verdict)
    if line is None:
        return verdict
    verdict.components[LEGAL_LINE] = True
    verdict.messages.append(f"every transition of the {len(line) - 1}-ply line is legal")
    _judge_end(line, verdict)
    if not verdict.components[REACHES_WIN]:
        return verdict
    _judge_length(line, solution.plies, solver, verdict)
    _judge_black(line, solver, verdict)
    return verdict


def _follow(
    puzzle: CheckersState, boards: list[Board], verdict: PuzzleVerdict
) -> list[tuple[CheckersState, CheckersMove | None]] | None:
    """Replay the boards as moves; return (state, move that led to it), or None if illegal."""
    line: list[tuple[CheckersState, CheckersMove | None]] = [(puzzle, None)]
    state = puzzle
    for index, board in enumerate(boards[1:], start=1):
        where = f"ply {index} (state {index + 1}, line {board.line})"
        outcome = state.outcome()
        if outcome is not None:
            verdict.messages.append(
                f"{where}: the game was already over ({_reason(outcome.reason)}), yet the "
                "output continues"
            )
            return None
        step = next(
            (
                (move, child)
                for move in state.legal_moves()
                if format_board(child := state.apply_unchecked(move)) == board.text
            ),
            None,
        )
        if step is None:
            verdict.messages.append(f"{where}: {_explain_illegal(state, board)}")
            return None
        move, state = step
        line.append((state, move))
    return line


def _explain_illegal(state: CheckersState, board: Board) -> str:
    """Say why `board` does not follow `state` by one legal move of the side to move."""
    side = SIDE_NAMES[state.turn]
    other = SIDE_NAMES[1 - state.turn]
    legal = state.legal_moves()
    listed = f"legal moves for {side}: {_describe_moves(legal)}"
    if board.text == format_board(state):
        return f"the board did not change; {side} must move ({listed})"
    before = _pieces(format_board(state))
    after = _pieces(board.text)
    mine = "rR" if state.turn == WHITE else "bB"
    changed = [sq for sq in before if before[sq] != after[sq]]
    moved_mine = any(before[sq] in mine or after[sq] in mine for sq in changed)
    moved_theirs = any(after[sq] not in mine and after[sq] != "." for sq in changed)
    if not moved_mine or moved_theirs:
        return f"it is {side}'s turn, but {other}'s pieces moved or appeared ({listed})"
    for move in legal:
        for end in range(2, len(move.path)):
            if _partial_jump(state, move.path[:end]) == board.text:
                return (
                    f"incomplete multi-jump: after {describe_move_path(move.path[:end])} the "
                    f"piece can jump again and must ({listed})"
                )
    if state.has_capture():
        captured = sum(1 for sq in before if before[sq] != "." and before[sq] not in mine) - sum(
            1 for sq in after if after[sq] != "." and after[sq] not in mine
        )
        if captured <= 0:
            return f"a capture is available and captures are compulsory ({listed})"
    return f"not one legal move of {side} ({listed})"


def describe_move_path(path: Sequence[int]) -> str:
    """Return a jump path (squares 1-32) in course coordinates joined by x."""
    return "x".join(f"({square_row(s)},{square_column(s)})" for s in path)


def _pieces(text: str) -> dict[tuple[int, int], str]:
    rows = text.splitlines()
    return {(r, c): rows[r][c] for r in range(8) for c in range(8)}


def _partial_jump(state: CheckersState, path: Sequence[int]) -> str:
    """The board after the first jumps of a multi-jump (no crowning: it happens at the end)."""
    captured = 0
    for a, b in itertools.pairwise(path):
        middle = square_at(
            (square_row(a) + square_row(b)) // 2, (square_column(a) + square_column(b)) // 2
        )
        assert middle is not None
        captured |= 1 << BIT_OF_SQUARE[middle]
    frm = 1 << BIT_OF_SQUARE[path[0]]
    to = 1 << BIT_OF_SQUARE[path[-1]]
    kings = state.kings & ~captured
    if kings & frm:
        kings ^= frm ^ to
    if state.turn == WHITE:
        white, black = state.white ^ frm ^ to, state.black & ~captured
    else:
        black, white = state.black ^ frm ^ to, state.white & ~captured
    return format_board(CheckersState(state.game, black, white, kings, 1 - state.turn))


def _reason(text: str) -> str:
    """Name Arena's colours as the course does (White is red)."""
    return text.replace("White", "red").replace("Black", "black")


def _judge_end(
    line: list[tuple[CheckersState, CheckersMove | None]], verdict: PuzzleVerdict
) -> None:
    final = line[-1][0]
    plies = len(line) - 1
    outcome = final.outcome()
    if outcome is None:
        side = SIDE_NAMES[final.turn]
        verdict.messages.append(
            f"the line stops after {plies} plies but the game is not over: {side} still has "
            f"legal moves ({_describe_moves(final.legal_moves())})"
        )
    elif outcome.winner == WHITE:
        verdict.components[REACHES_WIN] = True
        verdict.messages.append(f"the line ends in a win for red ({_reason(outcome.reason)})")
    elif outcome.winner is None:
        verdict.messages.append(f"the line ends in a {_reason(outcome.reason)}, not a red win")
    else:
        verdict.messages.append(f"the line ends in a loss for red ({_reason(outcome.reason)})")


def _judge_length(
    line: list[tuple[CheckersState, CheckersMove | None]],
    optimal: int,
    solver: Solver,
    verdict: PuzzleVerdict,
) -> None:
    plies = len(line) - 1
    if plies == optimal:
        verdict.components[OPTIMAL_LENGTH] = True
        verdict.messages.append(f"the line wins in {plies} plies, the fastest forced win")
        return
    if plies < optimal:
        verdict.messages.append(
            f"your line wins in {plies} plies, sooner than the {optimal} plies of the fastest "
            "forced win: black did not resist"
        )
        return
    verdict.messages.append(
        f"your line wins in {plies} plies; the fastest forced win takes {optimal}"
    )
    for ply in range(0, plies, 2):
        state = line[ply][0]
        played = line[ply + 1][1]
        assert played is not None
        solution = solver.solve(state, max_plies=plies - ply)
        if solution.value == "win" and played not in solution.best_moves:
            fastest = _describe_moves(_checkers_moves(solution.best_moves))
            verdict.messages.append(
                f"ply {ply + 1}: red's move {describe_move(played)} is not on a fastest win "
                f"(in {solution.plies} plies by {fastest})"
            )
            return


def _judge_black(
    line: list[tuple[CheckersState, CheckersMove | None]],
    solver: Solver,
    verdict: PuzzleVerdict,
) -> None:
    """Check that every black move delays the loss longest.

    A black move that leaves red a win in K plies resists longest when black's position is lost
    in exactly K + 1; a move whose position red cannot be shown to win within the rest of the
    line shortens nothing measurable (a later black move gave the game away).
    """
    plies = len(line) - 1
    for ply in range(1, plies, 2):
        state = line[ply][0]
        child, played = line[ply + 1]
        assert played is not None
        if child.is_terminal():
            after = 0
        else:
            reply = solver.solve(child, max_plies=plies - ply - 1)
            if reply.value != "win" or reply.plies is None:
                continue
            after = reply.plies
        lost = solver.solve(state, max_plies=after + 1)
        if lost.value == "loss" and lost.plies == after + 1:
            continue
        better = [
            m
            for m in state.legal_moves()
            if m != played and _resists_longer(state.apply_unchecked(m), after, solver)
        ]
        verdict.messages.append(
            f"ply {ply + 1}: black's move {describe_move(played)} loses in {after + 1} plies; "
            f"black resists longer with {_describe_moves(better)}"
        )
        return
    verdict.components[BLACK_RESISTS] = True
    verdict.messages.append("every black move resists as long as possible")


def _resists_longer(child: CheckersState, after: int, solver: Solver) -> bool:
    """True when red cannot win from `child` within `after` plies."""
    if child.is_terminal():
        return False
    reply = solver.solve(child, max_plies=after)
    return reply.value != "win"


def _checkers_moves(moves: Sequence[object]) -> list[CheckersMove]:
    return [m for m in moves if isinstance(m, CheckersMove)]


def make_puzzles(
    rng: random.Random,
    count: int,
    *,
    min_plies: int = 3,
    max_plies: int = 9,
    red_pieces: int = 2,
    black_pieces: int = 2,
    solver: Solver | None = None,
    max_tries: int = 10_000,
) -> list[tuple[str, int]]:
    """Return `count` puzzles (course board, red to move; plies of the fastest forced win).

    Positions are drawn from `rng` (kings and men on random dark squares, no man on its crown
    row, no capture for red on the first move) and kept when the solver proves a red win in
    `min_plies` to `max_plies` plies. Raises PuzzleError if `max_tries` draws are not enough.
    """
    solver = solver or Solver()
    game = Checkers()
    puzzles: list[tuple[str, int]] = []
    seen: set[str] = set()
    for _ in range(max_tries):
        if len(puzzles) == count:
            return puzzles
        state = _random_position(rng, game, red_pieces, black_pieces)
        text = format_board(state)
        if text in seen or state.is_terminal() or state.has_capture():
            continue
        seen.add(text)
        solution = solver.solve(state, max_plies=max_plies)
        if solution.value == "win" and solution.plies is not None and solution.plies >= min_plies:
            puzzles.append((text, solution.plies))
    if len(puzzles) == count:
        return puzzles
    raise PuzzleError(f"found {len(puzzles)} of {count} puzzles in {max_tries} draws")


def _random_position(
    rng: random.Random, game: Checkers, red_pieces: int, black_pieces: int
) -> CheckersState:
    squares = rng.sample(range(1, 33), red_pieces + black_pieces)
    black = white = kings = 0
    for index, square in enumerate(squares):
        bit = 1 << BIT_OF_SQUARE[square]
        red = index < red_pieces
        row = square_row(square)
        if rng.random() < 0.5 or row == (0 if red else 7):
            kings |= bit
        if red:
            white |= bit
        else:
            black |= bit
    return CheckersState(game, black, white, kings, WHITE)
