"""A roster CSV read into rows: `student_id,name,email[,role]`, a header line optional.

A file that cannot be read as a roster is refused whole with BAD_ROSTER naming the line and
the column, so an instructor fixes it and imports it again; nothing is half imported.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Final

from pydantic import ValidationError

from protocol.courses import RosterRow
from protocol.errors import ErrorCode, ProtocolError

COLUMNS: Final = ("student_id", "name", "email", "role")
_HEADER_NAMES: Final = frozenset({"student_id", "student id", "id", "studentid"})
_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+$")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def bad_roster(message: str, line: int, column: str | None = None) -> ProtocolError:
    """Return the BAD_ROSTER refusal of `line` (from 1) and `column`, saying `message`."""
    where = f"line {line}" + (f", column {column}" if column else "")
    details: dict[str, str | int] = {"line": line}
    if column:
        details["column"] = column
    return ProtocolError(ErrorCode.BAD_ROSTER, f"roster {where}: {message}", details)


def parse_roster(data: bytes) -> list[RosterRow]:
    """Return the rows of a roster CSV (UTF-8, a byte-order mark allowed).

    Blank lines are skipped; a first line whose first cell is `student_id` (or `id`) is a
    header. Raises BAD_ROSTER for text that is not UTF-8, a line with too few or too many
    columns, an empty or over-long student id, a bad email or role, a student id given twice,
    or no row at all.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise bad_roster("the file is not UTF-8 text", line) from None
    rows: list[RosterRow] = []
    seen: dict[str, int] = {}
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for cells in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            if not rows and not seen and cells[0].strip().lower() in _HEADER_NAMES:
                seen[""] = line  # a header: nothing to import on this line
                continue
            row = _row(cells, line)
            if row.student_id in seen:
                raise bad_roster(
                    f"student id {row.student_id!r} is also on line {seen[row.student_id]}",
                    line,
                    "student_id",
                )
            seen[row.student_id] = line
            rows.append(row)
    except csv.Error as error:
        raise bad_roster(f"not CSV: {error}", reader.line_num) from None
    if not rows:
        raise bad_roster("no student in the file (expected student_id,name,email[,role])", 1)
    return rows


def _row(cells: list[str], line: int) -> RosterRow:
    if len(cells) < 3 or len(cells) > len(COLUMNS):
        raise bad_roster(
            f"{len(cells)} columns; expected student_id,name,email and optionally role", line
        )
    values = dict(zip(COLUMNS, (cell.strip() for cell in cells), strict=False))
    for column, value in values.items():
        if _CONTROL.search(value):
            raise bad_roster("a control character", line, column)
    if values["email"] and not _EMAIL.fullmatch(values["email"]):
        raise bad_roster(f"{values['email'][:60]!r} is not an email address", line, "email")
    values["role"] = values.get("role", "").lower() or "student"
    try:
        return RosterRow.model_validate(values)
    except ValidationError as error:
        problem = error.errors()[0]
        where: str | None = str(problem["loc"][0]) if problem["loc"] else None
        raise bad_roster(str(problem["msg"]), line, where) from None
