"""The course service: every policy of courses, decided here and nowhere else.

Who may do what (a non-member is told UNKNOWN_COURSE, never that the course exists; a student
on a staff action FORBIDDEN; a student reading another's submission UNKNOWN_JOB), the limits
(courses per owner, assignments per course, members per course), release and due dates, the
daily limit, late penalties and what a student sees of their results before the due date.

Every method takes the `Player` asking (from a bearer token, an invite token or the web's
cookie) first and answers protocol models (protocol.courses) or raises ProtocolError.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import math
import os
import re
import sys
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grader.results import GradeReport
from grader.sandbox import SETPRIV
from protocol.courses import (
    MAX_COURSES,
    MAX_SUBMISSIONS,
    Assignment,
    AssignmentCreate,
    AssignmentList,
    AssignmentUpdate,
    Course,
    CourseCreate,
    CourseCreated,
    CourseList,
    Gradebook,
    GradebookRow,
    Invite,
    Member,
    MemberList,
    Regrade,
    RosterImport,
    RosterRow,
    Submission,
    SubmissionList,
)
from protocol.errors import ErrorCode, ProtocolError
from server.auth import hash_token, new_token
from server.courses import grades, suites
from server.courses.roster import bad_roster, parse_roster
from server.courses.store import CourseStore, lock_member, recent_times_in
from server.db.models import Assignment as AssignmentRow
from server.db.models import Course as CourseRow
from server.db.models import CourseMember, Player, epoch_ms
from server.db.models import GradingJob as JobRow
from server.grading import Admission, GradingService, Place, Upload, describe_wait
from server.grading.files import GraderFiles
from server.settings import Settings

log = logging.getLogger(__name__)

STAFF = ("instructor", "ta")
_FILENAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return grades.aware(moment).astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def _in(delta: timedelta) -> str:
    """Say a wait in hours and minutes: "3 h 12 min", "45 min"."""
    minutes = max(1, math.ceil(delta.total_seconds() / 60))
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


@dataclass(frozen=True)
class Invitation:
    """What an invite link signs in as (for the join page): the course and the member."""

    course_id: int
    course_name: str
    member_name: str
    role: str


@dataclass(frozen=True)
class SubmissionFiles:
    """A submission's upload as a zip: its file name and bytes."""

    filename: str
    data: bytes


