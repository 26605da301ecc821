"""Course submissions: a member's upload queued under the assignment's policies, and what its
reader (its submitter or staff) may see of it: its status, its report filtered as the
assignment says before the due date, its files.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from autograder.results import GradeReport
from protocol.courses import MAX_SUBMISSIONS, Submission, SubmissionList
from protocol.errors import ErrorCode, ProtocolError
from server.courses import admission, grades
from server.courses.access import STAFF, CourseAccess, now
from server.courses.wire import submission_model
from server.db.models import Assignment as AssignmentRow
from server.db.models import CourseMember, Player
from server.db.models import GradingJob as JobRow
from server.grading import Upload

_FILENAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Entry:
    """A student's submission entering a class tournament: who, which job, and its files."""

    member: CourseMember
    player: Player
    job_id: str
    files: dict[str, bytes]


@dataclass(frozen=True)
class Reader:
    """Who reads a course's class tournaments: their membership, and every member by id."""

    me: CourseMember
    members: dict[int, CourseMember]

    @property
    def is_staff(self) -> bool:
        return self.me.role in STAFF


@dataclass(frozen=True)
class SubmissionFiles:
    """A submission's upload as a zip: its file name and bytes."""

    filename: str
    data: bytes


class Submissions(CourseAccess):
    """Submitting to an assignment and reading submissions, with their policies."""

    async def submit(
        self,
        player: Player,
        course_id: int,
        assignment_id: int,
        uploads: Sequence[Upload],
        address: str | None = None,
    ) -> Submission:
        """Queue a submission to an assignment by a member from client `address`; return it
        (status `queued`).

        A student: UNKNOWN_ASSIGNMENT before the release, DEADLINE_PASSED after the due date
        (hard) or the last late day (penalty), SUBMISSION_LIMIT with `next_allowed_time_ms`
        over the daily limit; staff are exempt. Then the grading service's checks (files,
        queue limit).
        """
        _, me = await self._member(player, course_id)
        row = await self._assignment_row(me, assignment_id, now())
        if row.suite_version == 0:
            raise ProtocolError(
                ErrorCode.GRADER_UNAVAILABLE,
                f"the suite of {row.name[:100]} is still being generated; nothing was queued: "
                "submit again in a few minutes",
            )
        checked = None
        if me.role not in STAFF:
            moment = now()
            admission.check_deadline(row, moment)
            # Refused at once, before the files are read; the count that decides is made again
            # as the row is stored (`admission.daily_limit`): concurrent submissions all pass
            # this one.
            admission.refuse_over_limit(
                row, await self._store.recent_times(row.id, me.id, moment - grades.WINDOW), moment
            )
            checked = admission.daily_limit(row, me.id)
        job = await self._grading.submit(
            row.profile,
            uploads,
            player.id,
            assignment_id=row.id,
            member_id=me.id,
            admission=checked,
            address=address,
        )
        stored = await self._store.job(job.job_id)
        assert stored is not None  # just stored
        places = await self._grading.places([stored.id])
        return submission_model(
            stored, row, me, is_staff=me.role in STAFF, now=now(), places=places
        )

    async def submissions(
        self, player: Player, course_id: int, assignment_id: int, member_id: int | None = None
    ) -> SubmissionList:
        """Return an assignment's submissions, newest first (at most `MAX_SUBMISSIONS`): a
        student's own; staff's all, or `member_id`'s."""
        _, me = await self._member(player, course_id)
        moment = now()
        row = await self._assignment_row(me, assignment_id, moment)
        is_staff = me.role in STAFF
        if not is_staff:
            member_id = me.id
        elif member_id is not None:
            await self._member_row(course_id, member_id)
        jobs = await self._store.jobs([row.id], member_id, MAX_SUBMISSIONS)
        members = await self._members_by_id(course_id)
        places = await self._grading.places([job.id for job in jobs if job.status == "queued"])
        return SubmissionList(
            submissions=tuple(
                submission_model(job, row, members[job.member_id or 0], is_staff, moment, places)
                for job in jobs
            )
        )

    async def member_submissions(
        self, player: Player, course_id: int, member_id: int
    ) -> SubmissionList:
        """Return one member's submissions to every assignment of the course (staff)."""
        await self._staff(player, course_id)
        member = await self._member_row(course_id, member_id)
        rows = {row.id: row for row in await self._store.assignments(course_id)}
        jobs = await self._store.jobs(list(rows), member.id, MAX_SUBMISSIONS)
        moment = now()
        places = await self._grading.places([job.id for job in jobs if job.status == "queued"])
        return SubmissionList(
            submissions=tuple(
                submission_model(job, rows[job.assignment_id or 0], member, True, moment, places)
                for job in jobs
            )
        )

    async def submission(self, player: Player, course_id: int, submission_id: str) -> Submission:
        """Return a submission to its submitter or staff (UNKNOWN_JOB to anyone else)."""
        return (await self._readable(player, course_id, submission_id))[0]

    async def submission_report(
        self, player: Player, course_id: int, submission_id: str
    ) -> tuple[Submission, GradeReport | None]:
        """Return a submission and, once graded, its report as the reader may see it."""
        view, job, row = await self._readable(player, course_id, submission_id)
        if job.status not in grades.GRADED or job.results is None:
            return view, None
        return view, _report_as_seen(job, row, view.filtered)

    async def report(self, player: Player, course_id: int, submission_id: str) -> GradeReport:
        """Return a graded submission's report as the reader may see it; JOB_NOT_FINISHED
        before then."""
        view, report = await self.submission_report(player, course_id, submission_id)
        if report is None:
            raise ProtocolError(
                ErrorCode.JOB_NOT_FINISHED,
                f"submission {submission_id} is {view.status}: poll "
                f"GET /courses/{course_id}/submissions/{submission_id} until it is done",
                {"status": view.status},
            )
        return report

    async def results(self, player: Player, course_id: int, submission_id: str) -> dict[str, Any]:
        """Return a graded submission's results.json object as the reader may see it."""
        report = await self.report(player, course_id, submission_id)
        data: dict[str, Any] = report.to_json()
        return data

    async def files(self, player: Player, course_id: int, submission_id: str) -> SubmissionFiles:
        """Return a submission's uploaded files as a zip, to its submitter or staff."""
        view, _, _ = await self._readable(player, course_id, submission_id)
        files = await self._grading.uploaded_files(submission_id)
        if not files:
            raise ProtocolError(
                ErrorCode.UNKNOWN_JOB, f"the files of submission {submission_id} are gone"
            )
        data = await asyncio.to_thread(_zip, files)
        stem = _FILENAME_UNSAFE.sub("_", view.student_id)[:40] or "submission"
        return SubmissionFiles(filename=f"{stem}-{submission_id}.zip", data=data)

    async def entries(
        self, player: Player, course_id: int, assignment_id: int, pick: str
    ) -> list[Entry]:
        """Return each enrolled student's graded submission to an agent assignment, the
        latest or the best (`pick`; the newest of equal scores), with its files: staff only
        (FORBIDDEN), UNKNOWN_ASSIGNMENT, VALIDATION_ERROR for an assignment of another
        profile."""
        _, me = await self._staff(player, course_id)
        row = await self._assignment_row(me, assignment_id, now())
        if row.profile != "agent":
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"assignment {row.name!r} grades {row.profile} programs; only an agent "
                "assignment's submissions can play a tournament",
                {"assignment_id": assignment_id},
            )
        students = {
            m.id: m
            for m in await self._store.members(course_id)
            if m.role == "student" and m.dropped_at is None
        }
        chosen: dict[int, JobRow] = {}
        for job in await self._store.jobs([row.id]):  # newest first
            if job.status != "done" or job.member_id not in students:
                continue
            kept = chosen.get(job.member_id)
            if kept is None or (pick == "best" and _fraction(job) > _fraction(kept)):
                chosen[job.member_id] = job
        players = await self._store.players([students[m].player_id for m in chosen])
        entries = []
        for member_id, job in sorted(chosen.items(), key=lambda item: students[item[0]].student_id):
            member = students[member_id]
            files = await self._grading.uploaded_files(job.id)
            entries.append(Entry(member, players[member.player_id], job.id, files))
        return entries

    async def reader(self, player: Player, course_id: int) -> Reader:
        """Return who `player` is in the course (UNKNOWN_COURSE for a non-member) and its
        members."""
        _, me = await self._member(player, course_id)
        return Reader(me, await self._members_by_id(course_id))

    async def _readable(
        self, player: Player, course_id: int, submission_id: str
    ) -> tuple[Submission, JobRow, AssignmentRow]:
        """Return a submission its reader may see (its submitter or staff), with its rows."""
        _, me = await self._member(player, course_id)
        job = await self._store.job(submission_id)
        row = (
            None if job is None else await self._store.assignment(course_id, job.assignment_id or 0)
        )
        is_staff = me.role in STAFF
        if job is None or row is None or (not is_staff and job.member_id != me.id):
            raise ProtocolError(
                ErrorCode.UNKNOWN_JOB,
                f"course {course_id} has no submission {submission_id[:64]!r} of yours",
            )
        member = (
            me if job.member_id == me.id else await self._member_row(course_id, job.member_id or 0)
        )
        places = await self._grading.places([job.id] if job.status == "queued" else [])
        return submission_model(job, row, member, is_staff, now(), places), job, row


def _report_as_seen(job: JobRow, row: AssignmentRow, filtered: bool) -> GradeReport:
    report = GradeReport.from_json(json.loads(job.results or '{"tests": []}'), job.profile)
    if not filtered:
        return report
    return grades.filtered_report(report, row.before_due, grades.aware(row.due_at))


def _fraction(job: JobRow) -> float:
    """A graded job's score as a fraction of its maximum (0 when it has none)."""
    return (job.score or 0.0) / job.max_score if job.max_score else 0.0


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            archive.writestr(name, data)
    return buffer.getvalue()
