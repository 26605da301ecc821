"""`arena course assignment add|list|update|suite`: a course's assignments, their dates and
policies (said in the words of protocol.course_policy, as the course pages say them) and their
suites."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from cli.common import fail, plural
from cli.course.common import (
    AssignmentArg,
    CourseArg,
    console,
    find_assignment,
    find_course,
    format_time,
    notes,
    score_text,
    table,
)
from cli.course.options import (
    AssignmentProfile,
    BeforeDueOpt,
    DailyLimitOpt,
    DueOpt,
    LateDaysOpt,
    LatePolicyOpt,
    PenaltyOpt,
    ReleaseOpt,
    ScorePolicyOpt,
    policies,
)
from cli.rest import DEFAULT_SERVER, Api, ServerOpt, TokenOpt, connect

if TYPE_CHECKING:
    from protocol.courses import Assignment


def describe(assignment: Assignment) -> str:
    """Return an assignment's dates and policies in one paragraph, times in this machine's
    time zone."""
    from protocol.course_policy import describe as in_words

    return in_words(assignment, format_time)


def _read_suite(path: Path, profile: str) -> Any:
    """Return a suite file's JSON once the grader's loader for `profile` accepts it, or exit 2
    naming the problem (before anything is sent; the server checks it again)."""
    from autograder.agent_suite import AgentSuiteError
    from autograder.agent_suite_file import load_agent_suite
    from autograder.endgame_suite import PuzzleError, load_puzzles

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
    body |= policies(
        release=release,
        due=due,
        late_policy=late_policy,
        penalty=penalty,
        late_days=late_days,
        daily_limit=daily_limit,
        score_policy=score_policy,
        before_due=before_due,
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
    from protocol.course_policy import late_short
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
    shown = table(f"{course.name}: assignments", columns, whole={"id", "due", "released", "late"})
    for assignment in listed.assignments:
        late = late_short(assignment)
        due_text = format_time(assignment.due_time_ms, short=True)
        if student:
            row = [
                str(assignment.assignment_id),
                escape(assignment.name),
                due_text,
                late,
                str(assignment.attempts or 0),
                score_text(assignment.score, assignment.max_score),
                str(assignment.submissions_left_today),
            ]
        else:
            policy = (
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
                escape(policy),
            ]
        shown.add_row(*row)
    console.print(shown)


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

    body = policies(
        release=release,
        due=due,
        late_policy=late_policy,
        penalty=penalty,
        late_days=late_days,
        daily_limit=daily_limit,
        score_policy=score_policy,
        before_due=before_due,
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
    from protocol.courses import Assignment

    with connect(server, token) as api:
        course = find_course(api, course_ref)
        assignment = find_assignment(api, course, assignment_ref)
        data = api.call(
            "PUT",
            f"/courses/{course.course_id}/assignments/{assignment.assignment_id}/suite",
            json=_read_suite(suite, assignment.profile),
            doing=f"take the suite of {assignment.name}",
        )
        assignment = Assignment.model_validate(data)
    console.print(escape(describe(assignment)), soft_wrap=True)
    notes.print(
        escape(
            "submissions already graded keep their results until regraded: "
            f"arena course regrade {course.course_id} {assignment.assignment_id}"
        ),
        soft_wrap=True,
    )
