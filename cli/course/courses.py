"""`arena course create` and `arena course list`: making a course, and the caller's courses."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from cli.course.common import console, format_time, notes, table
from cli.rest import DEFAULT_SERVER, ServerOpt, TokenOpt, connect


def create_command(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The course's name, e.g. 'CSC 384 Fall 2026'.")
    ],
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Create a course; you become its instructor. Prints your sign-in link for the web once."""
    from protocol.courses import CourseCreated

    with connect(server, token) as api:
        created = CourseCreated.model_validate(
            api.call("POST", "/courses", json={"name": name}, doing="create the course", expect=201)
        )
    course = created.course
    console.print(
        escape(f"course {course.course_id} {course.name!r} created; you are its instructor"),
        soft_wrap=True,
    )
    console.print(escape(f"your sign-in link for the web: {created.invite_url}"), soft_wrap=True)
    notes.print(
        "keep it private: it signs in as you, and is shown this once "
        "(the token you used here works on the command line)",
        soft_wrap=True,
    )


def list_command(server: ServerOpt = DEFAULT_SERVER, token: TokenOpt = None) -> None:
    """List your courses and your role in each."""
    from protocol.courses import CourseList

    with connect(server, token) as api:
        courses = CourseList.model_validate(api.call("GET", "/courses", doing="list your courses"))
    if not courses.courses:
        console.print("you are in no course yet: `arena course create NAME` makes one")
        return
    listed = table("your courses", ("id", "name", "your role", "created"), whole={"id", "created"})
    for course in courses.courses:
        listed.add_row(
            str(course.course_id),
            escape(course.name),
            course.role,
            format_time(course.created_time_ms, short=True),
        )
    console.print(listed)
