"""Courses: staff, rosters and invite links, assignments with their private suites, course
submissions (grading jobs seen through their course), gradebooks and regrades.

`CourseService` is built in the lifespan and kept on `app.state.courses` (`CoursesDep` in
server.deps); the REST routes (server.routes.courses) and the web pages call the same methods,
which decide every policy: who may do what, release and due dates, late penalties, daily
limits, what a student sees of their results before the due date.

Its rooms, each importing only those below it (a contract in pyproject.toml):

- `service`: the one object the app keeps, made of the parts below;
- its parts by job: `membership` (courses, rosters, invite links), `assignments` (their
  policies and suites), `submissions` (submitting, and what a reader sees of one),
  `gradebook` (gradebooks, their CSV export, regrades);
- `access`: who may do what, on which every part stands; `generation`: the suites generated
  in the background; `admission`: the deadline and the daily limit of a student's submission;
- `store`: the course rows; `wire`: the rows as protocol models (pure);
- `grades`: late days, penalties, the counted score, the filtered report, the CSV export (pure);
- `roster`: a roster CSV read into rows (pure);
- `suites`: each assignment's private suite file, generated or given.
"""

from server.courses.membership import Invitation
from server.courses.service import CourseService

__all__ = ["CourseService", "Invitation"]
