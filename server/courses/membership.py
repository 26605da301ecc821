"""Courses and their rosters: making a course, who is in it, invite links, roster imports and
drops. Staff read the roster; only instructors change it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from protocol.courses import (
    MAX_COURSES,
    Course,
    CourseCreate,
    CourseCreated,
    CourseList,
    Invite,
    Member,
    MemberList,
    RosterImport,
    RosterRow,
)
from protocol.errors import ErrorCode, ProtocolError
from server.auth import hash_token, new_token
from server.courses.access import CourseAccess, quota
from server.courses.roster import bad_roster, parse_roster
from server.courses.wire import course_model, member_model
from server.db.models import Player


@dataclass(frozen=True)
class Invitation:
    """What an invite link signs in as (for the join page): the course and the member."""

    course_id: int
    course_name: str
    member_name: str
    role: str


class Membership(CourseAccess):
    """Courses, rosters and invite links, with their policies."""

    async def create_course(
        self, player: Player, body: CourseCreate, base_url: str
    ) -> CourseCreated:
        """Create a course owned by `player`, its first instructor; return it with the
        instructor's sign-in link (shown this once).

        QUOTA_EXCEEDED when `player` already owns `course_max_per_owner` courses.
        """
        limit = self._settings.course.max_per_owner
        if await self._store.count_owned(player.id) >= limit:
            raise quota(f"you already created {limit} courses, the most this server allows", limit)
        token, token_hash = new_token()
        course, member = await self._store.add_course(player, body.name.strip(), token_hash)
        return CourseCreated(
            course=course_model(course, member),
            invite_url=self._invite_url(base_url, token),
            invite_token=token,
        )

    async def list_courses(self, player: Player) -> CourseList:
        """Return the courses `player` is a member of (not dropped, the newest `MAX_COURSES`),
        with their role."""
        found = await self._store.courses_of(player.id, MAX_COURSES)
        return CourseList(courses=tuple(course_model(course, member) for course, member in found))

    async def course(self, player: Player, course_id: int) -> Course:
        """Return a course to one of its members; UNKNOWN_COURSE to anyone else."""
        return course_model(*await self._member(player, course_id))

    async def invitation(self, token: str) -> Invitation | None:
        """Return what invite `token` signs in as; None for an unknown, rotated or dropped one."""
        found = await self._store.by_invite(hash_token(token))
        if found is None:
            return None
        course, member = found
        return Invitation(
            course_id=course.id, course_name=course.name, member_name=member.name, role=member.role
        )

    # -- roster (staff reads, instructor writes) ---------------------------------------------

    async def members(self, player: Player, course_id: int) -> MemberList:
        """Return the roster to staff (dropped members included, marked)."""
        await self._staff(player, course_id)
        return MemberList(
            members=tuple(member_model(row) for row in await self._store.members(course_id))
        )

    async def member(self, player: Player, course_id: int, member_id: int) -> Member:
        """Return one member to staff; UNKNOWN_MEMBER when the course has none with this id."""
        await self._staff(player, course_id)
        return member_model(await self._member_row(course_id, member_id))

    async def import_roster(
        self, player: Player, course_id: int, rows: Sequence[RosterRow], base_url: str
    ) -> RosterImport:
        """Add or update roster rows (instructor); new members get a player and a link.

        A row whose student id is on the roster updates that member (name, email, role; a
        dropped member is enrolled again with a new link). QUOTA_EXCEEDED past
        `course_max_members`; BAD_ROSTER for a student id given twice. All or nothing.
        """
        await self._instructor(player, course_id)
        seen: dict[str, int] = {}
        for line, row in enumerate(rows, 1):
            if row.student_id in seen:
                raise bad_roster(
                    f"student id {row.student_id!r} is also in row {seen[row.student_id]}",
                    line,
                    "student_id",
                )
            seen[row.student_id] = line
        limit = self._settings.course.max_members
        result = await self._store.import_rows(course_id, rows, limit)
        if isinstance(result, int):
            raise quota(
                f"the course would have {result} members; this server allows {limit}", limit
            )
        created, updated = result
        return RosterImport(
            created=tuple(
                Invite(
                    member=member_model(member),
                    invite_url=self._invite_url(base_url, token),
                    invite_token=token,
                )
                for member, token in created
            ),
            updated=tuple(member_model(member) for member in updated),
        )

    async def import_roster_csv(
        self, player: Player, course_id: int, data: bytes, base_url: str
    ) -> RosterImport:
        """Import a roster CSV (`student_id,name,email[,role]`, a header line optional).

        BAD_ROSTER naming the line and column for a file that cannot be read as one (nothing
        is imported); otherwise as `import_roster`.
        """
        await self._instructor(player, course_id)
        limit = self._settings.course.max_roster_bytes
        if len(data) > limit:
            raise ProtocolError(
                ErrorCode.MESSAGE_TOO_LARGE,
                f"the roster is {len(data)} bytes; at most {limit} are accepted",
                {"size": len(data), "limit": limit},
            )
        return await self.import_roster(player, course_id, parse_roster(data), base_url)

    async def reissue_invite(
        self, player: Player, course_id: int, member_id: int, base_url: str
    ) -> Invite:
        """Give a member a new sign-in link (instructor); their previous link stops working."""
        await self._instructor(player, course_id)
        member = await self._member_row(course_id, member_id)
        if member.dropped_at is not None:
            raise ProtocolError(
                ErrorCode.UNKNOWN_MEMBER,
                f"member {member_id} was dropped from the course: import their roster line again "
                "to enrol them",
            )
        token, token_hash = new_token()
        stored = await self._store.set_invite(member.id, token_hash)
        assert stored is not None  # found above; members are never deleted
        return Invite(
            member=member_model(stored),
            invite_url=self._invite_url(base_url, token),
            invite_token=token,
        )

    async def drop_member(self, player: Player, course_id: int, member_id: int) -> None:
        """Drop a member (instructor): their link stops working, their submissions are kept.

        FORBIDDEN for dropping oneself (a course keeps an instructor).
        """
        _, me = await self._instructor(player, course_id)
        member = await self._member_row(course_id, member_id)
        if member.id == me.id:
            raise ProtocolError(
                ErrorCode.FORBIDDEN, "you cannot drop yourself: a course keeps its instructor"
            )
        await self._store.drop(member.id)
