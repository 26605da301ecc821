"""What the course pages share: how they say times and a regrade's progress (an assignment's
rules are said by protocol.course_policy), their template context, the page refusing
something in the service's own words.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Path, Request
from fastapi.responses import HTMLResponse

from protocol import HTTP_STATUS, PROTOCOL_VERSION, course_policy
from protocol.courses import Assignment, Course, Regrade
from protocol.errors import ErrorCode, ProtocolError
from server.db.models import Player
from server.routes.course_common import NO_STORE
from server.web.pages import Pages

InviteToken = Annotated[str, Path(min_length=1, max_length=256)]


def path_id(request: Request, name: str) -> int | None:
    """Return the id `name` of a request's path, None when it is not one (a refusal raised
    before the route's own parameters are checked)."""
    text = str(request.path_params.get(name, ""))
    return int(text) if text.isdigit() and len(text) <= 10 else None


# -- how the pages say things -------------------------------------------------------------------


def when(time_ms: int | None) -> str:
    """Return a time (epoch ms) as people read it, in UTC: `Mon 23 Nov 2026, 14:05 UTC`."""
    if time_ms is None:
        return ""
    moment = datetime.fromtimestamp(time_ms / 1000, UTC)
    return moment.strftime("%a %d %b %Y, %H:%M UTC")


def short(time_ms: int | None) -> str:
    """Return a time (epoch ms) in a table's few characters, in UTC: `23 Nov 14:05`."""
    if time_ms is None:
        return ""
    return datetime.fromtimestamp(time_ms / 1000, UTC).strftime("%d %b %H:%M")


def duration(ms: int) -> str:
    """Return a positive span of time, roughly: `3 days 4 h`, `2 h 5 min`, `12 min`."""
    minutes = max(1, math.ceil(ms / 60_000))
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days} day{'s' if days != 1 else ''}" + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    return f"{minutes} min"


def until(time_ms: int, now_ms: int) -> str:
    """Say how far `time_ms` is from now: `in 3 days 4 h`, or `passed 2 h ago`."""
    if time_ms >= now_ms:
        return f"in {duration(time_ms - now_ms)}"
    return f"passed {duration(now_ms - time_ms)} ago"


def late_work(assignment: Assignment) -> str:
    """Say what happens to work handed in after the due date, its times in UTC."""
    return course_policy.late_work(assignment, when)


def regrade_finished(regrade: Regrade) -> bool:
    """True once nothing of the regrade waits or runs (as the page's script decides)."""
    return regrade.queued + regrade.running == 0


def regrade_text(regrade: Regrade) -> str:
    """Say how far a regrade is (the same words as static/course.js)."""
    graded = regrade.done + regrade.error
    if regrade_finished(regrade):
        failed = f", {regrade.error} failed" if regrade.error else ""
        return f"Regrade finished: {graded} of {regrade.total} submissions graded again{failed}."
    return (
        f"Regrading: {graded} of {regrade.total} graded, {regrade.running} being graded, "
        f"{regrade.queued} queued."
    )


def context(request: Request, viewer: Player | None, **values: Any) -> dict[str, Any]:
    """Return a course page's template context: who reads it, and the pages' ways of saying
    times, scores and an assignment's rules."""
    return {
        "section": "courses",
        "version": request.app.version,
        "protocol_version": PROTOCOL_VERSION,
        "viewer": viewer,
        "when": when,
        "short": short,
        "points": course_policy.points,
        "late_work": late_work,
        "late_short": course_policy.late_short,
        "submissions_allowed": course_policy.submissions_allowed,
        "counted": course_policy.counted,
        "before_due": course_policy.before_due,
        "now_ms": now_ms(),
        **values,
    }


def now_ms() -> int:
    """Return the present moment in epoch milliseconds."""
    return time.time_ns() // 1_000_000


def is_staff(course: Course) -> bool:
    """True for the course's instructors and TAs."""
    return course.role in ("instructor", "ta")


REFUSALS: Mapping[ErrorCode, str] = {
    ErrorCode.UNAUTHORIZED: "Not signed in",
    ErrorCode.UNKNOWN_COURSE: "Not a course of yours",
    ErrorCode.UNKNOWN_ASSIGNMENT: "No such assignment",
    ErrorCode.UNKNOWN_MEMBER: "No such member",
    ErrorCode.UNKNOWN_JOB: "No such submission",
    ErrorCode.FORBIDDEN: "Not allowed",
    ErrorCode.DEADLINE_PASSED: "Deadline passed",
    ErrorCode.SUBMISSION_LIMIT: "Daily limit reached",
    ErrorCode.QUOTA_EXCEEDED: "Limit reached",
    ErrorCode.JOB_NOT_FINISHED: "Not graded yet",
}
"""The heading of the page refusing something, by the service's error code."""


def private_page(
    request: Request,
    pages: Pages,
    viewer: Player | None,
    template: str,
    status_code: int = 200,
    **values: Any,
) -> HTMLResponse:
    """Render a course page that only its reader may see, kept nowhere (`NO_STORE`)."""
    response = pages.render(template, context(request, viewer, **values), status_code)
    response.headers.update(NO_STORE)
    return response


def refused_page(
    request: Request, pages: Pages, viewer: Player | None, error: ProtocolError
) -> HTMLResponse:
    """Render the page saying why the service refused: its message and code, with the
    status the REST route answers it with."""
    return private_page(
        request,
        pages,
        viewer,
        "course_refused.html",
        HTTP_STATUS.get(error.code, 400),
        heading=REFUSALS.get(error.code, "Not done"),
        error=error,
        signed_in=viewer is not None,
    )


def not_signed_in() -> ProtocolError:
    """Return the refusal of a course page to a browser that is signed in to none."""
    return ProtocolError(
        ErrorCode.UNAUTHORIZED,
        "this browser is not signed in: open the invite link your course staff sent you",
    )


def signed_in(viewer: Player | None) -> Player:
    """Return the signed-in player; the refusal `not_signed_in` for a browser without one."""
    if viewer is None:
        raise not_signed_in()
    return viewer
