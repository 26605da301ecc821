"""The database schema: players, matches and their accepted events, tournaments, grading jobs,
ratings and their history, courses with their members, assignments and regrades, and the
processes of a cluster.

A match is stored as its set-up plus the ordered list of events the referee accepted (moves
with their elapsed time, resignations, draw offers and answers, aborts). Replaying the events
through the referee rebuilds the match exactly, which is how a restarted server resumes every
unfinished match; a move's event is committed before the move is acknowledged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    """The current time in UTC (database timestamps)."""
    return datetime.now(UTC)


def epoch_ms(moment: datetime) -> int:
    """Return a stored timestamp in ms since the epoch (SQLite hands back naive UTC times)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


class Base(DeclarativeBase):
    """The declarative base of Arena's tables."""


class ArenaProcess(Base):
    """A clustered server process, alive while its heartbeat is recent (see 0010).

    `heartbeat_at` is PostgreSQL's now() at the process's last heartbeat; a process whose
    heartbeat is older than `lease_ttl_ms` is dead and its matches are taken over
    (server.cluster).
    """

    __tablename__ = "arena_processes"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    """`host-pid-random`: unique for every start of a process."""
    role: Mapped[str] = mapped_column(String(16))
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class Player(Base):
    """A registered player (a bot or a person), known by name, authenticated by token."""

    __tablename__ = "players"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Match(Base):
    """A match: its game and set-up, its two seats, its status and result."""

    __tablename__ = "matches"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), index=True)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    start_position: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    base_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    increment_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    move_cap_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    max_plies: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """The match's ply cap (MatchConfig.max_plies; None: none), see migration 0006."""
    seat0_player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"), nullable=True)
    seat1_player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"), nullable=True)
    seat0_bot: Mapped[str | None] = mapped_column(String(200), nullable=True)
    seat1_bot: Mapped[str | None] = mapped_column(String(200), nullable=True)
    seat0_challenged_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_matches_seat0_challenged"), nullable=True
    )
    """The player a challenge invites to seat 0, until they accept or decline (see 0004)."""
    seat1_challenged_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_matches_seat1_challenged"), nullable=True
    )
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_matches_created_by"), nullable=True
    )
    """The player who created the match (None: the server, for a tournament)."""
    status: Mapped[str] = mapped_column(String(16), index=True, default="waiting")
    result_winner: Mapped[int | None] = mapped_column(Integer, nullable=True)
    result_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """The referee's result code (games.match.ResultCode); `rules` in rows from before 0006."""
    result_detail: Mapped[str | None] = mapped_column(String(500), nullable=True)
    seq: Mapped[int] = mapped_column(Integer, default=0)
    owner_id: Mapped[str | None] = mapped_column(String(128), nullable=True, index=True)
    """The clustered process playing the match (`ArenaProcess.id`; None: no process claimed it,
    as in a single process), see 0010 and server.cluster.leases."""
    owner_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Counts the claims of the match: a write naming an older epoch is refused (the fence)."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )

    events: Mapped[list[MatchEvent]] = relationship(
        back_populates="match", order_by="MatchEvent.seq", cascade="all, delete-orphan"
    )


class MatchEvent(Base):
    """One accepted event of a match, in order (`seq` is the referee's sequence number)."""

    __tablename__ = "match_events"
    __table_args__ = (UniqueConstraint("match_id", "seq", name="uq_match_events_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    player: Mapped[int | None] = mapped_column(Integer, nullable=True)
    move: Mapped[str | None] = mapped_column(String(200), nullable=True)
    elapsed_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    at_ms: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    search: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    """A move's search statistics, the JSON of `protocol.SearchInfo` (NULL: none reported)."""

    match: Mapped[Match] = relationship(back_populates="events")


class Tournament(Base):
    """A tournament between house bots: its set-up (the `TournamentCreate` body) and status.

    Its schedule is not stored: it is rebuilt from the set-up (openings and pairings are
    deterministic for a given spec and seed).
    """

    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), index=True, default="created")
    games_total: Mapped[int] = mapped_column(Integer)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("players.id"), nullable=True)
    """The owner: the only player who may start or cancel it."""
    invitations: Mapped[dict[str, str] | None] = mapped_column(JSON, nullable=True)
    """Each invited player's name and answer: pending, accepted or declined (see 0004)."""
    reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    """Why a cancelled or failed tournament stopped."""
    owner_id: Mapped[str | None] = mapped_column(String(128), nullable=True, index=True)
    """The clustered process running the tournament (None: none claimed it), see 0010."""
    owner_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Counts the claims of the tournament (a fence, as `Match.owner_epoch`)."""
    sprt_state: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """An SPRT tournament's state (`SprtState`) as of its last game stored, for its listing;
    the tournament's games are the truth it is counted from again (see 0012)."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )


