"""The grader's pages: the upload form, a job's page, its report; the form's own routes.

`GET /grader` shows the profiles and the upload form (a program gets the profiles as JSON). The
form posts to `POST /web/grader/jobs` with the browser's guest cookie (one is made for a browser
without it, counted as a registration), through the same upload service, size limit, queue
limit and rate limits as `POST /grader/jobs`; it answers 303 to the job's page, or the form again
with what was wrong (422). The job's page is `GET /grader/jobs/{id}` asked for by a browser
(server.routes.grader): its script follows the status at the same URL (JSON, by the cookie)
while the tab is shown, and the finished page shows the report, which is also a page
of its own at `/grader/jobs/{id}/report.html`. A job is shown to its uploader only: the token or
the guest cookie that uploaded it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup
from starlette.datastructures import UploadFile

from autograder.html import report_body
from autograder.results import GradeReport
from protocol import PROTOCOL_VERSION
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import GradingProfiles
from server.db.models import Player
from server.deps import (
    ClientAddressDep,
    GradingDep,
    OptionalPlayerDep,
    PagesDep,
    PlayersDep,
    SettingsDep,
    ViewerDep,
    get_grading,
    get_pages,
    limit_upload,
    request_viewer,
)
from server.grading import GradingService
from server.routes.uploads import UploadLimitRoute, read_uploads
from server.routes.web import guest_or_new, set_guest_cookie
from server.web.pages import Pages, wants_html
from server.web.security import check_origin


class FormUploadRoute(UploadLimitRoute):
    """The form's upload: the grader's upload limit on the raw body, no token asked (the route
    makes a guest), and an upload past the limit answered with the form saying so (422)."""

    requires_token = False

    async def refuse(self, request: Request, error: ProtocolError) -> Response:
        guest = await request_viewer(request)
        pages, grading = await get_pages(request), await get_grading(request)
        return grader_page(request, pages, grading, guest, error.message, _chosen_profile(request))


router = APIRouter(tags=["web pages"], route_class=FormUploadRoute)

JobPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]


def _context(request: Request, **values: Any) -> dict[str, Any]:
    return {
        "section": "grader",
        "version": request.app.version,
        "protocol_version": PROTOCOL_VERSION,
        **values,
    }


def _chosen_profile(request: Request) -> str:
    return request.query_params.get("profile", "")


def grader_page(
    request: Request,
    pages: Pages,
    grading: GradingService,
    guest: Player | None,
    error: str | None = None,
    profile: str = "",
) -> HTMLResponse:
    """Render the grader page: the profiles, the limits, the form (with `error`: 422)."""
    profiles = grading.profiles()
    names = [p.name for p in profiles.profiles]
    return pages.render(
        "grader.html",
        _context(
            request,
            profiles=profiles,
            guest=guest,
            error=error,
            chosen=profile if profile in names else names[0],
        ),
        status_code=422 if error else 200,
    )


async def job_page(
    request: Request, pages: Pages, grading: GradingService, job_id: str, viewer: Player | None
) -> HTMLResponse:
    """Render a job's page to `viewer` (its status, then its report), or the refusal's page."""
    try:
        job, report = await grading.job_and_report(job_id, None if viewer is None else viewer.id)
    except ProtocolError as error:
        return refused_page(request, pages, job_id, error)
    return pages.render(
        "grader_job.html",
        _context(
            request,
            job=job,
            report=report,
            # report_body escapes every text it shows.
            report_html=None if report is None else Markup(report_body(report)),
        ),
    )


def report_page(request: Request, pages: Pages, job_id: str, report: GradeReport) -> HTMLResponse:
    """Render a finished job's report as a page of the site."""
    return pages.render(
        "grader_report.html",
        _context(request, job_id=job_id, report=report, report_html=Markup(report_body(report))),
    )


REFUSED_STATUS: Mapping[ErrorCode, int] = {
    ErrorCode.UNKNOWN_JOB: 404,
    ErrorCode.UNAUTHORIZED: 403,
    ErrorCode.FORBIDDEN: 403,
}


def refused_page(request: Request, pages: Pages, job_id: str, error: ProtocolError) -> HTMLResponse:
    """Render the page refusing a job to a browser: 404 for no such job, 403 for another's.

    Any other error is raised again (the route answers it as JSON)."""
    status_code = REFUSED_STATUS.get(error.code)
    if status_code is None:
        raise error
    if status_code == 404:
        return pages.render("not_found.html", _context(request, what=f"grading job {job_id}"), 404)
    return pages.render("grader_refused.html", _context(request, job_id=job_id), 403)


@router.get(
    "/grader",
    response_model=GradingProfiles,
    responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}},
)
async def show_grader(
    request: Request, grading: GradingDep, pages: PagesDep, guest: ViewerDep
) -> GradingProfiles | HTMLResponse:
    """Return the profiles (as `GET /grader/profiles`); a browser gets the grader page: the
    profiles, the limits and the upload form."""
    if not wants_html(request):
        return grading.profiles()
    return grader_page(request, pages, grading, guest, profile=_chosen_profile(request))


@router.post(
    "/web/grader/jobs",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin), Depends(limit_upload)],
    # A browser's form, answering its refusals with the page (HTML), not an API: the OpenAPI
    # document (whose every error is an ErrorResponse) leaves it out; docs/WEB.md describes it.
    include_in_schema=False,
)
async def upload_from_form(
    request: Request,
    grading: GradingDep,
    settings: SettingsDep,
    players: PlayersDep,
    pages: PagesDep,
    guest: OptionalPlayerDep,
    address: ClientAddressDep,
) -> Response:
    """Upload a submission from the grader page's form (multipart: `profile`, `files`) as the
    browser's guest, made first for a browser without one; go to the job's page, or show the
    form again with what was wrong (422)."""
    received = await request.form()
    profile = received.get("profile")
    profile = profile if isinstance(profile, str) else ""
    # A file input left empty still sends one part, without a name or a byte.
    files = [
        item
        for item in received.getlist("files")
        if isinstance(item, UploadFile) and (item.filename or item.size)
    ]
    if not files:
        return grader_page(
            request, pages, grading, guest, "choose the files of your program, or one .zip", profile
        )
    guest, token = await guest_or_new(request, players, guest)
    try:
        uploads = await read_uploads(files, settings.grader.max_upload_bytes)
        job = await grading.submit(profile, uploads, guest.id, address=address)
    except ProtocolError as error:
        response: Response = grader_page(request, pages, grading, guest, error.message, profile)
    else:
        response = RedirectResponse(
            f"/grader/jobs/{job.job_id}", status_code=status.HTTP_303_SEE_OTHER
        )
    if token is not None:
        set_guest_cookie(response, request, token)
    return response
