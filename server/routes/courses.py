"""Courses over REST: courses, rosters and invite links, assignments and their suites, course
submissions, gradebooks and regrades (docs/PROTOCOL.md, "Courses").

Every route takes a bearer token (a player's, or a course member's invite token) or the
browser's cookie holding one (server.deps, `optional_caller`) and hands the player to
`CourseService`, which decides every policy; a route only moves bytes. The courses, a course,
an assignment and a submission answer a browser with their pages (`wants_html`,
server.routes.web_courses.pages). The roster
import reads its body under its own limit (`course_max_roster_bytes`, a CSV or JSON rows) and
the submission's upload under the grader's (`UploadLimitRoute`), so both are exempt from the
general body limit (server.app).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, File, Query, Request, Response, UploadFile, status
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from autograder.html import html_report
from protocol.courses import (
    Assignment,
    AssignmentCreate,
    AssignmentList,
    AssignmentUpdate,
    Course,
    CourseCreate,
    CourseCreated,
    CourseList,
    Gradebook,
    Invite,
    MemberList,
    Regrade,
    RegradeRequest,
    RosterImport,
    RosterRows,
    Submission,
    SubmissionList,
)
from protocol.errors import ErrorCode, ProtocolError, ScalarValue
from protocol.messages import ErrorResponse
from server.db.models import Player
from server.deps import (
    ClientAddressDep,
    CoursesDep,
    GradingDep,
    OptionalPlayerDep,
    PagesDep,
    PlayerDep,
    SettingsDep,
    missing_credential,
)
from server.routes.course_common import (
    AssignmentIdPath,
    CourseIdPath,
    MemberIdPath,
    RegradeIdPath,
    SubmissionPath,
    gradebook_csv_response,
    submission_files_response,
)
from server.routes.uploads import UploadLimitRoute, read_uploads
from server.routes.web_courses.pages import (
    assignment_page,
    course_page,
    courses_page,
    submission_page,
)
from server.web.pages import wants_html

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 409, 413, 422, 429, 503)
}

router = APIRouter(prefix="/courses", tags=["courses"], responses=ERRORS)
uploads = APIRouter(
    prefix="/courses", tags=["courses"], responses=ERRORS, route_class=UploadLimitRoute
)


ROSTER_PATH = "/courses/{course_id}/members"
SUBMISSIONS_PATH = "/courses/{course_id}/assignments/{assignment_id}/submissions"
BODY_LIMIT_EXEMPT = (("POST", ROSTER_PATH), ("POST", SUBMISSIONS_PATH))
"""The course routes that read their bodies under their own limits."""

REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
"""The report's own page: its inline style and nothing else (every text in it is escaped)."""


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_course(
    request: Request, body: CourseCreate, courses: CoursesDep, player: PlayerDep
) -> CourseCreated:
    """Create a course; you become its instructor. The answer holds your sign-in link for the
    web (shown this once)."""
    return await courses.create_course(player, body, str(request.base_url))


HTML_PAGE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/html": {"schema": {"type": "string"}}}}
}
"""A route whose resource a browser gets as its page."""


def _signed_in(viewer: Player | None) -> Player:
    if viewer is None:
        raise missing_credential()
    return viewer


@router.get("", response_model=CourseList, responses=HTML_PAGE)
async def list_courses(
    request: Request, courses: CoursesDep, pages: PagesDep, viewer: OptionalPlayerDep
) -> CourseList | HTMLResponse:
    """List your courses, with your role in each; a browser gets the courses page."""
    if wants_html(request):
        return await courses_page(request, courses, pages, viewer)
    return await courses.list_courses(_signed_in(viewer))


