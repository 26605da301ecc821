"""The wire contract of courses: courses, members, assignments, submissions, gradebooks, regrades.

A course's REST routes (docs/PROTOCOL.md, "Courses") take and return these models. Times are
`*_time_ms` (epoch milliseconds) like the rest of the protocol; the bodies that create or
change an assignment take ISO-8601 date-times with a time zone (`2026-12-01T23:59:00+01:00`).
A course submission is a grading job seen through its course: `Submission` carries the job's
fields with the scores a student may see (before the due date, filtered by the assignment's
`before_due`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field, Strict, model_validator

from protocol.messages import (
    EpochMs,
    GradingProfileName,
    JobId,
    JobStatus,
    QueueWait,
    WireModel,
)

MAX_COURSE_MEMBERS = 10_000
"""Most members a course's lists carry on the wire (the server's own limit is lower)."""
MAX_ASSIGNMENTS = 1_000
MAX_COURSES = 1_000
"""Most courses a course list carries (the newest)."""
MAX_SUBMISSIONS = 10_000
"""Most submissions a list carries (the newest)."""
MAX_SUITE_TESTS = 30
"""Most public or private tests a generated suite may have (generation must stay bounded)."""

CourseRole = Literal["instructor", "ta", "student"]
"""`instructor`: everything; `ta`: reads everything of the course, regrades and exports;
`student`: their own work only."""
RosterRole = Literal["student", "ta"]
"""The roles a roster import may give (instructors are added by creating the course)."""
AssignmentProfile = Literal["endgame", "agent"]
LatePolicy = Literal["hard", "penalty"]
"""`hard`: nothing is accepted after the due date; `penalty`: a late submission loses
`late_penalty_per_day` percent per (started) day late, up to `late_days_max` days."""
ScorePolicy = Literal["best", "last"]
"""Which graded submission counts: the best final score, or the last graded one."""
BeforeDue = Literal["public", "score", "full"]
"""What a student sees of their own results before the due date: `public` the public tests
only, `score` every test's total but the private tests' names and output hidden, `full`
everything. After the due date, everything."""

CourseId = Annotated[int, Strict(), Field(ge=1, description="A course's id.")]
MemberId = Annotated[int, Strict(), Field(ge=1, description="A course member's id.")]
AssignmentId = Annotated[int, Strict(), Field(ge=1, description="An assignment's id.")]
CourseName = Annotated[str, Field(min_length=1, max_length=100)]
PersonName = Annotated[str, Field(max_length=100)]
Email = Annotated[str, Field(max_length=254)]
StudentId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="The roster's id of a member (a student number, a login).",
    ),
]
Url = Annotated[str, Field(max_length=2048)]
InviteToken = Annotated[str, Field(min_length=16, max_length=256)]
Score = Annotated[float, Field(ge=0)]
Percent = Annotated[float, Strict(), Field(ge=0, le=100)]
LateDays = Annotated[int, Strict(), Field(ge=0, le=30)]
DailyLimit = Annotated[int, Strict(), Field(ge=1, le=100)]
SuiteCount = Annotated[int, Strict(), Field(ge=0, le=MAX_SUITE_TESTS)]


def _date_text(value: Any) -> Any:
    """Take a date-time as ISO-8601 text only (not a number of seconds, as pydantic would)."""
    if not isinstance(value, str | datetime):
        raise ValueError("a date-time is ISO-8601 text with a time zone")
    return value


def _plausible(value: datetime) -> datetime:
    """Take a date-time between the years 2000 and 2999 (UTC): room for late days, and an
    epoch time in milliseconds for every answer."""
    try:
        year = value.astimezone(UTC).year
    except OverflowError:
        year = value.year
    if not 2000 <= year <= 2999:
        raise ValueError("a date-time between the years 2000 and 2999")
    return value


DateTime = Annotated[
    AwareDatetime,
    BeforeValidator(_date_text),
    AfterValidator(_plausible),
    Field(description="An ISO-8601 date-time with a time zone: 2026-12-01T23:59:00+01:00."),
]


class CourseCreate(WireModel):
    """Create a course (request body); its creator becomes its first instructor."""

    type: Literal["course_create"] = "course_create"
    name: CourseName


class Course(WireModel):
    """A course as one of its members sees it, with that member's role."""

    type: Literal["course"] = "course"
    course_id: CourseId
    name: CourseName
    role: CourseRole
    """The role of the player who asked."""
    member_id: MemberId
    """The membership of the player who asked."""
    created_time_ms: EpochMs


class CourseList(WireModel):
    """The courses the player who asked is a member of (not dropped), newest first."""

    type: Literal["course_list"] = "course_list"
    courses: Annotated[tuple[Course, ...], Field(max_length=MAX_COURSES)]


class CourseCreated(WireModel):
    """A new course and its creator's sign-in link for the web (shown this once)."""

    type: Literal["course_created"] = "course_created"
    course: Course
    invite_url: Url
    invite_token: InviteToken


