"""Courses: staff, rosters and invite links, assignments with their private suites, course
submissions (grading jobs seen through their course), gradebooks and regrades.

`CourseService` is built in the lifespan and kept on `app.state.courses` (`CoursesDep` in
server.deps); the REST routes (server.routes.courses) and the web pages call the same methods,
which decide every policy: who may do what, release and due dates, late penalties, daily
limits, what a student sees of their results before the due date.

Its rooms, each importing only those below it:

- `service`: the policies;
- `store`: the course rows;
- `grades`: late days, penalties, the counted score, the filtered report, the CSV export (pure);
- `roster`: a roster CSV read into rows (pure);
- `suites`: each assignment's private suite file, generated or given.
"""

from server.courses.service import CourseService, Invitation

__all__ = ["CourseService", "Invitation"]
