"""The course pages: sign in with an invite link, the courses, an assignment, a submission, a
student's history, the roster; and the forms and scripts' routes behind them.

Who is asking is the browser's cookie (`arena_guest`, as for a guest player): `POST /web/join`
sets it to the invite token of the link, which the player registry resolves to the member's
player like any token. Every page and route calls `CourseService` (server.courses), which
decides every policy (who may see what, deadlines, daily limits, what a student sees before
the due date); a refusal is shown as a page with the service's own message.

Four pages share the URL of their REST resource (`/courses`, `/courses/{id}`, an assignment, a
submission): they are `PageRoute`s, which answer a browser only (`wants_html`), so a program
asking the same URL reaches the REST route (server.routes.courses) registered after them. The
student's page and the roster are pages only. The forms post to `/web/courses/...`, each
origin-checked (`check_origin`); the scripts read `/web/courses/...` JSON by the cookie.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from markupsafe import Markup
from starlette.datastructures import UploadFile
from starlette.routing import Match
from starlette.types import Scope

from grader.html import report_body
from protocol import HTTP_STATUS, PROTOCOL_VERSION, course_policy
from protocol.courses import (
    Assignment,
    Course,
    Invite,
    Member,
    Regrade,
    Submission,
)
from protocol.errors import ErrorCode, ProtocolError
from server.courses import CourseService
from server.db.models import Player
from server.deps import (
    GUEST_COOKIE,
    ClientAddressDep,
    CoursesDep,
    GradingDep,
    GuestDep,
    OptionalGuestDep,
    PagesDep,
    SettingsDep,
    app_settings,
    get_courses,
    get_grading,
    get_pages,
    get_players,
    limit_web_upload,
    optional_guest,
)
from server.grading import GradingService
from server.routes.uploads import UploadLimitRoute, read_uploads
from server.routes.web import check_origin, set_guest_cookie
from server.web.pages import Pages, wants_html

CourseId = Annotated[int, Path(ge=1, le=2**31 - 1)]
AssignmentId = Annotated[int, Path(ge=1, le=2**31 - 1)]
MemberId = Annotated[int, Path(ge=1, le=2**31 - 1)]
RegradeId = Annotated[int, Path(ge=1, le=2**31 - 1)]
SubmissionId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]
InviteToken = Annotated[str, Path(min_length=1, max_length=256)]


class PageRoute(APIRoute):
    """A page at the URL of a REST resource: it answers a browser only.

    Any other client (`Accept` without `text/html` before `application/json`: curl, httpx,
    the CLI) does not match it, and reaches the REST route of the same path registered after
    it. The page is left out of the OpenAPI document, which describes the REST route.
    """

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and not wants_html(Request(scope)):
            return Match.NONE, {}
        return super().matches(scope)


def _path_id(request: Request, name: str) -> int | None:
    """Return the id `name` of a request's path, None when it is not one (a refusal raised
    before the route's own parameters are checked)."""
    text = str(request.path_params.get(name, ""))
    return int(text) if text.isdigit() and len(text) <= 10 else None


class CourseUploadRoute(UploadLimitRoute):
    """The submission form's upload: the grader's upload limit on the raw body, no bearer
    token asked (the cookie says who submits), and an upload past the limit answered with the
    assignment's page saying so."""

    requires_token = False

    async def refuse(self, request: Request, error: ProtocolError) -> Response:
        viewer = await optional_guest(request, await get_players(request))
        courses, grading = await get_courses(request), await get_grading(request)
        pages = await get_pages(request)
        course_id, assignment_id = (
            _path_id(request, "course_id"),
            _path_id(request, "assignment_id"),
        )
        if course_id is None or assignment_id is None:
            raise error
        return await assignment_page(
            request, pages, courses, grading, viewer, course_id, assignment_id, error
        )


