"""The hosted autograder: upload a submission, follow its job, read its results."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Path, Request, Response, UploadFile, status
from fastapi.responses import HTMLResponse

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ErrorResponse, GradingJob, GradingProfiles
from server.grading import GradingService, Upload
from server.ratelimit import RATE_LIMITED_RESPONSE, limit_upload

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (404, 409, 413, 422, 503)
}

router = APIRouter(prefix="/grader", tags=["grader"], responses=ERRORS)

JobPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]

_MULTIPART_OVERHEAD = 64 * 1024
"""Room for multipart headers and form fields on top of the files' bytes."""


def get_grading(request: Request) -> GradingService:
    """Return the application's grading service."""
    service: GradingService = request.app.state.grading
    return service


GradingDep = Annotated[GradingService, Depends(get_grading)]


def _check_length(request: Request) -> None:
    """Refuse an upload whose declared length is already too large, before reading it."""
    limit = request.app.state.settings.grader_max_upload_bytes + _MULTIPART_OVERHEAD
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ProtocolError(
            ErrorCode.SUBMISSION_TOO_LARGE,
            f"the upload is {declared} bytes; at most "
            f"{request.app.state.settings.grader_max_upload_bytes} bytes of files are accepted",
        )


@router.get("/profiles")
async def list_profiles(grading: GradingDep) -> GradingProfiles:
    """List the assignment profiles, the program each runs, and the upload limits."""
    return grading.profiles()


@router.post(
    "/jobs",
    status_code=status.HTTP_202_ACCEPTED,
    responses={429: RATE_LIMITED_RESPONSE},
    dependencies=[Depends(limit_upload), Depends(_check_length)],
)
async def submit(
    grading: GradingDep,
    request: Request,
    response: Response,
    profile: Annotated[str, Form(max_length=32, description="`endgame` or `agent`")],
    files: Annotated[
        list[UploadFile],
        File(description="The program and its modules as plain files, or one .zip."),
    ],
) -> GradingJob:
    """Upload a submission (multipart/form-data) and queue it for grading.

    Answers 202 with the job: poll its `GET /grader/jobs/{id}` until the status is `done`, then
    read `results_url` or `report_url`. Keep the job id private: it is the key to the results.
    """
    limit = request.app.state.settings.grader_max_upload_bytes
    uploads = []
    total = 0
    for upload in files:
        data = await upload.read(limit - total + 1)
        total += len(data)
        if total > limit:
            raise ProtocolError(
                ErrorCode.SUBMISSION_TOO_LARGE,
                f"the uploaded files exceed {limit} bytes",
                {"max_bytes": limit},
            )
        uploads.append(Upload(name=upload.filename or "", data=data))
    job = await grading.submit(profile, uploads)
    response.headers["Location"] = f"/grader/jobs/{job.job_id}"
    return job


@router.get("/jobs/{job_id}")
async def get_job(job_id: JobPath, grading: GradingDep) -> GradingJob:
    """Return a job: its status, queue position, and score once graded."""
    return await grading.job(job_id)


@router.get("/jobs/{job_id}/results.json")
async def get_results(job_id: JobPath, grading: GradingDep) -> dict[str, Any]:
    """Return a graded job's results in Gradescope's results.json format."""
    return await grading.results(job_id)


@router.get("/jobs/{job_id}/report.html", response_class=HTMLResponse)
async def get_report(job_id: JobPath, grading: GradingDep) -> HTMLResponse:
    """Return a graded job's report as a self-contained HTML page."""
    return HTMLResponse(await grading.report(job_id))
