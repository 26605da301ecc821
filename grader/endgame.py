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
    square_row,
)
from grader.course import (
    Board,
    OutputError,
    describe_outcome,
    explain_illegal,
    format_move,
    format_moves,
    illegal_board,
    read_states,
    side_to_move,
)

LEGAL_LINE: Final = "legal line"
REACHES_WIN: Final = "reaches a win"
OPTIMAL_LENGTH: Final = "optimal length"
BLACK_RESISTS: Final = "black resists"
WEIGHTS: Final = {LEGAL_LINE: 0.25, REACHES_WIN: 0.25, OPTIMAL_LENGTH: 0.25, BLACK_RESISTS: 0.25}
"""The share of a puzzle's score earned by each component; the shares sum to 1."""

DEFAULT_MAX_PLIES: Final = 30
"""How deep the solver looks for a proof (the puzzle's win and each judged move)."""


class PuzzleError(ValueError):
    """A puzzle that the grader cannot use (not a board, or no forced win for red)."""


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
                f"{where}: the game was already over ({describe_outcome(state)}), yet the "
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
            verdict.messages.append(f"{where}: {explain_illegal(illegal_board(state, board.text))}")
            return None
        move, state = step
        line.append((state, move))
    return line


def _judge_end(
    line: list[tuple[CheckersState, CheckersMove | None]], verdict: PuzzleVerdict
) -> None:
    final = line[-1][0]
    plies = len(line) - 1
    outcome = final.outcome()
    if outcome is None:
        side = side_to_move(final)
        verdict.messages.append(
            f"the line stops after {plies} plies but the game is not over: {side} still has "
            f"legal moves ({format_moves(final.legal_moves())})"
        )
    elif outcome.winner == WHITE:
        verdict.components[REACHES_WIN] = True
        verdict.messages.append(f"the line ends in a win for red ({describe_outcome(final)})")
    elif outcome.winner is None:
        verdict.messages.append(f"the line ends in a {describe_outcome(final)}, not a red win")
    else:
        verdict.messages.append(f"the line ends in a loss for red ({describe_outcome(final)})")


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
            fastest = format_moves(_checkers_moves(solution.best_moves))
            verdict.messages.append(
                f"ply {ply + 1}: red's move {format_move(played)} is not on a fastest win "
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
            f"ply {ply + 1}: black's move {format_move(played)} loses in {after + 1} plies; "
            f"black resists longer with {format_moves(better)}"
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