class Member(WireModel):
    """A course member as staff see them (the roster)."""

    type: Literal["member"] = "member"
    member_id: MemberId
    course_id: CourseId
    role: CourseRole
    student_id: StudentId
    name: PersonName
    email: Email
    created_time_ms: EpochMs
    dropped_time_ms: EpochMs | None = None
    """When the member was dropped (their link no longer signs in); None while enrolled."""


class MemberList(WireModel):
    """A course's roster, staff first, then by student id."""

    type: Literal["member_list"] = "member_list"
    members: Annotated[tuple[Member, ...], Field(max_length=MAX_COURSE_MEMBERS)]


class RosterRow(WireModel):
    """One roster line (request body rows): a student, or a TA with `role` "ta"."""

    type: Literal["roster_row"] = "roster_row"
    student_id: StudentId
    name: PersonName = ""
    email: Email = ""
    role: RosterRole = "student"


class RosterRows(WireModel):
    """A roster given as JSON (request body); a CSV `student_id,name,email[,role]` is the same."""

    type: Literal["roster_rows"] = "roster_rows"
    rows: Annotated[tuple[RosterRow, ...], Field(min_length=1, max_length=MAX_COURSE_MEMBERS)]


class Invite(WireModel):
    """A member's sign-in link and token (shown this once: a reissue makes a new one)."""

    type: Literal["invite"] = "invite"
    member: Member
    invite_url: Url
    invite_token: InviteToken


class RosterImport(WireModel):
    """What a roster import did: the new members with their links, and the members updated.

    A member already on the roster (same student id) keeps their player and link; their name,
    email and role are updated, and a dropped member is enrolled again (with a new link).
    """

    type: Literal["roster_import"] = "roster_import"
    created: Annotated[tuple[Invite, ...], Field(max_length=MAX_COURSE_MEMBERS)]
    updated: Annotated[tuple[Member, ...], Field(max_length=MAX_COURSE_MEMBERS)]


class _AssignmentPolicies(WireModel):
    """The fields an assignment's creation and its update share, checked together."""

    @model_validator(mode="after")
    def _dates_in_order(self) -> Self:
        release = getattr(self, "release_at", None)
        due = getattr(self, "due_at", None)
        if release is not None and due is not None and release > due:
            raise ValueError("release_at must not be after due_at")
        return self


class AssignmentCreate(_AssignmentPolicies):
    """Create an assignment (request body).

    Its suite is `suite`, a suite file's JSON object (docs/GRADER.md) when given; otherwise
    it is generated from a random seed: `public_count` public examples (visible to students
    at once) and `private_count` private tests. `PUT .../suite` replaces it later.
    `release_at` defaults to now.
    """

    type: Literal["assignment_create"] = "assignment_create"
    name: CourseName
    profile: AssignmentProfile
    release_at: DateTime | None = None
    due_at: DateTime
    late_policy: LatePolicy = "hard"
    late_penalty_per_day: Percent = 0.0
    late_days_max: LateDays = 0
    daily_limit: DailyLimit = 10
    score_policy: ScorePolicy = "best"
    before_due: BeforeDue = "public"
    public_count: SuiteCount = 3
    private_count: SuiteCount = 10
    suite: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _some_tests(self) -> Self:
        if self.suite is None and self.public_count + self.private_count == 0:
            raise ValueError("a suite needs at least one test: public_count + private_count > 0")
        return self


class AssignmentUpdate(_AssignmentPolicies):
    """Change an assignment's dates or policies (request body); absent fields stay.

    Late penalties and scores are computed when read, so a change applies to every submission
    already made.
    """

    type: Literal["assignment_update"] = "assignment_update"
    name: CourseName | None = None
    release_at: DateTime | None = None
    due_at: DateTime | None = None
    late_policy: LatePolicy | None = None
    late_penalty_per_day: Percent | None = None
    late_days_max: LateDays | None = None
    daily_limit: DailyLimit | None = None
    score_policy: ScorePolicy | None = None
    before_due: BeforeDue | None = None


class Assignment(WireModel):
    """An assignment, with its suite's summary and, for a student, their own standing."""

    type: Literal["assignment"] = "assignment"
    assignment_id: AssignmentId
    course_id: CourseId
    name: CourseName
    profile: GradingProfileName
    release_time_ms: EpochMs
    due_time_ms: EpochMs
    late_policy: LatePolicy
    late_penalty_per_day: Percent
    late_days_max: LateDays
    last_accepted_time_ms: EpochMs
    """The last moment a student's submission is accepted: the due date (hard policy), or the
    due date plus `late_days_max` days (penalty policy)."""
    daily_limit: DailyLimit
    score_policy: ScorePolicy
    before_due: BeforeDue
    suite_version: Annotated[int, Strict(), Field(ge=0)]
    """1 for the first suite, one more at each change; 0 while a generated suite is being made
    (submissions wait for it)."""
    public_tests: Annotated[int, Strict(), Field(ge=0)]
    """The tests students see before the due date (while generated: the count asked for)."""
    private_tests: Annotated[int, Strict(), Field(ge=0)]
    released: bool
    attempts: Annotated[int, Strict(), Field(ge=0)] | None = None
    """The asking student's submissions (None for staff)."""
    score: Score | None = None
    """The asking student's counted final score (best or last, per policy) as they may see it
    now; None for staff or before a graded submission."""
    max_score: Score | None = None
    submissions_left_today: Annotated[int, Strict(), Field(ge=0)] | None = None
    """How many more the asking student may submit in the rolling 24 hours (None for staff)."""


