"""The server's settings by area: one model per `ARENA_<AREA>_*` family (server.settings).

Each group's field `NAME` is read from `ARENA_<AREA>_<NAME>` (`settings.grader.workers` from
ARENA_GRADER_WORKERS); server.settings.Settings holds one of each and the settings of no area.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar, Final

from limits import parse_many
from pydantic import BaseModel, ConfigDict, Field, field_validator

from autograder.profiles import DEFAULT_PYTHON
from games import game_names


class SettingGroup(BaseModel):
    """The settings of one area; `AREA` is the prefix of its fields' names in the environment."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    AREA: ClassVar[str]


class GraderSettings(SettingGroup):
    """The autograder: its directory, workers, queue, upload limits and sandbox
    (`ARENA_GRADER_*`)."""

    AREA = "grader"
    dir: Path = Field(
        Path("arena-grader"),
        description="the autograder's private directory (made mode 0700): uploads, job files "
        "and the generated private suites",
    )
    workers: int = Field(
        1,
        ge=1,
        le=32,
        description="submissions graded at once; each worker slot runs its sandboxes under "
        "its own uid",
    )
    uid_base: int = Field(
        64000,
        ge=1000,
        le=2**31,
        description="sandbox uid (and gid) of worker slot 0; slot i uses this plus i. The uids "
        "must belong to nothing else on the host (RLIMIT_NPROC counts per uid)",
    )
    max_queued: int = Field(
        1000,
        ge=1,
        description="jobs that may wait at once; more uploads get QUEUE_FULL. A course's "
        "deadline brings every student at once: each waiting job holds at most "
        "grader_max_upload_bytes of disk",
    )
    max_queued_per_player: int = Field(
        5,
        ge=1,
        description="jobs one player may have waiting at once; more of theirs get QUEUE_FULL "
        "(one token cannot fill the queue; regrades are not counted)",
    )
    max_queued_per_address: int = Field(
        10,
        ge=1,
        description="uploads from one client address that may wait at once (an IPv6 address "
        "counted by its /64); more get QUEUE_FULL (many tokens behind one address cannot fill "
        "the queue; course submissions and regrades are not counted)",
    )
    max_upload_bytes: int = Field(
        2 * 1024 * 1024, ge=1024, description="largest upload (all files, unzipped), in bytes"
    )
    max_files: int = Field(50, ge=1, le=1000, description="most files in one upload")
    max_zip_entries: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="most entries of an uploaded zip, folders and skipped litter (__MACOSX, "
        "__pycache__) included: each costs work to examine; more are refused with "
        "BAD_SUBMISSION before any is looked at",
    )
    max_path_depth: int = Field(
        8, ge=1, le=64, description="most folders a file of an uploaded zip may lie in"
    )
    max_path_chars: int = Field(
        200,
        ge=20,
        le=1000,
        description="longest path of a file of an uploaded zip, in characters (a job's "
        "directory and the path must fit the file system's limits)",
    )
    intake_threads: int = Field(
        2,
        ge=1,
        le=64,
        description="uploads unpacked, checked and written at once, on threads of their own "
        "(never on the event loop); more wait their turn",
    )
    orphan_age_s: float = Field(
        3600.0,
        ge=60,
        description="a job directory that has no row (a server killed between writing an "
        "upload's files and storing its row) is removed once it is this old; younger ones may "
        "be an upload in progress, in this or another server process",
    )
    orphan_sweep_s: float = Field(
        3600.0,
        gt=0,
        description="how often each server process looks for job directories without a row "
        "(also once at start-up)",
    )
    python: str = Field(
        DEFAULT_PYTHON,
        description="the interpreter that runs student programs (readable by the sandbox uid)",
    )
    job_timeout_s: float = Field(
        1800.0, gt=0, description="a grading job that runs longer is stopped and reported"
    )
    job_budget_s: float = Field(
        600.0,
        gt=0,
        description="wall time one job's runs of the student's code may take together: a run "
        "is cut at what is left of it, and the tests after it are not run, each saying why "
        "(keep it under grader_job_timeout_s, which stops the whole grading)",
    )
    allow_unsandboxed: bool = Field(
        False,
        description="grade even when the sandbox is unavailable (not root): student code then "
        "runs as the server's user and can read its files; for trying the grader out only",
    )
    endgame_suite: Path | None = Field(
        None,
        description="the endgame profile's private puzzle suite; default: one generated with a "
        "random seed at the first endgame job, kept in grader_dir/suites",
    )
    agent_suite: Path | None = Field(
        None,
        description="the agent profile's private suite; default: generated like the endgame's",
    )
    allow_anonymous: bool = Field(
        False,
        description="accept uploads without a player's token (anyone holding such a job's id "
        "may read it); by default POST /grader/jobs needs a token and only the uploader may read "
        "the job",
    )