class RosterFormRoute(UploadLimitRoute):
    """The roster import's form: its body (a CSV file and pasted lines) cut off at the
    upload limit while it is read, and a body past it answered with the roster saying so."""

    requires_token = False

    async def refuse(self, request: Request, error: ProtocolError) -> Response:
        viewer = await optional_guest(request, await get_players(request))
        courses, pages = await get_courses(request), await get_pages(request)
        course_id = _path_id(request, "course_id")
        if course_id is None:
            raise error
        return await roster_page(request, pages, courses, viewer, course_id, error=error)


SUBMISSIONS_FORM = "/web/courses/{course_id}/assignments/{assignment_id}/submissions"
ROSTER_FORM = "/web/courses/{course_id}/members"
BODY_LIMIT_EXEMPT = (("POST", SUBMISSIONS_FORM), ("POST", ROSTER_FORM))
"""The forms that read their bodies under their own limit (the grader's upload limit)."""

pages_router = APIRouter(tags=["web pages"], route_class=PageRoute, include_in_schema=False)
router = APIRouter(tags=["web pages"], include_in_schema=False)
uploads_router = APIRouter(
    tags=["web pages"], route_class=CourseUploadRoute, include_in_schema=False
)
roster_router = APIRouter(tags=["web pages"], route_class=RosterFormRoute, include_in_schema=False)

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


def _context(request: Request, viewer: Player | None, **values: Any) -> dict[str, Any]:
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
        "now_ms": _now_ms(),
        **values,
    }


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _is_staff(course: Course) -> bool:
    return course.role in ("instructor", "ta")


NO_STORE = {"Cache-Control": "no-store"}
"""For pages and files that only their reader may see (or links shown once): kept nowhere."""

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


def refused_page(
    request: Request, pages: Pages, viewer: Player | None, error: ProtocolError
) -> HTMLResponse:
    """Render the page saying why the service refused: its message and code, with the
    status the REST route answers it with."""
    response = pages.render(
        "course_refused.html",
        _context(
            request,
            viewer,
            heading=REFUSALS.get(error.code, "Not done"),
            error=error,
            signed_in=viewer is not None,
        ),
        status_code=HTTP_STATUS.get(error.code, 400),
    )
    response.headers.update(NO_STORE)
    return response


def not_signed_in() -> ProtocolError:
    """Return the refusal of a course page to a browser that is signed in to none."""
    return ProtocolError(
        ErrorCode.UNAUTHORIZED,
        "this browser is not signed in: open the invite link your course staff sent you",
    )


def _signed_in(viewer: Player | None) -> Player:
    if viewer is None:
        raise not_signed_in()
    return viewer


# -- signing in -------------------------------------------------------------------------------


def check_join_origin(request: Request) -> None:
    """Refuse a sign-in form posted from another site's page (FORBIDDEN), as `check_origin`.

    The join page's `Referrer-Policy: no-referrer` makes the browser send its form with
    `Origin: null`, so a null origin is taken when the browser's own Fetch Metadata says the
    form came from this server's page (`Sec-Fetch-Site: same-origin`). Signing a browser in
    from another site would let that site choose whose account the person works in.
    """
    origin = request.headers.get("origin")
    if origin == "null" and request.headers.get("sec-fetch-site") == "same-origin":
        return
    check_origin(request)


@router.get("/join/{token}")
async def join_page(
    request: Request,
    token: InviteToken,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> HTMLResponse:
    """Show who an invite link signs in as, with the button that does it (`POST /web/join`)."""
    invitation = await courses.invitation(token)
    if invitation is None:
        response = pages.render("join_unknown.html", _context(request, viewer), 404)
    else:
        signed_in_as = None
        if viewer is not None and request.cookies.get(GUEST_COOKIE) != token:
            signed_in_as = viewer.name
        response = pages.render(
            "join.html",
            _context(
                request, viewer, invitation=invitation, token=token, signed_in_as=signed_in_as
            ),
        )
    # The token is in this page's URL: no link or resource of it may send it on.
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers.update(NO_STORE)
    return response


@router.post(
    "/web/join",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_join_origin)],
)
async def join(request: Request, courses: CoursesDep, pages: PagesDep) -> Response:
    """Sign this browser in with an invite token (form field `token`): the cookie holds it;
    go to the course's page. An unknown or replaced token: the page saying so (404)."""
    received = await request.form()
    token = received.get("token")
    invitation = await courses.invitation(token) if isinstance(token, str) and token else None
    if invitation is None or not isinstance(token, str):
        response: Response = pages.render("join_unknown.html", _context(request, None), 404)
        response.headers["Referrer-Policy"] = "no-referrer"
        return response
    response = RedirectResponse(
        f"/courses/{invitation.course_id}", status_code=status.HTTP_303_SEE_OTHER
    )
    set_guest_cookie(response, request, token)
    return response


