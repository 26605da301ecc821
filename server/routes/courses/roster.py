"""A course's roster over REST: the members, a roster import (CSV or JSON rows, read under
its own body limit), a new invite link, dropping a member."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status
from pydantic import ValidationError

from protocol.courses import Invite, MemberList, RosterImport, RosterRows
from protocol.errors import ErrorCode, ProtocolError, ScalarValue
from server.deps import CoursesDep, PlayerDep, SettingsDep
from server.routes.course_common import CourseIdPath, MemberIdPath
from server.routes.courses.common import ERRORS

router = APIRouter(prefix="/courses", tags=["courses"], responses=ERRORS)

ROSTER_PATH = "/courses/{course_id}/members"
"""The roster import, which reads its body under its own limit."""


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
