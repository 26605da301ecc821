"""What every part of the course service stands on: its rows and files, and who may do what.

A non-member is told UNKNOWN_COURSE, never that the course exists; a student on a staff action
FORBIDDEN; an assignment before its release is UNKNOWN_ASSIGNMENT to a student. The parts of
`CourseService` (server.courses.service) subclass `CourseAccess` and ask it first.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.errors import ErrorCode, ProtocolError
from server.courses import grades
from server.courses.store import CourseStore
from server.db.models import Assignment as AssignmentRow
from server.db.models import Course as CourseRow
from server.db.models import CourseMember, Player
from server.grading import GradingService
from server.grading.files import GraderFiles
from server.settings import Settings

STAFF = ("instructor", "ta")


def now() -> datetime:
    """Return the present moment, in UTC."""
    return datetime.now(UTC)


def quota(message: str, limit: int) -> ProtocolError:
    """Return the refusal of one more course, assignment or member past `limit`."""
    return ProtocolError(ErrorCode.QUOTA_EXCEEDED, message, {"limit": limit})


class CourseAccess:
    """The course rows, the grading service and the grader's files, with the access checks
    every method of the course service makes before anything else."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        grading: GradingService,
    ) -> None:
        self._settings = settings
        self._grading = grading
        self._store = CourseStore(sessions)
        self._files = GraderFiles(settings)

    def _invite_url(self, base_url: str, token: str) -> str:
        base = self._settings.public_url or base_url.rstrip("/")
        return f"{base}/join/{token}"

    async def _member(self, player: Player, course_id: int) -> tuple[CourseRow, CourseMember]:
        """Return the course and `player`'s membership; UNKNOWN_COURSE for a non-member."""
        found = await self._store.membership(course_id, player.id)
        if found is None:
            raise ProtocolError(
                ErrorCode.UNKNOWN_COURSE,
                f"you are not a member of a course {course_id} (sign in with your invite link)",
            )
        return found

    async def _staff(self, player: Player, course_id: int) -> tuple[CourseRow, CourseMember]:
        """Return the course and `player`'s membership if they are staff; FORBIDDEN otherwise."""
        course, me = await self._member(player, course_id)
        if me.role not in STAFF:
            raise ProtocolError(ErrorCode.FORBIDDEN, "only the course's staff may do this")
        return course, me

    async def _instructor(self, player: Player, course_id: int) -> tuple[CourseRow, CourseMember]:
        """Return the course and `player`'s membership if they are an instructor."""
        course, me = await self._member(player, course_id)
        if me.role != "instructor":
            raise ProtocolError(
                ErrorCode.FORBIDDEN, "only the course's instructors may change it or its roster"
            )
        return course, me

    async def _member_row(self, course_id: int, member_id: int) -> CourseMember:
        member = await self._store.member(course_id, member_id)
        if member is None:
            raise ProtocolError(
                ErrorCode.UNKNOWN_MEMBER, f"course {course_id} has no member {member_id}"
            )
        return member

    async def _members_by_id(self, course_id: int) -> dict[int, CourseMember]:
        return {member.id: member for member in await self._store.members(course_id)}

    async def _assignment_row(
        self, me: CourseMember, assignment_id: int, now: datetime
    ) -> AssignmentRow:
        """Return an assignment of `me`'s course; UNKNOWN_ASSIGNMENT when there is none, or
        to a student before its release."""
        row = await self._store.assignment(me.course_id, assignment_id)
        if row is None or (me.role not in STAFF and grades.aware(row.release_at) > now):
            raise ProtocolError(
                ErrorCode.UNKNOWN_ASSIGNMENT,
                f"course {me.course_id} has no assignment {assignment_id} open to you",
            )
        return row
