"""What every `arena course` command shares: its consoles, dates read and shown, tables, and
finding a course, an assignment or a member by what the command line names them."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cli.common import fail
from cli.rest import Api

if TYPE_CHECKING:
    from protocol.courses import Assignment, Course, Member, MemberList

console = Console(highlight=False)
notes = Console(highlight=False, stderr=True)

CourseArg = Annotated[str, typer.Argument(metavar="COURSE", help="The course: its id or its name.")]
AssignmentArg = Annotated[
    str, typer.Argument(metavar="ASSIGNMENT", help="The assignment: its id or its name.")
]
StudentIdArg = Annotated[
    str, typer.Argument(metavar="STUDENT_ID", help="The member's student id on the roster.")
]

_RELATIVE = re.compile(r"^(?P<sign>[+-])(?P<parts>(?:\d+[wdhm])+)$")
_PART = re.compile(r"(\d+)([wdhm])")
_UNIT_SECONDS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60}
_TIME_COLUMNS = frozenset({"created", "released", "due", "submitted", "last submitted"})


# Dates -------------------------------------------------------------------------------------------


def parse_when(text: str, now: datetime) -> datetime:
    """Return the moment `text` names, with its time zone.

    `text` is an ISO-8601 date-time (`2026-12-01T23:59+01:00`, `2026-12-01T22:59Z`; without a
    zone, this machine's local time), `now`, or a time from `now`: a sign and amounts of weeks,
    days, hours and minutes (`+7d`, `+36h`, `+1w2d`, `-1d`). A date without a time is refused:
    whether it means the start or the end of that day is exactly the doubt a deadline must not
    leave. Raise ValueError saying what is accepted otherwise.
    """
    text = text.strip()
    if text == "now":
        return now
    relative = _RELATIVE.match(text)
    if relative is not None:
        seconds = sum(int(n) * _UNIT_SECONDS[unit] for n, unit in _PART.findall(text))
        sign = -1 if relative["sign"] == "-" else 1
        try:
            return now + timedelta(seconds=sign * seconds)
        except OverflowError:
            raise ValueError(f"{text!r} is further from now than any date") from None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        raise ValueError(f"{text!r} is a date without a time: write {text}T23:59 (or the time)")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"cannot read {text!r}: give an ISO-8601 date-time such as 2026-12-01T23:59+01:00, "
            "or a time from now such as +7d, +36h, +1w2d"
        ) from None
    return when if when.tzinfo is not None else when.astimezone()


def format_time(ms: int | None, *, short: bool = False) -> str:
    """Return an epoch-ms time in this machine's time zone, to the minute: ISO-8601 with the
    offset, or `short` without it (for tables, whose caption names the zone once)."""
    if ms is None:
        return "-"
    when = datetime.fromtimestamp(ms / 1000, UTC).astimezone()
    return when.strftime("%Y-%m-%d %H:%M") if short else when.isoformat(timespec="minutes")


def table(title: str, columns: Sequence[str], *, whole: Collection[str] = ()) -> Table:
    """Return a table with `columns`; those in `whole` (ids, times) are never wrapped or cut
    short, and a table with times says their zone in its caption."""
    has_times = any(name in whole for name in _TIME_COLUMNS)
    offset = datetime.now(UTC).astimezone().isoformat(timespec="minutes")[-6:]
    made = Table(title=escape(title), caption=f"times in UTC{offset}" if has_times else None)
    for name in columns:
        made.add_column(name, no_wrap=name in whole, overflow="fold")
    return made


def score_text(score: float | None, max_score: float | None) -> str:
    """Return a score out of its maximum (`7.5 / 10`), `-` before one."""
    if score is None:
        return "-"
    return f"{score:g}" if max_score is None else f"{score:g} / {max_score:g}"


# Finding courses, assignments, members by name ---------------------------------------------------


def find_course(api: Api, ref: str) -> Course:
    """Return the course `ref` names (its id, or its name among the caller's courses)."""
    from protocol.courses import Course, CourseList

    if ref.isascii() and ref.isdigit():
        return Course.model_validate(api.call("GET", f"/courses/{ref}", doing=f"show course {ref}"))
    courses = CourseList.model_validate(api.call("GET", "/courses", doing="list your courses"))
    named = [course for course in courses.courses if course.name == ref]
    if not named:
        raise fail(f"you are in no course named {ref!r}: `arena course list` shows your courses")
    if len(named) > 1:
        ids = ", ".join(str(course.course_id) for course in named)
        raise fail(f"{len(named)} of your courses are named {ref!r}: give its id ({ids})")
    return named[0]


def find_assignment(api: Api, course: Course, ref: str) -> Assignment:
    """Return the assignment `ref` names in `course` (its id, or its name)."""
    from protocol.courses import Assignment, AssignmentList

    base = f"/courses/{course.course_id}/assignments"
    if ref.isascii() and ref.isdigit():
        data = api.call("GET", f"{base}/{ref}", doing=f"show assignment {ref}")
        return Assignment.model_validate(data)
    listed = AssignmentList.model_validate(
        api.call("GET", base, doing=f"list the assignments of {course.name}")
    )
    for assignment in listed.assignments:
        if assignment.name == ref:
            return assignment
    raise fail(
        f"{course.name} has no assignment named {ref!r} that you can see: "
        f"`arena course assignment list {course.course_id}` shows them"
    )


def find_member(api: Api, course: Course, student_id: str) -> Member:
    """Return the member of `course` whose roster id is `student_id` (staff only)."""
    roster = members(api, course)
    for member in roster.members:
        if member.student_id == student_id:
            return member
    raise fail(
        f"{course.name} has no member with student id {student_id!r}: "
        f"`arena course roster list {course.course_id}` shows the roster"
    )


def members(api: Api, course: Course) -> MemberList:
    """Return the roster of `course` (staff only)."""
    from protocol.courses import MemberList

    data = api.call(
        "GET", f"/courses/{course.course_id}/members", doing=f"list the roster of {course.name}"
    )
    return MemberList.model_validate(data)
