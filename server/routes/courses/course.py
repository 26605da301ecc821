"""A course and its assignments over REST: create and list courses, an assignment's dates,
policies and suite; a course, the courses and an assignment are pages for a browser."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, status
from fastapi.responses import HTMLResponse

from protocol.courses import (
    Assignment,
    AssignmentCreate,
    AssignmentList,
    AssignmentUpdate,
    Course,
    CourseCreate,
    CourseCreated,
    CourseList,
)
from server.deps import CoursesDep, GradingDep, OptionalPlayerDep, PagesDep, PlayerDep
from server.routes.course_common import AssignmentIdPath, CourseIdPath
from server.routes.courses.common import ERRORS, HTML_PAGE, signed_in
from server.routes.web_courses.pages import assignment_page, course_page, courses_page
from server.web.pages import wants_html

router = APIRouter(prefix="/courses", tags=["courses"], responses=ERRORS)


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_course(
    request: Request, body: CourseCreate, courses: CoursesDep, player: PlayerDep
) -> CourseCreated:
    """Create a course; you become its instructor. The answer holds your sign-in link for the
    web (shown this once)."""
    return await courses.create_course(player, body, str(request.base_url))


@router.get("", response_model=CourseList, responses=HTML_PAGE)
async def list_courses(
    request: Request, courses: CoursesDep, pages: PagesDep, viewer: OptionalPlayerDep
) -> CourseList | HTMLResponse:
    """List your courses, with your role in each; a browser gets the courses page."""
    if wants_html(request):
        return await courses_page(request, courses, pages, viewer)
    return await courses.list_courses(signed_in(viewer))


@router.get("/{course_id}", response_model=Course, responses=HTML_PAGE)
async def get_course(
    request: Request,
    course_id: CourseIdPath,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> Course | HTMLResponse:
    """Return a course of yours; a browser gets its page (its assignments, the staff's links)."""
    if wants_html(request):
        return await course_page(request, courses, pages, viewer, course_id)
    return await courses.course(signed_in(viewer), course_id)


@router.get("/{course_id}/assignments")
async def list_assignments(
    course_id: CourseIdPath, courses: CoursesDep, player: PlayerDep
) -> AssignmentList:
    """List the course's assignments (a student: the released ones, with their standing)."""
    return await courses.assignments(player, course_id)


@router.post("/{course_id}/assignments", status_code=status.HTTP_201_CREATED)
async def create_assignment(
    course_id: CourseIdPath, body: AssignmentCreate, courses: CoursesDep, player: PlayerDep
) -> Assignment:
    """Create an assignment (instructor), with the suite given or a generated one (an endgame
    suite takes seconds per puzzle to generate)."""
    return await courses.create_assignment(player, course_id, body)


@router.get(
    "/{course_id}/assignments/{assignment_id}", response_model=Assignment, responses=HTML_PAGE
)
async def get_assignment(
    request: Request,
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    grading: GradingDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> Assignment | HTMLResponse:
    """Return an assignment (to a student once released). A browser gets its page: for a
    student the submission form and their own submissions, followed live; for staff the
    gradebook, regrade all and the CSV export besides."""
    if wants_html(request):
        return await assignment_page(
            request, pages, courses, grading, viewer, course_id, assignment_id
        )
    return await courses.assignment(signed_in(viewer), course_id, assignment_id)


@router.patch("/{course_id}/assignments/{assignment_id}")
async def update_assignment(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    body: AssignmentUpdate,
    courses: CoursesDep,
    player: PlayerDep,
) -> Assignment:
    """Change an assignment's dates or policies (instructor); scores follow at once."""
    return await courses.update_assignment(player, course_id, assignment_id, body)


@router.put("/{course_id}/assignments/{assignment_id}/suite")
async def replace_suite(
    course_id: CourseIdPath,
    assignment_id: AssignmentIdPath,
    courses: CoursesDep,
    player: PlayerDep,
    suite: Annotated[dict[str, Any], Body(description="A suite file's JSON (docs/GRADER.md).")],
) -> Assignment:
    """Replace an assignment's suite (instructor); regrade to apply it to past submissions."""
    data = json.dumps(suite).encode("utf-8")
    return await courses.replace_suite(player, course_id, assignment_id, data)
