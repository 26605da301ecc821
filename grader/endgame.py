"""The "Endgame solver" profile: run a student's checkers.py on each puzzle, judge its line.

A puzzle (grader.endgame_suite) is a course-format board (docs/GAMES.md, "Course board
format"), red to move. `grade_endgame` runs the student's program once per puzzle in the
sandbox; the program writes the sequence of states from the puzzle to the end of the game,
boards separated by blank lines. `check_solution` judges that text against Arena's rules
(games.checkers) and the exact value of every position on the line; it runs no student code.

Every move is judged against the exact value of the position it is played from, the course
board alone (no draw rules, as the assignment has none): the endgame database
(bots.egdb.probe.DatabaseSolver) where it is built and holds the position, Arena's proof search
(bots.solve) otherwise; both give the same answers. A red move keeps the fastest win when it
leaves black lost in one ply less than red's fastest win from there; a black move is a best
defence when it leaves red's fastest win one ply shorter than black's longest resistance. After
a black mistake red's moves are judged from the position it left, against the faster win it
allows: the line is judged on what red could force at each point.

Scoring: a `PuzzleVerdict` has three components, each worth `WEIGHTS[name]` of the puzzle's
score (a number in [0, 1]); a component earns all of its weight or none, and only a legal
line that ends in a red win earns any (docs/GRADER.md gives the reason for each weight):

- ``red forces the win`` (0.5): every red move keeps a forced win, at most `WIN_SLACK` plies
  slower than the fastest one from its position, so the win is red's doing and not the
  fruit of black's mistakes.
- ``red wins fastest`` (0.25): red forces the win and every red move keeps the fastest win.
- ``black resists longest`` (0.25): red forces the win and every black move is a best defence.

A line that cannot be read (malformed board, garbage, empty file) scores 0 with the reason.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Literal

from bots.egdb import DatabaseError
from bots.egdb.probe import Database, DatabaseSolver, default_directory
from bots.solve import Solution, Solver
from games.checkers import WHITE, Checkers, CheckersMove, CheckersState, format_board, parse_board
from grader.budget import Budget
from grader.course import (
    PDN_NOTE,
    Board,
    OutputError,
    describe_outcome,
    explain_illegal,
    format_move,
    format_moves,
    format_position,
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
COMMAND: Final = f"python3 {PROGRAM} --inputfile {INPUT_FILE} --outputfile {OUTPUT_FILE}"
"""How the grader runs the program, as a student reads it."""
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

RED_FORCES_WIN: Final = "red forces the win"
RED_FASTEST: Final = "red wins fastest"
BLACK_RESISTS: Final = "black resists longest"
WEIGHTS: Final = {RED_FORCES_WIN: 0.5, RED_FASTEST: 0.25, BLACK_RESISTS: 0.25}
"""The share of a puzzle's score earned by each component; the shares sum to 1."""

WIN_SLACK: Final = 4
"""How many plies slower than the fastest win a red move may make the win and still keep it.

A draw cannot be proved by the proof search, so whether a slow move keeps any win at all is
asked within a bound: the fastest win from the move's position plus this slack. A move that
delays the win by more counts as giving it away. The bound keeps that one search affordable
(it is the longest the judge runs) and the same with the endgame database as without it."""
DEFAULT_MAX_PLIES: Final = 30
"""How deep the solver looks for the puzzle's own win, and the longest win a red move may
leave (a line that keeps delaying its win is not followed further)."""

Side = Literal["red", "black"]


@dataclass(frozen=True, slots=True)
class Misplay:
    """The first move of one side that did not keep the exact value of its position.

    `ply` is the move's 1-based ply in the line (state `ply + 1` of the output is the board it
    made, `line` the line of the output where the board before it starts); `before` the
    position it was played from (a fresh board: no history). For red, `value` is red's
    fastest win from `before` in plies and `after` the plies of red's fastest win after the
    move counted from `before` (None: no forced win within `bound` plies of `before`); for
    black, `value` is black's longest resistance from `before` and `after` what the move left,
    counted the same way. `best` are the moves that keep `value`.
    """

    side: Side
    ply: int
    line: int
    move: CheckersMove
    before: CheckersState
    value: int
    after: int | None
    bound: int
    best: tuple[CheckersMove, ...]

    @property
    def gives_up(self) -> bool:
        """True for a red move after which no forced win ends within the bound."""
        return self.after is None


@dataclass(slots=True)
class PuzzleVerdict:
    """The judgement of one puzzle: the earned components, the line's facts, and the reasons.

    `plies` is the length of the student's line (None if it could not be read),
    `optimal_plies` the length of the fastest forced win. `legal` and `wins` say whether the
    line is legal and ends in a red win; `red` and `black` are the first misplay of each side
    (None when every move of that side that was judged kept the exact value), `gave_up` the
    red move that gave the win away (it may come after `red`, a slow move that kept the win;
    nothing after it is judged). `messages`
    explain every point lost (and what was right); `score` is the weighted sum of
    `components` (see the module docstring).
    """

    components: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(WEIGHTS, False))
    plies: int | None = None
    optimal_plies: int | None = None
    legal: bool = False
    wins: bool = False
    red: Misplay | None = None
    black: Misplay | None = None
    gave_up: Misplay | None = None
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
        if not self.legal:
            return "illegal move"
        return "wrong answer"


