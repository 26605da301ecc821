"""The "Agent" profile: grade a student's checkers `select_move` against Arena's search.

Submission contract
-------------------
The student submits ``agent.py`` (alone, or in a directory with helper modules; standard
library only, run by /usr/bin/python3) defining::

    def select_move(board, player, depth_limit, time_limit): ...

- `board`: a list of 8 strings of 8 characters in the course format
  (docs/GAMES.md, "Course board format"): row 0 at the top, ``.`` empty,
  ``r``/``R`` a red man/king, ``b``/``B`` a black man/king. Red moves up (toward row 0), black
  down; men move and jump forward only, kings both ways; captures are compulsory (any capture
  may be chosen), a multi-jump must be completed, and a man reaching the far row is crowned and
  its move ends there.
- `player`: ``"red"`` or ``"black"``, the side to move, which has at least one legal move.
- `depth_limit`: a positive int, the number of plies to search; None means no limit (search
  within `time_limit`). The current suites always pass an int.
- `time_limit`: seconds (a float) allowed for this call.

It returns either ``(move, value)`` (a tuple or list of two items) or ``move`` alone:

- `move`: a list (or tuple) of (row, col) pairs of ints: the start square, then every landing
  square in order (a multi-jump lists each landing).
- `value`: a number, the minimax value of the position searched `depth_limit` plies deep, from
  `player`'s point of view: at the depth limit a position scores its *material*, men 1 and
  kings 2, `player`'s minus the opponent's; a position whose side to move has no legal move
  (or no pieces) is lost for that side and scores -1000 for it (+1000 for the other), at any
  depth. Ties between moves of equal value may be broken freely. Without a value the value
  checks score 0 (the move checks still count).

An exception, a wrong return type or time over `time_limit` + slack (0.5 s) costs that call
only; printed output is ignored. Do not rely on state kept between calls: calls are batched in
sandbox sessions, and a session may be restarted at any call.

How calls run
-------------
The grader never imports student code: grader/agent_runner.py runs the calls in sandbox
sessions (see its docstring for sessions, restarts and `max_timeouts`). Games are played by
the grader in lockstep: every game where the agent is to move sends one request per round, so
a round of all games is one sandbox session.

Scoring (defaults; `AgentSuite` sets them)
------------------------------------------
1. ``legal moves`` (20 points): one position suite (forced captures, multi-jumps, crowning,
   kings, both colours); points in proportion to the calls that return a legal move. A suite
   with public examples (`AgentSuite.example_positions`) scores them the same way in a test
   of their own, ``legal moves: public examples`` (`example_points`, 5), reported first and
   always visible: students see it before the grades of a private suite are published, with
   the board of each example their agent failed.
2. ``exact minimax, depth d`` for d = 1, 2, 3 (10 points each): on positions reached by random
   play, half of a position's share for a move among the optimal moves of Arena's minimax
   (bots.minimax with the evaluation above), half for the exact value.
3. ``games vs SPEC`` for random, greedy, alphabeta:depth=2 and alphabeta:depth=4 (10 points
   each, all or nothing): the agent plays `games` games (6, 6, 8 and 4; alternating colours,
   each pair of games opened with a few seeded random plies) with `game_depth`; a game is won,
   drawn or lost by Arena's rules (including its draw rules), adjudicated on material once
   `max_plies` (40) plies are played and the side to move has no capture, and forfeited on
   the agent's first failed call (illegal move, exception, timeout). The test passes when no
   game was forfeited and the agent's score share (win 1, draw 1/2) reaches the threshold:
   80% vs random, 60% vs greedy, 25% vs alphabeta:depth=2, and 0% vs alphabeta:depth=4 (the
   test asks for complete, legal, timely games).

   Why short games: the contract's evaluation is material alone, so a correct agent wins
   material early (against alphabeta:depth=2, which uses Arena's positional evaluation and
   searches captures to the end, the reference solution is ahead after 40 plies in 50% of
   games and behind in 22%) but cannot convert it: ahead, every move is worth the same and
   it repeats positions (72% of its threefold-repetition draws in 120-ply games came with it
   ahead, up to 8 men), and over a long game the positional evaluation wins the material
   back (after 120 plies it was behind in half of the games). Judged after 120 plies on 4
   games, the reference solution failed against alphabeta:depth=2 with 31 game seeds of 150;
   judged after 40 plies on 8 games it scored at least 2/8 with each of 160 seeds (5.2/8 on
   average; about 1 seed in 1,000 fails, estimated from its pairs of games).
4. ``time`` (10 points): none if any call exceeded time_limit + slack; otherwise in
   proportion to the calls that answered with a legal move. A call that raised, crashed,
   returned no legal move or was not run shows nothing of the agent's timing, so an agent
   whose every call raises earns nothing here either.

Gaps: the time a call took is measured by the harness inside the sandbox, so a student who
tampers with the harness's clock could under-report it (the sandbox's wall limit still bounds
it); import time counts against the first call of each session.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from bots.evaluation.checkers import MATERIAL
from bots.minimax import minimax
from bots.scoring import Scoring
from bots.spec import create_bot
from games import State
from games.checkers import (
    WHITE,
    Checkers,
    CheckersMove,
    CheckersState,
    format_board,
    parse_board,
)
from grader.agent_runner import (
    HARNESS,
    HARNESS_NAME,
    Answer,
    Reply,
    Request,
    Runner,
    read_answer,
)
from grader.agent_suite import LEGAL_SUITE, AgentSuite, Opponent
from grader.budget import Budget
from grader.course import (
    describe_outcome,
    format_move,
    format_moves,
    side_name,
    side_to_move,
)
from grader.profiles import DEFAULT_PYTHON
from grader.results import GradeReport, Reason, TestResult, sorted_reasons
from grader.sandbox import Isolation, Limits

MODULE: Final = "agent.py"
"""The file every agent submission must hold (the module that defines select_move)."""
LOSS_VALUE: Final = 1000
"""The value of a lost position (no legal move) for its side to move is -LOSS_VALUE."""
AGENT_SCORING: Final = Scoring(win=LOSS_VALUE, by_distance=False)
MAX_SUBMISSION_BYTES: Final = 2 * 1024 * 1024
MAX_LISTED: Final = 12
"""Failures listed in one test's explanation; the rest are counted."""


