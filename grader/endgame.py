"""The "Endgame solver" profile: run a student's checkers.py on each puzzle, judge its line.

A puzzle (grader.endgame_suite) is a course-format board (docs/GAMES.md, "Course board
format"), red to move. `grade_endgame` runs the student's program once per puzzle in the
sandbox; the program writes the sequence of states from the puzzle to the end of the game,
boards separated by blank lines. `check_solution` judges that text against Arena's rules
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
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from bots.solve import Solver
from games.checkers import WHITE, Checkers, CheckersMove, CheckersState, format_board, parse_board
from grader.budget import Budget
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
from grader.endgame_suite import Puzzle, PuzzleError
from grader.errors import GradeError
from grader.profiles import DEFAULT_PYTHON
from grader.results import GradeReport, Reason, TestResult, Visibility, run_reason
from grader.sandbox import MIB, Isolation, Limits, SandboxResult, Status, run_sandboxed
from grader.visibility import run_order
from grader.workdirs import new_workdir

PROGRAM: Final = "checkers.py"
"""The program an endgame submission must hold at its top level."""
INPUT_FILE: Final = "input.txt"
OUTPUT_FILE: Final = "output.txt"
ENDGAME_LIMITS: Final = Limits(
    cpu_seconds=10,
    wall_seconds=20.0,
    memory_bytes=512 * MIB,
    processes=32,
    file_size_bytes=1 * MIB,
    output_bytes=1 * MIB,
)
"""The limits of each endgame run (one puzzle); docs/GRADER.md states them to students."""
STDERR_LINES: Final = 8
"""Lines of the end of stderr quoted when a run fails."""

LEGAL_LINE: Final = "legal line"
REACHES_WIN: Final = "reaches a win"
OPTIMAL_LENGTH: Final = "optimal length"
BLACK_RESISTS: Final = "black resists"
WEIGHTS: Final = {LEGAL_LINE: 0.25, REACHES_WIN: 0.25, OPTIMAL_LENGTH: 0.25, BLACK_RESISTS: 0.25}
"""The share of a puzzle's score earned by each component; the shares sum to 1."""

DEFAULT_MAX_PLIES: Final = 30
"""How deep the solver looks for a proof (the puzzle's win and each judged move)."""


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
    unreadable: bool = False
    """The output could not be read as boards."""

    @property
    def score(self) -> float:
        """The puzzle's score in [0, 1]."""
        return sum(WEIGHTS[name] for name, earned in self.components.items() if earned)

    @property
    def is_full_marks(self) -> bool:
        """True when every component is earned."""
        return all(self.components.values())

    @property
    def reason(self) -> Reason | None:
        """Why points were lost, in a word that says nothing of the puzzle; None for full marks."""
        if self.is_full_marks:
            return None
        if self.unreadable:
            return "unreadable output"
        if not self.components[LEGAL_LINE]:
            return "illegal move"
        return "wrong answer"


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


# -- running the program ------------------------------------------------------------------


def grade_endgame(
    submission: Path,
    puzzles: Sequence[Puzzle],
    *,
    limits: Limits = ENDGAME_LIMITS,
    python: str = DEFAULT_PYTHON,
    points: float = 1.0,
    solver: Solver | None = None,
    isolation: Isolation | None = None,
    order: random.Random | None = None,
    budget: Budget | None = None,
) -> GradeReport:
    """Run checkers.py on each puzzle in the sandbox and judge its line; `points` per puzzle.

    `submission` is a directory holding checkers.py (and any modules it imports) or the
    checkers.py file itself. Each puzzle runs as `python checkers.py --inputfile input.txt
    --outputfile output.txt` in a fresh sandbox with the submission's files, then
    `check_solution` scores output.txt. A run that fails (timeout, CPU, memory,
    crash, no output file) scores 0 on that puzzle with the sandbox's reason. Public puzzles
    are "visible" tests, private ones "after_published"; every test names its reasons
    (grader.results.Reason). The public puzzles run first, in order, then the private ones in
    an order drawn from `order` (default: a fresh `random.SystemRandom()`, so no two gradings
    can be told apart by it; grader.visibility.run_order); the report lists the puzzles in
    the suite's order. With `budget`, each run's wall limit is cut to what is left of it, and
    once it is spent the puzzles left score 0 as not run, saying why (grader.budget). Raises
    GradeError only for an empty suite or a puzzle the solver cannot certify.
    """
    if not puzzles:
        raise GradeError("the puzzle suite is empty")
    report = GradeReport(profile="endgame")
    total = points * len(puzzles)
    staging = new_workdir()  # holds the puzzle's input: removed even if this process is killed
    try:
        problem = _stage(submission, staging)
        if problem is not None:
            report.tests.append(
                TestResult(
                    name="submission",
                    score=0.0,
                    max_score=total,
                    output=problem,
                    reasons=("not run",),
                )
            )
            report.output = f"Not graded: {problem}"
            return report
        solver = solver or Solver()
        graded: dict[int, TestResult] = {}
        hidden = [not puzzle.public for puzzle in puzzles]
        budget = budget or Budget(None)
        for index in run_order(hidden, order or random.SystemRandom()):
            puzzle = puzzles[index]
            if budget.is_spent():
                name, visibility = _identity(puzzle)
                graded[index] = TestResult(
                    name=name,
                    score=0.0,
                    max_score=points,
                    output=budget.not_run(),
                    visibility=visibility,
                    reasons=("not run",),
                )
                continue
            wall = budget.wall(limits.wall_seconds)
            cut = wall < limits.wall_seconds
            graded[index] = _grade_puzzle(
                staging,
                puzzle,
                replace(limits, wall_seconds=wall) if cut else limits,
                python,
                points,
                solver,
                isolation,
                budget.ran_out() if cut else None,
            )
        report.tests.extend(graded[index] for index in range(len(puzzles)))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    full = sum(1 for test in report.tests if test.score == test.max_score)
    report.output = (
        f"{full} of {len(puzzles)} puzzles solved with full marks; "
        f"score {report.score:g} of {report.max_score:g}."
    )
    return report


