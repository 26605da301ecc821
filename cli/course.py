"""`arena course`: run a course on a hosted Arena: assignments, roster, invite links, gradebook.

A REST client of the server's course routes (docs/COURSE.md; the bodies are
protocol/courses.py). COURSE is a course's id or its name, ASSIGNMENT an assignment's id or its
name in the course, STUDENT_ID a roster's student id. Every command takes --server (or
ARENA_SERVER) and --token (or ARENA_TOKEN). Exit status: 0 when done; 1 when `regrade --wait`
ends with gradings that failed, or a wait (for a regrade, for a generated suite) runs out of
time; 2 for a usage error, a refusal by the server (its code and message are printed) or a
server that cannot be reached.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import time
from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cli.common import fail, plural
from cli.rest import DEFAULT_SERVER, Api, ServerOpt, TokenOpt, connect

if TYPE_CHECKING:
    from protocol.courses import Assignment, Course, Invite, Member, MemberList, Regrade

# The choices of the course bodies (protocol/courses.py), repeated so that `arena --help` does
# not import pydantic; tests/cli/test_course_cli.py checks that they agree.
AssignmentProfile = Literal["endgame", "agent"]
LatePolicy = Literal["hard", "penalty"]
ScorePolicy = Literal["best", "last"]
BeforeDue = Literal["public", "score", "full"]

console = Console(highlight=False)
notes = Console(highlight=False, stderr=True)

LINK_COLUMNS = ("student_id", "name", "email", "role", "invite_url")
"""The columns of the file `roster import --links` writes."""

_RELATIVE = re.compile(r"^(?P<sign>[+-])(?P<parts>(?:\d+[wdhm])+)$")
_PART = re.compile(r"(\d+)([wdhm])")
_UNIT_SECONDS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60}
_TIME_COLUMNS = frozenset({"created", "released", "due", "submitted", "last submitted"})
_TABLE_ROWS = 50
"""Rows of a roster import's table (its links are all written or printed, whatever the count)."""


def register(app: typer.Typer) -> None:
    """Add the `arena course` command group to `app`."""
    group = typer.Typer(
        name="course",
        help="Run a course on a hosted Arena: assignments, roster and invite links, gradebook, "
        "regrades (docs/COURSE.md).",
        no_args_is_help=True,
    )
    group.command("create")(create_command)
    group.command("list")(list_command)
    assignment = typer.Typer(
        name="assignment", help="Add, list and change a course's assignments.", no_args_is_help=True
    )
    assignment.command("add")(assignment_add_command)
    assignment.command("list")(assignment_list_command)
    assignment.command("update")(assignment_update_command)
    assignment.command("suite")(assignment_suite_command)
    group.add_typer(assignment, name="assignment")
    roster = typer.Typer(
        name="roster", help="Import, list and drop a course's members.", no_args_is_help=True
    )
    roster.command("import")(roster_import_command)
    roster.command("list")(roster_list_command)
    roster.command("drop")(roster_drop_command)
    group.add_typer(roster, name="roster")
    group.command("invite")(invite_command)
    group.command("submissions")(submissions_command)
    group.command("gradebook")(gradebook_command)
    group.command("regrade")(regrade_command)
    app.add_typer(group, name="course")


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


def _when_option(option: str, text: str | None, now: datetime) -> str | None:
    """Return the date option's value as ISO-8601 with its zone for the server, or exit 2."""
    if text is None:
        return None
    try:
        return parse_when(text, now).isoformat()
    except ValueError as error:
        raise fail(f"{option}: {error}") from None


def format_time(ms: int | None, *, short: bool = False) -> str:
    """Return an epoch-ms time in this machine's time zone, to the minute: ISO-8601 with the
    offset, or `short` without it (for tables, whose caption names the zone once)."""
    if ms is None:
        return "-"
    when = datetime.fromtimestamp(ms / 1000, UTC).astimezone()
    return when.strftime("%Y-%m-%d %H:%M") if short else when.isoformat(timespec="minutes")


