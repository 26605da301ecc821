"""The hosted autograder: upload a submission, follow its job, read its results."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Path, Request, Response, UploadFile, status
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ErrorResponse, GradingJob, GradingProfiles
from server.db.models import Player
from server.deps import (
    ClientAddressDep,
    GradingDep,
    OptionalPlayerDep,
    PagesDep,
    SettingsDep,
    limit_upload,
)
from server.limits.rates import RATE_LIMITED_RESPONSE
from server.routes.uploads import UploadLimitRoute, anonymous_upload, read_uploads
from server.routes.web_grader import job_page, refused_page, report_page
from server.web.pages import wants_html

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 409, 413, 422, 503)
}

router = APIRouter(
    prefix="/grader", tags=["grader"], responses=ERRORS, route_class=UploadLimitRoute
)

JobPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]


@router.get("/profiles")
async def list_profiles(grading: GradingDep) -> GradingProfiles:
    """List the assignment profiles, the program each runs, and the upload limits."""
    return grading.profiles()


@router.get(
    "/starters/{profile}",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/x-python": {"schema": {"type": "string"}}}}},
)
async def get_starter(
    profile: Annotated[str, Path(min_length=1, max_length=32)], grading: GradingDep
) -> Response:
    """Download a profile's starter file (checkers.py or agent.py), as a course hands it out.

    It reads and writes the assignment's formats and leaves the search to the student (the
    same file as `arena grader starter`). An unknown profile is NOT_FOUND.
    """
    name, text = grading.starter(profile)
    return Response(
        text,
        media_type="text/x-python; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.post(
    "/jobs",
    status_code=status.HTTP_202_ACCEPTED,
    responses={429: RATE_LIMITED_RESPONSE},
    dependencies=[Depends(limit_upload)],
)
async def submit(
    grading: GradingDep,
    settings: SettingsDep,
    response: Response,
    player: OptionalPlayerDep,
    address: ClientAddressDep,
    profile: Annotated[str, Form(max_length=32, description="`endgame` or `agent`")],
    files: Annotated[
        list[UploadFile],
        File(description="The program and its modules as plain files, or one .zip."),
    ],
) -> GradingJob:
    """Upload a submission (multipart/form-data) and queue it for grading.

    Needs a player's token unless the server allows anonymous uploads; the job is then read
    with the same token only. Answers 202 with the job: poll its `GET /grader/jobs/{id}` until
    the status is `done`, then read `results_url` or `report_url`.
    """
    if player is None and not settings.grader.allow_anonymous:
        raise anonymous_upload()
    uploads = await read_uploads(files, settings.grader.max_upload_bytes)
    job = await grading.submit(
        profile, uploads, None if player is None else player.id, address=address
    )
    response.headers["Location"] = f"/grader/jobs/{job.job_id}"
    return job


@router.get(
    "/jobs/{job_id}",
    response_model=GradingJob,
    responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}},
)
async def get_job(
    request: Request,
    job_id: JobPath,
    grading: GradingDep,
    viewer: OptionalPlayerDep,
    pages: PagesDep,
) -> GradingJob | HTMLResponse:
    """Return a job: its status, queue position, and score once graded (to its uploader).

    A browser gets the job's page instead, to its uploader's token or cookie: the status kept
    up to date while it waits (its script reads this route's JSON), then the report (a 403 or
    404 page to anyone else).
    """
    if wants_html(request):
        return await job_page(request, pages, grading, job_id, viewer)
    return await grading.job(job_id, _id(viewer))


@router.get("/jobs/{job_id}/results.json")
async def get_results(
    job_id: JobPath, grading: GradingDep, viewer: OptionalPlayerDep
) -> dict[str, Any]:
    """Return a graded job's results in Gradescope's results.json format (to its uploader)."""
    return await grading.results(job_id, _id(viewer))


@router.get("/jobs/{job_id}/report.html", response_class=HTMLResponse)
async def get_report(
    request: Request,
    job_id: JobPath,
    grading: GradingDep,
    viewer: OptionalPlayerDep,
    pages: PagesDep,
) -> Response:
    """Return a graded job's report as an HTML page (to its uploader's token or guest cookie).

    The page is the site's, under its Content-Security-Policy. A browser (asking for HTML
    first) is shown the refusals as pages too, and sent to the job's page (303) while the job
    is not finished; a program gets them as JSON errors.
    """
    try:
        report = await grading.report(job_id, _id(viewer))
    except ProtocolError as error:
        if not wants_html(request):
            raise
        if error.code is ErrorCode.JOB_NOT_FINISHED:
            return RedirectResponse(f"/grader/jobs/{job_id}", status.HTTP_303_SEE_OTHER)
        return refused_page(request, pages, job_id, error)
    return report_page(request, pages, job_id, report)


def _id(player: Player | None) -> int | None:
    return None if player is None else player.id
