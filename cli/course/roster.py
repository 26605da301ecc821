"""`arena course roster import|list|drop` and `arena course invite`: a course's members and
their invite links (shown once: the server keeps only their hashes)."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from cli.common import fail, plural
from cli.course.common import (
    CourseArg,
    StudentIdArg,
    console,
    find_course,
    find_member,
    format_time,
    members,
    notes,
    table,
)
from cli.rest import DEFAULT_SERVER, ServerOpt, TokenOpt, connect

if TYPE_CHECKING:
    from protocol.courses import Invite

LINK_COLUMNS = ("student_id", "name", "email", "role", "invite_url")
"""The columns of the file `roster import --links` writes."""
_TABLE_ROWS = 50
"""Rows of a roster import's table (its links are all written or printed, whatever the count)."""


def _write_links(path: Path, invites: tuple[Invite, ...]) -> None:
    """Write the invite links as CSV, readable by the owner only (each link signs someone in)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LINK_COLUMNS)
    for invite in invites:
        member = invite.member
        writer.writerow(
            [member.student_id, member.name, member.email, member.role, invite.invite_url]
        )
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
        handle.write(buffer.getvalue())


def _print_links(invites: tuple[Invite, ...]) -> None:
    """Print each new member's link on its own line, whole, so it can be copied."""
    for invite in invites:
        console.print(escape(f"{invite.member.student_id}  {invite.invite_url}"), soft_wrap=True)


def roster_import_command(
    course_ref: CourseArg,
    roster: Annotated[
        Path,
        typer.Argument(
            metavar="FILE.csv",
            help="A CSV file with a header: student_id,name,email and optionally role "
            "(student or ta).",
        ),
    ],
    links: Annotated[
        Path | None,
        typer.Option(
            "--links",
            help="Write the new members' invite links to this CSV file "
            "(student_id,name,email,role,invite_url; readable by you only).",
        ),
    ] = None,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Import a roster: new students (and TAs) get an invite link, known ones are updated.

    The server keeps only a hash of each link, so the links are shown this once: keep the
    --links file, or copy them from the output. A lost link is replaced with
    `arena course invite` (which makes the old one stop working). A file with a bad line is
    refused whole, with the line and column named.
    """
    from protocol.courses import RosterImport

    try:
        content = roster.read_bytes()
    except OSError as error:
        raise fail(f"cannot read {roster}: {error.strerror}") from None
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        data = api.call(
            "POST",
            f"/courses/{course.course_id}/members",
            content=content,
            headers={"Content-Type": "text/csv"},
            doing=f"import the roster into {course.name}",
        )
    result = RosterImport.model_validate(data)
    shown = table(f"{course.name}: roster import", ("student id", "name", "email", "role", ""))
    changes = [(invite.member, "new") for invite in result.created]
    changes += [(member, "updated") for member in result.updated]
    for member, change in changes[:_TABLE_ROWS]:
        row = (member.student_id, member.name, member.email, member.role)
        shown.add_row(*map(escape, row), change)
    if len(changes) > _TABLE_ROWS:
        shown.caption = f"the first {_TABLE_ROWS} of {len(changes):,}"
    console.print(shown)
    console.print(
        f"{plural(len(result.created), 'new member')}, {len(result.updated):,} updated",
    )
    if not result.created:
        return
    if links is not None:
        try:
            _write_links(links, result.created)
        except OSError as error:
            _print_links(result.created)
            raise fail(
                f"cannot write {links}: {error.strerror}; the links are above: copy them now"
            ) from None
        console.print(escape(f"wrote {plural(len(result.created), 'invite link')} to {links}"))
    else:
        _print_links(result.created)
    notes.print(
        "[bold yellow]these invite links are shown this once[/]: the server keeps only their "
        "hashes. Send each student their own link (it signs in as them); a lost link is "
        f"replaced with `arena course invite {course.course_id} STUDENT_ID`.",
        soft_wrap=True,
    )


def roster_list_command(
    course_ref: CourseArg, server: ServerOpt = DEFAULT_SERVER, token: TokenOpt = None
) -> None:
    """List a course's members (staff): roles, student ids, names, emails, who was dropped."""
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        roster = members(api, course)
    columns = ("student id", "name", "email", "role", "member", "status")
    shown = table(f"{course.name}: roster", columns, whole={"member"})
    for member in roster.members:
        status = (
            "enrolled"
            if member.dropped_time_ms is None
            else f"dropped {format_time(member.dropped_time_ms, short=True)}"
        )
        shown.add_row(
            escape(member.student_id),
            escape(member.name),
            escape(member.email),
            member.role,
            str(member.member_id),
            status,
        )
    console.print(shown)
    enrolled = sum(1 for m in roster.members if m.dropped_time_ms is None and m.role == "student")
    console.print(f"{plural(enrolled, 'student')} enrolled")


def roster_drop_command(
    course_ref: CourseArg,
    student_id: StudentIdArg,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Drop a member: their link stops working; their submissions are kept."""
    with connect(server, token) as api:
        course = find_course(api, course_ref)
        member = find_member(api, course, student_id)
        api.call(
            "DELETE",
            f"/courses/{course.course_id}/members/{member.member_id}",
            doing=f"drop {student_id}",
            expect=204,
        )
    console.print(escape(f"dropped {student_id} from {course.name}; their link no longer works"))


def invite_command(
    course_ref: CourseArg,
    student_id: StudentIdArg,
    server: ServerOpt = DEFAULT_SERVER,
    token: TokenOpt = None,
) -> None:
    """Issue a member a new invite link; their previous link stops working at once."""
    from protocol.courses import Invite

    with connect(server, token) as api:
        course = find_course(api, course_ref)
        member = find_member(api, course, student_id)
        data = api.call(
            "POST",
            f"/courses/{course.course_id}/members/{member.member_id}/invite",
            doing=f"issue {student_id} a new link",
        )
    invite = Invite.model_validate(data)
    console.print(escape(invite.invite_url), soft_wrap=True)
    notes.print(
        escape(
            f"the new sign-in link of {student_id} ({invite.member.name or 'no name'}), shown "
            "this once; their previous link no longer works"
        ),
        soft_wrap=True,
    )
