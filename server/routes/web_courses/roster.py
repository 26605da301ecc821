"""The roster page (staff) and its forms (instructor): a roster import showing each new
member's invite link this once, a new link for a member, a drop."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import UploadFile

from protocol import HTTP_STATUS
from protocol.courses import Invite, Member
from protocol.errors import ErrorCode, ProtocolError
from server.courses import CourseService
from server.db.models import Player
from server.deps import (
    CoursesDep,
    OptionalPlayerDep,
    PagesDep,
    ViewerDep,
    app_settings,
    get_courses,
    get_pages,
    request_viewer,
)
from server.routes.course_common import CourseIdPath, MemberIdPath
from server.routes.uploads import UploadLimitRoute
from server.routes.web_courses.common import path_id, private_page, refused_page, signed_in
from server.web.pages import Pages
from server.web.security import check_origin

ROSTER_FORM = "/web/courses/{course_id}/members"
"""The roster import's form, which reads its body under its own limit."""


class RosterFormRoute(UploadLimitRoute):
    """The roster import's form: its body (a CSV file and pasted lines) cut off at the
    upload limit while it is read, and a body past it answered with the roster saying so."""

    requires_token = False

    async def refuse(self, request: Request, error: ProtocolError) -> Response:
        viewer = await request_viewer(request)
        courses, pages = await get_courses(request), await get_pages(request)
        course_id = path_id(request, "course_id")
        if course_id is None:
            raise error
        return await roster_page(request, pages, courses, viewer, course_id, error=error)


router = APIRouter(tags=["web pages"], include_in_schema=False)
roster_router = APIRouter(tags=["web pages"], route_class=RosterFormRoute, include_in_schema=False)


async def roster_page(
    request: Request,
    pages: Pages,
    courses: CourseService,
    viewer: Player | None,
    course_id: int,
    *,
    invites: Sequence[Invite] = (),
    updated: Sequence[Member] = (),
    error: ProtocolError | None = None,
    text: str = "",
    notice: str | None = None,
) -> HTMLResponse:
    """Render the roster (staff): the members; for the instructor the import form, the
    links just made (`invites`, shown this once) and a button for a new link and a drop."""
    try:
        player = signed_in(viewer)
        course = await courses.course(player, course_id)
        members = (await courses.members(player, course_id)).members
    except ProtocolError as refusal:
        return refused_page(request, pages, viewer, refusal)
    return private_page(
        request,
        pages,
        viewer,
        "course_roster.html",
        200 if error is None else HTTP_STATUS.get(error.code, 422),
        course=course,
        members=members,
        active_count=sum(1 for m in members if m.dropped_time_ms is None),
        instructor=course.role == "instructor",
        invites=invites,
        updated=updated,
        error=error,
        text=text,
        notice=notice,
    )


@router.get("/courses/{course_id}/roster", response_class=HTMLResponse)
async def show_roster(
    request: Request,
    course_id: CourseIdPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: ViewerDep,
) -> HTMLResponse:
    """The roster for staff; the instructor imports a CSV there and sees the new links once."""
    notice = None
    dropped = request.query_params.get("dropped", "")
    if dropped:
        notice = f"{dropped[:64]} is dropped: their link no longer signs in; their work is kept."
    return await roster_page(request, pages, courses, viewer, course_id, notice=notice)


async def _roster_file(request: Request) -> tuple[bytes, str]:
    """Return the roster the import form sends (its file, else its text) and the text typed."""
    received = await request.form()
    typed = received.get("text")
    text = typed if isinstance(typed, str) else ""
    upload = received.get("file")
    if isinstance(upload, UploadFile) and (upload.filename or upload.size):
        # One byte past the limit is enough for the service to refuse it, saying so.
        data = await upload.read(app_settings(request).course.max_roster_bytes + 1)
        return data, text
    return text.encode(), text


@roster_router.post(
    ROSTER_FORM,
    response_class=HTMLResponse,
    dependencies=[Depends(check_origin)],
)
async def import_from_form(
    request: Request,
    course_id: CourseIdPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> HTMLResponse:
    """Import a roster CSV (instructor; form fields `file`, else `text`) and show the roster
    with each new member's invite link, this once (or the form again saying what is wrong)."""
    data, text = await _roster_file(request)
    try:
        player = signed_in(viewer)
        if not data.strip():
            raise ProtocolError(
                ErrorCode.BAD_ROSTER, "choose a CSV file or paste its lines: the roster is empty"
            )
        imported = await courses.import_roster_csv(
            player, course_id, data, str(request.base_url).rstrip("/")
        )
    except ProtocolError as error:
        if viewer is None or error.code in (ErrorCode.UNKNOWN_COURSE, ErrorCode.FORBIDDEN):
            return refused_page(request, pages, viewer, error)
        return await roster_page(request, pages, courses, viewer, course_id, error=error, text=text)
    return await roster_page(
        request,
        pages,
        courses,
        viewer,
        course_id,
        invites=imported.created,
        updated=imported.updated,
    )


@router.post(
    "/web/courses/{course_id}/members/{member_id}/invite",
    response_class=HTMLResponse,
    dependencies=[Depends(check_origin)],
)
async def reissue_from_form(
    request: Request,
    course_id: CourseIdPath,
    member_id: MemberIdPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> HTMLResponse:
    """Give a member a new invite link (instructor; the old one stops working) and show the
    roster with it, this once."""
    try:
        invite = await courses.reissue_invite(
            signed_in(viewer), course_id, member_id, str(request.base_url).rstrip("/")
        )
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    return await roster_page(request, pages, courses, viewer, course_id, invites=(invite,))


@router.post(
    "/web/courses/{course_id}/members/{member_id}/drop",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin)],
)
async def drop_from_form(
    request: Request,
    course_id: CourseIdPath,
    member_id: MemberIdPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Drop a member (instructor): their link stops working, their work is kept; back to the
    roster, which says so."""
    try:
        player = signed_in(viewer)
        member = await courses.member(player, course_id, member_id)
        await courses.drop_member(player, course_id, member_id)
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    return RedirectResponse(
        f"/courses/{course_id}/roster?dropped={member.student_id}",
        status_code=status.HTTP_303_SEE_OTHER,
    )