Line = list[tuple[CheckersState, CheckersMove | None]]
"""A replayed line: each state with the move that led to it (None for the puzzle)."""


def exact_solver() -> Solver:
    """Return the solver that judges lines: the endgame database where one is built, else the
    proof search.

    The database is looked for where `arena egdb build` puts it ($ARENA_EGDB_DIR, else the
    user's data directory); a missing or unusable one leaves the proof search, which gives
    the same verdicts, only slower.
    """
    try:
        return DatabaseSolver(Database(default_directory()))
    except (DatabaseError, OSError):
        return Solver()


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
    _summarise(verdict)
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


def explain_misplay(misplay: Misplay) -> str:
    """Say what the move threw away: the move and the position it was played from, in both
    notations, then every distance counted from that position."""
    best = format_moves(misplay.best)
    value = f"{misplay.value} {_plies(misplay.value)}"
    if misplay.side == "red" and misplay.after is None:
        head = f"gives up the win, or delays it by more than {WIN_SLACK} plies"
        limit = f"a red move may delay the win by at most {WIN_SLACK} plies"
        if misplay.bound > DEFAULT_MAX_PLIES:
            limit += f", and leave it at most {DEFAULT_MAX_PLIES + 1} plies away"
        facts = [
            f"from there red's fastest forced win takes {value}, by {best}",
            f"after this move red has no forced win ending within {misplay.bound} plies of "
            f"that position ({limit})",
        ]
    elif misplay.side == "red":
        head = "is not a fastest win"
        facts = [
            f"from there red's fastest forced win takes {value}, by {best}",
            f"after this move, with black resisting, the win ends {misplay.after} plies from "
            "that position",
        ]
    else:
        head = "gives up early"
        facts = [
            f"from there black, resisting longest, lasts {value}, by {best}",
            f"after this move red's fastest win ends {misplay.after} plies from that position; "
            "red's later moves are judged against that faster win",
        ]
    where = (
        f"played from state {misplay.ply} of your output (line {misplay.line}): "
        f"{format_position(misplay.before)}"
    )
    lines = [f"ply {misplay.ply}: {misplay.side}'s move {format_move(misplay.move)} {head}"]
    lines.extend(f"    {line}" for line in (where, *facts))
    return "\n".join(lines)


def _plies(count: int) -> str:
    return "ply" if count == 1 else "plies"


def _summarise(verdict: PuzzleVerdict) -> None:
    """Explain each component, earned or not."""
    red, black, gave_up = verdict.red, verdict.black, verdict.gave_up
    if red is not None:
        verdict.messages.append(explain_misplay(red))
    elif verdict.wins:
        verdict.messages.append(
            "every red move keeps the fastest win from its position (after a black mistake, "
            "the faster win it allows)"
        )
    if gave_up is not None and gave_up is not red:
        verdict.messages.append(explain_misplay(gave_up))
    if black is not None:
        verdict.messages.append(explain_misplay(black))
    elif verdict.wins and gave_up is None:
        verdict.messages.append("every black move resists as long as possible")
    if verdict.wins and gave_up is not None:
        verdict.messages.append(
            "the line still ends in a red win only because black's later moves gave it back: "
            "the win is not red's doing, and black's moves after that are not judged"
        )
    if red is not None or black is not None:
        verdict.messages.append(PDN_NOTE)


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
    once it is spent the puzzles left score 0 as not run, saying why (grader.budget). `solver`
    judges the lines (default: `exact_solver()`, the endgame database where it is built).
    Raises GradeError only for an empty suite or a puzzle the solver cannot certify.
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
        solver = solver or exact_solver()
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
            f"{PROGRAM}: the grader runs {COMMAND}"
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
                f"path given by --outputfile (here {OUTPUT_FILE}); the grader runs {COMMAND}"
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
    """Explain a run that did not end normally: the sandbox's reason, how the program was
    called when it failed, and the end of stderr."""
    lines = [run.reason]
    if run.status is Status.EXIT_ERROR or run.status is Status.KILLED:
        lines.append("score 0: the program must exit with code 0 after writing its output")
        lines.append(f"the grader ran: {COMMAND}")
        if _misread_options(run.stderr):
            lines.append(
                "your program opened an option's name as a file: read the input file's path "
                "after --inputfile and the output file's after --outputfile (argparse does "
                "it: parser.add_argument('--inputfile'), parser.add_argument('--outputfile')), "
                "not from fixed positions in sys.argv"
            )
    else:
        lines.append("score 0: the run was stopped at a limit")
    tail = run.stderr.strip().splitlines()[-STDERR_LINES:]
    if tail:
        lines.append("last lines of stderr:")
        lines.extend(f"    {line}" for line in tail)
    return lines


def _misread_options(stderr: str) -> bool:
    """True when the program failed opening `--inputfile` or `--outputfile` as a path."""
    return any(
        f"'{option}'" in stderr and ("No such file" in stderr or "Error" in stderr)
        for option in ("--inputfile", "--outputfile")
    )
