"""The class tournaments' service: who may start and read them, and how one is set up.

Starting one (staff of the course only): the assignment's entries (server.courses: each
enrolled student's latest or best graded submission) are hosted as their students' bots
(`HostedBots.adopt`: a bot `class-ASSIGNMENT` of the student's, a version per distinct
submission, started once in the sandbox, where one that does not start is refused and kept out
with why), then an ordinary tournament among them and the chosen house bots is created and
started by its staff member (server.tournaments), every game a sandboxed server match. Any
member reads the course's class tournaments, as server.classes.wire shows them.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.class_tournaments import (
    MAX_CLASS_TOURNAMENTS,
    ClassTournament,
    ClassTournamentCreate,
    ClassTournamentList,
)
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import MAX_SWISS_BOTS, MAX_TOURNAMENT_BOTS, SwissSettings, TournamentCreate
from server.classes import wire
from server.classes.store import ClassStore
from server.courses import CourseService
from server.courses.submissions import Reader
from server.db.models import ClassTournament as ClassRow
from server.db.models import Player
from server.hosted import HostedBots
from server.hosted.service import CLASS_PREFIX
from server.settings import Settings
from server.tournaments import TournamentService

GAME = "checkers"
"""The game of the agent assignment."""


class ClassTournaments:
    """Starts and shows class tournaments, on the course, hosted bots' and tournament
    services."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        courses: CourseService,
        hosted: HostedBots,
        tournaments: TournamentService,
    ) -> None:
        self._store = ClassStore(sessions)
        self._settings = settings
        self._courses = courses
        self._hosted = hosted
        self._tournaments = tournaments

    async def start(
        self, player: Player, course_id: int, assignment_id: int, body: ClassTournamentCreate
    ) -> ClassTournament:
        """Start a class tournament of an agent assignment (see the module); return it."""
        entries = await self._courses.entries(player, course_id, assignment_id, body.pick)
        if await self._store.count(course_id) >= MAX_CLASS_TOURNAMENTS:
            raise ProtocolError(
                ErrorCode.QUOTA_EXCEEDED,
                f"a course keeps at most {MAX_CLASS_TOURNAMENTS} class tournaments",
                {"max_class_tournaments": MAX_CLASS_TOURNAMENTS},
            )
        self._check_size(len(entries), body)
        name = f"{CLASS_PREFIX}{assignment_id}"
        entrants: list[dict[str, Any]] = []
        for entry in entries:
            try:
                spec, refused = await self._hosted.adopt(
                    entry.player, name, GAME, entry.files, f"course {course_id}'s class tournaments"
                )
            except ProtocolError as error:
                if error.code not in (ErrorCode.BAD_SUBMISSION, ErrorCode.QUOTA_EXCEEDED):
                    raise
                spec, refused = f"hosted:{entry.player.name}/{name}", error.message
            entrants.append(
                {
                    "member_id": entry.member.id,
                    "submission_id": entry.job_id,
                    "spec": spec,
                    "refused": refused,
                }
            )
        entrants += [
            {"member_id": None, "submission_id": None, "spec": bot, "refused": None}
            for bot in body.house_bots
        ]
        playing = [e["spec"] for e in entrants if e["refused"] is None]
        if len(playing) < 2:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"a tournament needs 2 players; this one would have {len(playing)} (students' "
                f"graded submissions that start: {len(playing) - len(body.house_bots)}; add "
                "house bots as references)",
                {"entrants": len(playing)},
            )
        rounds = body.swiss_rounds
        try:
            tournament = TournamentCreate(
                game=GAME,
                bots=tuple(playing),
                format=body.format,
                swiss=None if rounds is None else SwissSettings(rounds=rounds),
                games_per_pairing=body.games_per_pairing,
                seed=body.seed,
                ply_cap=body.ply_cap,
                concurrency=body.concurrency,
            )
        except ValidationError as error:
            words = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in error.errors())
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"this class tournament cannot be played: {words}",
                {"entrants": len(playing)},
            ) from None
        created = await self._tournaments.create(tournament, player)
        row = await self._store.add(
            course_id=course_id,
            assignment_id=assignment_id,
            tournament_id=created.tournament_id,
            pick=body.pick,
            grade_share=body.grade_share,
            entrants=entrants,
            created_by=player.id,
        )
        state = await self._tournaments.start(created.tournament_id, player)
        return wire.view(row, state, await self._courses.reader(player, course_id))

    def _check_size(self, students: int, body: ClassTournamentCreate) -> None:
        """Refuse a tournament the server cannot seat: too many entrants, or more sandboxed
        seats at once than a hosted bot or the server may hold."""
        entrants = students + len(body.house_bots)
        most = MAX_TOURNAMENT_BOTS if body.swiss_rounds is None else MAX_SWISS_BOTS
        if entrants > most:
            hint = "; a Swiss tournament (swiss_rounds) takes more" if most < MAX_SWISS_BOTS else ""
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"{students} students and {len(body.house_bots)} house bots are {entrants} "
                f"entrants; this tournament takes at most {most}{hint}",
                {"entrants": entrants},
            )
        hosted = self._settings.hosted
        seats = min(hosted.matches_per_bot, hosted.max_running // 2)
        if body.concurrency > seats:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"concurrency {body.concurrency} would seat more students' bots at once than "
                f"this server hosts (ARENA_HOSTED_MATCHES_PER_BOT {hosted.matches_per_bot}, "
                f"ARENA_HOSTED_MAX_RUNNING {hosted.max_running}): at most {seats}",
                {"concurrency": body.concurrency},
            )

    async def of_assignment(
        self, player: Player, course_id: int, assignment_id: int
    ) -> ClassTournamentList:
        """Return an assignment's class tournaments, newest first, as `player` may see them."""
        reader = await self._courses.reader(player, course_id)
        rows = await self._store.of_assignment(course_id, assignment_id)
        return ClassTournamentList(tournaments=tuple([await self._view(r, reader) for r in rows]))

    async def get(self, player: Player, course_id: int, class_id: int) -> ClassTournament:
        """Return a class tournament as `player` (a member of its course) may see it."""
        reader = await self._courses.reader(player, course_id)
        return await self._view(await self._row(course_id, class_id), reader)

    async def csv(self, player: Player, course_id: int, class_id: int) -> str:
        """Return a class tournament's CSV (staff only: FORBIDDEN)."""
        reader = await self._courses.reader(player, course_id)
        if not reader.is_staff:
            raise ProtocolError(ErrorCode.FORBIDDEN, "only the course's staff may export it")
        tournament = await self._view(await self._row(course_id, class_id), reader)
        return wire.to_csv(tournament, reader.members)

    async def _row(self, course_id: int, class_id: int) -> ClassRow:
        row = await self._store.get(course_id, class_id)
        if row is None:
            raise ProtocolError(
                ErrorCode.NOT_FOUND, f"course {course_id} has no class tournament {class_id}"
            )
        return row

    async def _view(self, row: ClassRow, reader: Reader) -> ClassTournament:
        return wire.view(row, await self._tournaments.state(row.tournament_id), reader)
