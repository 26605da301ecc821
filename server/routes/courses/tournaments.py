"""Class tournaments over REST: staff start one for an agent assignment; members read them;
staff export one as CSV (docs/PROTOCOL.md, "Class tournaments")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response, status
from fastapi.responses import HTMLResponse

from protocol.class_tournaments import ClassTournament, ClassTournamentCreate, ClassTournamentList
from server.deps import (
    ClassesDep,
    CoursesDep,
    OptionalPlayerDep,
    PagesDep,
    PlayerDep,
    limit_tournament_creation,
)
from server.routes.course_common import NO_STORE, AssignmentIdPath, CourseIdPath
from server.routes.courses.common import ERRORS, HTML_PAGE, signed_in
from server.routes.web_courses.tournaments import class_tournament_page
from server.web.pages import wants_html

router = APIRouter(prefix="/courses", tags=["courses"], responses=ERRORS)

ClassIdPath = Annotated[int, Path(ge=1, le=2**31 - 1)]


@router.post(
    "/{course_id}/assignments/{assignment_id}/tournaments",
    status_code=status.HTTP_201_CREATED,
    dependencies=[Depends(limit_tournament_creation)],
)
async def start_class_tournament(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    body: ClassTournamentCreate,
    classes: ClassesDep,
    player: PlayerDep,
    response: Response,
) -> ClassTournament:
    """Start a class tournament among the students' latest or best graded submissions to an
    agent assignment, with house bots as references (staff). Each submission plays as its
    student's hosted bot in the sandbox; one that does not start is listed `refused`, with why.
    """
    started = await classes.start(player, course_id, assignment_id, body)
    response.headers["Location"] = f"/courses/{course_id}/tournaments/{started.class_tournament_id}"
    return started


@router.get("/{course_id}/assignments/{assignment_id}/tournaments")
async def list_class_tournaments(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    classes: ClassesDep,
    player: PlayerDep,
) -> ClassTournamentList:
    """List an assignment's class tournaments, newest first, as you may see them (members)."""
    return await classes.of_assignment(player, course_id, assignment_id)


@router.get(
    "/{course_id}/tournaments/{class_id}.csv",
    response_class=Response,
    responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}},
)
async def export_class_tournament(
    course_id: CourseIdPath, class_id: ClassIdPath, classes: ClassesDep, player: PlayerDep
) -> Response:
    """Export a class tournament as CSV (staff): a row per student with games, score and the
    grade share's points."""
    text = await classes.csv(player, course_id, class_id)
    disposition = f'attachment; filename="class-tournament-{course_id}-{class_id}.csv"'
    return Response(
        text,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": disposition, **NO_STORE},
    )


# After the CSV's route: `{class_id}` would take `1.csv` and refuse it.
@router.get(
    "/{course_id}/tournaments/{class_id}", response_model=ClassTournament, responses=HTML_PAGE
)
async def get_class_tournament(
    request: Request,
    course_id: CourseIdPath,
    class_id: ClassIdPath,
    classes: ClassesDep,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> ClassTournament | HTMLResponse:
    """Return a class tournament: staff see every entrant by name and every game; a student
    sees themself as `you`, the others as `student N`, and only their own games. A browser
    gets its page."""
    if wants_html(request):
        return await class_tournament_page(
            request, pages, courses, classes, viewer, course_id, class_id
        )
    return await classes.get(signed_in(viewer), course_id, class_id)