@dataclass
class _Calls:
    """The calls of a grading read so far, and how many answered with a legal move."""

    made: int = 0
    legal: int = 0
    reasons: list[Reason] = field(default_factory=list)
    """Why the other calls gave no legal move."""

    def read(self, state: CheckersState, reply: Reply) -> Answer:
        """Read `reply` against `state` (grader.agent_runner.read_answer), counting it."""
        answer = read_answer(state, reply)
        self.made += 1
        if answer.move is not None:
            self.legal += 1
        else:
            self.reasons.append(answer.reason or "illegal move")
        return answer


EXAMPLES_TEST: Final = "legal moves: public examples"
"""The name of the examples' test, which students see before the grades are published."""


def material(state: State[Any]) -> float:
    """Return the contract's evaluation: men 1, kings 2, for the side to move."""
    return MATERIAL(state) / 100


# -- the parts of the grade ---------------------------------------------------------------------

GAME: Final = Checkers()


def _board_state(board: str, player: str) -> CheckersState:
    return parse_board(GAME, board, to_move=player)


def _proportional(
    name: str,
    points: float,
    earned: float,
    total: float,
    lines: list[str],
    reasons: list[Reason],
) -> TestResult:
    score = points * earned / total if total else 0.0
    score = min(points, max(0.0, score))
    head = f"{earned:g}/{total:g} earned."
    shown = lines[:MAX_LISTED]
    if len(lines) > MAX_LISTED:
        shown.append(f"... and {len(lines) - MAX_LISTED} more")
    output = head if not shown else head + " Points lost:\n" + "\n".join(shown)
    lost = sorted_reasons(reasons) if score < points else ()
    return TestResult(name, score, points, output, reasons=lost)


def _legal_test(
    test: str,
    points: float,
    positions: Sequence[tuple[str, str, str]],
    replies: Sequence[Reply],
    calls: _Calls,
    *,
    show_boards: bool = False,
) -> TestResult:
    """Score one call per position: a legal move earns it. `show_boards` lists a failed
    position's board (public examples only: the others would be given away)."""
    lines = []
    reasons: list[Reason] = []
    earned = 0
    for (name, board, player), reply in zip(positions, replies, strict=True):
        answer = calls.read(_board_state(board, player), reply)
        if answer.move is not None:
            earned += 1
            continue
        line = f"- {name} ({player} to move): {answer.problem}"
        if show_boards:
            line += "\n" + "\n".join(f"    {row}" for row in board.splitlines())
        lines.append(line)
        reasons.append(answer.reason or "illegal move")
    return _proportional(test, points, earned, len(positions), lines, reasons)


