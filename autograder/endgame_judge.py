"""Judge a student's line for one endgame puzzle against the exact value of every position.

`check_solution` judges the text of the boards against Arena's rules (games.checkers); it runs
no student code.

Every move is judged against the exact value of the position it is played from, the course
board alone (no draw rules, as the assignment has none): the endgame database
(bots.egdb.probe.DatabaseSolver) where it is built and holds the position, Arena's proof search
(bots.solvers.solve) otherwise; both give the same answers. A red move keeps the fastest win when it
leaves black lost in one ply less than red's fastest win from there; a black move is a best
defence when it leaves red's fastest win one ply shorter than black's longest resistance. After
a black mistake red's moves are judged from the position it left, against the faster win it
allows: the line is judged on what red could force at each point.

The verdict and its scoring are autograder/endgame_verdict.py's.
"""

from __future__ import annotations

from autograder.course import (
    Board,
    OutputError,
    describe_outcome,
    explain_illegal,
    format_moves,
    illegal_board,
    read_states,
    side_to_move,
)
from autograder.endgame_suite import PuzzleError
from autograder.endgame_verdict import (
    BLACK_RESISTS,
    DEFAULT_MAX_PLIES,
    RED_FASTEST,
    RED_FORCES_WIN,
    WIN_SLACK,
    Misplay,
    PuzzleVerdict,
    Side,
    summarise,
)
from bots.egdb import DatabaseError
from bots.egdb.probe import Database, DatabaseSolver, default_directory
from bots.solvers.solution import Solution
from bots.solvers.solve import Solver
from games.checkers import WHITE, Checkers, CheckersMove, CheckersState, format_board, parse_board

Line = list[tuple[CheckersState, CheckersMove | None]]
"""A replayed line: each state with the move that led to it (None for the puzzle)."""


def exact_solver() -> Solver:
    """Return the solver that judges lines: the endgame database where one is built, else the
    proof search.

    The database is looked for where `arena egdb build` puts it ($ARENA_EGDB_DIR, else the
    user's data directory); a missing or unusable one leaves the proof search, which gives
    the same verdicts, only slower.
    """
    database = built_database()
    return Solver() if database is None else DatabaseSolver(database)


def built_database() -> Database | None:
    """Return the endgame database where `arena egdb build` put it, or None if there is none."""
    try:
        return Database(default_directory())
    except (DatabaseError, OSError):
        return None


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
    to share its search table (`exact_solver()` uses the endgame database when it is built).
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
        verdict.unreadable = True
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
    verdict.legal = True
    verdict.messages.append(f"every transition of the {len(line) - 1}-ply line is legal")
    _judge_end(line, solution.plies, verdict)
    _Judge(solver, line, boards).run(solution.plies, verdict)
    verdict.components[RED_FORCES_WIN] = verdict.wins and verdict.gave_up is None
    verdict.components[RED_FASTEST] = verdict.components[RED_FORCES_WIN] and verdict.red is None
    verdict.components[BLACK_RESISTS] = verdict.components[RED_FORCES_WIN] and verdict.black is None
    summarise(verdict)
    return verdict


def _follow(puzzle: CheckersState, boards: list[Board], verdict: PuzzleVerdict) -> Line | None:
    """Replay the boards as moves; return (state, move that led to it), or None if illegal."""
    line: Line = [(puzzle, None)]
    state = puzzle
    for index, board in enumerate(boards[1:], start=1):
        where = f"ply {index} (state {index + 1}, line {board.line})"
        state = fresh(state)  # the course's rules: a game ends only when a side cannot move
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


def _judge_end(line: Line, optimal: int, verdict: PuzzleVerdict) -> None:
    final = line[-1][0]
    plies = len(line) - 1
    outcome = final.outcome()
    if outcome is None:
        side = side_to_move(final)
        verdict.messages.append(
            f"the line stops after {plies} plies but the game is not over: {side} still has "
            f"legal moves ({format_moves(final.legal_moves())}); a line scores only when it "
            "ends in a red win"
        )
    elif outcome.winner == WHITE:
        verdict.wins = True
        verdict.messages.append(
            f"the line ends in a red win after {plies} plies ({describe_outcome(final)}); "
            f"the puzzle's fastest forced win takes {optimal}"
        )
    elif outcome.winner is None:
        verdict.messages.append(f"the line ends in a {describe_outcome(final)}, not a red win")
    else:
        verdict.messages.append(f"the line ends in a loss for red ({describe_outcome(final)})")