@router.get("/{course_id}", response_model=Course, responses=HTML_PAGE)
async def get_course(
    request: Request,
    course_id: CourseIdPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> Course | HTMLResponse:
    """Return a course of yours; a browser gets its page (its assignments, the staff's links)."""
    if wants_html(request):
        return await course_page(request, courses, pages, viewer, course_id)
    return await courses.course(_signed_in(viewer), course_id)


@router.get("/{course_id}/assignments")
async def list_assignments(
    course_id: CourseIdPath, courses: CoursesDep, player: PlayerDep
) -> AssignmentList:
    """List the course's assignments (a student: the released ones, with their standing)."""
    return await courses.assignments(player, course_id)


@router.post("/{course_id}/assignments", status_code=status.HTTP_201_CREATED)
async def create_assignment(
    course_id: CourseIdPath, body: AssignmentCreate, courses: CoursesDep, player: PlayerDep
) -> Assignment:
    """Create an assignment (instructor), with the suite given or a generated one (an endgame
    suite takes seconds per puzzle to generate)."""
    return await courses.create_assignment(player, course_id, body)


@router.get(
    "/{course_id}/assignments/{assignment_id}", response_model=Assignment, responses=HTML_PAGE
)
async def get_assignment(
    request: Request,
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    grading: GradingDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> Assignment | HTMLResponse:
    """Return an assignment (to a student once released). A browser gets its page: for a
    student the submission form and their own submissions, followed live; for staff the
    gradebook, regrade all and the CSV export besides."""
    if wants_html(request):
        return await assignment_page(
            request, pages, courses, grading, viewer, course_id, assignment_id
        )
    return await courses.assignment(_signed_in(viewer), course_id, assignment_id)


@router.patch("/{course_id}/assignments/{assignment_id}")
async def update_assignment(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    body: AssignmentUpdate,
    courses: CoursesDep,
    player: PlayerDep,
) -> Assignment:
    """Change an assignment's dates or policies (instructor); scores follow at once."""
    return await courses.update_assignment(player, course_id, assignment_id, body)


@router.put("/{course_id}/assignments/{assignment_id}/suite")
async def replace_suite(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    player: PlayerDep,
    suite: Annotated[dict[str, Any], Body(description="A suite file's JSON (docs/GRADER.md).")],
) -> Assignment:
    """Replace an assignment's suite (instructor); regrade to apply it to past submissions."""
    data = json.dumps(suite).encode("utf-8")
    return await courses.replace_suite(player, course_id, assignment_id, data)


@router.get("/{course_id}/members")
async def list_members(
    course_id: CourseIdPath, courses: CoursesDep, player: PlayerDep
) -> MemberList:
    """Return the roster (staff)."""
    return await courses.members(player, course_id)


@router.post(
    "/{course_id}/members",
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "A roster CSV (`student_id,name,email[,role]`, a header optional) "
            "as text/csv, or a `roster_rows` JSON body.",
            "content": {
                "text/csv": {"schema": {"type": "string"}},
                "application/json": {"schema": {"type": "object"}},
            },
        }
    },
)
async def import_roster(
    course_id: CourseIdPath,
    request: Request,
    courses: CoursesDep,
    settings: SettingsDep,
    player: PlayerDep,
) -> RosterImport:
    """Import students and TAs (instructor): new members get a sign-in link (shown this once).

    A CSV that cannot be read is refused whole (BAD_ROSTER naming the line and column).
    """
    data = await _read_body(request, settings.course.max_roster_bytes)
    base_url = str(request.base_url)
    if request.headers.get("content-type", "").split(";")[0].strip() == "application/json":
        try:
            rows = RosterRows.model_validate_json(data)
        except ValidationError as error:
            raise _invalid(error) from None
        return await courses.import_roster(player, course_id, rows.rows, base_url)
    return await courses.import_roster_csv(player, course_id, data, base_url)


@router.post("/{course_id}/members/{member_id}/invite")
async def reissue_invite(
    request: Request,
    course_id: CourseIdPath,
    member_id: MemberIdPath,
    courses: CoursesDep,
    player: PlayerDep,
) -> Invite:
    """Give a member a new sign-in link (instructor); the old one stops working."""
    return await courses.reissue_invite(player, course_id, member_id, str(request.base_url))


