"""Assignments: their dates and policies, their suites (given, or generated in the background),
and what a student sees of one (released ones only, with their attempts and counted score).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import datetime

from protocol.courses import Assignment, AssignmentCreate, AssignmentList, AssignmentUpdate
from protocol.errors import ErrorCode, ProtocolError
from server.courses import grades, suites
from server.courses.access import STAFF, CourseAccess, now, quota
from server.courses.generation import SuiteGeneration
from server.courses.wire import assignment_model
from server.db.models import Assignment as AssignmentRow
from server.db.models import GradingJob as JobRow
from server.db.models import Player


def _name_taken(name: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.VALIDATION_ERROR,
        f"the course already has an assignment named {name[:100]!r}",
        {"name": "taken"},
    )


class Assignments(CourseAccess):
    """A course's assignments and their suites, with their policies."""

    _suites: SuiteGeneration

    async def assignments(self, player: Player, course_id: int) -> AssignmentList:
        """Return the course's assignments: all to staff, the released ones to a student
        (with their attempts and counted score)."""
        _, me = await self._member(player, course_id)
        moment = now()
        rows = await self._store.assignments(course_id)
        if me.role in STAFF:
            return AssignmentList(assignments=tuple(assignment_model(row, moment) for row in rows))
        released = [row for row in rows if grades.aware(row.release_at) <= moment]
        jobs = await self._store.jobs([row.id for row in released], me.id)
        return AssignmentList(
            assignments=tuple(
                _student_assignment(row, [j for j in jobs if j.assignment_id == row.id], moment)
                for row in released
            )
        )

    async def assignment(self, player: Player, course_id: int, assignment_id: int) -> Assignment:
        """Return one assignment; UNKNOWN_ASSIGNMENT to a student before its release."""
        _, me = await self._member(player, course_id)
        moment = now()
        row = await self._assignment_row(me, assignment_id, moment)
        if me.role in STAFF:
            return assignment_model(row, moment)
        jobs = await self._store.jobs([row.id], me.id)
        return _student_assignment(row, jobs, moment)

    async def create_assignment(
        self, player: Player, course_id: int, body: AssignmentCreate
    ) -> Assignment:
        """Create an assignment (instructor) with its suite: the one given, or a generated one
        of public and private tests.

        An endgame suite takes seconds per puzzle to generate: the assignment is answered at
        once with `suite_version` 0, and the suite is generated in the background (one at a
        time, resumed after a restart); submissions wait for it (GRADER_UNAVAILABLE).

        QUOTA_EXCEEDED past `course_max_assignments`; VALIDATION_ERROR for a name the course
        already has.
        """
        await self._instructor(player, course_id)
        limit = self._settings.course.max_assignments
        if await self._store.count_assignments(course_id) >= limit:
            raise quota(f"the course already has {limit} assignments, the most allowed", limit)
        moment = now()
        generated_later = body.suite is None and body.profile == "endgame"
        fields = {
            "course_id": course_id,
            "name": body.name.strip(),
            "profile": body.profile,
            "release_at": body.release_at or moment,
            "due_at": body.due_at,
            "late_policy": body.late_policy,
            "late_penalty_per_day": body.late_penalty_per_day,
            "late_days_max": body.late_days_max,
            "daily_limit": body.daily_limit,
            "score_policy": body.score_policy,
            "before_due": body.before_due,
            # 0 while the suite is generated; the counts asked for until then.
            "suite_version": 0 if generated_later else 1,
            "public_tests": body.public_count,
            "private_tests": body.private_count,
        }
        row = await self._store.add_assignment(fields)
        if row is None:
            raise _name_taken(body.name)
        if generated_later:
            self._suites.later(row)
            return assignment_model(row, moment)
        path = self._files.assignment_suite_path(row.id)
        try:
            if body.suite is not None:
                given = json.dumps(body.suite).encode("utf-8")
                summary = await asyncio.to_thread(suites.install_suite, body.profile, path, given)
            else:  # an agent suite is made in a moment
                summary = await asyncio.to_thread(
                    suites.generate_suite,
                    body.profile,
                    path,
                    body.public_count,
                    body.private_count,
                )
        except BaseException:
            await self._store.delete_assignment(row.id)
            raise
        stored = await self._store.update_assignment(
            row.id,
            {"public_tests": summary.public_tests, "private_tests": summary.private_tests},
        )
        assert stored is not None  # just made
        return assignment_model(stored, moment)

    async def update_assignment(
        self, player: Player, course_id: int, assignment_id: int, body: AssignmentUpdate
    ) -> Assignment:
        """Change an assignment's dates or policies (instructor); scores follow when read."""
        _, me = await self._instructor(player, course_id)
        row = await self._assignment_row(me, assignment_id, now())
        changes = body.model_dump(exclude_none=True, exclude={"type"})
        if "name" in changes:
            changes["name"] = changes["name"].strip()
        release = changes.get("release_at", grades.aware(row.release_at))
        due = changes.get("due_at", grades.aware(row.due_at))
        if release > due:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                "release_at must not be after due_at",
                {"due_at": "before release_at"},
            )
        stored = await self._store.update_assignment(row.id, changes)
        if stored is None:
            raise _name_taken(str(changes.get("name", row.name)))
        return assignment_model(stored, now())

    async def replace_suite(
        self, player: Player, course_id: int, assignment_id: int, suite: bytes
    ) -> Assignment:
        """Replace an assignment's suite with the given suite file's bytes (instructor).

        VALIDATION_ERROR naming the problem when the grader's loader for the assignment's
        profile refuses it; `suite_version` goes up by one. Submissions keep their results
        until regraded.
        """
        _, me = await self._instructor(player, course_id)
        row = await self._assignment_row(me, assignment_id, now())
        path = self._files.assignment_suite_path(row.id)
        async with self._suites.lock:
            summary = await asyncio.to_thread(suites.install_suite, row.profile, path, suite)
            current = await self._store.assignment(course_id, row.id)
            assert current is not None  # assignments are never deleted once made
            stored = await self._store.update_assignment(
                row.id,
                {
                    "public_tests": summary.public_tests,
                    "private_tests": summary.private_tests,
                    "suite_version": current.suite_version + 1,
                },
            )
        assert stored is not None  # found above
        return assignment_model(stored, now())


def _student_assignment(row: AssignmentRow, jobs: Sequence[JobRow], moment: datetime) -> Assignment:
    """An assignment as a student sees it: with their attempts, counted score and the
    submissions they have left today."""
    filtered = grades.is_filtered(row, False, moment)
    scores = {job.id: grades.shown(job, row, filtered) for job in jobs}
    standing = grades.counted(jobs, row, scores)
    since = moment - grades.WINDOW
    recent = sum(1 for job in jobs if grades.aware(job.created_at) >= since)
    return assignment_model(row, moment).model_copy(
        update={
            "attempts": standing.attempts,
            "score": standing.score,
            "max_score": standing.max_score,
            "submissions_left_today": max(0, row.daily_limit - recent),
        }
    )