# -- the pages ----------------------------------------------------------------------------------


@pages_router.get("/courses")
async def courses_page(
    request: Request, courses: CoursesDep, pages: PagesDep, viewer: OptionalGuestDep
) -> HTMLResponse:
    """The courses this browser's player is a member of (or how to sign in)."""
    listed = () if viewer is None else (await courses.list_courses(viewer)).courses
    return pages.render("courses.html", _context(request, viewer, courses=listed))


@pages_router.get("/courses/{course_id}")
async def course_page(
    request: Request,
    course_id: CourseId,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> HTMLResponse:
    """A course: its assignments with their due dates and policies (a student's own attempts
    and score), the staff's links."""
    try:
        player = _signed_in(viewer)
        course = await courses.course(player, course_id)
        listed = await courses.assignments(player, course_id)
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    return pages.render(
        "course.html",
        _context(
            request,
            viewer,
            course=course,
            assignments=listed.assignments,
            staff=_is_staff(course),
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
) -> HTMLResponse:
    """Render an assignment's page: its facts, the submission form (with `error`, the refusal
    of an upload, and its status), the reader's own submissions; for staff the gradebook
    with its regrade and export (and the progress of the regrade `?regrade=` names)."""
    try:
        player = _signed_in(viewer)
        course = await courses.course(player, course_id)
        assignment = await courses.assignment(player, course_id, assignment_id)
        staff = _is_staff(course)
        gradebook = await courses.gradebook(player, course_id, assignment_id) if staff else None
        # Staff see their own test submissions here; a student's own are all they may see.
        mine = await courses.submissions(
            player, course_id, assignment_id, course.member_id if staff else None
        )
        regrade = await _regrade_asked(request, courses, player, course_id) if staff else None
    except ProtocolError as refusal:
        return refused_page(request, pages, viewer, refusal)
    profile = next((p for p in grading.profiles().profiles if p.name == assignment.profile), None)
    now = _now_ms()
    response = pages.render(
        "course_assignment.html",
        _context(
            request,
            viewer,
            course=course,
            assignment=assignment,
            staff=staff,
            gradebook=gradebook,
            submissions=mine.submissions,
            regrade=regrade,
            regrade_finished=regrade is not None and regrade_finished(regrade),
            regrade_text="" if regrade is None else regrade_text(regrade),
            error=error,
            profile_text="" if profile is None else profile.description,
            main_file="checkers.py" if profile is None else profile.main_file,
            until=lambda time_ms: until(time_ms, now),
        ),
        status_code=200 if error is None else HTTP_STATUS.get(error.code, 422),
    )
    if error is not None and error.code is ErrorCode.SUBMISSION_LIMIT:
        retry = error.details.get("retry_after_s")
        if isinstance(retry, int | float):
            response.headers["Retry-After"] = str(math.ceil(retry))
    response.headers.update(NO_STORE)
    return response


async def _regrade_asked(
    request: Request, courses: CourseService, player: Player, course_id: int
) -> Regrade | None:
    """Return the progress of the regrade the page's `?regrade=` names (None without one)."""
    asked = request.query_params.get("regrade", "")
    if not asked.isdigit() or len(asked) > 10:
        return None
    return await courses.regrade_progress(player, course_id, int(asked))


@pages_router.get("/courses/{course_id}/assignments/{assignment_id}")
async def show_assignment(
    request: Request,
    course_id: CourseId,
    assignment_id: AssignmentId,
    courses: CoursesDep,
    grading: GradingDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> HTMLResponse:
    """An assignment: for a student the submission form and their own submissions, followed
    live; for staff the gradebook, regrade all and the CSV export besides."""
    return await assignment_page(request, pages, courses, grading, viewer, course_id, assignment_id)


@pages_router.get("/courses/{course_id}/submissions/{submission_id}")
async def submission_page(
    request: Request,
    course_id: CourseId,
    submission_id: SubmissionId,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> HTMLResponse:
    """A submission: its status and place in the queue, followed live, then its report as
    the reader may see it (a student before the due date: filtered by the assignment)."""
    try:
        player = _signed_in(viewer)
        course = await courses.course(player, course_id)
        submission, report = await courses.submission_report(player, course_id, submission_id)
        assignment = await courses.assignment(player, course_id, submission.assignment_id)
        staff = _is_staff(course)
        member = await courses.member(player, course_id, submission.member_id) if staff else None
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    response = pages.render(
        "course_submission.html",
        _context(
            request,
            viewer,
            course=course,
            assignment=assignment,
            submission=submission,
            member=member,
            staff=staff,
            # report_body escapes every text it shows.
            report_html=None if report is None else Markup(report_body(report)),
        ),
    )
    response.headers.update(NO_STORE)
    return response


@dataclass(frozen=True)
class AssignmentHistory:
    """One assignment and a member's submissions to it, newest first (the student's page)."""

    assignment: Assignment
    submissions: Sequence[Submission]


@router.get("/courses/{course_id}/students/{member_id}", response_class=HTMLResponse)
async def student_page(
    request: Request,
    course_id: CourseId,
    member_id: MemberId,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> HTMLResponse:
    """One member's history for staff: every assignment's submissions with their reports,
    files and a regrade button each."""
    try:
        player = _signed_in(viewer)
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
    response = pages.render(
        "course_student.html",
        _context(request, viewer, course=course, member=member, history=history, notice=notice),
    )
    response.headers.update(NO_STORE)
    return response


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
        player = _signed_in(viewer)
        course = await courses.course(player, course_id)
        members = (await courses.members(player, course_id)).members
    except ProtocolError as refusal:
        return refused_page(request, pages, viewer, refusal)
    response = pages.render(
        "course_roster.html",
        _context(
            request,
            viewer,
            course=course,
            members=members,
            active_count=sum(1 for m in members if m.dropped_time_ms is None),
            instructor=course.role == "instructor",
            invites=invites,
            updated=updated,
            error=error,
            text=text,
            notice=notice,
        ),
        status_code=200 if error is None else HTTP_STATUS.get(error.code, 422),
    )
    response.headers.update(NO_STORE)
    return response


@router.get("/courses/{course_id}/roster", response_class=HTMLResponse)
async def show_roster(
    request: Request,
    course_id: CourseId,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> HTMLResponse:
    """The roster for staff; the instructor imports a CSV there and sees the new links once."""
    notice = None
    dropped = request.query_params.get("dropped", "")
    if dropped:
        notice = f"{dropped[:64]} is dropped: their link no longer signs in; their work is kept."
    return await roster_page(request, pages, courses, viewer, course_id, notice=notice)


# -- the forms ----------------------------------------------------------------------------------


@uploads_router.post(
    SUBMISSIONS_FORM,
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin), Depends(limit_web_upload)],
)
async def submit_from_form(
    request: Request,
    course_id: CourseId,
    assignment_id: AssignmentId,
    courses: CoursesDep,
    grading: GradingDep,
    settings: SettingsDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
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
        player = _signed_in(viewer)
        if not files:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR, "choose the files of your program, or one .zip"
            )
        uploads = await read_uploads(files, settings.grader_max_upload_bytes)
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
    course_id: CourseId,
    assignment_id: AssignmentId,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> Response:
    """Grade again (staff) one submission (form field `submission_id`) or every submission
    to the assignment; go to the page that follows it: the assignment's with the regrade's
    progress, or (`next`) the submission's or the student's."""
    received = await request.form()
    chosen = received.get("submission_id")
    wanted = received.get("next")
    try:
        player = _signed_in(viewer)
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


async def _roster_file(request: Request) -> tuple[bytes, str]:
    """Return the roster the import form sends (its file, else its text) and the text typed."""
    received = await request.form()
    typed = received.get("text")
    text = typed if isinstance(typed, str) else ""
    upload = received.get("file")
    if isinstance(upload, UploadFile) and (upload.filename or upload.size):
        # One byte past the limit is enough for the service to refuse it, saying so.
        data = await upload.read(app_settings(request).course_max_roster_bytes + 1)
        return data, text
    return text.encode(), text


@roster_router.post(
    ROSTER_FORM,
    response_class=HTMLResponse,
    dependencies=[Depends(check_origin)],
)
async def import_from_form(
    request: Request,
    course_id: CourseId,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> HTMLResponse:
    """Import a roster CSV (instructor; form fields `file`, else `text`) and show the roster
    with each new member's invite link, this once (or the form again saying what is wrong)."""
    data, text = await _roster_file(request)
    try:
        player = _signed_in(viewer)
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
    course_id: CourseId,
    member_id: MemberId,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> HTMLResponse:
    """Give a member a new invite link (instructor; the old one stops working) and show the
    roster with it, this once."""
    try:
        invite = await courses.reissue_invite(
            _signed_in(viewer), course_id, member_id, str(request.base_url).rstrip("/")
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
    course_id: CourseId,
    member_id: MemberId,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalGuestDep,
) -> Response:
    """Drop a member (instructor): their link stops working, their work is kept; back to the
    roster, which says so."""
    try:
        player = _signed_in(viewer)
        member = await courses.member(player, course_id, member_id)
        await courses.drop_member(player, course_id, member_id)
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    return RedirectResponse(
        f"/courses/{course_id}/roster?dropped={member.student_id}",
        status_code=status.HTTP_303_SEE_OTHER,
    )


# -- what the pages' scripts and links read, by the cookie --------------------------------------


@router.get("/web/courses/{course_id}/submissions/{submission_id}")
async def submission_status(
    course_id: CourseId, submission_id: SubmissionId, courses: CoursesDep, viewer: GuestDep
) -> Submission:
    """Return a submission's status to its submitter or staff (the pages follow it)."""
    return await courses.submission(viewer, course_id, submission_id)


@router.get("/web/courses/{course_id}/regrades/{regrade_id}")
async def regrade_status(
    course_id: CourseId, regrade_id: RegradeId, courses: CoursesDep, viewer: GuestDep
) -> Regrade:
    """Return a regrade's progress to staff (the assignment's page follows it)."""
    return await courses.regrade_progress(viewer, course_id, regrade_id)


@router.get("/web/courses/{course_id}/submissions/{submission_id}/files")
async def submission_files(
    course_id: CourseId, submission_id: SubmissionId, courses: CoursesDep, viewer: GuestDep
) -> Response:
    """Download a submission's files as a zip (its submitter or staff)."""
    files = await courses.files(viewer, course_id, submission_id)
    return Response(
        files.data,
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="{files.filename}"',
            **NO_STORE,
        },
    )


@router.get("/web/courses/{course_id}/assignments/{assignment_id}/gradebook.csv")
async def gradebook_csv(
    course_id: CourseId, assignment_id: AssignmentId, courses: CoursesDep, viewer: GuestDep
) -> Response:
    """Download an assignment's gradebook as CSV (staff), the columns of an LMS import."""
    text = await courses.gradebook_csv(viewer, course_id, assignment_id)
    return Response(
        text,
        media_type="text/csv; charset=utf-8",
        headers={
            "Content-Disposition": (
                f'attachment; filename="gradebook-{course_id}-{assignment_id}.csv"'
            ),
            **NO_STORE,
        },
    )


router.include_router(pages_router)
router.include_router(uploads_router)
router.include_router(roster_router)
