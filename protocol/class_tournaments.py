"""The wire contract of class tournaments: a course assignment's agents playing each other.

Staff start one for an `agent` assignment (docs/COURSE.md, "Class tournaments"): each student's
latest or best submission is hosted as that student's bot and plays every other entrant, with
house bots as references, in an ordinary server tournament (its page has the standings with
intervals, the crosstable and every game). A class tournament's own answer names the entrants
as its reader may see them: staff by roster name, a student themself as `you` and the others as
`student N`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict

from protocol.courses import AssignmentId, CourseId, MemberId
from protocol.messages import (
    MAX_PLIES,
    MAX_SWISS_BOTS,
    MAX_SWISS_ROUNDS,
    MAX_TOURNAMENT_BOTS,
    BotSpecText,
    Count,
    EpochMs,
    JobId,
    MatchId,
    Text,
    TournamentFormat,
    TournamentId,
    TournamentStatus,
    WireModel,
)

MAX_CLASS_HOUSE_BOTS = 4
"""Most house bots a class tournament adds as references."""
MAX_CLASS_TOURNAMENTS = 50
"""Most class tournaments one course keeps."""

ClassPick = Literal["latest", "best"]
"""Which submission of each student enters: the newest, or the best-graded one (the newest of
equal scores). Only graded submissions enter."""
GradeShare = Annotated[int, Strict(), Field(ge=0, le=100)]
"""Percent of the assignment's grade the tournament counts for (0: none)."""


class ClassTournamentCreate(WireModel):
    """Start a class tournament for an agent assignment (staff; request body)."""

    type: Literal["class_tournament_create"] = "class_tournament_create"
    pick: ClassPick = "latest"
    house_bots: tuple[BotSpecText, ...] = Field(default=(), max_length=MAX_CLASS_HOUSE_BOTS)
    format: TournamentFormat = "round-robin"
    swiss_rounds: Annotated[int, Strict(), Field(ge=1, le=MAX_SWISS_ROUNDS)] | None = Field(
        default=None,
        description="Play this many Swiss rounds instead of a round robin (a class of more than "
        f"{MAX_TOURNAMENT_BOTS} entrants must).",
    )
    games_per_pairing: Annotated[int, Strict(), Field(ge=2, le=20, multiple_of=2)] = 2
    seed: Annotated[int, Strict(), Field(ge=0, le=2**63 - 1)] = 0
    ply_cap: Annotated[int, Strict(), Field(ge=1, le=MAX_PLIES)] = 200
    concurrency: Annotated[int, Strict(), Field(ge=1, le=16)] = 2
    grade_share: GradeShare = 0


class ClassEntrant(WireModel):
    """One entrant of a class tournament as its reader may see it.

    `label` is the roster name to staff, `you` or `student N` to a student, the spec for a house
    bot. `spec` is the bot's name in the tournament (its standings and games); `refused` says
    why a submission could not play (it did not start in the sandbox), to staff and its own
    student only. `score` is its points over `games` finished games; `grade_points` the points
    of the assignment's grade it earns by the rule (`grade_share` x score / games).
    """

    type: Literal["class_entrant"] = "class_entrant"
    label: Text
    spec: BotSpecText
    you: bool = False
    house_bot: bool = False
    member_id: MemberId | None = None
    submission_id: JobId | None = None
    refused: Text | None = None
    games: Count = 0
    score: Annotated[float, Field(ge=0)] = 0.0
    grade_points: Annotated[float, Field(ge=0, le=100)] | None = None


class ClassGame(WireModel):
    """A game of the reader's own entrant (a student's), or any game (staff)."""

    type: Literal["class_game"] = "class_game"
    match_id: MatchId
    first: Text
    second: Text
    result: Annotated[float, Field(ge=0, le=1)] | None = None
    reason: Text | None = None


class ClassTournament(WireModel):
    """A class tournament: its tournament (GET /tournaments/{id} has the standings with
    intervals and the crosstable), its entrants best first, and the games its reader may see."""

    type: Literal["class_tournament"] = "class_tournament"
    class_tournament_id: Annotated[int, Strict(), Field(ge=1)]
    course_id: CourseId
    assignment_id: AssignmentId
    tournament_id: TournamentId
    status: TournamentStatus
    pick: ClassPick
    grade_share: GradeShare
    games_done: Count
    games_total: Count
    entrants: tuple[ClassEntrant, ...] = Field(max_length=MAX_SWISS_BOTS + 10_000)
    games: tuple[ClassGame, ...] = ()
    created_time_ms: EpochMs


class ClassTournamentList(WireModel):
    """An assignment's class tournaments, newest first."""

    type: Literal["class_tournament_list"] = "class_tournament_list"
    tournaments: tuple[ClassTournament, ...] = ()


CLASS_TOURNAMENT_MODELS: tuple[type[WireModel], ...] = (
    ClassTournamentCreate,
    ClassEntrant,
    ClassGame,
    ClassTournament,
    ClassTournamentList,
)
"""Every REST body model of the class tournaments' routes."""