def _legal_calls(
    runner: Runner,
    suite: AgentSuite,
    positions: Sequence[tuple[str, str, str]],
    *,
    shuffle: bool,
) -> list[Reply]:
    requests = [
        Request(board, player, suite.legal_depth, suite.time_limit)
        for _, board, player in positions
    ]
    labels = [f"legal moves: {name}" for name, _, _ in positions]
    return runner.run(requests, labels, shuffle=shuffle)


def _legal_parts(runner: Runner, suite: AgentSuite, calls: _Calls) -> list[TestResult]:
    """Return the examples' test (when the suite has examples), then the legal-move test.

    The examples' calls run first, in sessions of their own: a call that shares a session
    with private positions could read them (the harness holds the session's requests), and
    the examples' test shows what went wrong with each call.
    """
    examples = suite.example_positions
    positions = suite.legal_positions or LEGAL_SUITE
    results = []
    if examples:
        replies = _legal_calls(runner, suite, examples, shuffle=False)
        results.append(
            _legal_test(
                EXAMPLES_TEST, suite.example_points, examples, replies, calls, show_boards=True
            )
        )
    replies = _legal_calls(runner, suite, positions, shuffle=not suite.public)
    results.append(_legal_test("legal moves", suite.legal_points, positions, replies, calls))
    return results


def exact_positions(count: int, seed: int) -> list[CheckersState]:
    """Return `count` course positions reached by seeded random play (no history, not over)."""
    rng = random.Random(seed)
    positions: list[CheckersState] = []
    while len(positions) < count:
        state = _board_state(format_board(GAME.initial_state()), "red")
        for _ in range(rng.randrange(4, 30)):
            if state.is_terminal():
                break
            state = state.apply_unchecked(rng.choice(state.legal_moves()))
        fresh = _board_state(format_board(state), side_to_move(state))
        if not fresh.is_terminal():
            positions.append(fresh)
    return positions


def reference_values(state: CheckersState, depth: int) -> dict[CheckersMove, float]:
    """Return each legal move's minimax value at `depth` for the side to move (Arena's minimax)."""
    values = {}
    for move in state.legal_moves():
        child = state.apply_unchecked(move)
        result = minimax(child, depth=depth - 1, evaluate=material, scoring=AGENT_SCORING)
        values[move] = -result.score
    return values


def _exact_parts(runner: Runner, suite: AgentSuite, calls: _Calls) -> list[TestResult]:
    positions = exact_positions(suite.exact_positions, suite.exact_seed)
    requests = []
    labels = []
    for depth in suite.exact_depths:
        for number, state in enumerate(positions, 1):
            requests.append(
                Request(format_board(state), side_to_move(state), depth, suite.time_limit)
            )
            labels.append(f"exact minimax, depth {depth}: position {number}")
    replies = iter(runner.run(requests, labels, shuffle=not suite.public))
    results = []
    for depth in suite.exact_depths:
        earned = 0.0
        lines = []
        reasons: list[Reason] = []
        for number, state in enumerate(positions, 1):
            reply = next(replies)
            values = reference_values(state, depth)
            best = max(values.values())
            optimal = format_moves([m for m, v in values.items() if v == best])
            answer = calls.read(state, reply)
            where = f"- position {number} ({side_to_move(state)} to move)"
            if answer.move is None:
                lines.append(f"{where}: {answer.problem}")
                reasons.append(answer.reason or "illegal move")
                continue
            if values[answer.move] == best:
                earned += 0.5
            else:
                lines.append(
                    f"{where}: move {format_move(answer.move)} has value "
                    f"{values[answer.move]:g}, not the best {best:g} "
                    f"(optimal: {optimal})"
                )
                reasons.append("wrong answer")
            if answer.value is None:
                lines.append(f"{where}: no value returned (return (move, value))")
                reasons.append("wrong answer")
            elif answer.value == best:
                earned += 0.5
            else:
                lines.append(f"{where}: value {answer.value:g}, expected {best:g}")
                reasons.append("wrong answer")
        results.append(
            _proportional(
                f"exact minimax, depth {depth}",
                suite.exact_points,
                earned,
                len(positions),
                lines,
                reasons,
            )
        )
    return results


