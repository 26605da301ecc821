"""`arena course submissions|gradebook|regrade`: an assignment's submissions, its gradebook
with the LMS export, and regrades followed to their end."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cli.common import fail, plural
from cli.course.common import (
    AssignmentArg,
    CourseArg,
    console,
    find_assignment,
    find_course,
    find_member,
    format_time,
    notes,
    score_text,
    table,
)
from cli.rest import DEFAULT_SERVER, Api, ServerOpt, TokenOpt, connect

if TYPE_CHECKING:
    from protocol.courses import Regrade


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
    shown = table(
        f"{course.name}, {assignment.name}: submissions",
        ("submission", "student", "submitted", "status", "score"),
        whole={"submission", "submitted", "status"},
    )
    for item in listed.submissions:
        status = item.status + (f", regraded {item.regrades}x" if item.regrades else "")
        score = score_text(item.score, item.max_score)
        if item.late:
            score += f", {item.days_late} d late: {score_text(item.final_score, None)}"
        shown.add_row(
            item.submission_id,
            escape(item.student_id),
            format_time(item.created_time_ms, short=True),
            status,
            score,
        )
    console.print(shown)


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
    shown = table(title, columns, whole={"score", "last submitted"})
    for row in book.rows:
        shown.add_row(
            escape(row.student_id),
            escape(row.name),
            score_text(row.score, row.max_score),
            f"{row.days_late} d" if row.late else "",
            str(row.attempts),
            format_time(row.last_submitted_time_ms, short=True),
        )
    console.print(shown)
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
