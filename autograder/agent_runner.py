"""Run a student's `select_move` calls in sandbox sessions and read what they return.

The grader never imports student code. `autograder/agent_harness.py` is copied next to agent.py and
run in the sandbox (sandbox.run) with a batch of requests on stdin; it imports agent, calls
select_move for each request, and prints one JSON line per call (with the time the call took).
A session's wall limit is one call's allowance (time_limit + slack + `startup_seconds`): a
session killed while its first call runs charges that call (timeout, memory, crash); a session
killed later is restarted from the unfinished call, which then runs first. After
`max_timeouts` calls time out, the remaining calls of the whole grading are not run and score 0
(an agent that always hangs costs a few seconds, not one allowance per call).

The calls of a batch run in the order given, or, with `shuffle`, in an order drawn from the
runner's `order` (the private positions: see autograder.visibility.run_order).

`read_answer` reads a reply against its position: the legal move it names, in the course's
(row, col) pairs, and the value it returns, or the problem with it in words and its reason
class (autograder.results.Reason).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from autograder.agent_suite import AgentSuite
from autograder.budget import Budget
from autograder.course import explain_illegal, format_coordinates, format_path, illegal_path
from autograder.results import Reason, run_reason
from games.checkers import CheckersMove, CheckersState, square_at
from sandbox import Isolation, Limits, SandboxResult, Status, run_sandboxed

HARNESS: Final = Path(__file__).with_name("agent_harness.py")
"""The in-sandbox half of the runner, copied next to the submission as HARNESS_NAME."""
HARNESS_NAME: Final = "_arena_agent_harness.py"


@dataclass(frozen=True)
class Request:
    """One call of select_move."""

    board: str
    player: str
    depth_limit: int | None
    time_limit: float


@dataclass(frozen=True)
class Reply:
    """What one call gave: `result` (plain JSON data) when `ok`, else `error` for the student
    and its `reason`."""

    ok: bool
    result: Any = None
    error: str = ""
    elapsed: float | None = None
    timed_out: bool = False
    not_run: bool = False
    reason: Reason = "crashed"


@dataclass
class Runner:
    """Runs batches of calls in sandbox sessions and counts timeouts across the grading."""

    files: Mapping[str, bytes]
    python: str
    limits: Limits
    suite: AgentSuite
    isolation: Isolation | None = None
    budget: Budget | None = None
    """The grading's wall-time budget: once it is spent, no session starts (autograder.budget)."""
    timeouts: int = 0
    sessions: int = 0
    import_error: str | None = None
    timed_out_calls: list[str] = field(default_factory=list)
    order: random.Random = field(default_factory=random.SystemRandom)
    """Draws the order of a shuffled batch's calls."""

    def run(
        self, requests: Sequence[Request], labels: Sequence[str], *, shuffle: bool = False
    ) -> list[Reply]:
        """Return one reply per request, in the requests' order; never raises for what the
        agent does. The calls run in that order, or with `shuffle` in an order drawn from
        `order`."""
        replies: list[Reply | None] = [None] * len(requests)
        pending = list(range(len(requests)))
        if shuffle:
            self.order.shuffle(pending)
        while pending:
            if self.import_error is not None:
                self._fill(replies, pending, Reply(ok=False, error=self.import_error))
                break
            if self.budget is not None and self.budget.is_spent():
                self._fill(
                    replies, pending, Reply(ok=False, error=self.budget.not_run(), not_run=True)
                )
                break
            if self.timeouts >= self.suite.max_timeouts:
                error = (
                    f"not run: the agent already exceeded the time limit "
                    f"{self.timeouts} times, so the rest of the grading was skipped"
                )
                self._fill(
                    replies, pending, Reply(ok=False, error=error, not_run=True, reason="not run")
                )
                break
            pending = self._session(requests, labels, pending, replies)
        return [
            reply if reply is not None else Reply(ok=False, error="not run", reason="not run")
            for reply in replies
        ]

    @staticmethod
    def _fill(replies: list[Reply | None], indexes: Sequence[int], reply: Reply) -> None:
        for index in indexes:
            replies[index] = reply

    def _session(
        self,
        requests: Sequence[Request],
        labels: Sequence[str],
        batch: list[int],
        replies: list[Reply | None],
    ) -> list[int]:
        """Run one sandbox session over `batch`; return the indexes still to run."""
        allowance = max(requests[i].time_limit for i in batch) + self.suite.slack
        wall = allowance + self.suite.startup_seconds
        limits = replace(self.limits, wall_seconds=wall, cpu_seconds=math.ceil(wall) + 1)
        payload = [
            {
                "id": i,
                "board": requests[i].board.splitlines(),
                "player": requests[i].player,
                "depth_limit": requests[i].depth_limit,
                "time_limit": requests[i].time_limit,
            }
            for i in batch
        ]
        self.sessions += 1
        outcome = run_sandboxed(
            [self.python, HARNESS_NAME],
            files=self.files,
            limits=limits,
            stdin=json.dumps(payload).encode(),
            isolation=self.isolation,
        )
        ready = False
        for line in outcome.stdout.splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "import_error" in message:
                self.import_error = "agent.py could not be imported:\n" + str(
                    message["import_error"]
                )
                return batch
            if message.get("ready") is True:
                ready = True
                continue
            index = message.get("id")
            if ready and isinstance(index, int) and index in batch and replies[index] is None:
                replies[index] = self._reply(message, requests[index], labels[index])
        remaining = [i for i in batch if replies[i] is None]
        if not remaining:
            return []
        if not ready:
            if outcome.status in (Status.TIMEOUT, Status.CPU_LIMIT):
                replies[remaining[0]] = self._timeout(outcome, labels[remaining[0]], wall)
                return remaining[1:]
            self.import_error = "agent.py could not be imported: " + _describe_end(outcome)
            return remaining
        first = remaining[0]
        if first != batch[0]:
            return remaining  # killed after earlier calls: rerun this one first in a new session
        if outcome.status in (Status.TIMEOUT, Status.CPU_LIMIT):
            replies[first] = self._timeout(outcome, labels[first], allowance)
        else:
            replies[first] = Reply(
                ok=False,
                error=_describe_end(outcome),
                reason="crashed" if outcome.status is Status.OK else run_reason(outcome.status),
            )
        return remaining[1:]

    def _timeout(self, outcome: SandboxResult, label: str, allowance: float) -> Reply:
        return self._too_slow(
            f"{label}: killed after {outcome.wall_seconds:.1f} s",
            f"no answer within the time limit + slack ({allowance:.1f} s): {outcome.reason}",
        )

    def _too_slow(self, listed: str, error: str, elapsed: float | None = None) -> Reply:
        """Count a call over its time, listed as `listed` in the time test, and reply `error`."""
        self.timeouts += 1
        self.timed_out_calls.append(listed)
        return Reply(ok=False, error=error, elapsed=elapsed, timed_out=True, reason="too slow")

    def _reply(self, message: Mapping[str, Any], request: Request, label: str) -> Reply:
        elapsed = message.get("elapsed")
        seconds = float(elapsed) if isinstance(elapsed, int | float) else None
        allowed = request.time_limit + self.suite.slack
        if seconds is not None and seconds > allowed:
            return self._too_slow(
                f"{label}: {seconds:.2f} s",
                f"took {seconds:.2f} s, over the time limit + slack ({allowed:.1f} s)",
                seconds,
            )
        if message.get("ok") is True:
            return Reply(ok=True, result=message.get("result"), elapsed=seconds)
        return Reply(
            ok=False, error="select_move raised:\n" + str(message.get("error")), elapsed=seconds
        )


