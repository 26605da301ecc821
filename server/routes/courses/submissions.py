"""Course submissions over REST: submitting, a submission, its results, report and files,
regrades and the gradebook (JSON or CSV)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Query, Request, Response, UploadFile, status
from fastapi.responses import HTMLResponse

from autograder.html import html_report
from protocol.courses import Gradebook, Regrade, RegradeRequest, Submission, SubmissionList
from server.deps import (
    ClientAddressDep,
    CoursesDep,
    OptionalPlayerDep,
    PagesDep,
    PlayerDep,
    SettingsDep,
)
from server.routes.course_common import (
    AssignmentIdPath,
    CourseIdPath,
    RegradeIdPath,
    SubmissionPath,
    gradebook_csv_response,
    submission_files_response,
)
from server.routes.courses.common import ERRORS, HTML_PAGE, signed_in
from server.routes.uploads import UploadLimitRoute, read_uploads
from server.routes.web_courses.pages import submission_page
from server.web.pages import wants_html

router = APIRouter(prefix="/courses", tags=["courses"], responses=ERRORS)
uploads = APIRouter(
    prefix="/courses", tags=["courses"], responses=ERRORS, route_class=UploadLimitRoute
)

SUBMISSIONS_PATH = "/courses/{course_id}/assignments/{assignment_id}/submissions"
"""The submission, whose upload is read under the grader's limit (`uploads`)."""

REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
"""The report's own page: its inline style and nothing else (every text in it is escaped)."""


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
    return await courses.submission(signed_in(viewer), course_id, submission_id)


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