class WebSocketSettings(SettingGroup):
    """WebSocket connections: their send queues, hello, and counts (`ARENA_WS_*`)."""

    AREA = "ws"
    compression: bool = Field(
        False,
        description="offer per-message deflate on WebSockets (Arena's messages are small: "
        "compressing them costs more CPU than it saves bandwidth on a LAN)",
    )
    max_queued_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        description="text waiting to be sent to one WebSocket client (characters of JSON) "
        "beyond which the client, too slow to read, is closed with 4008",
    )
    hello_timeout_s: float = Field(
        5.0,
        gt=0,
        description="seconds a new WebSocket may take to send hello before it is closed with 4004",
    )
    max_connections_per_address: int = Field(
        64,
        ge=1,
        description="of an address's connections (max_connections_per_address), how many may "
        "be WebSockets at once (all routes; the address a trusted proxy names); more are closed "
        "with 4009. Above max_connections_per_address it changes nothing",
    )
    max_connections_per_player: int = Field(
        16,
        ge=1,
        description="WebSockets open at once with one player's token (a newer one replaces the "
        "older, but a replaced one counts until it is closed); more are closed with 4009",
    )


class CourseSettings(SettingGroup):
    """Courses: their sizes and suite generation (`ARENA_COURSE_*`)."""

    AREA = "course"
    max_per_owner: int = Field(20, ge=1, le=10_000, description="courses one player may create")
    max_assignments: int = Field(50, ge=1, le=1000, description="assignments in one course")
    max_members: int = Field(
        2000, ge=1, le=10_000, description="members (staff and students) in one course"
    )
    max_roster_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="largest roster CSV (or JSON) imported at once, in bytes",
    )
    suite_timeout_s: float = Field(
        1800.0,
        gt=0,
        le=86_400,
        description="longest a generated assignment suite may take (an endgame puzzle takes "
        "seconds to certify); suites are generated one at a time, each in a child process",
    )


