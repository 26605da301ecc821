"""The course rows: courses, members, assignments, their submissions (grading jobs), regrades.

Each method is one committed transaction; the policies are the service's.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.courses import RosterRow
from server.auth import new_token
from server.db.models import Assignment, Course, CourseMember, CourseRegrade, Player
from server.db.models import GradingJob as JobRow

STUDENT_PREFIX = "student-"
"""A roster member's player is named this and ten random base32 characters (never shown)."""
_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"


def _now() -> datetime:
    return datetime.now(UTC)


def _member_player_name() -> str:
    return STUDENT_PREFIX + "".join(secrets.choice(_BASE32) for _ in range(10))


class CourseStore:
    """Reads and writes the course tables."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    # -- courses and members -----------------------------------------------------------------

    async def count_owned(self, player_id: int) -> int:
        """Return how many courses `player_id` created."""
        async with self._sessions() as session:
            count = await session.scalar(
                select(func.count()).select_from(Course).where(Course.owner_id == player_id)
            )
            return int(count or 0)

    async def add_course(
        self, owner: Player, name: str, invite_hash: str
    ) -> tuple[Course, CourseMember]:
        """Store a course and its owner as its instructor (signed in by `invite_hash` too)."""
        async with self._sessions() as session:
            course = Course(name=name, owner_id=owner.id, created_at=_now())
            session.add(course)
            await session.flush()
            member = CourseMember(
                course_id=course.id,
                player_id=owner.id,
                role="instructor",
                student_id=owner.name[:64],
                name=owner.name[:100],
                email="",
                invite_hash=invite_hash,
                created_at=_now(),
            )
            session.add(member)
            await session.commit()
            return course, member

    async def membership(
        self, course_id: int, player_id: int
    ) -> tuple[Course, CourseMember] | None:
        """Return the course and `player_id`'s membership of it (not dropped), or None."""
        return await self._enrolled_one(Course.id == course_id, CourseMember.player_id == player_id)

    async def courses_of(self, player_id: int, limit: int) -> list[tuple[Course, CourseMember]]:
        """Return the newest `limit` courses `player_id` is an enrolled member of."""
        async with self._sessions() as session:
            rows = await session.execute(
                _enrolled(CourseMember.player_id == player_id)
                .order_by(Course.created_at.desc(), Course.id.desc())
                .limit(limit)
            )
            return [(course, member) for course, member in rows]

    async def by_invite(self, invite_hash: str) -> tuple[Course, CourseMember] | None:
        """Return the course and the enrolled member whose invite hashes to `invite_hash`."""
        return await self._enrolled_one(CourseMember.invite_hash == invite_hash)

    async def _enrolled_one(
        self, *conditions: ColumnElement[bool]
    ) -> tuple[Course, CourseMember] | None:
        """Return the course and the enrolled member `conditions` find, or None."""
        async with self._sessions() as session:
            found = (await session.execute(_enrolled(*conditions))).first()
            return None if found is None else (found[0], found[1])

    async def members(self, course_id: int) -> list[CourseMember]:
        """Return every member of a course (dropped ones too), staff first, then by student id."""
        async with self._sessions() as session:
            rows = await session.scalars(
                select(CourseMember)
                .where(CourseMember.course_id == course_id)
                .order_by(CourseMember.role != "instructor", CourseMember.role != "ta")
                .order_by(CourseMember.student_id)
            )
            return list(rows)

    async def member(self, course_id: int, member_id: int) -> CourseMember | None:
        """Return a member of the course (dropped or not), or None."""
        async with self._sessions() as session:
            member = await session.get(CourseMember, member_id)
            return member if member is not None and member.course_id == course_id else None

    async def import_rows(
        self, course_id: int, rows: Sequence[RosterRow], max_members: int
    ) -> tuple[list[tuple[CourseMember, str]], list[CourseMember]] | int:
        """Add the new rows' members (a player and an invite each), update the others.

        Returns (created with their invite tokens, updated); or, storing nothing, the count of
        members the course would have when it passes `max_members`. A dropped member on the
        roster again is enrolled with a new invite (among the created).
        """
        async with self._sessions() as session:
            existing = {
                member.student_id: member
                for member in await session.scalars(
                    select(CourseMember).where(CourseMember.course_id == course_id)
                )
            }
            fresh = [row for row in rows if row.student_id not in existing]
            if len(existing) + len(fresh) > max_members:
                return len(existing) + len(fresh)
            created: list[tuple[CourseMember, str]] = []
            updated: list[CourseMember] = []
            for row in rows:
                member = existing.get(row.student_id)
                if member is not None and member.role == "instructor":
                    updated.append(member)  # an instructor stays one
                    continue
                if member is None:
                    _, hidden = new_token()  # the player's own token: never shown
                    player = Player(name=_member_player_name(), token_hash=hidden)
                    session.add(player)
                    await session.flush()
                    member = CourseMember(
                        course_id=course_id, player_id=player.id, created_at=_now()
                    )
                    session.add(member)
                member.student_id = row.student_id
                member.name = row.name
                member.email = row.email
                member.role = row.role
                if member.id is None or member.dropped_at is not None:
                    token, member.invite_hash = new_token()
                    member.dropped_at = None
                    created.append((member, token))
                else:
                    updated.append(member)
            await session.commit()
            return created, updated

    async def set_invite(self, member_id: int, invite_hash: str) -> CourseMember | None:
        """Give a member a new invite hash (the old one stops signing in)."""
        async with self._sessions() as session:
            member = await session.get(CourseMember, member_id)
            if member is None:
                return None
            member.invite_hash = invite_hash
            await session.commit()
            return member

    async def drop(self, member_id: int) -> None:
        """Mark a member dropped and forget their invite; their rows stay."""
        async with self._sessions() as session:
            await session.execute(
                update(CourseMember)
                .where(CourseMember.id == member_id, CourseMember.dropped_at.is_(None))
                .values(dropped_at=_now(), invite_hash=None)
            )
            await session.commit()

    # -- assignments -------------------------------------------------------------------------

    async def assignments(self, course_id: int) -> list[Assignment]:
        """Return a course's assignments by due date."""
        async with self._sessions() as session:
            rows = await session.scalars(
                select(Assignment)
                .where(Assignment.course_id == course_id)
                .order_by(Assignment.due_at, Assignment.id)
            )
            return list(rows)

    async def assignment(self, course_id: int, assignment_id: int) -> Assignment | None:
        """Return an assignment of the course, or None."""
        async with self._sessions() as session:
            row = await session.get(Assignment, assignment_id)
            return row if row is not None and row.course_id == course_id else None

    async def assignment_by_id(self, assignment_id: int) -> Assignment | None:
        """Return an assignment, or None."""
        async with self._sessions() as session:
            return await session.get(Assignment, assignment_id)

    async def count_assignments(self, course_id: int) -> int:
        """Return how many assignments a course has."""
        async with self._sessions() as session:
            count = await session.scalar(
                select(func.count())
                .select_from(Assignment)
                .where(Assignment.course_id == course_id)
            )
            return int(count or 0)

    async def add_assignment(self, fields: Mapping[str, Any]) -> Assignment | None:
        """Store a new assignment; None when its course already has one of this name."""
        async with self._sessions() as session:
            row = Assignment(**fields, created_at=_now())
            session.add(row)
            try:
                await session.commit()
            except IntegrityError:
                return None
            return row

    async def update_assignment(
        self, assignment_id: int, changes: Mapping[str, Any]
    ) -> Assignment | None:
        """Change an assignment's fields; None when the new name is another's of the course."""
        async with self._sessions() as session:
            row = await session.get(Assignment, assignment_id)
            if row is None:
                return None
            for key, value in changes.items():
                setattr(row, key, value)
            try:
                await session.commit()
            except IntegrityError:
                return None
            return row

    async def generating(self) -> list[Assignment]:
        """Return the assignments whose suite is still to be generated (`suite_version` 0)."""
        async with self._sessions() as session:
            rows = await session.scalars(
                select(Assignment).where(Assignment.suite_version == 0).order_by(Assignment.id)
            )
            return list(rows)

    async def delete_assignment(self, assignment_id: int) -> None:
        """Remove an assignment that has no submission (its suite could not be made)."""
        async with self._sessions() as session:
            row = await session.get(Assignment, assignment_id)
            if row is not None:
                await session.delete(row)
                await session.commit()

    # -- submissions and regrades ------------------------------------------------------------

    async def jobs(
        self,
        assignment_ids: Sequence[int],
        member_id: int | None = None,
        limit: int | None = None,
    ) -> list[JobRow]:
        """Return the submissions to the assignments (of one member, if given), newest first
        (the newest `limit` only, if given)."""
        if not assignment_ids:
            return []
        query = select(JobRow).where(JobRow.assignment_id.in_(assignment_ids))
        if member_id is not None:
            query = query.where(JobRow.member_id == member_id)
        query = query.order_by(JobRow.created_at.desc(), JobRow.id)
        if limit is not None:
            query = query.limit(limit)
        async with self._sessions() as session:
            return list(await session.scalars(query))

    async def players(self, player_ids: Sequence[int]) -> dict[int, Player]:
        """Return the players of `player_ids` by id (those that exist)."""
        if not player_ids:
            return {}
        async with self._sessions() as session:
            rows = await session.scalars(select(Player).where(Player.id.in_(player_ids)))
            return {row.id: row for row in rows}

    async def job(self, job_id: str) -> JobRow | None:
        """Return a course submission's row, or None (also for a job of no course)."""
        async with self._sessions() as session:
            row = await session.get(JobRow, job_id)
            return row if row is not None and row.assignment_id is not None else None

    async def recent_times(
        self, assignment_id: int, member_id: int, since: datetime
    ) -> list[datetime]:
        """Return the times of a member's submissions to an assignment since `since`, oldest
        first (regrades are no new submissions: their time is the first)."""
        async with self._sessions() as session:
            return await recent_times_in(session, assignment_id, member_id, since)

    async def add_regrade(
        self, assignment_id: int, requested_by: int, job_ids: Sequence[str]
    ) -> CourseRegrade:
        """Store a regrade of `job_ids`."""
        async with self._sessions() as session:
            row = CourseRegrade(
                assignment_id=assignment_id,
                requested_by=requested_by,
                job_ids=list(job_ids),
                created_at=_now(),
            )
            session.add(row)
            await session.commit()
            return row

    async def regrade(self, course_id: int, regrade_id: int) -> CourseRegrade | None:
        """Return a regrade of the course, or None."""
        async with self._sessions() as session:
            found = (
                await session.execute(
                    select(CourseRegrade)
                    .join(Assignment, Assignment.id == CourseRegrade.assignment_id)
                    .where(CourseRegrade.id == regrade_id, Assignment.course_id == course_id)
                )
            ).scalar_one_or_none()
            return found

    async def statuses(self, job_ids: Sequence[str]) -> list[str]:
        """Return the statuses of the jobs."""
        if not job_ids:
            return []
        async with self._sessions() as session:
            rows = await session.scalars(select(JobRow.status).where(JobRow.id.in_(job_ids)))
            return list(rows)