@router.delete("/{course_id}/members/{member_id}", status_code=status.HTTP_204_NO_CONTENT)
async def drop_member(
    course_id: CourseIdPath, member_id: MemberIdPath, courses: CoursesDep, player: PlayerDep
) -> Response:
    """Drop a member (instructor): their link stops working; their submissions are kept."""
    await courses.drop_member(player, course_id, member_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@uploads.post(
    "/{course_id}/assignments/{assignment_id}/submissions", status_code=status.HTTP_202_ACCEPTED
)
async def submit(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    settings: SettingsDep,
    player: PlayerDep,
    response: Response,
    address: ClientAddressDep,
    files: Annotated[
        list[UploadFile],
        File(description="The program and its modules as plain files, or one .zip."),
    ],
) -> Submission:
    """Submit to an assignment (multipart `files`); poll the submission until it is graded."""
    uploaded = await read_uploads(files, settings.grader.max_upload_bytes)
    submission = await courses.submit(player, course_id, assignment_id, uploaded, address)
    response.headers["Location"] = f"/courses/{course_id}/submissions/{submission.submission_id}"
    return submission


@router.get("/{course_id}/assignments/{assignment_id}/submissions")
async def list_submissions(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    player: PlayerDep,
    member: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> SubmissionList:
    """List submissions to an assignment: a student's own; staff all, or one member's."""
    return await courses.submissions(player, course_id, assignment_id, member)


@router.get(
    "/{course_id}/submissions/{submission_id}", response_model=Submission, responses=HTML_PAGE
)
async def get_submission(
    request: Request,
    course_id: CourseIdPath,
    submission_id: SubmissionPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> Submission | HTMLResponse:
    """Return a submission (its submitter or staff): status, queue position, scores. A
    browser gets its page: the status followed live (its script reads this JSON), then the
    report as the reader may see it (a student before the due date: filtered by the
    assignment)."""
    if wants_html(request):
        return await submission_page(request, courses, pages, viewer, course_id, submission_id)
    return await courses.submission(_signed_in(viewer), course_id, submission_id)


@router.get("/{course_id}/submissions/{submission_id}/results")
async def get_results(
    course_id: CourseIdPath, submission_id: SubmissionPath, courses: CoursesDep, player: PlayerDep
) -> dict[str, Any]:
    """Return a graded submission's results.json (as the reader may see it)."""
    return await courses.results(player, course_id, submission_id)


@router.get("/{course_id}/submissions/{submission_id}/report", response_class=HTMLResponse)
async def get_report(
    course_id: CourseIdPath, submission_id: SubmissionPath, courses: CoursesDep, player: PlayerDep
) -> HTMLResponse:
    """Return a graded submission's report as a page of its own (as the reader may see it)."""
    report = await courses.report(player, course_id, submission_id)
    return HTMLResponse(
        html_report(report),
        headers={"Content-Security-Policy": REPORT_CSP, "Referrer-Policy": "no-referrer"},
    )


@router.get(
    "/{course_id}/submissions/{submission_id}/files",
    response_class=Response,
    responses={200: {"content": {"application/zip": {}}}},
)
async def get_files(
    course_id: CourseIdPath, submission_id: SubmissionPath, courses: CoursesDep, player: PlayerDep
) -> Response:
    """Download a submission's files as a zip (its submitter or staff)."""
    return await submission_files_response(courses, player, course_id, submission_id)


@router.post(
    "/{course_id}/assignments/{assignment_id}/regrade", status_code=status.HTTP_202_ACCEPTED
)
async def regrade(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    player: PlayerDep,
    body: RegradeRequest | None = None,
) -> Regrade:
    """Grade submissions again (staff): those named, or all of the assignment's; follow the
    progress at `GET /courses/{id}/regrades/{regrade_id}`."""
    ids = () if body is None else body.submission_ids
    return await courses.regrade(player, course_id, assignment_id, ids)


@router.get("/{course_id}/regrades/{regrade_id}")
async def get_regrade(
    course_id: CourseIdPath, regrade_id: RegradeIdPath, courses: CoursesDep, player: PlayerDep
) -> Regrade:
    """Return a regrade's progress (staff)."""
    return await courses.regrade_progress(player, course_id, regrade_id)


@router.get("/{course_id}/assignments/{assignment_id}/gradebook")
async def get_gradebook(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    player: PlayerDep,
) -> Gradebook:
    """Return an assignment's gradebook (staff): one row per enrolled student."""
    return await courses.gradebook(player, course_id, assignment_id)


@router.get(
    "/{course_id}/assignments/{assignment_id}/gradebook.csv",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}}},
)
async def get_gradebook_csv(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    player: PlayerDep,
) -> Response:
    """Export the gradebook as CSV for an LMS (staff): student_id, name, email, score,
    max_score, late, days_late, attempts, submitted_at."""
    return await gradebook_csv_response(courses, player, course_id, assignment_id)


async def _read_body(request: Request, limit: int) -> bytes:
    """Read a body of at most `limit` bytes; MESSAGE_TOO_LARGE as soon as it passes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(size, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: int, limit: int) -> ProtocolError:
    return ProtocolError(
        ErrorCode.MESSAGE_TOO_LARGE,
        f"the roster is over {limit} bytes ({size} so far); split it",
        {"size": size, "limit": limit},
    )


def _invalid(error: ValidationError) -> ProtocolError:
    details: dict[str, ScalarValue] = {}
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"]) or "(body)"
        details.setdefault(where[:128], str(problem["msg"]))
    listed = "; ".join(f"{where}: {what}" for where, what in details.items())
    return ProtocolError(ErrorCode.VALIDATION_ERROR, f"bad roster rows: {listed}"[:1000], details)