class WorkerSettings(SettingGroup):
    """`arena worker` processes on the job queue (`ARENA_WORKER_*`, docs/SCALING.md)."""

    AREA = "worker"
    heartbeat_s: float = Field(
        2.0,
        gt=0,
        le=3600,
        description="seconds between a worker's heartbeats in the job queue; every worker also "
        "looks for stalled jobs this often",
    )
    stalled_s: float = Field(
        10.0,
        gt=0,
        le=86_400,
        description="a worker whose last heartbeat is older than this is dead: its running jobs "
        "are put back in the queue for another worker (a killed worker's job starts again "
        "within worker_stalled_s + worker_heartbeat_s + worker_poll_s)",
    )
    poll_s: float = Field(
        1.0,
        gt=0,
        le=3600,
        description="seconds between a worker's looks for queued jobs when no notification "
        "wakes it (a job put back by the stalled-job check wakes no one)",
    )
    hosted: bool = Field(
        True,
        description="role server: the games of tournaments with hosted bots (class tournaments "
        "too, but not Swiss or SPRT ones) are played by `arena worker`s, which run the hosted "
        "programs in their own sandboxes and need the servers' hosted_dir; false: by the "
        "servers",
    )


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class ComputeSettings(SettingGroup):
    """One process's slots for sandboxed programs, shared by grading jobs and hosted bots'
    programs (`ARENA_COMPUTE_*`, docs/SCALING.md). Unset, each is derived from the CPUs."""

    AREA = "compute"
    slots: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="sandboxed programs this process runs at once: grading jobs (one slot each "
        "while graded) and hosted bots' programs (one each from its start to its match's end). "
        "Default: 8 per CPU, and at least grading's reserve beside hosted_max_running + 4 "
        "programs. A hosted program mostly waits for its turn; a grading computes",
    )
    grading_reserved: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="slots grading always finds free: hosted bots never take them. At most "
        "grader_workers. Default: half the CPUs (at least 1), at most grader_workers. A "
        "cluster's server (role server) grades nothing itself and keeps none",
    )
    hosted_reserved: int | None = Field(
        None,
        ge=0,
        le=100_000,
        description="slots hosted bots always find free: grading never takes them. Default: a "
        "quarter of compute_slots (at least 1)",
    )
    hosted_max: int | None = Field(
        None,
        ge=0,
        le=100_000,
        description="most slots hosted bots' programs hold at once (they borrow the slots "
        "beyond both reserves that grading leaves idle). Default: compute_slots less "
        "compute_grading_reserved",
    )
    hosted_wait_s: float = Field(
        10.0,
        ge=0,
        le=3600,
        description="longest a hosted bot's program waits for a slot when it starts, on its "
        "first move's time; then it does not start and its seat fails, saying the server's "
        "slots are busy",
    )

    def derived(self, workers: int, hosted_programs: int) -> tuple[int, int, int, int]:
        """Return the slots, grading's reserve, hosted bots' reserve and hosted bots' cap, as
        given or derived from the CPUs, `workers` grading workers and `hosted_programs` hosted
        programs that may run at once (their seats and the uploads tried). No workers (a
        cluster's server, whose gradings run on `arena worker`): no grading reserve."""
        cpus = cpu_count()
        grading = self.grading_reserved if workers else 0
        if grading is None:
            grading = min(workers, max(1, cpus // 2))
        slots = self.slots
        if slots is None:
            slots = max(8 * cpus, grading + hosted_programs)
        if self.grading_reserved is None or not workers:
            grading = min(grading, slots)
        hosted = self.hosted_reserved
        if hosted is None:
            hosted = min(slots - grading, max(1, slots // 4))
        hosted_max = self.hosted_max if self.hosted_max is not None else slots - grading
        return slots, grading, hosted, hosted_max


class RateSettings(SettingGroup):
    """Rate limits per token, address and WebSocket connection (`ARENA_RATE_*`)."""

    AREA = "rate"
    limits_enabled: bool = Field(
        True,
        description="enforce the rate limits below; turn off only for trusted or local use "
        "(benchmarks, a classroom server behind its own limiter)",
    )
    registrations_per_address: str = Field(
        "10/minute",
        description="player registrations (POST /players) per client address; limits' syntax, "
        "several separated by ';' (e.g. '10/minute;100/day')",
    )
    matches_per_player: str = Field(
        "60/minute", description="match creations (POST /matches) per token"
    )
    matches_per_address: str = Field(
        "120/minute", description="match creations (POST /matches) per client address"
    )
    tournaments_per_player: str = Field(
        "10/minute", description="tournament creations (POST /tournaments) per token"
    )
    tournaments_per_address: str = Field(
        "20/minute", description="tournament creations (POST /tournaments) per client address"
    )
    uploads_per_player: str = Field(
        "10/minute", description="grader uploads (POST /grader/jobs) per token"
    )
    uploads_per_address: str = Field(
        "20/minute", description="grader uploads (POST /grader/jobs) per client address"
    )
    traces_per_address: str = Field(
        "30/minute",
        description="search traces (POST /explore/trace, the explorer page) per client address",
    )
    positions_per_address: str = Field(
        "120/minute",
        description="positions played into (POST /explore/position: the explorer page asks one "
        "per move played on its board) per client address",
    )
    ws_messages: str = Field(
        "50/second",
        description="sustained rate of messages a client may send on one WebSocket connection",
    )
    ws_burst: int = Field(
        100,
        ge=1,
        description="messages a WebSocket client may send at once above the sustained rate "
        "(the size of the connection's token bucket)",
    )
    ws_refusals: str = Field(
        "50/10 seconds",
        description="RATE_LIMITED refusals one WebSocket connection may get in this window; one "
        "more closes it with 1008",
    )

    @field_validator(
        "registrations_per_address",
        "matches_per_player",
        "matches_per_address",
        "tournaments_per_player",
        "tournaments_per_address",
        "uploads_per_player",
        "uploads_per_address",
        "traces_per_address",
        "positions_per_address",
    )
    @classmethod
    def _check_rates(cls, value: str) -> str:
        """Refuse a rate that limits' syntax cannot read, at start-up rather than per request."""
        try:
            parse_many(value)
        except ValueError as error:
            raise ValueError(f"not a rate limit like '10/minute': {value!r}") from error
        return value

    @field_validator("ws_messages", "ws_refusals")
    @classmethod
    def _check_single_rate(cls, value: str) -> str:
        """Refuse anything but one rate of at least 1 (a token bucket has one refill rate)."""
        try:
            rates = parse_many(value)
        except ValueError as error:
            raise ValueError(f"not a rate like '50/second': {value!r}") from error
        if len(rates) != 1 or rates[0].amount < 1:
            raise ValueError(f"one rate of at least 1 like '50/second', not {value!r}")
        return value


class BotSettings(SettingGroup):
    """House and tournament bots' searches: their threads and the largest searches asked
    for (`ARENA_BOT_*`)."""

    AREA = "bot"
    threads: int = Field(
        2,
        ge=1,
        le=64,
        description="threads that run house bots' searches (their own, apart from the threads "
        "that serve requests, tournaments and grading); more searches wait in a fair queue",
    )
    searches_per_player: int = Field(
        1,
        ge=1,
        le=64,
        description="searches of one player's matches (a tournament's: its owner's) that run at "
        "once; the player's other searches wait, so other players' bots get threads",
    )
    max_depth: int = Field(
        10,
        ge=1,
        le=128,
        description="deepest depth a house or tournament bot may ask for (minimax, alphabeta, "
        "alphabeta_lecture, negamax, and id with neither time nor nodes)",
    )
    max_simulations: int = Field(
        100_000, ge=1, le=10**9, description="most simulations per move an mcts bot may ask for"
    )
    max_seconds: float = Field(
        30.0,
        gt=0,
        le=86_400,
        description="most seconds per move a bot may ask for (id and mcts time); any house-bot "
        "search still running after this long is stopped",
    )
    max_nodes: int = Field(
        10_000_000, ge=1, le=10**12, description="most nodes per move an id bot may ask for"
    )


class NimSettings(SettingGroup):
    """The largest Nim games played on the server (`ARENA_NIM_*`)."""

    AREA = "nim"
    max_heaps: int = Field(
        8, ge=1, le=1000, description="most heaps of a Nim game played on the server"
    )
    max_heap: int = Field(
        64, ge=1, le=10**6, description="most objects in one heap of a Nim game on the server"
    )


class ExploreSettings(SettingGroup):
    """The search-tree explorer, POST /explore/trace (`ARENA_EXPLORE_*`)."""

    AREA = "explore"
    max_depth: int = Field(
        9,
        ge=1,
        le=64,
        description="deepest depth a trace may ask for (tic-tac-toe's whole game is 9 plies)",
    )
    max_nodes: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="most nodes of a traced tree (a trace keeps every node, and the answer "
        "lists them): a larger tree is refused with TRACE_TOO_LARGE",
    )
    max_seconds: float = Field(
        5.0,
        gt=0,
        le=600,
        description="most seconds a trace may run, waiting for a thread included: it is then "
        "stopped and refused with TRACE_TIMEOUT",
    )
    threads: int = Field(
        1,
        ge=1,
        le=64,
        description="traces that run at once, on threads of their own; more wait their turn "
        "(within explore_max_seconds)",
    )
    position_threads: int = Field(
        2,
        ge=1,
        le=64,
        description="explorer positions (POST /explore/position, and a trace's position before "
        "it is traced) worked out at once, on threads of their own; more wait their turn",
    )


class BusSettings(SettingGroup):
    """The bus between clustered server processes, server.cluster.bus (`ARENA_BUS_*`)."""

    AREA = "bus"
    rpc_timeout_s: float = Field(
        2.0,
        gt=0,
        le=60,
        description="clustered: how long a request to another server process over the Redis "
        "bus waits for its answer before it counts as unanswered",
    )
    reconnect_max_s: float = Field(
        2.0,
        gt=0,
        le=60,
        description="clustered: the longest wait between two attempts to reach Redis again "
        "after the bus lost it (the wait doubles from 50 ms up to this)",
    )


class HttpSettings(SettingGroup):
    """The HTTP connection layer's timeouts (`ARENA_HTTP_*`)."""

    AREA = "http"
    idle_timeout_s: float = Field(
        5.0,
        gt=0,
        le=3600,
        description="seconds a connection may wait without a request, a new one that sends "
        "nothing included, before it is closed",
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="seconds from a request's first byte to the end of its headers (per "
        "request, not per byte); later: 408 REQUEST_TIMEOUT and closed",
    )
    body_timeout_s: float = Field(
        60.0,
        gt=0,
        le=86_400,
        description="seconds from the end of a request's headers to the end of its body (per "
        "request, not per byte: an upload must arrive within it); later: 408 REQUEST_TIMEOUT "
        "and closed",
    )


class RedisSettings(SettingGroup):
    """Redis: rate-limit counts and, clustered, the bus (`ARENA_REDIS_*`)."""

    AREA = "redis"
    url: str | None = Field(
        None,
        description="redis://HOST:PORT/DB (or rediss://): keep the rate-limit counts in Redis, "
        "shared by every server process using it; none: in this process's memory. With a "
        "PostgreSQL database, also the bus between server processes sharing the matches "
        "(clustered); keep this Redis private: whoever reaches it can act for any player",
    )
    key_prefix: str = Field(
        "arena",
        min_length=1,
        max_length=64,
        description="prefix of every rate-limit key and bus channel in Redis (one per "
        "deployment sharing it: channels are not separated by Redis database numbers)",
    )

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("redis://", "rediss://")):
            raise ValueError(f"a Redis URL starts with redis:// or rediss://, not {value!r}")
        return value or None


HOSTED_TRIAL_UIDS: Final = 4
"""Uids beyond hosted_max_running's for the uploads tried at once (each new version is started
once)."""


class HostedSettings(SettingGroup):
    """Hosted bots: the bots players upload for the server to run in the sandbox
    (`ARENA_HOSTED_*`)."""

    AREA = "hosted"
    dir: Path = Field(
        Path("arena-hosted"),
        description="the hosted bots' private directory (made mode 0700): every version's files",
    )
    bots_per_player: int = Field(
        5, ge=0, le=1000, description="hosted bots one player may own (0: no hosted bots)"
    )
    versions_per_bot: int = Field(
        50, ge=1, le=10_000, description="versions one hosted bot may have; more get QUOTA_EXCEEDED"
    )
    max_upload_bytes: int = Field(
        256 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="largest upload of one version (its files, or the .zip's unpacked files)",
    )
    memory_mb: int = Field(
        256, ge=32, le=65_536, description="address space of a hosted bot's process (MiB)"
    )
    processes: int = Field(
        8, ge=1, le=256, description="processes and threads a hosted bot may run at once"
    )
    move_seconds: float = Field(
        5.0,
        gt=0,
        le=600,
        description="longest a hosted bot may think over one move when its match has no clock "
        "(with a clock, what is left on it; never more than bot_max_seconds)",
    )
    matches_per_bot: int = Field(
        4,
        ge=1,
        le=1000,
        description="unfinished matches one hosted bot may sit in; a seat beyond it is refused "
        "(each match runs a sandboxed process of the bot's own)",
    )
    cpu_seconds: int = Field(
        600,
        ge=1,
        le=86_400,
        description="CPU time a hosted bot's program may use over one match (its clock bounds "
        "each move's wall time)",
    )
    uid_base: int = Field(
        65000,
        ge=1000,
        le=2**31,
        description="as root, the uid (and gid) of the first hosted program running at once; "
        "the next hosted_max_running + 3 uids after it are the others' (four try uploads). "
        "They must belong to nothing else (RLIMIT_NPROC counts per uid); a range overlapping "
        "the grader's (grader_uid_base, grader_workers of them) is refused at start",
    )
    max_running: int = Field(
        16,
        ge=1,
        le=10_000,
        description="hosted bots' seats in unfinished matches on this server at once, each a "
        "sandboxed process; a seat beyond it is refused until a match ends",
    )
    failures_to_pause: int = Field(
        5,
        ge=1,
        le=1000,
        description="failures in a row (crash, hang, illegal output) after which a hosted bot "
        "is paused until its owner resumes it or uploads a new version",
    )
    allow_unsandboxed: bool = Field(
        False,
        description="run hosted bots even where no sandbox can be made (rlimits only): for "
        "trials on a machine of your own, never for a public server",
    )


class PoolDefinition(BaseModel):
    """One rated pool: its name (in URLs), game and clock."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9_\-]*$")
    game: str = Field(min_length=1, max_length=32)
    base_ms: int = Field(ge=1000, le=86_400_000)
    increment_ms: int = Field(0, ge=0, le=600_000)


class PoolSettings(SettingGroup):
    """The rated pools of hosted bots: which there are and how they pair (`ARENA_POOL_*`)."""

    AREA = "pool"
    pools: list[PoolDefinition] = Field(
        default_factory=lambda: [
            PoolDefinition(name="checkers", game="checkers", base_ms=60_000, increment_ms=1000),
            PoolDefinition(name="connect4", game="connect4", base_ms=30_000, increment_ms=500),
        ],
        description="the pools: JSON objects with name, game, base_ms and increment_ms",
    )

    @field_validator("pools")
    @classmethod
    def _check_pools(cls, pools: list[PoolDefinition]) -> list[PoolDefinition]:
        names = [pool.name for pool in pools]
        if len(set(names)) != len(names):
            raise ValueError(f"two pools share a name: {names}")
        for pool in pools:
            if pool.game not in game_names():
                raise ValueError(f"pool {pool.name}: no game is called {pool.game!r}")
        return pools

    pair_every_s: float = Field(
        5.0, gt=0, le=3600, description="seconds between two pairings of a pool's waiting bots"
    )
    owner_cap: int = Field(
        2, ge=1, le=100, description="pool games one owner's bots may play at once"
    )
    spread: float = Field(
        50.0,
        ge=0,
        le=1000,
        description="rating points of random jitter in pairing (near ratings meet, not always "
        "the same pairs)",
    )


GROUPS: tuple[type[SettingGroup], ...] = (
    GraderSettings,
    WebSocketSettings,
    CourseSettings,
    WorkerSettings,
    ComputeSettings,
    RateSettings,
    BotSettings,
    HostedSettings,
    PoolSettings,
    NimSettings,
    ExploreSettings,
    BusSettings,
    HttpSettings,
    RedisSettings,
)
"""Every group, in the order the settings list them."""
