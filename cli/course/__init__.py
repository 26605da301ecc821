"""`arena course`: run a course on a hosted Arena: assignments, roster, invite links, gradebook.

A REST client of the server's course routes (docs/COURSE.md; the bodies are
protocol/courses.py). COURSE is a course's id or its name, ASSIGNMENT an assignment's id or its
name in the course, STUDENT_ID a roster's student id. Every command takes --server (or
ARENA_SERVER) and --token (or ARENA_TOKEN). Exit status: 0 when done; 1 when `regrade --wait`
ends with gradings that failed, or a wait (for a regrade, for a generated suite) runs out of
time; 2 for a usage error, a refusal by the server (its code and message are printed) or a
server that cannot be reached.

Its modules, by sub-command group: `courses` (create, list), `assignments` (assignment add,
list, update, suite; their options in `options`), `roster` (roster import, list, drop;
invite), `grades` (submissions, gradebook, regrade); what they share is `common`.
"""

from __future__ import annotations

import typer

from cli.course.assignments import (
    assignment_add_command,
    assignment_list_command,
    assignment_suite_command,
    assignment_update_command,
)
from cli.course.courses import create_command, list_command
from cli.course.grades import gradebook_command, regrade_command, submissions_command
from cli.course.roster import (
    invite_command,
    roster_drop_command,
    roster_import_command,
    roster_list_command,
)


def register(app: typer.Typer) -> None:
    """Add the `arena course` command group to `app`."""
    group = typer.Typer(
        name="course",
        help="Run a course on a hosted Arena: assignments, roster and invite links, gradebook, "
        "regrades (docs/COURSE.md).",
        no_args_is_help=True,
    )
    group.command("create")(create_command)
    group.command("list")(list_command)
    assignment = typer.Typer(
        name="assignment", help="Add, list and change a course's assignments.", no_args_is_help=True
    )
    assignment.command("add")(assignment_add_command)
    assignment.command("list")(assignment_list_command)
    assignment.command("update")(assignment_update_command)
    assignment.command("suite")(assignment_suite_command)
    group.add_typer(assignment, name="assignment")
    roster = typer.Typer(
        name="roster", help="Import, list and drop a course's members.", no_args_is_help=True
    )
    roster.command("import")(roster_import_command)
    roster.command("list")(roster_list_command)
    roster.command("drop")(roster_drop_command)
    group.add_typer(roster, name="roster")
    group.command("invite")(invite_command)
    group.command("submissions")(submissions_command)
    group.command("gradebook")(gradebook_command)
    group.command("regrade")(regrade_command)
    app.add_typer(group, name="course")