def _describe_end(outcome: SandboxResult) -> str:
    if outcome.status is Status.OK:
        return "the program ended during this call (exit code 0: sys.exit/os._exit in agent.py?)"
    return f"the program was stopped during this call: {outcome.reason}"


# -- reading answers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """A reply read against its position: the legal move it names (if any) and its value, or
    the problem with it and the problem's reason."""

    move: CheckersMove | None
    value: float | None
    problem: str = ""
    reason: Reason | None = None


def _short(data: Any) -> str:
    text = json.dumps(data)
    return text if len(text) <= 120 else text[:117] + "..."


def _is_number(data: Any) -> bool:
    return isinstance(data, int | float) and not isinstance(data, bool)


def _is_pair(data: Any) -> bool:
    return (
        isinstance(data, list)
        and len(data) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in data)
    )


def read_answer(state: CheckersState, reply: Reply) -> Answer:
    """Return the legal move and value a reply names, or the problem with it, in words."""
    if not reply.ok:
        return Answer(None, None, reply.error, reply.reason)
    data = reply.result
    value: float | None = None
    if (
        isinstance(data, list)
        and len(data) == 2
        and isinstance(data[0], list)
        and _is_number(data[1])
    ):
        data, value = data[0], float(data[1])
    if not isinstance(data, list) or len(data) < 2 or not all(_is_pair(s) for s in data):
        return Answer(
            None,
            value,
            f"returned {_short(reply.result)}: not a move (expected a list of (row, col) pairs, "
            "or (move, value))",
            "illegal move",
        )
    squares = []
    for row, col in data:
        square = square_at(row, col)
        if square is None:
            return Answer(
                None,
                value,
                f"{format_coordinates(row, col)} is not a dark square of the board",
                "illegal move",
            )
        squares.append(square)
    path = tuple(squares)
    for move in state.legal_moves():
        if move.path == path:
            return Answer(move, value)
    return Answer(
        None,
        value,
        f"{format_path(path)}: {explain_illegal(illegal_path(state, path))}",
        "illegal move",
    )
