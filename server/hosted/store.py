"""The hosted bots' rows: bots, versions and failures, read and written in short transactions,
and their wire models (protocol.messages.hosted)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import case, delete, func, literal, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.messages import (
    HostedBot,
    HostedBotFailure,
    HostedBotFailures,
    HostedBotKind,
    HostedBotVersion,
)
from server.db.models import HostedBot as BotRow
from server.db.models import HostedBotFailure as FailureRow
from server.db.models import HostedBotVersion as VersionRow
from server.db.models import Match, Player, epoch_ms
from server.hosted.specs import HostedSpec

SEAT_BOTS = (Match.seat0_bot, Match.seat1_bot)

FAILURES_KEPT = 50
"""A bot's failures kept for its owner (the oldest go first)."""


@dataclass(frozen=True, slots=True)
class Found:
    """A hosted bot's row and its owner's name."""

    row: BotRow
    owner: str

    @property
    def spec(self) -> HostedSpec:
        return HostedSpec(self.owner, self.row.name)


class HostedStore:
    """Reads and writes the hosted bots' rows."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def find(self, owner: str, name: str) -> Found | None:
        """Return the bot `owner` calls `name`, or None."""
        async with self._sessions() as session:
            row = (
                await session.execute(
                    select(BotRow, Player.name)
                    .join(Player, Player.id == BotRow.owner_id)
                    .where(Player.name == owner, BotRow.name == name)
                )
            ).first()
        return None if row is None else Found(row[0], row[1])

    async def playing(self, spec: HostedSpec) -> int:
        """How many unfinished matches seat a version of the bot `spec` names."""
        prefix = f"{spec}@"
        seated = or_(
            Match.seat0_bot.startswith(prefix, autoescape=True),
            Match.seat1_bot.startswith(prefix, autoescape=True),
        )
        async with self._sessions() as session:
            found = await session.scalar(
                select(func.count())
                .select_from(Match)
                .where(Match.status.in_(("waiting", "active")), seated)
            )
        return int(found or 0)

    async def running(self) -> int:
        """How many seats of unfinished matches hosted bots hold, all bots together.

        One read over the unfinished matches (`status` is indexed, so finished ones are never
        scanned), each counting its hosted seats."""
        seats = sum(
            (case((column.startswith("hosted:"), 1), else_=0) for column in SEAT_BOTS),
            start=literal(0),
        )
        async with self._sessions() as session:
            found = await session.scalar(
                select(func.coalesce(func.sum(seats), 0)).where(
                    Match.status.in_(("waiting", "active"))
                )
            )
        return int(found or 0)

    async def count_owned(self, owner_id: int) -> int:
        async with self._sessions() as session:
            found = await session.scalar(
                select(func.count()).select_from(BotRow).where(BotRow.owner_id == owner_id)
            )
        return int(found or 0)

    async def add(self, owner_id: int, name: str, game: str, description: str) -> BotRow:
        """Store a new bot; IntegrityError when the owner has one of that name."""
        async with self._sessions() as session, session.begin():
            row = BotRow(
                owner_id=owner_id,
                name=name,
                game=game,
                description=description,
                failures_in_row=0,
            )
            session.add(row)
        return row

    async def versions(self, bot_id: int) -> list[VersionRow]:
        async with self._sessions() as session:
            found = await session.scalars(
                select(VersionRow).where(VersionRow.bot_id == bot_id).order_by(VersionRow.number)
            )
            return list(found)

    async def next_number(self, bot_id: int) -> int:
        async with self._sessions() as session:
            found = await session.scalar(
                select(func.max(VersionRow.number)).where(VersionRow.bot_id == bot_id)
            )
        return int(found or 0) + 1

    async def add_version(self, row: VersionRow, *, activate: bool) -> None:
        """Store a version (IntegrityError when its number was taken meanwhile); with
        `activate`, make it the version that plays if none does yet."""
        async with self._sessions() as session, session.begin():
            session.add(row)
            if activate:
                await session.execute(
                    update(BotRow)
                    .where(BotRow.id == row.bot_id, BotRow.active.is_(None))
                    .values(active=row.number)
                )

    async def change(
        self,
        bot_id: int,
        *,
        active: int | None = None,
        description: str | None = None,
        resume: bool = False,
    ) -> None:
        values: dict[str, object] = {}
        if active is not None:
            values["active"] = active
            values["paused"] = None
            values["failures_in_row"] = 0
        if description is not None:
            values["description"] = description
        if resume:
            values["paused"] = None
            values["failures_in_row"] = 0
        if values:
            async with self._sessions() as session, session.begin():
                await session.execute(update(BotRow).where(BotRow.id == bot_id).values(**values))

    async def page(
        self, owner: str | None, game: str | None, limit: int, offset: int
    ) -> list[Found]:
        query = select(BotRow, Player.name).join(Player, Player.id == BotRow.owner_id)
        if owner is not None:
            query = query.where(Player.name == owner)
        if game is not None:
            query = query.where(BotRow.game == game)
        query = query.order_by(BotRow.id).limit(limit).offset(offset)
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        return [Found(row[0], row[1]) for row in rows]

    async def versions_of(self, bot_ids: Sequence[int]) -> dict[int, list[VersionRow]]:
        found: dict[int, list[VersionRow]] = {bot_id: [] for bot_id in bot_ids}
        if not bot_ids:
            return found
        async with self._sessions() as session:
            rows = await session.scalars(
                select(VersionRow)
                .where(VersionRow.bot_id.in_(bot_ids))
                .order_by(VersionRow.bot_id, VersionRow.number)
            )
            for row in rows:
                found[row.bot_id].append(row)
        return found

    async def record_failure(
        self,
        bot_id: int,
        version: int,
        match_id: str | None,
        words: str,
        pause_after: int | None,
    ) -> str | None:
        """Keep a failure for the owner, count it, and pause the bot once `pause_after` fail in
        a row (None: never); return the pause's reason when this failure paused it."""
        async with self._sessions() as session, session.begin():
            session.add(
                FailureRow(bot_id=bot_id, version=version, match_id=match_id, words=words[:2000])
            )
            row = await session.get(BotRow, bot_id, with_for_update=True)
            if row is None:
                return None
            row.failures_in_row += 1
            paused = None
            if (
                row.paused is None
                and pause_after is not None
                and row.failures_in_row >= pause_after
            ):
                # Read by anyone (the bot, the ladder, a refused seat): the words, which may
                # quote the program's stderr, are the owner's alone (`failures`).
                count = row.failures_in_row
                paused = (
                    f"paused after {count} failure{'' if count == 1 else 's'} in a row "
                    "(its owner reads why among its failures)"
                )
                row.paused = paused[:500]
            stale = (
                select(FailureRow.id)
                .where(FailureRow.bot_id == bot_id)
                .order_by(FailureRow.id.desc())
                .offset(FAILURES_KEPT)
            )
            await session.execute(delete(FailureRow).where(FailureRow.id.in_(stale)))
        return paused

    async def record_success(self, bot_id: int) -> None:
        """A game the bot finished without failing: its failures in a row start again."""
        async with self._sessions() as session, session.begin():
            await session.execute(
                update(BotRow)
                .where(BotRow.id == bot_id, BotRow.failures_in_row > 0)
                .values(failures_in_row=0)
            )

    async def failures(self, bot_id: int, limit: int) -> HostedBotFailures:
        async with self._sessions() as session:
            rows = await session.scalars(
                select(FailureRow)
                .where(FailureRow.bot_id == bot_id)
                .order_by(FailureRow.id.desc())
                .limit(limit)
            )
            return HostedBotFailures(
                failures=tuple(
                    HostedBotFailure(
                        version=row.version,
                        match_id=row.match_id,
                        words=row.words,
                        created_ms=epoch_ms(row.created_at),
                    )
                    for row in rows
                )
            )


def version_wire(spec: HostedSpec, row: VersionRow, *, owner_view: bool) -> HostedBotVersion:
    """A version as the wire shows it; a refused version's reason only to its owner (it may
    quote the program's own output)."""
    kind: HostedBotKind = "engine" if row.kind == "engine" else "plugin"
    return HostedBotVersion(
        number=row.number,
        kind=kind,
        entry=row.entry,
        size=row.size,
        sha256=row.sha256,
        status="ready" if row.status == "ready" else "refused",
        note=row.note if owner_view or row.status == "ready" else "",
        spec=str(spec.at(row.number)),
        created_ms=epoch_ms(row.created_at),
    )


def bot_wire(found: Found, versions: Sequence[VersionRow], *, owner_view: bool) -> HostedBot:
    """A bot as the wire shows it, with its versions."""
    row = found.row
    return HostedBot(
        owner=found.owner,
        name=row.name,
        game=row.game,
        description=row.description,
        spec=str(found.spec),
        active=row.active,
        paused=row.paused,
        versions=tuple(version_wire(found.spec, v, owner_view=owner_view) for v in versions),
        created_ms=epoch_ms(row.created_at),
    )
