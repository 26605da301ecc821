"""What staff do with an assignment's grades: the gradebook (each enrolled student's counted
score), its CSV export for an LMS, and regrades with their progress.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.courses import Gradebook, GradebookRow, Regrade
from protocol.errors import ErrorCode, ProtocolError
from server.courses import grades
from server.courses.access import CourseAccess, now
from server.courses.wire import assignment_model
from server.db.models import Assignment as AssignmentRow
from server.db.models import CourseMember, Player, epoch_ms
from server.db.models import GradingJob as JobRow


class Gradebooks(CourseAccess):
    """Gradebooks, their export and regrades (staff only)."""

    async def regrade(
        self,
        player: Player,
        course_id: int,
        assignment_id: int,
        submission_ids: Sequence[str] = (),
    ) -> Regrade:
        """Grade an assignment's submissions again (staff): the ones named, or all of them.

        Their results are cleared and they are queued again (past the daily and queue
        limits); the regrade is stored, so a restart finishes it. UNKNOWN_JOB for an id that
        is not a submission to this assignment.
        """
        _, me = await self._staff(player, course_id)
        row = await self._assignment_row(me, assignment_id, now())
        known = [job.id for job in reversed(await self._store.jobs([row.id]))]
        if submission_ids:
            missing = [job_id for job_id in submission_ids if job_id not in set(known)]
            if missing:
                raise ProtocolError(
                    ErrorCode.UNKNOWN_JOB,
                    f"{missing[0][:64]!r} is not a submission to assignment {row.id}",
                )
            chosen = list(dict.fromkeys(submission_ids))
        else:
            chosen = known
        await self._grading.regrade(chosen)
        stored = await self._store.add_regrade(row.id, me.id, chosen)
        return await self._progress(course_id, stored.id)

    async def regrade_progress(self, player: Player, course_id: int, regrade_id: int) -> Regrade:
        """Return a regrade's progress (staff)."""
        await self._staff(player, course_id)
        return await self._progress(course_id, regrade_id)

    async def gradebook(self, player: Player, course_id: int, assignment_id: int) -> Gradebook:
        """Return an assignment's gradebook (staff): one row per enrolled student."""
        _, me = await self._staff(player, course_id)
        moment = now()
        row = await self._assignment_row(me, assignment_id, moment)
        standings = await self._standings(course_id, row)
        return Gradebook(
            assignment=assignment_model(row, moment),
            rows=tuple(
                GradebookRow(
                    member_id=member.id,
                    student_id=member.student_id,
                    name=member.name,
                    email=member.email,
                    score=standing.score,
                    max_score=standing.max_score,
                    late=standing.days_late > 0,
                    days_late=standing.days_late,
                    attempts=standing.attempts,
                    last_submitted_time_ms=None
                    if standing.last_submitted is None
                    else epoch_ms(standing.last_submitted),
                    job_id=None if standing.job is None else standing.job.id,
                )
                for member, standing in standings
            ),
        )

    async def gradebook_csv(self, player: Player, course_id: int, assignment_id: int) -> str:
        """Return the gradebook as CSV (staff), columns `student_id,name,email,score,
        max_score,late,days_late,attempts,submitted_at` (ISO-8601 UTC), for an LMS import."""
        _, me = await self._staff(player, course_id)
        row = await self._assignment_row(me, assignment_id, now())
        standings = await self._standings(course_id, row)
        return grades.gradebook_csv(
            [
                grades.CsvRow(
                    student_id=member.student_id,
                    name=member.name,
                    email=member.email,
                    score=standing.score,
                    max_score=standing.max_score,
                    days_late=standing.days_late,
                    attempts=standing.attempts,
                    submitted_at=None if standing.job is None else standing.job.created_at,
                )
                for member, standing in standings
            ]
        )

    async def _standings(
        self, course_id: int, row: AssignmentRow
    ) -> list[tuple[CourseMember, grades.Counted]]:
        """Return each enrolled student's standing on the assignment, by student id."""
        students = [
            member
            for member in await self._store.members(course_id)
            if member.role == "student" and member.dropped_at is None
        ]
        jobs = await self._store.jobs([row.id])
        by_member: dict[int, list[JobRow]] = {}
        for job in jobs:
            by_member.setdefault(job.member_id or 0, []).append(job)
        standings = []
        for member in sorted(students, key=lambda member: member.student_id):
            own = by_member.get(member.id, [])
            scores = {job.id: grades.shown(job, row, False) for job in own}
            standings.append((member, grades.counted(own, row, scores)))
        return standings

    async def _progress(self, course_id: int, regrade_id: int) -> Regrade:
        stored = await self._store.regrade(course_id, regrade_id)
        if stored is None:
            raise ProtocolError(
                ErrorCode.NOT_FOUND, f"course {course_id} has no regrade {regrade_id}"
            )
        statuses = await self._store.statuses(stored.job_ids)
        return Regrade(
            regrade_id=stored.id,
            course_id=course_id,
            assignment_id=stored.assignment_id,
            total=len(statuses),
            queued=statuses.count("queued"),
            running=statuses.count("running"),
            done=statuses.count("done"),
            error=statuses.count("error"),
            created_time_ms=epoch_ms(stored.created_at),
        )