def fresh(state: CheckersState) -> CheckersState:
    """Return the position of `state` alone: the course's board and side to move, no history.

    The assignment has no draw rules, so a position's value is its board's: this is also what
    the endgame database holds.
    """
    return CheckersState(state.game, state.black, state.white, state.kings, state.turn)


class _Judge:
    """Walks a legal line and finds the first misplay of each side (see the module docstring).

    Every search is bounded by a distance already known (the fastest win, the longest
    resistance), except the one that asks whether a slow red move keeps a win at all, bounded
    by the fastest win plus `WIN_SLACK`; after a red move that gives the win up nothing more is
    judged.
    """

    def __init__(self, solver: Solver, line: Line, boards: list[Board]) -> None:
        self.solver = solver
        self.line = line
        self.boards = boards
        self._solved: dict[tuple[int, int, int, int, int], Solution] = {}

    def solve(self, state: CheckersState, bound: int) -> Solution:
        """Return the value of `state` within `bound` plies (each search made once)."""
        key = (state.black, state.white, state.kings, state.turn, bound)
        found = self._solved.get(key)
        if found is None:
            found = self._solved[key] = self.solver.solve(fresh(state), max_plies=max(bound, 1))
        return found

    def run(self, optimal: int, verdict: PuzzleVerdict) -> None:
        """Judge every move of the line, from red's fastest win `optimal` in the puzzle."""
        # `left`: the exact plies to the end from the position about to move, with the winner
        # hurrying and the loser resisting (red's fastest win, or black's longest resistance).
        left = optimal
        for ply in range(1, len(self.line)):
            state = self.line[ply - 1][0]
            child, move = self.line[ply]
            assert move is not None
            if state.turn == WHITE:
                after = self._red(ply, state, child, move, left, verdict)
                if after is None:
                    return
            else:
                after = self._black(ply, state, child, move, left, verdict)
            left = after

    def _red(
        self,
        ply: int,
        state: CheckersState,
        child: CheckersState,
        move: CheckersMove,
        left: int,
        verdict: PuzzleVerdict,
    ) -> int | None:
        """Judge red's move; return black's resistance after it, None once the win is gone."""
        known = self.solve(state, left)
        assert known.value == "win" and known.plies == left, (known.value, known.plies, left)
        if move in known.best_moves:
            return left - 1
        bound = min(left - 1 + WIN_SLACK, DEFAULT_MAX_PLIES)
        reply = self.solve(child, bound)
        kept = reply.plies if reply.value == "loss" else None
        misplay = self._misplay(
            "red", ply, move, state, left, None if kept is None else kept + 1, bound + 1, known
        )
        if verdict.red is None:
            verdict.red = misplay
        if kept is None:
            verdict.gave_up = misplay
        return kept

    def _black(
        self,
        ply: int,
        state: CheckersState,
        child: CheckersState,
        move: CheckersMove,
        left: int,
        verdict: PuzzleVerdict,
    ) -> int:
        """Judge black's move; return red's fastest win after it."""
        known = self.solve(state, left)
        assert known.value == "loss" and known.plies == left, (known.value, known.plies, left)
        if move in known.best_moves:
            return left - 1
        reply = self.solve(child, left - 1)
        assert reply.value == "win" and reply.plies is not None, (reply.value, left)
        if verdict.black is None:
            verdict.black = self._misplay(
                "black", ply, move, state, left, reply.plies + 1, left, known
            )
        return reply.plies

    def _misplay(
        self,
        side: Side,
        ply: int,
        move: CheckersMove,
        state: CheckersState,
        value: int,
        after: int | None,
        bound: int,
        known: Solution,
    ) -> Misplay:
        best = tuple(m for m in known.best_moves if isinstance(m, CheckersMove))
        return Misplay(
            side, ply, self.boards[ply - 1].line, move, fresh(state), value, after, bound, best
        )
