"""A grading's wall-time budget: how long all the runs of one submission may take together.

Each run has its own wall limit (sandbox.Limits), but a submission whose every test
hangs would hold a grading worker for the number of tests times that limit. A profile given a
`Budget` starts no run once the budget is spent (the test says it was not run, and why) and
cuts each run at what is left of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Budget:
    """The wall time left to a grading's runs; `seconds` None: no budget.

    `clock` (seconds, monotonic) is read when the budget is made and at each question.
    """

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._deadline = None if seconds is None else clock() + seconds

    def left(self) -> float | None:
        """Return the seconds left (at least 0); None without a budget."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - self._clock())

    def is_spent(self) -> bool:
        """Return True once no time is left."""
        left = self.left()
        return left is not None and left <= 0

    def wall(self, seconds: float) -> float:
        """Return a run's wall limit of `seconds` cut to what is left of the budget."""
        left = self.left()
        return seconds if left is None else min(seconds, left)

    def not_run(self) -> str:
        """Return why a test after the budget was spent was not run, for the student."""
        return (
            f"not run: the grading's time budget of {self.seconds:g} s was spent on the tests "
            "before this one (each of them ran until its own time limit, or close to it); "
            "make the program finish well within each test's limit"
        )

    def ran_out(self) -> str:
        """Return why a run cut short by the budget was stopped, for the student."""
        return (
            f"stopped when the grading's time budget of {self.seconds:g} s ran out during "
            "this test (the tests before it used the rest)"
        )
