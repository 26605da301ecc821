"""The course service: every policy of courses, decided here and nowhere else.

Who may do what (a non-member is told UNKNOWN_COURSE, never that the course exists; a student
on a staff action FORBIDDEN; a student reading another's submission UNKNOWN_JOB), the limits
(courses per owner, assignments per course, members per course), release and due dates, the
daily limit, late penalties and what a student sees of their results before the due date.

Every method takes the `Player` asking (from a bearer token, an invite token or the web's
cookie) first and answers protocol models (protocol.courses) or raises ProtocolError.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grader.results import GradeReport
from protocol.courses import (
    Assignment,
    AssignmentCreate,
    AssignmentList,
    AssignmentUpdate,
    Course,
    CourseCreate,
    CourseCreated,
    CourseList,
    Gradebook,
    Invite,
    Member,
    MemberList,
    Regrade,
    RosterImport,
    RosterRow,
    Submission,
    SubmissionList,
)
from server.db.models import Player
from server.grading import GradingService, Upload
from server.settings import Settings


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
        self._sessions = sessions
        self._settings = settings
        self._grading = grading

    # -- courses -----------------------------------------------------------------------------

    async def create_course(
        self, player: Player, body: CourseCreate, base_url: str
    ) -> CourseCreated:
        """Create a course owned by `player`, its first instructor; return it with the
        instructor's sign-in link (shown this once).

        QUOTA_EXCEEDED when `player` already owns `course_max_per_owner` courses.
        """
        raise NotImplementedError

    async def list_courses(self, player: Player) -> CourseList:
        """Return the courses `player` is a member of (not dropped), with their role."""
        raise NotImplementedError

    async def course(self, player: Player, course_id: int) -> Course:
        """Return a course to one of its members; UNKNOWN_COURSE to anyone else."""
        raise NotImplementedError

    async def invitation(self, token: str) -> Invitation | None:
        """Return what invite `token` signs in as; None for an unknown, rotated or dropped one."""
        raise NotImplementedError

    # -- roster (staff reads, instructor writes) ---------------------------------------------

    async def members(self, player: Player, course_id: int) -> MemberList:
        """Return the roster to staff (dropped members included, marked)."""
        raise NotImplementedError

    async def member(self, player: Player, course_id: int, member_id: int) -> Member:
        """Return one member to staff; UNKNOWN_MEMBER when the course has none with this id."""
        raise NotImplementedError

    async def import_roster(
        self, player: Player, course_id: int, rows: Sequence[RosterRow], base_url: str
    ) -> RosterImport:
        """Add or update roster rows (instructor); new members get a player and a link.

        A row whose student id is on the roster updates that member (name, email, role; a
        dropped member is enrolled again with a new link). QUOTA_EXCEEDED past
        `course_max_members`; BAD_ROSTER for a student id given twice. All or nothing.
        """
        raise NotImplementedError

    async def import_roster_csv(
        self, player: Player, course_id: int, data: bytes, base_url: str
    ) -> RosterImport:
        """Import a roster CSV (`student_id,name,email[,role]`, a header line optional).

        BAD_ROSTER naming the line and column for a file that cannot be read as one (nothing
        is imported); otherwise as `import_roster`.
        """
        raise NotImplementedError

    async def reissue_invite(
        self, player: Player, course_id: int, member_id: int, base_url: str
    ) -> Invite:
        """Give a member a new sign-in link (instructor); their previous link stops working."""
        raise NotImplementedError

    async def drop_member(self, player: Player, course_id: int, member_id: int) -> None:
        """Drop a member (instructor): their link stops working, their submissions are kept.

        FORBIDDEN for dropping oneself (a course keeps an instructor).
        """
        raise NotImplementedError

    # -- assignments -------------------------------------------------------------------------

    async def assignments(self, player: Player, course_id: int) -> AssignmentList:
        """Return the course's assignments: all to staff, the released ones to a student
        (with their attempts and counted score)."""
        raise NotImplementedError

    async def assignment(self, player: Player, course_id: int, assignment_id: int) -> Assignment:
        """Return one assignment; UNKNOWN_ASSIGNMENT to a student before its release."""
        raise NotImplementedError

    async def create_assignment(
        self, player: Player, course_id: int, body: AssignmentCreate
    ) -> Assignment:
        """Create an assignment (instructor) with a generated suite of public and private tests.

        QUOTA_EXCEEDED past `course_max_assignments`; VALIDATION_ERROR for a name the course
        already has.
        """
        raise NotImplementedError

    async def update_assignment(
        self, player: Player, course_id: int, assignment_id: int, body: AssignmentUpdate
    ) -> Assignment:
        """Change an assignment's dates or policies (instructor); scores follow when read."""
        raise NotImplementedError

    async def replace_suite(
        self, player: Player, course_id: int, assignment_id: int, suite: bytes
    ) -> Assignment:
        """Replace an assignment's suite with the given suite file's bytes (instructor).

        VALIDATION_ERROR naming the problem when the grader's loader for the assignment's
        profile refuses it; `suite_version` goes up by one. Submissions keep their results
        until regraded.
        """
        raise NotImplementedError

    # -- submissions -------------------------------------------------------------------------

    async def submit(
        self, player: Player, course_id: int, assignment_id: int, uploads: Sequence[Upload]
    ) -> Submission:
        """Queue a submission to an assignment by a member; return it (status `queued`).

        A student: UNKNOWN_ASSIGNMENT before the release, DEADLINE_PASSED after the due date
        (hard) or the last late day (penalty), SUBMISSION_LIMIT with `next_allowed_time_ms`
        over the daily limit; staff are exempt. Then the grading service's checks (files,
        queue limit).
        """
        raise NotImplementedError

    async def submissions(
        self, player: Player, course_id: int, assignment_id: int, member_id: int | None = None
    ) -> SubmissionList:
        """Return an assignment's submissions: a student's own; staff's all, or `member_id`'s."""
        raise NotImplementedError

    async def member_submissions(
        self, player: Player, course_id: int, member_id: int
    ) -> SubmissionList:
        """Return one member's submissions to every assignment of the course (staff)."""
        raise NotImplementedError

    async def submission(self, player: Player, course_id: int, submission_id: str) -> Submission:
        """Return a submission to its submitter or staff (UNKNOWN_JOB to anyone else)."""
        raise NotImplementedError

    async def submission_report(
        self, player: Player, course_id: int, submission_id: str
    ) -> tuple[Submission, GradeReport | None]:
        """Return a submission and, once graded, its report as the reader may see it."""
        raise NotImplementedError

    async def report(self, player: Player, course_id: int, submission_id: str) -> GradeReport:
        """Return a graded submission's report as the reader may see it; JOB_NOT_FINISHED
        before then."""
        raise NotImplementedError

    async def results(self, player: Player, course_id: int, submission_id: str) -> dict[str, Any]:
        """Return a graded submission's results.json object as the reader may see it."""
        raise NotImplementedError

    async def files(self, player: Player, course_id: int, submission_id: str) -> SubmissionFiles:
        """Return a submission's uploaded files as a zip, to its submitter or staff."""
        raise NotImplementedError

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
        raise NotImplementedError

    async def regrade_progress(self, player: Player, course_id: int, regrade_id: int) -> Regrade:
        """Return a regrade's progress (staff)."""
        raise NotImplementedError

    async def gradebook(self, player: Player, course_id: int, assignment_id: int) -> Gradebook:
        """Return an assignment's gradebook (staff): one row per enrolled student."""
        raise NotImplementedError

    async def gradebook_csv(self, player: Player, course_id: int, assignment_id: int) -> str:
        """Return the gradebook as CSV (staff), columns `student_id,name,email,score,
        max_score,late,days_late,attempts,submitted_at` (ISO-8601 UTC), for an LMS import."""
        raise NotImplementedError
