"""What the course routes (server.routes.courses) and the course pages' forms
(server.routes.web_courses) share: their path parameters, and the downloads, a submission's
files and a gradebook's CSV, each one service call and one response kept nowhere."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated

from fastapi import Path, Response

from server.courses import CourseService
from server.db.models import Player

CourseIdPath = Annotated[int, Path(ge=1, le=2**31 - 1)]
AssignmentIdPath = Annotated[int, Path(ge=1, le=2**31 - 1)]
MemberIdPath = Annotated[int, Path(ge=1, le=2**31 - 1)]
RegradeIdPath = Annotated[int, Path(ge=1, le=2**31 - 1)]
SubmissionPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]
"""The ids in a course route's path, bounded to what the database holds (422 past them)."""

NO_STORE: Mapping[str, str] = MappingProxyType({"Cache-Control": "no-store"})
"""For pages and files that only their reader may see (or links shown once): kept nowhere."""


async def submission_files_response(
    courses: CourseService,
    player: Player,
    course_id: int,
    submission_id: str,
) -> Response:
    """Return a submission's files as a zip download, kept nowhere."""
    files = await courses.files(player, course_id, submission_id)
    return Response(
        files.data,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{files.filename}"', **NO_STORE},
    )


async def gradebook_csv_response(
    courses: CourseService,
    player: Player,
    course_id: int,
    assignment_id: int,
) -> Response:
    """Return an assignment's gradebook as a CSV download, kept nowhere."""
    text = await courses.gradebook_csv(player, course_id, assignment_id)
    disposition = f'attachment; filename="gradebook-{course_id}-{assignment_id}.csv"'
    return Response(
        text,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": disposition, **NO_STORE},
    )