class AssignmentList(WireModel):
    """A course's assignments (a student sees the released ones only), by due date."""

    type: Literal["assignment_list"] = "assignment_list"
    assignments: Annotated[tuple[Assignment, ...], Field(max_length=MAX_ASSIGNMENTS)]


class Submission(WireModel):
    """A course submission: its grading job's status, and its scores as the reader may see them.

    For a student before the due date the scores are filtered by the assignment's
    `before_due` (`filtered` is True, `hidden_tests` private tests are not counted in `score`
    under `public`); staff and anyone after the due date see everything. `final_score` is
    `score` less the late penalty, computed from the assignment's policy when read.
    """

    type: Literal["course_submission"] = "course_submission"
    submission_id: JobId
    course_id: CourseId
    assignment_id: AssignmentId
    member_id: MemberId
    student_id: StudentId
    status: JobStatus
    files: tuple[Annotated[str, Field(max_length=255)], ...]
    queue_position: Annotated[int, Strict(), Field(ge=1)] | None = None
    wait: QueueWait | None = None
    """Why it waits, while `queued` (protocol.messages.QueueWait)."""
    score: Score | None = None
    max_score: Score | None = None
    final_score: Score | None = None
    late: bool
    days_late: Annotated[int, Strict(), Field(ge=0)]
    filtered: bool
    hidden_tests: Annotated[int, Strict(), Field(ge=0)] = 0
    summary: Annotated[str, Field(max_length=4000)] | None = None
    regrades: Annotated[int, Strict(), Field(ge=0)] = 0
    created_time_ms: EpochMs
    """When it was submitted (late days count from here)."""
    started_time_ms: EpochMs | None = None
    finished_time_ms: EpochMs | None = None
    results_url: Url
    report_url: Url
    files_url: Url


class SubmissionList(WireModel):
    """Submissions to an assignment, newest first."""

    type: Literal["submission_list"] = "submission_list"
    submissions: Annotated[tuple[Submission, ...], Field(max_length=MAX_SUBMISSIONS)]


class GradebookRow(WireModel):
    """One student's standing on an assignment: the counted submission (best or last)."""

    type: Literal["gradebook_row"] = "gradebook_row"
    member_id: MemberId
    student_id: StudentId
    name: PersonName
    email: Email
    score: Score | None = None
    """The counted final score (late penalty applied); None without a graded submission."""
    max_score: Score | None = None
    late: bool = False
    days_late: Annotated[int, Strict(), Field(ge=0)] = 0
    attempts: Annotated[int, Strict(), Field(ge=0)] = 0
    last_submitted_time_ms: EpochMs | None = None
    job_id: JobId | None = None
    """The counted submission."""


class Gradebook(WireModel):
    """An assignment's gradebook: one row per student on the roster (dropped ones left out)."""

    type: Literal["gradebook"] = "gradebook"
    assignment: Assignment
    rows: Annotated[tuple[GradebookRow, ...], Field(max_length=MAX_COURSE_MEMBERS)]


class RegradeRequest(WireModel):
    """Grade submissions again (request body): the ones named, or every one when empty."""

    type: Literal["regrade_request"] = "regrade_request"
    submission_ids: Annotated[tuple[JobId, ...], Field(max_length=MAX_SUBMISSIONS)] = ()


class Regrade(WireModel):
    """A regrade and its progress, read from its jobs' statuses."""

    type: Literal["regrade"] = "regrade"
    regrade_id: Annotated[int, Strict(), Field(ge=1)]
    course_id: CourseId
    assignment_id: AssignmentId
    total: Annotated[int, Strict(), Field(ge=0)]
    queued: Annotated[int, Strict(), Field(ge=0)]
    running: Annotated[int, Strict(), Field(ge=0)]
    done: Annotated[int, Strict(), Field(ge=0)]
    error: Annotated[int, Strict(), Field(ge=0)]
    created_time_ms: EpochMs

    @property
    def finished(self) -> bool:
        """True once every job of the regrade is graded (`done` or `error`)."""
        return self.done + self.error == self.total


COURSE_MODELS: tuple[type[WireModel], ...] = (
    CourseCreate,
    Course,
    CourseList,
    CourseCreated,
    Member,
    MemberList,
    RosterRow,
    RosterRows,
    Invite,
    RosterImport,
    AssignmentCreate,
    AssignmentUpdate,
    Assignment,
    AssignmentList,
    Submission,
    SubmissionList,
    GradebookRow,
    Gradebook,
    RegradeRequest,
    Regrade,
)
"""Every REST body model of the course routes."""
