"""An upload on its way into the grading queue, and the refusals of a full queue.

`Intake` is what the grading service carries from the checks to the stored job; `refuse_if_full`
and `queue_full` say which limit refuses an upload (the whole queue, one player's or one
address's waiting jobs), in one process and with the shared queue alike; `Admitting` counts the
uploads that hold a place in one process's queue while they are stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from protocol.errors import ErrorCode, ProtocolError
from server.db.models import GradingJob as JobRow
from server.grading.store import Admission, JobStore
from server.grading.uploads import Upload
from server.settings import Settings


@dataclass(frozen=True)
class Intake:
    """An upload on its way into the queue: its files, who sent it from where, and what for."""

    profile: str
    uploads: Sequence[Upload]
    player_id: int | None
    address: str | None
    assignment_id: int | None
    member_id: int | None
    admission: Admission | None

    @property
    def course(self) -> bool:
        """Return True for a course submission (not counted toward its address's limit)."""
        return self.assignment_id is not None

    def row(self, job_id: str, files: Iterable[str]) -> JobRow:
        """Return the row of the upload as job `job_id` holding `files`, `queued`, not stored."""
        return JobStore.new_row(
            job_id,
            self.profile,
            sorted(files),
            self.player_id,
            self.assignment_id,
            self.member_id,
            self.address,
        )


class Admitting:
    """The uploads past one process's queue checks and not yet queued or refused: they hold
    their places, in all, per uploader and per address (course submissions not counted)."""

    def __init__(self) -> None:
        self.total = 0
        self._by: Counter[int | None] = Counter()
        self._from: Counter[str | None] = Counter()

    def of(self, player_id: int | None) -> int:
        """Return how many of player `player_id`'s uploads hold a place."""
        return self._by[player_id]

    def from_address(self, address: str | None) -> int:
        """Return how many uploads from `address` hold a place (course submissions not counted)."""
        return self._from[address]

    @contextmanager
    def hold(self, intake: Intake) -> Iterator[None]:
        """Hold the upload's place while the block runs."""
        self.total += 1
        self._by[intake.player_id] += 1
        if not intake.course:
            self._from[intake.address] += 1
        try:
            yield
        finally:
            self.total -= 1
            self._by[intake.player_id] -= 1
            if not self._by[intake.player_id]:
                del self._by[intake.player_id]
            if not intake.course:
                self._from[intake.address] -= 1
                if not self._from[intake.address]:
                    del self._from[intake.address]


def refuse_if_full(
    settings: Settings, intake: Intake, *, waiting: int, of_player: int, from_address: int
) -> None:
    """Raise `queue_full` if the upload would pass a limit with the jobs waiting before it:
    `waiting` in all, `of_player` its uploader's (an anonymous upload has no such limit) and
    `from_address` its address's (not counted for a course submission)."""
    if waiting >= settings.grader.max_queued:
        raise queue_full(settings, "queue")
    if intake.player_id is not None and of_player >= settings.grader.max_queued_per_player:
        raise queue_full(settings, "player")
    if not intake.course and from_address >= settings.grader.max_queued_per_address:
        raise queue_full(settings, "address")


def queue_full(settings: Settings, scope: str) -> ProtocolError:
    """Return the QUEUE_FULL refusal of the whole queue (`scope` "queue"), of one player's
    waiting jobs ("player") or of one address's ("address")."""
    if scope == "player":
        limit = settings.grader.max_queued_per_player
        return ProtocolError(
            ErrorCode.QUEUE_FULL,
            f"you have {limit} submissions waiting to be graded, the most one player "
            "may have waiting; nothing was queued: upload again once one of them is graded",
            {"player_queue_limit": limit},
        )
    if scope == "address":
        limit = settings.grader.max_queued_per_address
        return ProtocolError(
            ErrorCode.QUEUE_FULL,
            f"{limit} submissions from your address are waiting to be graded, the most "
            "one address may have waiting (whatever the tokens); nothing was queued: "
            "upload again once one of them is graded",
            {"address_queue_limit": limit},
        )
    limit = settings.grader.max_queued
    return ProtocolError(
        ErrorCode.QUEUE_FULL,
        f"{limit} submissions are waiting to be graded, the most this server queues; "
        "nothing was queued: retry in a few minutes",
        {"queue_limit": limit},
    )