class TournamentGame(Base):
    """One game of a tournament, stored when its match is created and again when it ends.

    `result` is the score of `first` (seat 0): None while the match is being played.
    """

    __tablename__ = "tournament_games"
    __table_args__ = (
        UniqueConstraint("tournament_id", "game_index", name="uq_tournament_games_index"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[str] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    game_index: Mapped[int] = mapped_column(Integer)
    pair: Mapped[int] = mapped_column(Integer)
    first: Mapped[str] = mapped_column(String(256))
    second: Mapped[str] = mapped_column(String(256))
    opening: Mapped[str] = mapped_column(Text)
    match_id: Mapped[str] = mapped_column(String(36), index=True)
    """The game's match (no foreign key: stored before the match is made, see 0002)."""
    result: Mapped[float | None] = mapped_column(Float, nullable=True)
    reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class GradingJob(Base):
    """A submission to the hosted autograder and, once graded, its results.

    The uploaded files live in the grader's private directory (server.grading); the row holds
    the status and, when graded, the Gradescope results.json and the HTML report themselves,
    so a finished job needs no file. A job found `queued` or `running` at start-up is graded
    (again) from the start.
    """

    __tablename__ = "grading_jobs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    profile: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), index=True, default="queued")
    files: Mapped[list[str]] = mapped_column(JSON, default=list)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    results: Mapped[str | None] = mapped_column(Text, nullable=True)
    """results.json (Gradescope's format) as text."""
    report: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The HTML report."""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    player_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_grading_jobs_player"), nullable=True
    )
    """The player who uploaded it, the only one who may read it; None for an anonymous job."""
    assignment_id: Mapped[int | None] = mapped_column(
        ForeignKey("assignments.id", name="fk_grading_jobs_assignment"), nullable=True, index=True
    )
    """The course assignment it was submitted to (graded with its suite); None outside courses.

    A course job is read through the course's routes only (server.courses), never at
    /grader/jobs, so a student's report is always filtered as the assignment says."""
    member_id: Mapped[int | None] = mapped_column(
        ForeignKey("course_members.id", name="fk_grading_jobs_member"), nullable=True, index=True
    )
    """The course member who submitted it (with `assignment_id`)."""
    regrades: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """How many times staff had it graded again (a regrade is not a new submission)."""
    address: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    """The client address it was uploaded from, as the rate limits count it (IPv6 by its
    /64): the queue takes addresses in turn (server.grading.queue). None before it was kept."""


class Rating(Base):
    """A Glicko-2 rating of one player, or one house bot, in one game (server.ratings).

    Exactly one of `player_id` and `bot` is set: a house bot is rated under its canonical spec
    (`alphabeta:depth=6`), as a player of its own. `games` counts the rated games.
    """

    __tablename__ = "ratings"
    __table_args__ = (
        UniqueConstraint("game", "player_id", name="uq_ratings_player"),
        UniqueConstraint("game", "bot", name="uq_ratings_bot"),
        Index("ix_ratings_game_rating", "game", "rating"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    player_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_ratings_player"), nullable=True
    )
    bot: Mapped[str | None] = mapped_column(String(256), nullable=True)
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )


class RatingChange(Base):
    """One side of one rated match: its rating after the match, and its score in it.

    The unique (match, seat) makes a match rated at most once, also across a restart.
    """

    __tablename__ = "rating_history"
    __table_args__ = (UniqueConstraint("match_id", "seat", name="uq_rating_history_seat"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[str] = mapped_column(
        ForeignKey("matches.id", name="fk_rating_history_match", ondelete="CASCADE"), index=True
    )
    seat: Mapped[int] = mapped_column(Integer)
    rating_id: Mapped[int] = mapped_column(
        ForeignKey("ratings.id", name="fk_rating_history_rating"), index=True
    )
    score: Mapped[float] = mapped_column(Float)
    rating_before: Mapped[float] = mapped_column(Float)
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Course(Base):
    """A course: its name and the player who created it (its first instructor)."""

    __tablename__ = "courses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    owner_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", name="fk_courses_owner"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CourseMember(Base):
    """A player's membership of a course: role (instructor, ta, student) and roster fields.

    A roster member has a player of its own, made at import; `invite_hash` is the hash of the
    invite token that signs that player in (server.players resolves it like a player's token)
    until it is reissued or the member is dropped (`dropped_at`). A dropped member's rows and
    submissions are kept.
    """

    __tablename__ = "course_members"
    __table_args__ = (
        UniqueConstraint("course_id", "player_id", name="uq_course_members_player"),
        UniqueConstraint("course_id", "student_id", name="uq_course_members_student"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", name="fk_course_members_course"), index=True
    )
    player_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", name="fk_course_members_player"), index=True
    )
    role: Mapped[str] = mapped_column(String(16))
    student_id: Mapped[str] = mapped_column(String(64))
    """The roster's id of the member (the course creator: their player name)."""
    name: Mapped[str] = mapped_column(String(100))
    email: Mapped[str] = mapped_column(String(254), default="")
    invite_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    dropped_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Assignment(Base):
    """An assignment of a course: its profile, dates and policies, and its suite's version.

    Its suite is a private file (server.courses.suites); `suite_version` counts its changes and
    `public_tests`/`private_tests` summarize it. Late penalties and scores are computed when
    read from these policies, never stored, so a policy change re-computes them.
    """

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("course_id", "name", name="uq_assignments_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", name="fk_assignments_course"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    profile: Mapped[str] = mapped_column(String(32))
    release_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    late_policy: Mapped[str] = mapped_column(String(16))
    late_penalty_per_day: Mapped[float] = mapped_column(Float, default=0.0)
    """Percent of the score lost per day late (penalty policy)."""
    late_days_max: Mapped[int] = mapped_column(Integer, default=0)
    daily_limit: Mapped[int] = mapped_column(Integer)
    score_policy: Mapped[str] = mapped_column(String(16))
    before_due: Mapped[str] = mapped_column(String(16))
    suite_version: Mapped[int] = mapped_column(Integer, default=1)
    public_tests: Mapped[int] = mapped_column(Integer, default=0)
    private_tests: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CourseRegrade(Base):
    """Staff's request to grade an assignment's submissions again; its progress is read from
    the jobs' statuses."""

    __tablename__ = "course_regrades"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment_id: Mapped[int] = mapped_column(
        ForeignKey("assignments.id", name="fk_course_regrades_assignment"), index=True
    )
    requested_by: Mapped[int] = mapped_column(
        ForeignKey("course_members.id", name="fk_course_regrades_member")
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    job_ids: Mapped[list[str]] = mapped_column(JSON, default=list)


def is_arena_schema(name: str | None, type_: str, parent_names: object = None) -> bool:
    """Return False for the database objects Arena's migrations do not own: the job queue's
    tables (`procrastinate_*`, server.jobs), which procrastinate creates and migrates itself in
    the same database. For alembic's `include_name`, so that comparing the models with the
    database (and autogenerating a migration) leaves them alone."""
    return not (type_ == "table" and name is not None and name.startswith("procrastinate_"))


class HostedBot(Base):
    """A bot a player uploaded for the server to run (server.hosted): its name, game and the
    version that plays. Its versions' files live in the hosted bots' private directory."""

    __tablename__ = "hosted_bots"
    __table_args__ = (UniqueConstraint("owner_id", "name", name="uq_hosted_bots_owner_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", name="fk_hosted_bots_owner"), index=True
    )
    name: Mapped[str] = mapped_column(String(32))
    game: Mapped[str] = mapped_column(String(32))
    description: Mapped[str] = mapped_column(String(200), default="")
    active: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """The number of the version that plays; None until the owner makes one active."""
    paused: Mapped[str | None] = mapped_column(String(500), nullable=True)
    """Why it plays no new match, when it failed too often in a row; None: it plays."""
    failures_in_row: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class HostedBotVersion(Base):
    """One uploaded program of a hosted bot, kept for good: its seat spec names it
    (`hosted:OWNER/NAME@N`), so its matches and rating are its own."""

    __tablename__ = "hosted_bot_versions"
    __table_args__ = (UniqueConstraint("bot_id", "number", name="uq_hosted_bot_versions"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(
        ForeignKey("hosted_bots.id", name="fk_hosted_bot_versions_bot", ondelete="CASCADE"),
        index=True,
    )
    number: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    entry: Mapped[str] = mapped_column(String(128))
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    note: Mapped[str] = mapped_column(String(2000), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class HostedBotFailure(Base):
    """How a hosted bot's version failed in a match, for its owner's eyes only (bounded)."""

    __tablename__ = "hosted_bot_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(
        ForeignKey("hosted_bots.id", name="fk_hosted_bot_failures_bot", ondelete="CASCADE"),
        index=True,
    )
    version: Mapped[int] = mapped_column(Integer)
    match_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    words: Mapped[str] = mapped_column(String(2000))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PoolMember(Base):
    """A member of a rated pool (server.pool): a hosted bot (`bot_id`) or a player whose own
    connected client plays it (`player_id`); exactly one is set. The pool pairs it while it
    stays; `paused` is why the pool stopped pairing a connected member (a hosted bot's pause is
    the bot's own)."""

    __tablename__ = "pool_members"
    __table_args__ = (
        UniqueConstraint("pool", "bot_id", name="uq_pool_members"),
        UniqueConstraint("pool", "player_id", name="uq_pool_members_player"),
        CheckConstraint("(bot_id IS NULL) <> (player_id IS NULL)", name="ck_pool_members_one"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pool: Mapped[str] = mapped_column(String(32), index=True)
    bot_id: Mapped[int | None] = mapped_column(
        ForeignKey("hosted_bots.id", name="fk_pool_members_bot", ondelete="CASCADE"),
        index=True,
        nullable=True,
    )
    player_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_pool_members_player", ondelete="CASCADE"),
        index=True,
        nullable=True,
    )
    paused: Mapped[str | None] = mapped_column(String(500), nullable=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PoolGame(Base):
    """A match the pool made: which members it paired, each a hosted bot or a connected
    player (the match row has the rest)."""

    __tablename__ = "pool_games"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pool: Mapped[str] = mapped_column(String(32), index=True)
    match_id: Mapped[str] = mapped_column(String(36), unique=True)
    first_bot_id: Mapped[int | None] = mapped_column(
        ForeignKey("hosted_bots.id", name="fk_pool_games_first", ondelete="CASCADE"),
        index=True,
        nullable=True,
    )
    second_bot_id: Mapped[int | None] = mapped_column(
        ForeignKey("hosted_bots.id", name="fk_pool_games_second", ondelete="CASCADE"),
        index=True,
        nullable=True,
    )
    first_player_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_pool_games_first_player", ondelete="CASCADE"),
        index=True,
        nullable=True,
    )
    second_player_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_pool_games_second_player", ondelete="CASCADE"),
        index=True,
        nullable=True,
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PoolSeat(Base):
    """A pool member booked into the one pool game it plays (server.pool): the member's key
    (`bot:ID` or `player:ID`) is the primary key, so no two pairings, on any server, book a
    member twice. Dropped once the game has ended."""

    __tablename__ = "pool_seats"

    member: Mapped[str] = mapped_column(String(40), primary_key=True)
    pool: Mapped[str] = mapped_column(String(32))
    match_id: Mapped[str] = mapped_column(String(36), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ClassTournament(Base):
    """A tournament among a course assignment's agents (server.classes): which tournament
    plays it, which submissions entered as whose bot, and the share of the grade it counts."""

    __tablename__ = "class_tournaments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", name="fk_class_tournaments_course"), index=True
    )
    assignment_id: Mapped[int] = mapped_column(
        ForeignKey("assignments.id", name="fk_class_tournaments_assignment")
    )
    tournament_id: Mapped[str] = mapped_column(
        ForeignKey("tournaments.id", name="fk_class_tournaments_tournament"), unique=True
    )
    pick: Mapped[str] = mapped_column(String(8))
    """Which submission of each student entered: `latest` or `best`."""
    grade_share: Mapped[int] = mapped_column(Integer, default=0)
    """Percent of the assignment's grade the tournament counts for (docs/COURSE.md's rule)."""
    entrants: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    """One object per entrant: member_id, submission_id, spec, refused (None: it plays)."""
    created_by: Mapped[int] = mapped_column(
        ForeignKey("players.id", name="fk_class_tournaments_created_by")
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
