"""A class tournament's row: its tournament, its entrants and its share of the grade."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.db.models import ClassTournament as ClassRow


class ClassStore:
    """Reads and writes the class tournaments' rows."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def add(self, **values: Any) -> ClassRow:
        async with self._sessions() as session, session.begin():
            row = ClassRow(**values)
            session.add(row)
        return row

    async def count(self, course_id: int) -> int:
        async with self._sessions() as session:
            found = await session.scalar(
                select(func.count()).select_from(ClassRow).where(ClassRow.course_id == course_id)
            )
        return int(found or 0)

    async def of_assignment(self, course_id: int, assignment_id: int) -> list[ClassRow]:
        """Return an assignment's class tournaments, newest first."""
        async with self._sessions() as session:
            rows = await session.scalars(
                select(ClassRow)
                .where(ClassRow.course_id == course_id, ClassRow.assignment_id == assignment_id)
                .order_by(ClassRow.id.desc())
            )
            return list(rows)

    async def get(self, course_id: int, class_id: int) -> ClassRow | None:
        async with self._sessions() as session:
            row = await session.get(ClassRow, class_id)
        return row if row is not None and row.course_id == course_id else None
