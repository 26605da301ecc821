"""Who may read a grading job, and its report once finished.

A job uploaded by a player is read by that player alone, an anonymous job by whoever holds
its id, and a course submission through its course only (whose policies filter what a
student sees); the grading service answers through these.
"""

from __future__ import annotations

import json

from autograder.results import GradeReport
from protocol.errors import ErrorCode, ProtocolError
from server.db.models import GradingJob as JobRow
from server.grading.store import JobStore


async def readable_row(store: JobStore, job_id: str, viewer: int | None) -> JobRow:
    """Return the job's row if player `viewer` may read it.

    UNKNOWN_JOB when no job has this id, and for a course submission (read through its
    course's routes only, whose policies filter what a student sees; the message names
    that route to its uploader alone); a job uploaded by a player is theirs alone:
    UNAUTHORIZED without a token, FORBIDDEN with another player's. An anonymous job is
    read by anyone holding its id.
    """
    row = await store.get(job_id)
    unknown = ProtocolError(ErrorCode.UNKNOWN_JOB, f"no grading job has the id {job_id!r}")
    if row is None:
        raise unknown
    if row.assignment_id is not None:
        if viewer is None or viewer != row.player_id:
            raise unknown
        course_id = await store.course_of(row.assignment_id)
        raise ProtocolError(
            ErrorCode.UNKNOWN_JOB,
            f"{job_id} is a course submission: read it at "
            f"/courses/{course_id}/submissions/{job_id}",
        )
    if row.player_id is not None and viewer is None:
        raise ProtocolError(
            ErrorCode.UNAUTHORIZED,
            "this grading job is read with the token of the player who uploaded it: send "
            "`Authorization: Bearer TOKEN`",
        )
    if row.player_id is not None and viewer != row.player_id:
        raise ProtocolError(ErrorCode.FORBIDDEN, "this grading job belongs to another player")
    return row


async def finished_row(store: JobStore, job_id: str, viewer: int | None) -> JobRow:
    """Return the row of a finished job `viewer` may read (`readable_row`); JOB_NOT_FINISHED
    before then."""
    row = await readable_row(store, job_id, viewer)
    if row.status not in ("done", "error"):
        raise ProtocolError(
            ErrorCode.JOB_NOT_FINISHED,
            f"job {job_id} is {row.status}: poll GET /grader/jobs/{job_id} until it is done",
            {"status": row.status},
        )
    return row


def report_of(row: JobRow) -> GradeReport:
    """Return the report a finished job's stored results describe."""
    return GradeReport.from_json(json.loads(row.results or '{"tests": []}'), row.profile)


def finished_report(row: JobRow) -> GradeReport | None:
    """Return a finished job's report; None while it waits or runs."""
    if row.status not in ("done", "error") or row.results is None:
        return None
    return report_of(row)