def _table(title: str, columns: Sequence[str], *, whole: Collection[str] = ()) -> Table:
    """Return a table with `columns`; those in `whole` (ids, times) are never wrapped or cut
    short, and a table with times says their zone in its caption."""
    has_times = any(name in whole for name in _TIME_COLUMNS)
    offset = datetime.now(UTC).astimezone().isoformat(timespec="minutes")[-6:]
    table = Table(title=escape(title), caption=f"times in UTC{offset}" if has_times else None)
    for name in columns:
        table.add_column(name, no_wrap=name in whole, overflow="fold")
    return table


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
    roster = _members(api, course)
    for member in roster.members:
        if member.student_id == student_id:
            return member
    raise fail(
        f"{course.name} has no member with student id {student_id!r}: "
        f"`arena course roster list {course.course_id}` shows the roster"
    )


def _members(api: Api, course: Course) -> MemberList:
    from protocol.courses import MemberList

    data = api.call(
        "GET", f"/courses/{course.course_id}/members", doing=f"list the roster of {course.name}"
    )
    return MemberList.model_validate(data)


# Courses -----------------------------------------------------------------------------------------


def create_command(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The course's name, e.g. 'CSC 384 Fall 2026'.")
    ],
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Create a course; you become its instructor. Prints your sign-in link for the web once."""
    from protocol.courses import CourseCreated

    with connect(server, token) as api:
        created = CourseCreated.model_validate(
            api.call("POST", "/courses", json={"name": name}, doing="create the course", expect=201)
        )
    course = created.course
    console.print(
        escape(f"course {course.course_id} {course.name!r} created; you are its instructor"),
        soft_wrap=True,
    )
    console.print(escape(f"your sign-in link for the web: {created.invite_url}"), soft_wrap=True)
    notes.print(
        "keep it private: it signs in as you, and is shown this once "
        "(the token you used here works on the command line)",
        soft_wrap=True,
    )


def list_command(server: ServerOpt = DEFAULT_SERVER, token: TokenOpt = None) -> None:
    """List your courses and your role in each."""
    from protocol.courses import CourseList

    with connect(server, token) as api:
        courses = CourseList.model_validate(api.call("GET", "/courses", doing="list your courses"))
    if not courses.courses:
        console.print("you are in no course yet: `arena course create NAME` makes one")
        return
    table = _table("your courses", ("id", "name", "your role", "created"), whole={"id", "created"})
    for course in courses.courses:
        table.add_row(
            str(course.course_id),
            escape(course.name),
            course.role,
            format_time(course.created_time_ms, short=True),
        )
    console.print(table)


# Assignments -------------------------------------------------------------------------------------

CourseArg = Annotated[str, typer.Argument(metavar="COURSE", help="The course: its id or its name.")]
AssignmentArg = Annotated[
    str, typer.Argument(metavar="ASSIGNMENT", help="The assignment: its id or its name.")
]
ReleaseOpt = Annotated[
    str | None,
    typer.Option(
        "--release",
        help="When students first see it: ISO-8601 (2026-11-30T09:00+01:00; no zone = local "
        "time), or from now (+2d, +36h); default now.",
    ),
]
DueOpt = Annotated[
    str | None,
    typer.Option("--due", help="The due date: ISO-8601, or from now (+7d, +1w2d, -1d)."),
]
LatePolicyOpt = Annotated[
    LatePolicy | None,
    typer.Option(
        "--late-policy",
        help="hard: nothing after the due date; penalty: late work loses --penalty-per-day.",
    ),
]
PenaltyOpt = Annotated[
    float | None,
    typer.Option(
        "--penalty-per-day", help="Percent of the score lost per started day late (penalty)."
    ),
]
LateDaysOpt = Annotated[
    int | None,
    typer.Option("--late-days", help="Days after the due date still accepted (penalty), 0-30."),
]
DailyLimitOpt = Annotated[
    int | None,
    typer.Option("--daily-limit", help="Submissions per student in any 24 hours, 1-100."),
]
ScorePolicyOpt = Annotated[
    ScorePolicy | None,
    typer.Option("--score-policy", help="Which submission counts: the best, or the last graded."),
]
BeforeDueOpt = Annotated[
    BeforeDue | None,
    typer.Option(
        "--before-due",
        help="What students see before the due date: public (the public tests only), score "
        "(every test's score, private names and output hidden), full.",
    ),
]


def _policies(
    now: datetime,
    release: str | None,
    due: str | None,
    late_policy: str | None,
    penalty: float | None,
    late_days: int | None,
    daily_limit: int | None,
    score_policy: str | None,
    before_due: str | None,
) -> dict[str, Any]:
    """Return the policy fields given on the command line; the server defaults the others."""
    fields = {
        "release_at": _when_option("--release", release, now),
        "due_at": _when_option("--due", due, now),
        "late_policy": late_policy,
        "late_penalty_per_day": penalty,
        "late_days_max": late_days,
        "daily_limit": daily_limit,
        "score_policy": score_policy,
        "before_due": before_due,
    }
    return {key: value for key, value in fields.items() if value is not None}


def _read_suite(path: Path, profile: str) -> Any:
    """Return a suite file's JSON once the grader's loader for `profile` accepts it, or exit 2
    naming the problem (before anything is sent; the server checks it again)."""
    from grader.agent_suite import AgentSuiteError
    from grader.agent_suite_file import load_agent_suite
    from grader.endgame_suite import PuzzleError, load_puzzles

    try:
        if profile == "endgame":
            load_puzzles(path)
        else:
            load_agent_suite(path)
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise fail(f"cannot read {path}: {error.strerror}") from None
    except (PuzzleError, AgentSuiteError) as error:
        raise fail(f"{error} (a suite of the {profile} profile is needed)") from None
    except ValueError as error:
        raise fail(f"{path} is not a JSON file: {error}") from None


def _put_suite(api: Api, assignment: Assignment, suite: Any) -> Assignment:
    from protocol.courses import Assignment

    path = f"/courses/{assignment.course_id}/assignments/{assignment.assignment_id}/suite"
    data = api.call("PUT", path, json=suite, doing=f"take the suite of {assignment.name}")
    return Assignment.model_validate(data)


def describe(assignment: Assignment) -> str:
    """Return an assignment's dates and policies in one paragraph of plain words."""
    if assignment.late_policy == "hard":
        late = "nothing accepted after the due date"
    else:
        late = (
            f"late work loses {assignment.late_penalty_per_day:g}% per started day, accepted "
            f"until {format_time(assignment.last_accepted_time_ms)}"
        )
    seen = {
        "public": "the public tests only",
        "score": "every test's score, the private tests' names and output hidden",
        "full": "everything",
    }[assignment.before_due]
    return (
        f"assignment {assignment.assignment_id} {assignment.name!r} ({assignment.profile} "
        f"profile): released {format_time(assignment.release_time_ms)}, due "
        f"{format_time(assignment.due_time_ms)}; {late}; "
        f"{plural(assignment.daily_limit, 'submission')} per student in any 24 hours; the "
        f"{assignment.score_policy} score counts; before the due date students see {seen}; "
        + _suite_text(assignment)
    )