async def recent_times_in(
    session: AsyncSession, assignment_id: int, member_id: int, since: datetime
) -> list[datetime]:
    """`CourseStore.recent_times` in the caller's `session` (its transaction)."""
    rows = await session.scalars(
        select(JobRow.created_at)
        .where(
            JobRow.assignment_id == assignment_id,
            JobRow.member_id == member_id,
            JobRow.created_at >= since,
        )
        .order_by(JobRow.created_at)
    )
    return list(rows)


async def lock_member(session: AsyncSession, member_id: int) -> None:
    """Hold the member's row until the end of `session`'s transaction: another transaction
    locking it waits for this one's commit, in this process or any other on the database.

    PostgreSQL: SELECT ... FOR UPDATE. SQLite has one writer at a time: a write to the row,
    made first in the transaction, takes the database's write lock (waiting for it, under
    the busy timeout) and reads from that moment on, so every later read in the transaction
    sees the other writers' commits.
    """
    connection = await session.connection()
    if connection.dialect.name == "sqlite":
        await session.execute(
            update(CourseMember).where(CourseMember.id == member_id).values(id=CourseMember.id)
        )
        return
    await session.execute(
        select(CourseMember.id).where(CourseMember.id == member_id).with_for_update()
    )


def _enrolled(*conditions: ColumnElement[bool]) -> Select[Course, CourseMember]:
    """Select each course with its enrolled (not dropped) members that meet `conditions`."""
    return (
        select(Course, CourseMember)
        .join(CourseMember, CourseMember.course_id == Course.id)
        .where(*conditions, CourseMember.dropped_at.is_(None))
    )
