"""The course pages: the courses, a course, an assignment (with the submission form, and for
staff the gradebook), a submission with its report, and a student's history for staff.

The first four are the HTML answers of their resources' own routes (server.routes.courses),
which render them here when a browser asks (`wants_html`); the student's history is a page
only."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from autograder.html import report_body
from protocol import HTTP_STATUS
from protocol.courses import Assignment, Regrade, Submission
from protocol.errors import ErrorCode, ProtocolError
from server.courses import CourseService
from server.db.models import Player
from server.deps import CoursesDep, PagesDep, ViewerDep, get_classes
from server.grading import GradingService
from server.routes.course_common import CourseIdPath, MemberIdPath
from server.routes.web_courses.common import (
    context,
    is_staff,
    now_ms,
    private_page,
    refused_page,
    regrade_finished,
    regrade_text,
    signed_in,
    until,
)
from server.web.pages import Pages

router = APIRouter(tags=["web pages"], include_in_schema=False)

REFERENCE_BOTS = ("random", "greedy", "alphabeta:depth=2", "alphabeta:depth=4")
"""The house bots the class tournament form offers as references, weakest first."""
"""The pages only browsers ask for."""


async def courses_page(
    request: Request, courses: CourseService, pages: Pages, viewer: Player | None
) -> HTMLResponse:
    """Render the courses the reader is a member of (or how to sign in)."""
    listed = () if viewer is None else (await courses.list_courses(viewer)).courses
    return pages.render("courses.html", context(request, viewer, courses=listed))


async def course_page(
    request: Request, courses: CourseService, pages: Pages, viewer: Player | None, course_id: int
) -> HTMLResponse:
    """Render a course: its assignments with their due dates and policies (a student's own attempts
    and score), the staff's links."""
    try:
        player = signed_in(viewer)
        course = await courses.course(player, course_id)
        listed = await courses.assignments(player, course_id)
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    return pages.render(
        "course.html",
        context(
            request,
            viewer,
            course=course,
            assignments=listed.assignments,
            staff=is_staff(course),
            instructor=course.role == "instructor",
        ),
    )


async def assignment_page(
    request: Request,
    pages: Pages,
    courses: CourseService,
    grading: GradingService,
    viewer: Player | None,
    course_id: int,
    assignment_id: int,
    error: ProtocolError | None = None,
    tournament_error: ProtocolError | None = None,
) -> HTMLResponse:
    """Render an assignment's page: its facts, the submission form (with `error`, the refusal
    of an upload, and its status), the reader's own submissions; for staff the gradebook
    with its regrade and export (and the progress of the regrade `?regrade=` names). An agent
    assignment lists its class tournaments, with the staff's form to start one (and
    `tournament_error`, why one was not started)."""
    try:
        player = signed_in(viewer)
        course = await courses.course(player, course_id)
        assignment = await courses.assignment(player, course_id, assignment_id)
        staff = is_staff(course)
        gradebook = await courses.gradebook(player, course_id, assignment_id) if staff else None
        # Staff see their own test submissions here; a student's own are all they may see.
        mine = await courses.submissions(
            player, course_id, assignment_id, course.member_id if staff else None
        )
        regrade = await _regrade_asked(request, courses, player, course_id) if staff else None
        classes = (
            (await (await get_classes(request)).of_assignment(player, course_id, assignment_id))
            if assignment.profile == "agent"
            else None
        )
    except ProtocolError as refusal:
        return refused_page(request, pages, viewer, refusal)
    profile = next((p for p in grading.profiles().profiles if p.name == assignment.profile), None)
    now = now_ms()
    response = private_page(
        request,
        pages,
        viewer,
        "course_assignment.html",
        200 if error is None else HTTP_STATUS.get(error.code, 422),
        course=course,
        assignment=assignment,
        staff=staff,
        gradebook=gradebook,
        submissions=mine.submissions,
        regrade=regrade,
        regrade_finished=regrade is not None and regrade_finished(regrade),
        regrade_text="" if regrade is None else regrade_text(regrade),
        error=error,
        class_tournaments=None if classes is None else classes.tournaments,
        tournament_error=tournament_error,
        reference_bots=REFERENCE_BOTS,
        profile_text="" if profile is None else profile.description,
        main_file="checkers.py" if profile is None else profile.main_file,
        until=lambda time_ms: until(time_ms, now),
    )
    if tournament_error is not None:
        response.status_code = HTTP_STATUS.get(tournament_error.code, 422)
    if error is not None and error.code is ErrorCode.SUBMISSION_LIMIT:
        retry = error.details.get("retry_after_s")
        if isinstance(retry, int | float):
            response.headers["Retry-After"] = str(math.ceil(retry))
    return response


async def _regrade_asked(
    request: Request, courses: CourseService, player: Player, course_id: int
) -> Regrade | None:
    """Return the progress of the regrade the page's `?regrade=` names (None without one)."""
    asked = request.query_params.get("regrade", "")
    if not asked.isdigit() or len(asked) > 10:
        return None
    return await courses.regrade_progress(player, course_id, int(asked))


async def submission_page(
    request: Request,
    courses: CourseService,
    pages: Pages,
    viewer: Player | None,
    course_id: int,
    submission_id: str,
) -> HTMLResponse:
    """Render a submission: its status and place in the queue, followed live, then its report as
    the reader may see it (a student before the due date: filtered by the assignment)."""
    try:
        player = signed_in(viewer)
        course = await courses.course(player, course_id)
        submission, report = await courses.submission_report(player, course_id, submission_id)
        assignment = await courses.assignment(player, course_id, submission.assignment_id)
        staff = is_staff(course)
        member = await courses.member(player, course_id, submission.member_id) if staff else None
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    return private_page(
        request,
        pages,
        viewer,
        "course_submission.html",
        course=course,
        assignment=assignment,
        submission=submission,
        member=member,
        staff=staff,
        # report_body escapes every text it shows.
        report_html=None if report is None else Markup(report_body(report)),
    )


@dataclass(frozen=True)
class AssignmentHistory:
    """One assignment and a member's submissions to it, newest first (the student's page)."""

    assignment: Assignment
    submissions: Sequence[Submission]


@router.get("/courses/{course_id}/students/{member_id}", response_class=HTMLResponse)
async def student_page(
    request: Request,
    course_id: CourseIdPath,
    member_id: MemberIdPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: ViewerDep,
) -> HTMLResponse:
    """One member's history for staff: every assignment's submissions with their reports,
    files and a regrade button each."""
    try:
        player = signed_in(viewer)
        course = await courses.course(player, course_id)
        member = await courses.member(player, course_id, member_id)
        listed = await courses.assignments(player, course_id)
        submitted = await courses.member_submissions(player, course_id, member_id)
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    history = [
        AssignmentHistory(
            assignment,
            [s for s in submitted.submissions if s.assignment_id == assignment.assignment_id],
        )
        for assignment in listed.assignments
    ]
    notice = None
    if request.query_params.get("regraded"):
        notice = "The submission is queued to be graded again; its status follows below."
    return private_page(
        request,
        pages,
        viewer,
        "course_student.html",
        course=course,
        member=member,
        history=history,
        notice=notice,
    )
