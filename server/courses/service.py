"""The course service: every policy of courses, decided here and nowhere else.

Who may do what (a non-member is told UNKNOWN_COURSE, never that the course exists; a student
on a staff action FORBIDDEN; a student reading another's submission UNKNOWN_JOB), the limits
(courses per owner, assignments per course, members per course), release and due dates, the
daily limit, late penalties and what a student sees of their results before the due date.

Every method takes the `Player` asking (from a bearer token, an invite token or the web's
cookie) first and answers protocol models (protocol.courses) or raises ProtocolError.
`CourseService` is one object made of a part per job, each on the access checks of
server.courses.access: courses and rosters (`membership`), assignments and their suites
(`assignments`), submissions (`submissions`), gradebooks and regrades (`gradebook`).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.courses.assignments import Assignments
from server.courses.generation import SuiteGeneration
from server.courses.gradebook import Gradebooks
from server.courses.membership import Membership
from server.courses.submissions import Submissions
from server.grading import GradingService
from server.settings import Settings


class CourseService(Membership, Assignments, Submissions, Gradebooks):
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
        super().__init__(sessions, settings, grading)
        self._suites = SuiteGeneration(self._store, self._files, settings)

    async def start(self) -> int:
        """Generate the suites a previous run left ungenerated; return how many."""
        return await self._suites.start()

    async def close(self) -> None:
        """Stop the suites' generation (what is unfinished is generated at the next start)."""
        await self._suites.close()
