"""The course rows as the protocol's models (protocol.courses): what every reader is answered.

Pure: a row, and for a submission the reader's view of it, in; a wire model out.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from protocol.courses import Assignment, Course, Member, Submission
from server.courses import grades
from server.db.models import Assignment as AssignmentRow
from server.db.models import Course as CourseRow
from server.db.models import CourseMember, epoch_ms
from server.db.models import GradingJob as JobRow
from server.grading import Place, describe_wait

SUMMARY_CHARACTERS = 4000
"""How much of a grading's summary a submission carries."""


def course_model(course: CourseRow, member: CourseMember) -> Course:
    """Return a course as `member` sees it (with their role)."""
    return Course(
        course_id=course.id,
        name=course.name,
        role=member.role,
        member_id=member.id,
        created_time_ms=epoch_ms(course.created_at),
    )


def member_model(member: CourseMember) -> Member:
    """Return a roster's member."""
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


def assignment_model(row: AssignmentRow, now: datetime) -> Assignment:
    """Return an assignment's dates and policies as staff see them (`released` at `now`)."""
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


def submission_model(
    job: JobRow,
    row: AssignmentRow,
    member: CourseMember,
    is_staff: bool,
    now: datetime,
    places: Mapping[str, Place],
) -> Submission:
    """Return a course job as `is_staff` or its submitter sees it now; `places` has where the
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
        summary=None if view.summary is None else view.summary[:SUMMARY_CHARACTERS],
        regrades=job.regrades,
        created_time_ms=epoch_ms(job.created_at),
        started_time_ms=started,
        finished_time_ms=finished,
        results_url=f"{base}/results",
        report_url=f"{base}/report",
        files_url=f"{base}/files",
    )