def _stage(submission: Path, staging: Path) -> str | None:
    """Copy the submission into `staging`; return why it cannot be graded, or None."""
    if submission.is_file():
        if submission.name != PROGRAM:
            return (
                f"the submission is a file named {submission.name}; the program must be named "
                f"{PROGRAM}"
            )
        shutil.copyfile(submission, staging / PROGRAM)
        return None
    if not submission.is_dir():
        return f"the submission {submission} does not exist"
    program = submission / PROGRAM
    if not program.is_file() or program.is_symlink():
        found = sorted(p.name for p in submission.iterdir() if p.suffix == ".py")
        listed = f" (found: {', '.join(found)})" if found else " (found no .py file)"
        return (
            f"no {PROGRAM} at the top of the submission{listed}: upload your program as "
            f"{PROGRAM}, runnable as `python3 {PROGRAM} --inputfile IN --outputfile OUT`"
        )
    shutil.copytree(submission, staging, symlinks=True, dirs_exist_ok=True)
    return None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _grade_puzzle(
    staging: Path,
    puzzle: Puzzle,
    limits: Limits,
    python: str,
    points: float,
    solver: Solver,
    isolation: Isolation | None,
    cut_short: str | None = None,
) -> TestResult:
    """Run the program on one puzzle and judge it; `cut_short` says why, when the run's wall
    limit is the grading's budget's rather than the test's own (a run stopped at it)."""
    name, visibility = _identity(puzzle)
    # The submission's own input.txt/output.txt (stale files, links) must not stand in for ours.
    _remove(staging / INPUT_FILE)
    _remove(staging / OUTPUT_FILE)
    (staging / INPUT_FILE).write_text(puzzle.board + "\n", encoding="utf-8")
    argv = [python, PROGRAM, "--inputfile", INPUT_FILE, "--outputfile", OUTPUT_FILE]
    run = run_sandboxed(
        argv, files=staging, limits=limits, collect=[OUTPUT_FILE], isolation=isolation
    )

    def result(score: float, lines: Sequence[str], reason: Reason | None) -> TestResult:
        return TestResult(
            name=name,
            score=score,
            max_score=points,
            output="\n".join(lines),
            visibility=visibility,
            reasons=() if reason is None else (reason,),
        )

    if run.status is Status.SANDBOX_ERROR:
        return result(0.0, [run.reason, "Please report this to the course staff."], "grader error")
    if not run.is_ok:
        if cut_short is not None and run.status is Status.TIMEOUT:
            return result(0.0, [cut_short, *_failure(run)], run_reason(run.status))
        return result(0.0, _failure(run), run_reason(run.status))
    if OUTPUT_FILE not in run.files:
        return result(
            0.0,
            [
                f"your program finished but wrote no output file: write the states to the "
                f"path given by --outputfile (here {OUTPUT_FILE})"
            ],
            "unreadable output",
        )
    output = run.files[OUTPUT_FILE].decode("utf-8", errors="replace")
    try:
        verdict = check_solution(puzzle.board, output, solver)
    except PuzzleError as error:
        raise GradeError(f"{puzzle.name}: {error}") from error
    lines = list(verdict.messages)
    if not verdict.is_full_marks:
        lost = [part for part, earned in verdict.components.items() if not earned]
        lines.append(f"points lost for: {', '.join(lost)}")
    return result(verdict.score * points, lines, verdict.reason)


def _identity(puzzle: Puzzle) -> tuple[str, Visibility]:
    """Return the name and visibility of a puzzle's test."""
    visibility: Visibility = "visible" if puzzle.public else "after_published"
    return f"{puzzle.name} ({puzzle.plies} plies)", visibility


def _failure(run: SandboxResult) -> list[str]:
    """Explain a run that did not end normally: the sandbox's reason and the end of stderr."""
    lines = [run.reason]
    if run.status is Status.EXIT_ERROR or run.status is Status.KILLED:
        lines.append("score 0: the program must exit with code 0 after writing its output")
    else:
        lines.append("score 0: the run was stopped at a limit")
    tail = run.stderr.strip().splitlines()[-STDERR_LINES:]
    if tail:
        lines.append("last lines of stderr:")
        lines.extend(f"    {line}" for line in tail)
    return lines