@dataclass
class _Game:
    opponent: Opponent
    number: int
    agent_colour: int
    state: CheckersState
    plies: int = 0
    result: float | None = None  # the agent's points: 1, 1/2 or 0
    note: str = ""
    forfeit: Reason | None = None


def _material_lead(state: CheckersState, colour: int) -> float:
    lead = material(state)
    return (lead if state.turn == colour else -lead) + 0.0  # + 0.0 turns -0.0 into 0.0


def _finish_if_over(game: _Game, suite: AgentSuite) -> bool:
    outcome = game.state.outcome()
    if outcome is not None:
        if outcome.winner is None:
            game.result, game.note = 0.5, f"draw ({describe_outcome(game.state)})"
        elif outcome.winner == game.agent_colour:
            game.result, game.note = 1.0, f"won ({describe_outcome(game.state)})"
        else:
            game.result, game.note = 0.0, f"lost ({describe_outcome(game.state)})"
        return True
    # Never mid-exchange: a man just taken is often retaken, so the captures are played out.
    if game.plies >= suite.max_plies and not game.state.has_capture():
        lead = _material_lead(game.state, game.agent_colour)
        verdict = (1.0, "won") if lead > 0 else (0.0, "lost") if lead < 0 else (0.5, "drawn")
        game.result = verdict[0]
        game.note = f"{verdict[1]} on material ({lead:+g}) after {game.plies} plies"
        return True
    return False


def _games_parts(runner: Runner, suite: AgentSuite, calls: _Calls) -> list[TestResult]:
    games: list[_Game] = []
    bots = {}
    for opponent in suite.opponents:
        bots[opponent.spec] = create_bot(opponent.spec, GAME, rng=random.Random(suite.game_seed))
        for number in range(opponent.games):
            rng = random.Random(f"{suite.game_seed}:{opponent.spec}:{number // 2}")
            state = _board_state(format_board(GAME.initial_state()), "red")
            for _ in range(suite.opening_plies):
                state = state.apply_unchecked(rng.choice(state.legal_moves()))
            agent = WHITE if number % 2 == 0 else 1 - WHITE
            games.append(_Game(opponent, number + 1, agent, state, suite.opening_plies))
    active = [g for g in games if not _finish_if_over(g, suite)]
    while active:
        waiting = []
        for game in active:
            while game.state.turn != game.agent_colour and not _finish_if_over(game, suite):
                move = bots[game.opponent.spec].choose(game.state).move
                assert isinstance(move, CheckersMove)
                game.state = game.state.apply_unchecked(move)
                game.plies += 1
            if game.result is None and not _finish_if_over(game, suite):
                waiting.append(game)
        if not waiting:
            break
        requests = [
            Request(
                format_board(g.state), side_to_move(g.state), suite.game_depth, suite.time_limit
            )
            for g in waiting
        ]
        labels = [
            f"games vs {g.opponent.spec}: game {g.number}, ply {g.plies + 1}" for g in waiting
        ]
        replies = runner.run(requests, labels, shuffle=not suite.public)
        for game, reply in zip(waiting, replies, strict=True):
            answer = calls.read(game.state, reply)
            if answer.move is None:
                game.result = 0.0
                game.note = f"forfeited at ply {game.plies + 1}: {answer.problem}"
                game.forfeit = answer.reason or "illegal move"
                continue
            game.state = game.state.apply_unchecked(answer.move)
            game.plies += 1
            _finish_if_over(game, suite)
        active = [g for g in waiting if g.result is None]
    results = []
    for opponent in suite.opponents:
        played = [g for g in games if g.opponent is opponent]
        score = sum(g.result or 0.0 for g in played)
        share = score / len(played) if played else 0.0
        forfeits = sum(1 for g in played if g.forfeit is not None)
        passed = share >= opponent.threshold and not forfeits
        lines = [f"- game {g.number} as {side_name(g.agent_colour)}: {g.note}" for g in played]
        verdict = "passed" if passed else "failed"
        head = (
            f"{verdict}: scored {score:g}/{len(played)} ({share:.0%}; win 1, draw 1/2), "
            f"threshold {opponent.threshold:.0%}"
            + (f"; {forfeits} game(s) forfeited (any forfeit fails the test)" if forfeits else "")
        )
        lost: list[Reason] = [g.forfeit for g in played if g.forfeit is not None]
        if not forfeits:
            lost.append("wrong answer")
        results.append(
            TestResult(
                f"games vs {opponent.spec}",
                opponent.points if passed else 0.0,
                opponent.points,
                head + "\n" + "\n".join(lines),
                reasons=() if passed else sorted_reasons(lost),
            )
        )
    return results


