"""The hosted autograder: upload a submission, follow its job, read its results."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Path, Request, Response, UploadFile, status
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from starlette.types import Message, Receive

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ErrorResponse, GradingJob, GradingProfiles
from server.db.models import Player
from server.deps import GradingDep, OptionalPlayerDep, SettingsDep, app_settings, limit_upload
from server.grading import Upload
from server.ratelimit import RATE_LIMITED_RESPONSE

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 409, 413, 422, 503)
}

_MULTIPART_OVERHEAD = 64 * 1024
"""Room for multipart headers and form fields on top of the files' bytes."""


class _BodyTooLargeError(Exception):
    """Raised by `_LimitedBody.receive` once the body passes the limit (read no further)."""


class _LimitedBody:
    """Pass a request's body on while counting it; refuse it once it passes `limit` bytes."""

    def __init__(self, receive: Receive, limit: int) -> None:
        self._receive = receive
        self.limit = limit
        self.received = 0
        self.exceeded = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                self.exceeded = True
                raise _BodyTooLargeError
        return message


class UploadLimitRoute(APIRoute):
    """A route whose request body is cut off at the grader's upload limit while it is read.

    The limit is `grader_max_upload_bytes` plus room for the multipart framing, counted on the
    raw stream before the form parser sees (and spools to disk) any of it, whether or not the
    client declared a Content-Length: a body that passes it is refused at once with
    SUBMISSION_TOO_LARGE, and what is left of it is never stored (the server discards it).
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def limited(request: Request) -> Response:
            settings = app_settings(request)
            if (
                request.method == "POST"
                and not settings.grader_allow_anonymous
                and "authorization" not in request.headers
            ):
                raise _anonymous()  # before reading a byte of the body
            allowed = settings.grader_max_upload_bytes
            body = _LimitedBody(request.receive, allowed + _MULTIPART_OVERHEAD)
            declared = request.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > body.limit:
                raise _too_large(allowed, f"the upload is {declared} bytes")
            try:
                return await handler(Request(request.scope, body.receive))
            except Exception:
                # The framework reports a failed body read as a 400; say what happened.
                if body.exceeded:
                    raise _too_large(
                        allowed, f"the upload is more than {body.limit} bytes"
                    ) from None
                raise

        return limited


def _anonymous() -> ProtocolError:
    return ProtocolError(
        ErrorCode.UNAUTHORIZED,
        "uploads need a player's token: register with POST /players and send "
        "`Authorization: Bearer TOKEN` (arena grader submit --token TOKEN)",
    )


def _too_large(allowed: int, what: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.SUBMISSION_TOO_LARGE,
        f"{what}; at most {allowed} bytes of files are accepted",
        {"max_bytes": allowed},
    )


router = APIRouter(
    prefix="/grader", tags=["grader"], responses=ERRORS, route_class=UploadLimitRoute
)

JobPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]


@router.get("/profiles")
async def list_profiles(grading: GradingDep) -> GradingProfiles:
    """List the assignment profiles, the program each runs, and the upload limits."""
    return grading.profiles()


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
    if player is None and not settings.grader_allow_anonymous:
        raise _anonymous()
    limit = settings.grader_max_upload_bytes
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
    job = await grading.submit(profile, uploads, None if player is None else player.id)
    response.headers["Location"] = f"/grader/jobs/{job.job_id}"
    return job


@router.get("/jobs/{job_id}")
async def get_job(job_id: JobPath, grading: GradingDep, viewer: OptionalPlayerDep) -> GradingJob:
    """Return a job: its status, queue position, and score once graded (to its uploader)."""
    return await grading.job(job_id, _id(viewer))


@router.get("/jobs/{job_id}/results.json")
async def get_results(
    job_id: JobPath, grading: GradingDep, viewer: OptionalPlayerDep
) -> dict[str, Any]:
    """Return a graded job's results in Gradescope's results.json format (to its uploader)."""
    return await grading.results(job_id, _id(viewer))


@router.get("/jobs/{job_id}/report.html", response_class=HTMLResponse)
async def get_report(
    job_id: JobPath, grading: GradingDep, viewer: OptionalPlayerDep
) -> HTMLResponse:
    """Return a graded job's report as a self-contained HTML page (to its uploader)."""
    return HTMLResponse(await grading.report(job_id, _id(viewer)))


def _id(player: Player | None) -> int | None:
    return None if player is None else player.id
