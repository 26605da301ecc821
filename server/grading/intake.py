"""An upload on its way into the grading queue, and the refusals of a full queue.

`Intake` is what the grading service carries from the checks to the stored job; `queue_full`
says which limit refused an upload (the whole queue, one player's or one address's waiting
jobs), in one process and with the shared queue alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from protocol.errors import ErrorCode, ProtocolError
from server.grading.store import Admission
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
