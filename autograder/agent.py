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
The grader never imports student code: autograder/agent_runner.py runs the calls in sandbox
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
   (bots.lectures.minimax with the evaluation above), half for the exact value.
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
from dataclasses import replace
from pathlib import Path
from typing import Final

from autograder.agent_checks import EXAMPLES_TEST, MAX_LISTED, Calls, exact_parts, legal_parts
from autograder.agent_games import games_parts
from autograder.agent_runner import (
    HARNESS,
    HARNESS_NAME,
    Runner,
)
from autograder.agent_suite import AgentSuite
from autograder.budget import Budget
from autograder.profiles import DEFAULT_PYTHON
from autograder.results import GradeReport, TestResult, sorted_reasons
from sandbox import Isolation, Limits

MODULE: Final = "agent.py"
"""The file every agent submission must hold (the module that defines select_move)."""
MAX_SUBMISSION_BYTES: Final = 2 * 1024 * 1024


def _time_part(runner: Runner, suite: AgentSuite, calls: Calls) -> TestResult:
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

    `suite` defaults to `AgentSuite()` (the hand-made `LEGAL_SUITE`); autograder.agent_suite makes
    and reads suite files. A private suite's tests are "after_published", except the examples'
    test (`EXAMPLES_TEST`), which is always "visible"; every test names its reasons
    (autograder.results.Reason). The examples' calls run first, in order; a private suite's other
    calls run in an order drawn from `order` (default: a fresh `random.SystemRandom()`).
    `limits` gives the sandbox's memory, process and file limits (its times are set per
    session from the suite); `isolation` the sandbox uid (distinct per concurrent grading);
    `budget` the grading's wall time, after which no session starts and the calls left are
    not run (autograder.budget).
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
    calls = Calls()
    results = legal_parts(runner, suite, calls)
    results.extend(exact_parts(runner, suite, calls))
    results.extend(games_parts(runner, suite, calls))
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