def _suite_text(assignment: Assignment) -> str:
    tests = f"{assignment.public_tests} public and {assignment.private_tests} private tests"
    if assignment.suite_version == 0:
        return f"its suite of {tests} is being generated (submissions wait for it)"
    return f"suite version {assignment.suite_version}: {tests}"


def assignment_add_command(
    course_ref: CourseArg,
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The assignment's name, unique in the course.")
    ],
    due: DueOpt = None,
    profile: Annotated[
        AssignmentProfile, typer.Option("--profile", help="The assignment profile.")
    ] = "endgame",
    release: ReleaseOpt = None,
    late_policy: LatePolicyOpt = None,
    penalty: PenaltyOpt = None,
    late_days: LateDaysOpt = None,
    daily_limit: DailyLimitOpt = None,
    score_policy: ScorePolicyOpt = None,
    before_due: BeforeDueOpt = None,
    suite: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            help="A suite file of the profile (arena grader make-puzzles) instead of a "
            "generated one.",
        ),
    ] = None,
    public_count: Annotated[
        int | None,
        typer.Option("--public-count", help="Public tests of the generated suite (default 3)."),
    ] = None,
    private_count: Annotated[
        int | None,
        typer.Option("--private-count", help="Private tests of the generated suite (default 10)."),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait/--no-wait",
            help="Wait until the generated suite is ready (submissions are refused until then).",
        ),
    ] = True,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for the suite.")
    ] = 3600.0,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Add an assignment with its dates and policies; the server generates its private suite.

    Defaults (the server's): released now, hard deadline, 10 submissions a day, the best score
    counts, students see the public tests only before the due date. An endgame suite takes
    seconds per puzzle to generate (each is solved), in the background: the command waits for
    it unless --no-wait, and exits 1 if it is not ready in --timeout seconds.
    """
    from protocol.courses import Assignment

    if due is None:
        raise fail("--due is required: the due date, e.g. --due 2026-12-01T23:59 or --due +7d")
    if suite is not None and (public_count is not None or private_count is not None):
        raise fail("--suite gives the whole suite: leave out --public-count and --private-count")
    suite_data = None if suite is None else _read_suite(suite, profile)
    body: dict[str, Any] = {"name": name, "profile": profile}
    body |= _policies(
        datetime.now(UTC),
        release,
        due,
        late_policy,
        penalty,
        late_days,
        daily_limit,
        score_policy,
        before_due,
    )
    if suite_data is not None:
        body["suite"] = suite_data
    else:
        body |= {
            key: value
            for key, value in (("public_count", public_count), ("private_count", private_count))
            if value is not None
        }
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        path = f"/courses/{course.course_id}/assignments"
        data = api.call("POST", path, json=body, doing="add the assignment", expect=201)
        assignment = Assignment.model_validate(data)
        if wait and assignment.suite_version == 0:
            assignment = _wait_for_suite(api, assignment, timeout)
    console.print(escape(describe(assignment)), soft_wrap=True)


def _wait_for_suite(api: Api, assignment: Assignment, timeout: float) -> Assignment:
    """Poll the assignment until its generated suite is ready; exit 1 on timeout."""
    from protocol.courses import Assignment

    path = f"/courses/{assignment.course_id}/assignments/{assignment.assignment_id}"
    deadline = time.monotonic() + timeout
    started = time.monotonic()
    tests = assignment.public_tests + assignment.private_tests
    with notes.status("") as status:
        while assignment.suite_version == 0:
            if time.monotonic() > deadline:
                notes.print(
                    escape(
                        f"the suite of {assignment.name} is still being generated after "
                        f"{timeout:g} s (the server's log says why if it failed); "
                        "submissions are refused until it is ready"
                    ),
                    soft_wrap=True,
                )
                raise typer.Exit(1)
            status.update(
                f"generating the suite of {plural(tests, 'test')} "
                f"({time.monotonic() - started:.0f} s)"
            )
            time.sleep(1.0)
            data = api.call("GET", path, doing=f"show {assignment.name}")
            assignment = Assignment.model_validate(data)
    return assignment


def assignment_list_command(
    course_ref: CourseArg, server: ServerOpt = DEFAULT_SERVER, token: TokenOpt = None
) -> None:
    """List a course's assignments (a student sees the released ones, with their standing)."""
    from protocol.courses import AssignmentList

    with connect(server, token) as api:
        course = find_course(api, course_ref)
        listed = AssignmentList.model_validate(
            api.call(
                "GET",
                f"/courses/{course.course_id}/assignments",
                doing=f"list the assignments of {course.name}",
            )
        )
    if not listed.assignments:
        console.print(escape(f"{course.name} has no assignment you can see yet"))
        return
    student = course.role == "student"
    columns: tuple[str, ...]
    if student:
        columns = ("id", "name", "due", "late", "attempts", "score", "left today")
    else:
        columns = ("id", "name", "released", "due", "policies")
    table = _table(f"{course.name}: assignments", columns, whole={"id", "due", "released", "late"})
    for assignment in listed.assignments:
        late = (
            "hard"
            if assignment.late_policy == "hard"
            else f"-{assignment.late_penalty_per_day:g}%/d, {assignment.late_days_max}d"
        )
        due_text = format_time(assignment.due_time_ms, short=True)
        if student:
            score = "-" if assignment.score is None else f"{assignment.score:g}"
            if assignment.max_score is not None and assignment.score is not None:
                score += f" / {assignment.max_score:g}"
            row = [
                str(assignment.assignment_id),
                escape(assignment.name),
                due_text,
                late,
                str(assignment.attempts or 0),
                score,
                str(assignment.submissions_left_today),
            ]
        else:
            policies = (
                f"{assignment.profile}; late: {late}; {assignment.daily_limit}/day; "
                f"{assignment.score_policy} counts; before due: {assignment.before_due}; "
                f"tests {assignment.public_tests} public + {assignment.private_tests} private "
                + (
                    f"(v{assignment.suite_version})"
                    if assignment.suite_version
                    else "(being generated)"
                )
            )
            row = [
                str(assignment.assignment_id),
                escape(assignment.name),
                format_time(assignment.release_time_ms, short=True),
                due_text,
                escape(policies),
            ]
        table.add_row(*row)
    console.print(table)


def assignment_update_command(
    course_ref: CourseArg,
    assignment_ref: AssignmentArg,
    name: Annotated[str | None, typer.Option("--name", help="A new name.")] = None,
    release: ReleaseOpt = None,
    due: DueOpt = None,
    late_policy: LatePolicyOpt = None,
    penalty: PenaltyOpt = None,
    late_days: LateDaysOpt = None,
    daily_limit: DailyLimitOpt = None,
    score_policy: ScorePolicyOpt = None,
    before_due: BeforeDueOpt = None,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Change an assignment's name, dates or policies; the options left out stay as they are.

    Late penalties and counted scores are computed when read: a change applies at once to
    every submission already made (no regrade needed).
    """
    from protocol.courses import Assignment

    body = _policies(
        datetime.now(UTC),
        release,
        due,
        late_policy,
        penalty,
        late_days,
        daily_limit,
        score_policy,
        before_due,
    )
    if name is not None:
        body["name"] = name
    if not body:
        raise fail("nothing to change: give at least one option (see --help)")
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        assignment = find_assignment(api, course, assignment_ref)
        path = f"/courses/{course.course_id}/assignments/{assignment.assignment_id}"
        data = api.call("PATCH", path, json=body, doing=f"change {assignment.name}")
    console.print(escape(describe(Assignment.model_validate(data))), soft_wrap=True)


def assignment_suite_command(
    course_ref: CourseArg,
    assignment_ref: AssignmentArg,
    suite: Annotated[
        Path,
        typer.Argument(metavar="FILE", help="The suite file of the assignment's profile (JSON)."),
    ],
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Replace an assignment's suite (after a fix); then `arena course regrade` grades again."""
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        assignment = find_assignment(api, course, assignment_ref)
        assignment = _put_suite(api, assignment, _read_suite(suite, assignment.profile))
    console.print(escape(describe(assignment)), soft_wrap=True)
    notes.print(
        escape(
            "submissions already graded keep their results until regraded: "
            f"arena course regrade {course.course_id} {assignment.assignment_id}"
        ),
        soft_wrap=True,
    )


# Roster ------------------------------------------------------------------------------------------


def _write_links(path: Path, invites: tuple[Invite, ...]) -> None:
    """Write the invite links as CSV, readable by the owner only (each link signs someone in)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LINK_COLUMNS)
    for invite in invites:
        member = invite.member
        writer.writerow(
            [member.student_id, member.name, member.email, member.role, invite.invite_url]
        )
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
        handle.write(buffer.getvalue())


def roster_import_command(
    course_ref: CourseArg,
    roster: Annotated[
        Path,
        typer.Argument(
            metavar="FILE.csv",
            help="A CSV file with a header: student_id,name,email and optionally role "
            "(student or ta).",
        ),
    ],
    links: Annotated[
        Path | None,
        typer.Option(
            "--links",
            help="Write the new members' invite links to this CSV file "
            "(student_id,name,email,role,invite_url; readable by you only).",
        ),
    ] = None,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Import a roster: new students (and TAs) get an invite link, known ones are updated.

    The server keeps only a hash of each link, so the links are shown this once: keep the
    --links file, or copy them from the output. A lost link is replaced with
    `arena course invite` (which makes the old one stop working). A file with a bad line is
    refused whole, with the line and column named.
    """
    from protocol.courses import RosterImport

    try:
        content = roster.read_bytes()
    except OSError as error:
        raise fail(f"cannot read {roster}: {error.strerror}") from None
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        data = api.call(
            "POST",
            f"/courses/{course.course_id}/members",
            content=content,
            headers={"Content-Type": "text/csv"},
            doing=f"import the roster into {course.name}",
        )
    result = RosterImport.model_validate(data)
    table = _table(f"{course.name}: roster import", ("student id", "name", "email", "role", ""))
    changes = [(invite.member, "new") for invite in result.created]
    changes += [(member, "updated") for member in result.updated]
    for member, change in changes[:_TABLE_ROWS]:
        row = (member.student_id, member.name, member.email, member.role)
        table.add_row(*map(escape, row), change)
    if len(changes) > _TABLE_ROWS:
        table.caption = f"the first {_TABLE_ROWS} of {len(changes):,}"
    console.print(table)
    console.print(
        f"{plural(len(result.created), 'new member')}, {len(result.updated):,} updated",
    )
    if not result.created:
        return
    if links is not None:
        try:
            _write_links(links, result.created)
        except OSError as error:
            _print_links(result.created)
            raise fail(
                f"cannot write {links}: {error.strerror}; the links are above: copy them now"
            ) from None
        console.print(escape(f"wrote {plural(len(result.created), 'invite link')} to {links}"))
    else:
        _print_links(result.created)
    notes.print(
        "[bold yellow]these invite links are shown this once[/]: the server keeps only their "
        "hashes. Send each student their own link (it signs in as them); a lost link is "
        f"replaced with `arena course invite {course.course_id} STUDENT_ID`.",
        soft_wrap=True,
    )


def _print_links(invites: tuple[Invite, ...]) -> None:
    """Print each new member's link on its own line, whole, so it can be copied."""
    for invite in invites:
        console.print(escape(f"{invite.member.student_id}  {invite.invite_url}"), soft_wrap=True)


def roster_list_command(
    course_ref: CourseArg, server: ServerOpt = DEFAULT_SERVER, token: TokenOpt = None
) -> None:
    """List a course's members (staff): roles, student ids, names, emails, who was dropped."""
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        roster = _members(api, course)
    columns = ("student id", "name", "email", "role", "member", "status")
    table = _table(f"{course.name}: roster", columns, whole={"member"})
    for member in roster.members:
        status = (
            "enrolled"
            if member.dropped_time_ms is None
            else f"dropped {format_time(member.dropped_time_ms, short=True)}"
        )
        table.add_row(
            escape(member.student_id),
            escape(member.name),
            escape(member.email),
            member.role,
            str(member.member_id),
            status,
        )
    console.print(table)
    enrolled = sum(1 for m in roster.members if m.dropped_time_ms is None and m.role == "student")
    console.print(f"{plural(enrolled, 'student')} enrolled")


def roster_drop_command(
    course_ref: CourseArg,
    student_id: Annotated[
        str, typer.Argument(metavar="STUDENT_ID", help="The member's student id on the roster.")
    ],
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Drop a member: their link stops working; their submissions are kept."""
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        member = find_member(api, course, student_id)
        api.call(
            "DELETE",
            f"/courses/{course.course_id}/members/{member.member_id}",
            doing=f"drop {student_id}",
            expect=204,
        )
    console.print(escape(f"dropped {student_id} from {course.name}; their link no longer works"))


def invite_command(
    course_ref: CourseArg,
    student_id: Annotated[
        str, typer.Argument(metavar="STUDENT_ID", help="The member's student id on the roster.")
    ],
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Issue a member a new invite link; their previous link stops working at once."""
    from protocol.courses import Invite

    with connect(server, token) as api:
        course = find_course(api, course_ref)
        member = find_member(api, course, student_id)
        data = api.call(
            "POST",
            f"/courses/{course.course_id}/members/{member.member_id}/invite",
            doing=f"issue {student_id} a new link",
        )
    invite = Invite.model_validate(data)
    console.print(escape(invite.invite_url), soft_wrap=True)
    notes.print(
        escape(
            f"the new sign-in link of {student_id} ({invite.member.name or 'no name'}), shown "
            "this once; their previous link no longer works"
        ),
        soft_wrap=True,
    )


# Submissions, gradebook, regrades ----------------------------------------------------------------


def _score(score: float | None, max_score: float | None) -> str:
    if score is None:
        return "-"
    return f"{score:g}" if max_score is None else f"{score:g} / {max_score:g}"


def submissions_command(
    course_ref: CourseArg,
    assignment_ref: AssignmentArg,
    student_id: Annotated[
        str | None, typer.Option("--student", help="Only this student's (staff).")
    ] = None,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """List an assignment's submissions: a student's own, or everyone's for staff."""
    from protocol.courses import SubmissionList

    with connect(server, token) as api:
        course = find_course(api, course_ref)
        assignment = find_assignment(api, course, assignment_ref)
        params = {}
        if student_id is not None:
            params["member"] = str(find_member(api, course, student_id).member_id)
        data = api.call(
            "GET",
            f"/courses/{course.course_id}/assignments/{assignment.assignment_id}/submissions",
            params=params,
            doing=f"list the submissions to {assignment.name}",
        )
    listed = SubmissionList.model_validate(data)
    table = _table(
        f"{course.name}, {assignment.name}: submissions",
        ("submission", "student", "submitted", "status", "score"),
        whole={"submission", "submitted", "status"},
    )
    for item in listed.submissions:
        status = item.status + (f", regraded {item.regrades}x" if item.regrades else "")
        score = _score(item.score, item.max_score)
        if item.late:
            score += f", {item.days_late} d late: {_score(item.final_score, None)}"
        table.add_row(
            item.submission_id,
            escape(item.student_id),
            format_time(item.created_time_ms, short=True),
            status,
            score,
        )
    console.print(table)


def gradebook_command(
    course_ref: CourseArg,
    assignment_ref: AssignmentArg,
    csv_out: Annotated[
        Path | None,
        typer.Option(
            "--csv",
            help="Also write the LMS export here: student_id,name,email,score,max_score,late,"
            "days_late,attempts,submitted_at.",
        ),
    ] = None,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Show an assignment's gradebook (staff): each student's counted score, lateness, attempts."""
    from protocol.courses import Gradebook

    with connect(server, token) as api:
        course = find_course(api, course_ref)
        assignment = find_assignment(api, course, assignment_ref)
        path = f"/courses/{course.course_id}/assignments/{assignment.assignment_id}/gradebook"
        book = Gradebook.model_validate(
            api.call("GET", path, doing=f"show the gradebook of {assignment.name}")
        )
        export = None
        if csv_out is not None:
            export = api.get_text(f"{path}.csv", doing="export the gradebook")
    title = f"{course.name}, {assignment.name}: the {book.assignment.score_policy} score counts"
    columns = ("student id", "name", "score", "late", "attempts", "last submitted")
    table = _table(title, columns, whole={"score", "last submitted"})
    for row in book.rows:
        table.add_row(
            escape(row.student_id),
            escape(row.name),
            _score(row.score, row.max_score),
            f"{row.days_late} d" if row.late else "",
            str(row.attempts),
            format_time(row.last_submitted_time_ms, short=True),
        )
    console.print(table)
    graded = sum(1 for row in book.rows if row.score is not None)
    console.print(f"{graded:,} of {plural(len(book.rows), 'student')} graded")
    if csv_out is not None and export is not None:
        try:
            csv_out.write_text(export, encoding="utf-8", newline="")
        except OSError as error:
            raise fail(f"cannot write {csv_out}: {error.strerror}") from None
        console.print(escape(f"wrote {csv_out}"))


def regrade_command(
    course_ref: CourseArg,
    assignment_ref: AssignmentArg,
    submissions: Annotated[
        list[str] | None,
        typer.Option(
            "--submission",
            help="A submission to grade again (repeat the option); default every submission.",
        ),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Show the progress until every one is graded.")
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait with --wait.")
    ] = 3600.0,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Grade an assignment's submissions again (staff), e.g. after `assignment suite`.

    Regrades bypass the daily limit and count toward no one's attempts. With --wait, exits 1
    if a grading failed (the grader's fault, not the student's) or the time ran out.
    """
    from protocol.courses import Regrade

    with connect(server, token) as api:
        course = find_course(api, course_ref)
        assignment = find_assignment(api, course, assignment_ref)
        regrade = Regrade.model_validate(
            api.call(
                "POST",
                f"/courses/{course.course_id}/assignments/{assignment.assignment_id}/regrade",
                json={"submission_ids": submissions or []},
                doing=f"regrade {assignment.name}",
                expect=202,
            )
        )
        console.print(
            f"regrade {regrade.regrade_id}: {plural(regrade.total, 'submission')} queued again"
        )
        if not wait or regrade.total == 0:
            return
        regrade = _follow_regrade(api, regrade, timeout)
    console.print(
        f"regrade {regrade.regrade_id}: {regrade.done:,} graded, {regrade.error:,} failed"
    )
    if regrade.error:
        notes.print(
            "a failed grading is the grader's fault, not the student's: see its report "
            f"(arena course submissions {course.course_id} {assignment.assignment_id})",
            soft_wrap=True,
        )
        raise typer.Exit(1)


def _follow_regrade(api: Api, regrade: Regrade, timeout: float) -> Regrade:
    """Poll the regrade until every job is graded, drawing its progress; exit 1 on timeout."""
    from protocol.courses import Regrade

    deadline = time.monotonic() + timeout
    path = f"/courses/{regrade.course_id}/regrades/{regrade.regrade_id}"
    columns = (
        TextColumn("[bold]regrade"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=notes, transient=True) as bar:
        task = bar.add_task("", total=regrade.total)
        while True:
            bar.update(
                task,
                completed=regrade.done + regrade.error,
                description=f"{regrade.queued} queued, {regrade.running} running, "
                f"{regrade.error} failed",
            )
            if regrade.finished:
                return regrade
            if time.monotonic() > deadline:
                break
            time.sleep(1.0)
            regrade = Regrade.model_validate(
                api.call("GET", path, doing="show the regrade's progress")
            )
    notes.print(
        f"regrade {regrade.regrade_id} still has {regrade.queued} queued and {regrade.running} "
        f"running after {timeout:g} s; follow it with GET {path}"
    )
    raise typer.Exit(1)
