"""The class tournaments' pages: the staff's form on an agent assignment's page that starts one,
and a class tournament's page (standings as its reader may see them, the games with their
replays, the CSV for staff), the HTML answer of its REST route for a browser."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from protocol.class_tournaments import MAX_CLASS_HOUSE_BOTS, ClassTournamentCreate
from protocol.errors import ErrorCode, ProtocolError
from server.classes import ClassTournaments
from server.courses import CourseService
from server.db.models import Player
from server.deps import (
    ClassesDep,
    CoursesDep,
    GradingDep,
    OptionalPlayerDep,
    PagesDep,
    limit_tournament_creation,
)
from server.routes.course_common import AssignmentIdPath, CourseIdPath
from server.routes.web_courses.common import private_page, refused_page, signed_in
from server.routes.web_courses.pages import REFERENCE_BOTS, assignment_page
from server.web.pages import Pages
from server.web.security import check_origin

router = APIRouter(tags=["web pages"], include_in_schema=False)


@router.post(
    "/web/courses/{course_id}/assignments/{assignment_id}/tournaments",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin), Depends(limit_tournament_creation)],
)
async def start_from_form(
    request: Request,
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    classes: ClassesDep,
    courses: CoursesDep,
    grading: GradingDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Start a class tournament from the assignment's page (staff); go to its page, or show
    the assignment's page again saying why not."""
    form = await request.form()
    try:
        player = signed_in(viewer)
        bots = [bot for bot in form.getlist("house_bots") if isinstance(bot, str)]
        try:
            body = ClassTournamentCreate.model_validate(
                {
                    "pick": form.get("pick") or "latest",
                    "house_bots": [b for b in bots if b in REFERENCE_BOTS][:MAX_CLASS_HOUSE_BOTS],
                    "swiss_rounds": _number(form.get("swiss_rounds"), None),
                    "games_per_pairing": _number(form.get("games_per_pairing"), 2),
                    "grade_share": _number(form.get("grade_share"), 0),
                    "concurrency": _number(form.get("concurrency"), 2),
                }
            )
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR, f"{where}: {first['msg']}", {where: first["msg"]}
            ) from None
        started = await classes.start(player, course_id, assignment_id, body)
    except ProtocolError as error:
        if viewer is None or error.code in (
            ErrorCode.UNKNOWN_COURSE,
            ErrorCode.UNKNOWN_ASSIGNMENT,
            ErrorCode.FORBIDDEN,
        ):
            return refused_page(request, pages, viewer, error)
        return await assignment_page(
            request,
            pages,
            courses,
            grading,
            viewer,
            course_id,
            assignment_id,
            tournament_error=error,
        )
    return RedirectResponse(
        f"/courses/{course_id}/tournaments/{started.class_tournament_id}",
        status_code=status.HTTP_303_SEE_OTHER,
    )


def _number(value: object, default: int | None) -> object:
    """A form's number as an int when it reads as one (else as sent, for pydantic to refuse)."""
    if value is None or value == "":
        return default
    return int(value) if isinstance(value, str) and value.strip().isdigit() else value


async def class_tournament_page(
    request: Request,
    pages: Pages,
    courses: CourseService,
    classes: ClassTournaments,
    viewer: Player | None,
    course_id: int,
    class_id: int,
) -> HTMLResponse:
    """Render a class tournament as its reader may see it."""
    try:
        player = signed_in(viewer)
        course = await courses.course(player, course_id)
        tournament = await classes.get(player, course_id, class_id)
        assignment = await courses.assignment(player, course_id, tournament.assignment_id)
    except ProtocolError as error:
        return refused_page(request, pages, viewer, error)
    return private_page(
        request,
        pages,
        viewer,
        "course_tournament.html",
        course=course,
        assignment=assignment,
        tournament=tournament,
        staff=course.role in ("instructor", "ta"),
        running=tournament.status in ("created", "running"),
    )