class CourseService:
    """Courses, rosters, assignments, submissions, gradebooks and regrades, with their policies.

    `base_url` arguments are the request's base URL; invite links use `settings.public_url`
    instead when it is set.
    """

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
        self._suite_lock = asyncio.Lock()
        """Held while an assignment's suite file and its row change together."""
        self._generator = asyncio.Semaphore(1)
        """Suites are generated one at a time: each keeps a CPU busy for minutes."""
        self._generations: set[asyncio.Task[None]] = set()
        self._children: set[asyncio.subprocess.Process] = set()

    async def start(self) -> int:
        """Generate the suites a previous run left ungenerated; return how many."""
        pending = await self._store.generating()
        for row in pending:
            self._generate_later(row)
        return len(pending)

    async def close(self) -> None:
        """Stop the suites' generation (what is unfinished is generated at the next start)."""
        for child in list(self._children):
            with contextlib.suppress(ProcessLookupError):
                child.kill()
        for task in list(self._generations):
            task.cancel()
        await asyncio.gather(*self._generations, return_exceptions=True)

    # -- courses -----------------------------------------------------------------------------

    async def create_course(
        self, player: Player, body: CourseCreate, base_url: str
    ) -> CourseCreated:
        """Create a course owned by `player`, its first instructor; return it with the
        instructor's sign-in link (shown this once).

        QUOTA_EXCEEDED when `player` already owns `course_max_per_owner` courses.
        """
        limit = self._settings.course.max_per_owner
        if await self._store.count_owned(player.id) >= limit:
            raise _quota(f"you already created {limit} courses, the most this server allows", limit)
        token, token_hash = new_token()
        course, member = await self._store.add_course(player, body.name.strip(), token_hash)
        return CourseCreated(
            course=_course(course, member),
            invite_url=self._invite_url(base_url, token),
            invite_token=token,
        )

    async def list_courses(self, player: Player) -> CourseList:
        """Return the courses `player` is a member of (not dropped, the newest `MAX_COURSES`),
        with their role."""
        found = await self._store.courses_of(player.id, MAX_COURSES)
        return CourseList(courses=tuple(_course(course, member) for course, member in found))

    async def course(self, player: Player, course_id: int) -> Course:
        """Return a course to one of its members; UNKNOWN_COURSE to anyone else."""
        return _course(*await self._member(player, course_id))

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
            members=tuple(_member(row) for row in await self._store.members(course_id))
        )

    async def member(self, player: Player, course_id: int, member_id: int) -> Member:
        """Return one member to staff; UNKNOWN_MEMBER when the course has none with this id."""
        await self._staff(player, course_id)
        return _member(await self._member_row(course_id, member_id))

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
            raise _quota(
                f"the course would have {result} members; this server allows {limit}", limit
            )
        created, updated = result
        return RosterImport(
            created=tuple(
                Invite(
                    member=_member(member),
                    invite_url=self._invite_url(base_url, token),
                    invite_token=token,
                )
                for member, token in created
            ),
            updated=tuple(_member(member) for member in updated),
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
            member=_member(stored), invite_url=self._invite_url(base_url, token), invite_token=token
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

    # -- assignments -------------------------------------------------------------------------

    async def assignments(self, player: Player, course_id: int) -> AssignmentList:
        """Return the course's assignments: all to staff, the released ones to a student
        (with their attempts and counted score)."""
        _, me = await self._member(player, course_id)
        now = _now()
        rows = await self._store.assignments(course_id)
        if me.role in STAFF:
            return AssignmentList(assignments=tuple(_assignment(row, now) for row in rows))
        released = [row for row in rows if grades.aware(row.release_at) <= now]
        jobs = await self._store.jobs([row.id for row in released], me.id)
        return AssignmentList(
            assignments=tuple(
                self._student_assignment(row, [j for j in jobs if j.assignment_id == row.id], now)
                for row in released
            )
        )

    async def assignment(self, player: Player, course_id: int, assignment_id: int) -> Assignment:
        """Return one assignment; UNKNOWN_ASSIGNMENT to a student before its release."""
        _, me = await self._member(player, course_id)
        now = _now()
        row = await self._assignment_row(me, assignment_id, now)
        if me.role in STAFF:
            return _assignment(row, now)
        jobs = await self._store.jobs([row.id], me.id)
        return self._student_assignment(row, jobs, now)

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
            raise _quota(f"the course already has {limit} assignments, the most allowed", limit)
        now = _now()
        generated_later = body.suite is None and body.profile == "endgame"
        fields = {
            "course_id": course_id,
            "name": body.name.strip(),
            "profile": body.profile,
            "release_at": body.release_at or now,
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
            self._generate_later(row)
            return _assignment(row, now)
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
        return _assignment(stored, now)

    async def update_assignment(
        self, player: Player, course_id: int, assignment_id: int, body: AssignmentUpdate
    ) -> Assignment:
        """Change an assignment's dates or policies (instructor); scores follow when read."""
        _, me = await self._instructor(player, course_id)
        row = await self._assignment_row(me, assignment_id, _now())
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
        return _assignment(stored, _now())

    async def replace_suite(
        self, player: Player, course_id: int, assignment_id: int, suite: bytes
    ) -> Assignment:
        """Replace an assignment's suite with the given suite file's bytes (instructor).

        VALIDATION_ERROR naming the problem when the grader's loader for the assignment's
        profile refuses it; `suite_version` goes up by one. Submissions keep their results
        until regraded.
        """
        _, me = await self._instructor(player, course_id)
        row = await self._assignment_row(me, assignment_id, _now())
        path = self._files.assignment_suite_path(row.id)
        async with self._suite_lock:
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
        return _assignment(stored, _now())

    # -- submissions -------------------------------------------------------------------------

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
        row = await self._assignment_row(me, assignment_id, _now())
        if row.suite_version == 0:
            raise ProtocolError(
                ErrorCode.GRADER_UNAVAILABLE,
                f"the suite of {row.name[:100]} is still being generated; nothing was queued: "
                "submit again in a few minutes",
            )
        admission = None
        if me.role not in STAFF:
            now = _now()
            _check_deadline(row, now)
            # Refused at once, before the files are read; the count that decides is made again
            # as the row is stored (`_daily_limit`): concurrent submissions all pass this one.
            _refuse_over_limit(
                row, await self._store.recent_times(row.id, me.id, now - grades.WINDOW), now
            )
            admission = _daily_limit(row, me.id)
        job = await self._grading.submit(
            row.profile,
            uploads,
            player.id,
            assignment_id=row.id,
            member_id=me.id,
            admission=admission,
            address=address,
        )
        stored = await self._store.job(job.job_id)
        assert stored is not None  # just stored
        places = await self._grading.places([stored.id])
        return self._submission(
            stored, row, me, is_staff=me.role in STAFF, now=_now(), places=places
        )

    async def submissions(
        self, player: Player, course_id: int, assignment_id: int, member_id: int | None = None
    ) -> SubmissionList:
        """Return an assignment's submissions, newest first (at most `MAX_SUBMISSIONS`): a
        student's own; staff's all, or `member_id`'s."""
        _, me = await self._member(player, course_id)
        now = _now()
        row = await self._assignment_row(me, assignment_id, now)
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
                self._submission(job, row, members[job.member_id or 0], is_staff, now, places)
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
        now = _now()
        places = await self._grading.places([job.id for job in jobs if job.status == "queued"])
        return SubmissionList(
            submissions=tuple(
                self._submission(job, rows[job.assignment_id or 0], member, True, now, places)
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

    # -- staff: regrades and the gradebook ---------------------------------------------------

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
        row = await self._assignment_row(me, assignment_id, _now())
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
        now = _now()
        row = await self._assignment_row(me, assignment_id, now)
        standings = await self._standings(course_id, row)
        return Gradebook(
            assignment=_assignment(row, now),
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
        row = await self._assignment_row(me, assignment_id, _now())
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

    # -- the rooms' helpers ------------------------------------------------------------------

    def _generate_later(self, row: AssignmentRow) -> None:
        """Generate an assignment's suite in the background (`_generate`)."""
        task = asyncio.create_task(
            self._generate(row.id, row.profile, row.public_tests, row.private_tests),
            name=f"suite-{row.id}",
        )
        self._generations.add(task)
        task.add_done_callback(self._generation_ended)

    def _generation_ended(self, task: asyncio.Task[None]) -> None:
        self._generations.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("generating a suite failed", exc_info=task.exception())

    async def _generate(self, assignment_id: int, profile: str, public: int, private: int) -> None:
        """Generate a suite in a child process, then make it the assignment's (unless a suite
        was given meanwhile). A failure is logged; the assignment waits for a given suite or
        the next start."""
        path = self._files.assignment_suite_path(assignment_id)
        generated = path.with_name(path.name + ".generated")
        async with self._generator:
            command = [
                sys.executable,
                "-m",
                "server.courses.suites",
                profile,
                str(generated),
                str(public),
                str(private),
            ]
            if os.path.exists(SETPRIV):
                # It dies with the server, even one killed outright: the next start begins anew.
                command = [SETPRIV, "--pdeathsig", "KILL", "--", *command]
            child = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            self._children.add(child)
            try:
                out, err = await asyncio.wait_for(
                    child.communicate(), self._settings.course.suite_timeout_s
                )
            except TimeoutError:
                child.kill()
                await child.wait()
                log.error("the suite of assignment %d took too long to generate", assignment_id)
                return
            finally:
                self._children.discard(child)
        if child.returncode != 0:
            log.error(
                "the suite of assignment %d could not be generated: %s",
                assignment_id,
                err.decode("utf-8", "replace")[-2000:],
            )
            return
        summary = json.loads(out)
        async with self._suite_lock:
            row = await self._store.assignment_by_id(assignment_id)
            if row is None or row.suite_version != 0:
                generated.unlink(missing_ok=True)  # a suite was given meanwhile
                return
            generated.replace(path)
            await self._store.update_assignment(
                assignment_id,
                {
                    "public_tests": summary["public_tests"],
                    "private_tests": summary["private_tests"],
                    "suite_version": 1,
                },
            )

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

    def _student_assignment(
        self, row: AssignmentRow, jobs: Sequence[JobRow], now: datetime
    ) -> Assignment:
        """An assignment as a student sees it: with their attempts, counted score and the
        submissions they have left today."""
        filtered = grades.is_filtered(row, False, now)
        scores = {job.id: grades.shown(job, row, filtered) for job in jobs}
        standing = grades.counted(jobs, row, scores)
        since = now - grades.WINDOW
        recent = sum(1 for job in jobs if grades.aware(job.created_at) >= since)
        return _assignment(row, now).model_copy(
            update={
                "attempts": standing.attempts,
                "score": standing.score,
                "max_score": standing.max_score,
                "submissions_left_today": max(0, row.daily_limit - recent),
            }
        )

    def _submission(
        self,
        job: JobRow,
        row: AssignmentRow,
        member: CourseMember,
        is_staff: bool,
        now: datetime,
        places: Mapping[str, Place],
    ) -> Submission:
        """A course job as `is_staff` or its submitter sees it now; `places` has where the
        waiting jobs stand in the queue (GradingService.places)."""
        view = grades.shown(job, row, grades.is_filtered(row, is_staff, now))
        base = f"/courses/{row.course_id}/submissions/{job.id}"
        started = None if job.started_at is None or not view.times else epoch_ms(job.started_at)
        finished = None if job.finished_at is None or not view.times else epoch_ms(job.finished_at)
        place = places.get(job.id) if job.status == "queued" else None
        return Submission(
            submission_id=job.id,
            course_id=row.course_id,
            assignment_id=row.id,
            member_id=member.id,
            student_id=member.student_id,
            status=job.status,
            files=tuple(job.files),
            queue_position=place.position if place is not None else None,
            wait=describe_wait(place) if place is not None else None,
            score=view.score,
            max_score=view.max_score,
            final_score=view.final_score,
            late=view.days_late > 0,
            days_late=view.days_late,
            filtered=view.filtered,
            hidden_tests=view.hidden_tests,
            summary=None if view.summary is None else view.summary[:4000],
            regrades=job.regrades,
            created_time_ms=epoch_ms(job.created_at),
            started_time_ms=started,
            finished_time_ms=finished,
            results_url=f"{base}/results",
            report_url=f"{base}/report",
            files_url=f"{base}/files",
        )

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
        return self._submission(job, row, member, is_staff, _now(), places), job, row

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


def _course(course: CourseRow, member: CourseMember) -> Course:
    return Course(
        course_id=course.id,
        name=course.name,
        role=member.role,
        member_id=member.id,
        created_time_ms=epoch_ms(course.created_at),
    )


def _member(member: CourseMember) -> Member:
    return Member(
        member_id=member.id,
        course_id=member.course_id,
        role=member.role,
        student_id=member.student_id,
        name=member.name,
        email=member.email,
        created_time_ms=epoch_ms(member.created_at),
        dropped_time_ms=None if member.dropped_at is None else epoch_ms(member.dropped_at),
    )


def _assignment(row: AssignmentRow, now: datetime) -> Assignment:
    return Assignment(
        assignment_id=row.id,
        course_id=row.course_id,
        name=row.name,
        profile=row.profile,
        release_time_ms=epoch_ms(row.release_at),
        due_time_ms=epoch_ms(row.due_at),
        late_policy=row.late_policy,
        late_penalty_per_day=row.late_penalty_per_day,
        late_days_max=row.late_days_max,
        last_accepted_time_ms=epoch_ms(grades.last_accepted(row)),
        daily_limit=row.daily_limit,
        score_policy=row.score_policy,
        before_due=row.before_due,
        suite_version=row.suite_version,
        public_tests=row.public_tests,
        private_tests=row.private_tests,
        released=grades.aware(row.release_at) <= now,
    )


def _refuse_over_limit(row: AssignmentRow, times: Sequence[datetime], now: datetime) -> None:
    """Refuse a student's submission past the daily limit (a rolling 24 hours): SUBMISSION_LIMIT
    with the next allowed time. `times` are the member's submissions in the window, oldest
    first."""
    used, limit = len(times), row.daily_limit
    if used < limit:
        return
    allowed = grades.aware(times[used - limit]) + grades.WINDOW
    wait = max(allowed - now, timedelta(seconds=1))
    raise ProtocolError(
        ErrorCode.SUBMISSION_LIMIT,
        f"you have used {used} of {limit} submissions in the last 24 hours; the next is "
        f"allowed at {_iso(allowed)} (in {_in(wait)})",
        {
            "limit": limit,
            "next_allowed_time_ms": epoch_ms(allowed),
            "retry_after_s": math.ceil(wait.total_seconds()),
        },
    )


def _daily_limit(row: AssignmentRow, member_id: int) -> Admission:
    """Return the daily limit's check made as the submission's row is stored: the member's
    row locked (server.courses.store.lock_member), their submissions counted, the row added
    only under the limit, in one transaction. So concurrent submissions, to this process or
    to others on the same database, are counted one at a time."""

    async def check(session: AsyncSession) -> None:
        await lock_member(session, member_id)
        now = _now()
        times = await recent_times_in(session, row.id, member_id, now - grades.WINDOW)
        _refuse_over_limit(row, times, now)

    return check


def _check_deadline(row: AssignmentRow, now: datetime) -> None:
    """Refuse a student's submission after the assignment's last accepted moment."""
    deadline = grades.last_accepted(row)
    if now <= deadline:
        return
    if row.late_policy == "hard":
        why = f"its due date was {_iso(row.due_at)} (a hard deadline)"
    else:
        why = (
            f"its due date was {_iso(row.due_at)} and late submissions were accepted for "
            f"{row.late_days_max} days, until {_iso(deadline)}"
        )
    raise ProtocolError(
        ErrorCode.DEADLINE_PASSED,
        f"{row.name[:100]} takes no more submissions: {why}",
        {"due_time_ms": epoch_ms(row.due_at), "deadline_time_ms": epoch_ms(deadline)},
    )


def _report_as_seen(job: JobRow, row: AssignmentRow, filtered: bool) -> GradeReport:
    report = GradeReport.from_json(json.loads(job.results or '{"tests": []}'), job.profile)
    if not filtered:
        return report
    return grades.filtered_report(report, row.before_due, grades.aware(row.due_at))


def _quota(message: str, limit: int) -> ProtocolError:
    return ProtocolError(ErrorCode.QUOTA_EXCEEDED, message, {"limit": limit})


def _name_taken(name: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.VALIDATION_ERROR,
        f"the course already has an assignment named {name[:100]!r}",
        {"name": "taken"},
    )


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            archive.writestr(name, data)
    return buffer.getvalue()
