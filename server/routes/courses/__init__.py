"""Courses over REST: courses, rosters and invite links, assignments and their suites, course
submissions, gradebooks and regrades (docs/PROTOCOL.md, "Courses").

Every route takes a bearer token (a player's, or a course member's invite token) or the
browser's cookie holding one (server.deps, `optional_caller`) and hands the player to
`CourseService`, which decides every policy; a route only moves bytes. The courses, a course,
an assignment and a submission answer a browser with their pages (`wants_html`,
server.routes.web_courses.pages). The roster
import reads its body under its own limit (`course_max_roster_bytes`, a CSV or JSON rows) and
the submission's upload under the grader's (`UploadLimitRoute`), so both are exempt from the
general body limit (server.app).

Its modules, by resource: `course` (courses and assignments), `roster` (members and invite
links), `submissions` (submissions, regrades and gradebooks), `tournaments` (class
tournaments); what they share is `common`.
"""

from __future__ import annotations

from fastapi import APIRouter

from server.routes.courses import course, roster, submissions, tournaments

BODY_LIMIT_EXEMPT = (("POST", roster.ROSTER_PATH), ("POST", submissions.SUBMISSIONS_PATH))
"""The course routes that read their bodies under their own limits."""

router = APIRouter()
router.include_router(course.router)
router.include_router(roster.router)
router.include_router(submissions.router)
router.include_router(tournaments.router)
uploads = submissions.uploads
"""The submission's upload route, read under the grader's limit (`UploadLimitRoute`)."""
