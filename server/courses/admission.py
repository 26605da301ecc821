"""Whether a student's submission is let in: the assignment's last accepted moment and its
daily limit (a rolling 24 hours). Staff are exempt; the course service asks these for a
student only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from protocol.errors import ErrorCode, ProtocolError
from server.courses import grades
from server.courses.store import lock_member, recent_times_in
from server.db.models import Assignment as AssignmentRow
from server.db.models import epoch_ms
from server.grading import Admission


def _iso(moment: datetime) -> str:
    return grades.aware(moment).astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def _in(delta: timedelta) -> str:
    """Say a wait in hours and minutes: "3 h 12 min", "45 min"."""
    minutes = max(1, math.ceil(delta.total_seconds() / 60))
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def refuse_over_limit(row: AssignmentRow, times: Sequence[datetime], now: datetime) -> None:
    """Refuse a student's submission past the daily limit (a rolling 24 hours): SUBMISSION_LIMIT
    with the next allowed time. `times` are the member's submissions in the window, oldest
    first."""
    used, limit = len(times), row.daily_limit
    if used < limit:
        return
    allowed = grades.aware(times[used - limit]) + grades.WINDOW
    wait = max(allowed - now, timedelta(seconds=1))
    raise ProtocolError(
        ErrorCode.SUBMISSION_LIMIT,
        f"you have used {used} of {limit} submissions in the last 24 hours; the next is "
        f"allowed at {_iso(allowed)} (in {_in(wait)})",
        {
            "limit": limit,
            "next_allowed_time_ms": epoch_ms(allowed),
            "retry_after_s": math.ceil(wait.total_seconds()),
        },
    )


def daily_limit(row: AssignmentRow, member_id: int) -> Admission:
    """Return the daily limit's check made as the submission's row is stored: the member's
    row locked (server.courses.store.lock_member), their submissions counted, the row added
    only under the limit, in one transaction. So concurrent submissions, to this process or
    to others on the same database, are counted one at a time."""

    async def check(session: AsyncSession) -> None:
        await lock_member(session, member_id)
        now = datetime.now(UTC)
        times = await recent_times_in(session, row.id, member_id, now - grades.WINDOW)
        refuse_over_limit(row, times, now)

    return check


def check_deadline(row: AssignmentRow, now: datetime) -> None:
    """Refuse a student's submission after the assignment's last accepted moment."""
    deadline = grades.last_accepted(row)
    if now <= deadline:
        return
    if row.late_policy == "hard":
        why = f"its due date was {_iso(row.due_at)} (a hard deadline)"
    else:
        why = (
            f"its due date was {_iso(row.due_at)} and late submissions were accepted for "
            f"{row.late_days_max} days, until {_iso(deadline)}"
        )
    raise ProtocolError(
        ErrorCode.DEADLINE_PASSED,
        f"{row.name[:100]} takes no more submissions: {why}",
        {"due_time_ms": epoch_ms(row.due_at), "deadline_time_ms": epoch_ms(deadline)},
    )
