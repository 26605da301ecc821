"""What the course pages' scripts and links read by the cookie: a submission's status, a
regrade's progress, a submission's files and the gradebook's export. Each answers what its
REST route (server.routes.courses) answers, from the same service call and response builder;
the downloads are kept nowhere besides (`NO_STORE`)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from protocol.courses import Regrade, Submission
from server.deps import CoursesDep, GuestDep
from server.routes.course_common import (
    AssignmentIdPath,
    CourseIdPath,
    RegradeIdPath,
    SubmissionPath,
    gradebook_csv_response,
    submission_files_response,
)
from server.routes.web_courses.common import NO_STORE

router = APIRouter(tags=["web pages"], include_in_schema=False)


@router.get("/web/courses/{course_id}/submissions/{submission_id}")
async def submission_status(
    course_id: CourseIdPath, submission_id: SubmissionPath, courses: CoursesDep, viewer: GuestDep
) -> Submission:
    """Return a submission's status to its submitter or staff (the pages follow it)."""
    return await courses.submission(viewer, course_id, submission_id)


@router.get("/web/courses/{course_id}/regrades/{regrade_id}")
async def regrade_status(
    course_id: CourseIdPath, regrade_id: RegradeIdPath, courses: CoursesDep, viewer: GuestDep
) -> Regrade:
    """Return a regrade's progress to staff (the assignment's page follows it)."""
    return await courses.regrade_progress(viewer, course_id, regrade_id)


@router.get("/web/courses/{course_id}/submissions/{submission_id}/files")
async def submission_files(
    course_id: CourseIdPath, submission_id: SubmissionPath, courses: CoursesDep, viewer: GuestDep
) -> Response:
    """Download a submission's files as a zip (its submitter or staff)."""
    return await submission_files_response(courses, viewer, course_id, submission_id, NO_STORE)


@router.get("/web/courses/{course_id}/assignments/{assignment_id}/gradebook.csv")
async def gradebook_csv(
    course_id: CourseIdPath, assignment_id: AssignmentIdPath, courses: CoursesDep, viewer: GuestDep
) -> Response:
    """Download an assignment's gradebook as CSV (staff), the columns of an LMS import."""
    return await gradebook_csv_response(courses, viewer, course_id, assignment_id, NO_STORE)
