"""Class tournaments: a course assignment's agents playing each other (docs/COURSE.md,
"Class tournaments").

`ClassTournaments` (service) is built in the lifespan and kept on `app.state.classes`: staff
start one for an agent assignment; each student's latest or best graded submission is hosted as
that student's bot (server.hosted) and plays in an ordinary server tournament
(server.tournaments) with house bots as references. `store` keeps which tournament plays it and
who entered; `wire` shows it to staff by roster name and to a student as `you` among
`student N`s, with the grade share's points, and writes the staff's CSV.
"""

from server.classes.service import ClassTournaments

__all__ = ["ClassTournaments"]