def _time_part(runner: Runner, suite: AgentSuite, calls: _Calls) -> TestResult:
    """Score the time test: nothing after a call over time, else the share of the calls that
    answered with a legal move (a call that raised shows nothing of the agent's timing)."""
    if not runner.timed_out_calls:
        if calls.made and calls.legal == calls.made:
            return TestResult(
                "time", suite.time_points, suite.time_points, "every call answered in time"
            )
        score = suite.time_points * calls.legal / calls.made if calls.made else 0.0
        return TestResult(
            "time",
            score,
            suite.time_points,
            f"{calls.legal} of {calls.made} calls answered with a legal move in time; a call "
            "that raised, crashed, returned no legal move or was not run shows nothing of "
            "your agent's timing, so it earns no share of these points",
            reasons=sorted_reasons(calls.reasons),
        )
    lines = runner.timed_out_calls[:MAX_LISTED]
    return TestResult(
        "time",
        0.0,
        suite.time_points,
        f"{len(runner.timed_out_calls)} call(s) over time_limit + slack "
        f"({suite.time_limit:g} + {suite.slack:g} s):\n" + "\n".join(f"- {line}" for line in lines),
        reasons=("too slow",),
    )


def _submission_files(submission: Path) -> dict[str, bytes] | str:
    """Return the files to run, or the reason there are none, in words."""
    if submission.is_dir():
        files: dict[str, bytes] = {}
        total = 0
        for path in sorted(submission.rglob("*")):
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
                if total > MAX_SUBMISSION_BYTES:
                    return f"the submission is larger than {MAX_SUBMISSION_BYTES} bytes"
                files[path.relative_to(submission).as_posix()] = path.read_bytes()
        if MODULE not in files:
            return f"the submission has no {MODULE}"
    elif submission.is_file():
        if submission.stat().st_size > MAX_SUBMISSION_BYTES:
            return f"{MODULE} is larger than {MAX_SUBMISSION_BYTES} bytes"
        files = {MODULE: submission.read_bytes()}
    else:
        return f"no submission at {submission}"
    files[HARNESS_NAME] = HARNESS.read_bytes()
    return files


def grade_agent(
    submission: Path,
    *,
    python: str = DEFAULT_PYTHON,
    limits: Limits | None = None,
    suite: AgentSuite | None = None,
    isolation: Isolation | None = None,
    order: random.Random | None = None,
    budget: Budget | None = None,
) -> GradeReport:
    """Grade an agent submission (agent.py, or a directory holding it); see the module docstring.

    `suite` defaults to `AgentSuite()` (the hand-made `LEGAL_SUITE`); grader.agent_suite makes
    and reads suite files. A private suite's tests are "after_published", except the examples'
    test (`EXAMPLES_TEST`), which is always "visible"; every test names its reasons
    (grader.results.Reason). The examples' calls run first, in order; a private suite's other
    calls run in an order drawn from `order` (default: a fresh `random.SystemRandom()`).
    `limits` gives the sandbox's memory, process and file limits (its times are set per
    session from the suite); `isolation` the sandbox uid (distinct per concurrent grading);
    `budget` the grading's wall time, after which no session starts and the calls left are
    not run (grader.budget).
    Never raises for anything the submission does.
    """
    suite = suite or AgentSuite()
    files = _submission_files(Path(submission))
    runner = Runner(
        files=files if isinstance(files, dict) else {},
        python=python,
        limits=limits or Limits(),
        suite=suite,
        isolation=isolation,
        budget=budget,
        import_error=None if isinstance(files, dict) else files,
        order=order or random.SystemRandom(),
    )
    calls = _Calls()
    results = _legal_parts(runner, suite, calls)
    results.extend(_exact_parts(runner, suite, calls))
    results.extend(_games_parts(runner, suite, calls))
    results.append(_time_part(runner, suite, calls))
    if not suite.public:
        # Only the examples are public: every other test waits for the grades' publication.
        results = [
            r if r.name == EXAMPLES_TEST else replace(r, visibility="after_published")
            for r in results
        ]
    report = GradeReport(profile="agent", tests=results)
    lost = [test.name for test in results if test.score < test.max_score]
    report.output = f"score {report.score:g} of {report.max_score:g}" + (
        f"; points lost on: {', '.join(lost)}." if lost else "; full marks."
    )
    return report
