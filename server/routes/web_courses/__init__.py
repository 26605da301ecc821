"""The course pages: sign in with an invite link, the courses, an assignment, a submission, a
student's history, the roster; and the forms behind them.

Who is asking is the browser's cookie (`arena_guest`, as for a guest player): `POST /web/join`
sets it to the invite token of the link, which the player registry resolves to the member's
player like any token. Every page and route calls `CourseService` (server.courses), which
decides every policy (who may see what, deadlines, daily limits, what a student sees before
the due date); a refusal is shown as a page with the service's own message.

Four pages are the HTML answers of their resources' own routes (`/courses`, `/courses/{id}`,
an assignment, a submission: server.routes.courses renders them for a browser, `wants_html`).
The student's page and the roster are pages only. The forms post to `/web/courses/...`, each
origin-checked (`check_origin`); the scripts and links read the course routes themselves
(a submission's status, a regrade's progress, the files, the gradebook's CSV) by the cookie.

Its modules, by page family: `join` (signing in), `pages` (the courses, a course, an
assignment, a submission, a student), `submissions` (the assignment page's forms), `roster`
(the roster and its forms), `tournaments` (class tournaments: the staff's form and a class
tournament's page); what they share is `common`.
"""

from __future__ import annotations

from fastapi import APIRouter

from server.routes.web_courses import join, pages, roster, submissions, tournaments

BODY_LIMIT_EXEMPT = (("POST", submissions.SUBMISSIONS_FORM), ("POST", roster.ROSTER_FORM))
"""The forms that read their bodies under their own limit (the grader's upload limit)."""

router = APIRouter()
router.include_router(join.router)
router.include_router(pages.router)
router.include_router(roster.router)
router.include_router(submissions.router)
router.include_router(submissions.uploads_router)
router.include_router(tournaments.router)
router.include_router(roster.roster_router)
