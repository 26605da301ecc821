"""The assignment page's forms: a submission (its upload read under the grader's limit) and a
regrade (staff)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import UploadFile

from protocol.errors import ErrorCode, ProtocolError
from server.deps import (
    ClientAddressDep,
    CoursesDep,
    GradingDep,
    OptionalPlayerDep,
    PagesDep,
    SettingsDep,
    get_courses,
    get_grading,
    get_pages,
    limit_upload,
    request_viewer,
)
from server.routes.course_common import AssignmentIdPath, CourseIdPath
from server.routes.uploads import UploadLimitRoute, read_uploads
from server.routes.web_courses.common import path_id, refused_page, signed_in
from server.routes.web_courses.pages import assignment_page
from server.web.security import check_origin

SUBMISSIONS_FORM = "/web/courses/{course_id}/assignments/{assignment_id}/submissions"
"""The submission form, which reads its upload under the grader's upload limit."""


class CourseUploadRoute(UploadLimitRoute):
    """The submission form's upload: the grader's upload limit on the raw body, no bearer
    token asked first (the cookie says who submits), and an upload past the limit answered with the
    assignment's page saying so."""

    requires_token = False

    async def refuse(self, request: Request, error: ProtocolError) -> Response:
        viewer = await request_viewer(request)
        courses, grading = await get_courses(request), await get_grading(request)
        pages = await get_pages(request)
        course_id, assignment_id = (
            path_id(request, "course_id"),
            path_id(request, "assignment_id"),
        )
        if course_id is None or assignment_id is None:
            raise error
        return await assignment_page(
            request, pages, courses, grading, viewer, course_id, assignment_id, error
        )


router = APIRouter(tags=["web pages"], include_in_schema=False)
uploads_router = APIRouter(
    tags=["web pages"], route_class=CourseUploadRoute, include_in_schema=False
)


@uploads_router.post(
    SUBMISSIONS_FORM,
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin), Depends(limit_upload)],
)
async def submit_from_form(
    request: Request,
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    grading: GradingDep,
    settings: SettingsDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
    address: ClientAddressDep,
) -> Response:
    """Submit to an assignment from its page (multipart `files`) as the signed-in member; go
    to the submission's page, or show the assignment's page again saying why not (the
    service's refusal: deadline passed, over the daily limit and when the next is allowed)."""
    received = await request.form()
    # A file input left empty still sends one part, without a name or a byte.
    files = [
        item
        for item in received.getlist("files")
        if isinstance(item, UploadFile) and (item.filename or item.size)
    ]
    try:
        player = signed_in(viewer)
        if not files:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR, "choose the files of your program, or one .zip"
            )
        uploads = await read_uploads(files, settings.grader.max_upload_bytes)
        submission = await courses.submit(player, course_id, assignment_id, uploads, address)
    except ProtocolError as error:
        if viewer is None or error.code in (
            ErrorCode.UNKNOWN_COURSE,
            ErrorCode.UNKNOWN_ASSIGNMENT,
        ):
            return refused_page(request, pages, viewer, error)
        return await assignment_page(
            request, pages, courses, grading, viewer, course_id, assignment_id, error
        )
    return RedirectResponse(
        f"/courses/{course_id}/submissions/{submission.submission_id}",
        status_code=status.HTTP_303_SEE_OTHER,
    )


@router.post(
    "/web/courses/{course_id}/assignments/{assignment_id}/regrade",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin)],
)
async def regrade_from_form(
    request: Request,
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Grade again (staff) one submission (form field `submission_id`) or every submission
    to the assignment; go to the page that follows it: the assignment's with the regrade's
    progress, or (`next`) the submission's or the student's."""
    received = await request.form()
    chosen = received.get("submission_id")
    wanted = received.get("next")
    try:
        player = signed_in(viewer)
        ids = (chosen,) if isinstance(chosen, str) and chosen else ()
        regrade = await courses.regrade(player, course_id, assignment_id, ids)
        if ids and wanted == "student":
            submission = await courses.submission(player, course_id, ids[0])
            target = f"/courses/{course_id}/students/{submission.member_id}?regraded=1"
        elif ids and wanted == "submission":
            target = f"/courses/{course_id}/submissions/{ids[0]}"
        else:
            target = (
                f"/courses/{course_id}/assignments/{assignment_id}"
                f"?regrade={regrade.regrade_id}#regrade"
            )
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    return RedirectResponse(target, status_code=status.HTTP_303_SEE_OTHER)
