"""Server settings, from the environment (`ARENA_*`) with embedded defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

from limits import parse_many
from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from grader.profiles import DEFAULT_PYTHON
from protocol.messages import MAX_MESSAGE_BYTES
from server.connections import parse_trusted_proxies


class Settings(BaseSettings):
    """Everything the server can be told; every field reads `ARENA_<NAME>` from the environment.

    The defaults need no set-up: a SQLite file in the working directory and in-process workers.
    """

    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore")

    database_url: str = Field(
        "sqlite+aiosqlite:///./arena.db",
        description="SQLAlchemy async URL: sqlite+aiosqlite:///FILE or postgresql+asyncpg://...",
    )
    host: str = Field("127.0.0.1", description="address to listen on")
    port: int = Field(8000, ge=0, le=65535, description="port to listen on (0: any free port)")
    max_illegal_moves: int = Field(
        3,
        ge=1,
        description="rejected moves (illegal, unreadable or out of turn) in one match after "
        "which a player forfeits",
    )
    max_message_bytes: int = Field(
        MAX_MESSAGE_BYTES, ge=256, description="largest WebSocket message accepted, in bytes"
    )
    house_bots: list[str] = Field(
        default_factory=lambda: ["alphabeta:depth=4", "mcts:simulations=500"],
        description="bot specs of the house bots offered by the server",
    )
    commit_delay_ms: float = Field(
        1.0,
        ge=0,
        le=100,
        description="how long the database writer waits for more moves to join a commit",
    )
    # --- cluster: match ownership (server.cluster.leases) ---
    lease_ttl_ms: int = Field(
        5000,
        ge=200,
        le=600_000,
        description="clustered: a server process whose last heartbeat is older than this is "
        "dead, and its matches are taken over by the live ones (within lease_ttl_ms plus "
        "heartbeat_ms)",
    )
    heartbeat_ms: int = Field(
        1000,
        ge=50,
        le=60_000,
        description="clustered: how often each server process renews its heartbeat and looks "
        "for matches of dead processes to take over; keep it well under lease_ttl_ms",
    )
    ws_compression: bool = Field(
        False,
        description="offer per-message deflate on WebSockets (Arena's messages are small: "
        "compressing them costs more CPU than it saves bandwidth on a LAN)",
    )
    grader_dir: Path = Field(
        Path("arena-grader"),
        description="the autograder's private directory (made mode 0700): uploads, job files "
        "and the generated private suites",
    )
    grader_workers: int = Field(
        1,
        ge=1,
        le=32,
        description="submissions graded at once; each worker slot runs its sandboxes under "
        "its own uid",
    )
    grader_uid_base: int = Field(
        64000,
        ge=1000,
        le=2**31,
        description="sandbox uid (and gid) of worker slot 0; slot i uses this plus i. The uids "
        "must belong to nothing else on the host (RLIMIT_NPROC counts per uid)",
    )
    grader_max_queued: int = Field(
        1000,
        ge=1,
        description="jobs that may wait at once; more uploads get QUEUE_FULL. A course's "
        "deadline brings every student at once: each waiting job holds at most "
        "grader_max_upload_bytes of disk",
    )
    grader_max_queued_per_player: int = Field(
        5,
        ge=1,
        description="jobs one player may have waiting at once; more of theirs get QUEUE_FULL "
        "(one token cannot fill the queue; regrades are not counted)",
    )
    grader_max_queued_per_address: int = Field(
        10,
        ge=1,
        description="uploads from one client address that may wait at once (an IPv6 address "
        "counted by its /64); more get QUEUE_FULL (many tokens behind one address cannot fill "
        "the queue; course submissions and regrades are not counted)",
    )
    grader_max_upload_bytes: int = Field(
        2 * 1024 * 1024, ge=1024, description="largest upload (all files, unzipped), in bytes"
    )
    grader_max_files: int = Field(50, ge=1, le=1000, description="most files in one upload")
    grader_max_zip_entries: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="most entries of an uploaded zip, folders and skipped litter (__MACOSX, "
        "__pycache__) included: each costs work to examine; more are refused with "
        "BAD_SUBMISSION before any is looked at",
    )
    grader_max_path_depth: int = Field(
        8, ge=1, le=64, description="most folders a file of an uploaded zip may lie in"
    )
    grader_max_path_chars: int = Field(
        200,
        ge=20,
        le=1000,
        description="longest path of a file of an uploaded zip, in characters (a job's "
        "directory and the path must fit the file system's limits)",
    )
    grader_intake_threads: int = Field(
        2,
        ge=1,
        le=64,
        description="uploads unpacked, checked and written at once, on threads of their own "
        "(never on the event loop); more wait their turn",
    )
    grader_orphan_age_s: float = Field(
        3600.0,
        ge=60,
        description="a job directory that has no row (a server killed between writing an "
        "upload's files and storing its row) is removed once it is this old; younger ones may "
        "be an upload in progress, in this or another server process",
    )
    grader_orphan_sweep_s: float = Field(
        3600.0,
        gt=0,
        description="how often each server process looks for job directories without a row "
        "(also once at start-up)",
    )
    grader_python: str = Field(
        DEFAULT_PYTHON,
        description="the interpreter that runs student programs (readable by the sandbox uid)",
    )
    grader_job_timeout_s: float = Field(
        1800.0, gt=0, description="a grading job that runs longer is stopped and reported"
    )
    grader_job_budget_s: float = Field(
        600.0,
        gt=0,
        description="wall time one job's runs of the student's code may take together: a run "
        "is cut at what is left of it, and the tests after it are not run, each saying why "
        "(keep it under grader_job_timeout_s, which stops the whole grading)",
    )
    grader_allow_unsandboxed: bool = Field(
        False,
        description="grade even when the sandbox is unavailable (not root): student code then "
        "runs as the server's user and can read its files; for trying the grader out only",
    )
    grader_endgame_suite: Path | None = Field(
        None,
        description="the endgame profile's private puzzle suite; default: one generated with a "
        "random seed at the first endgame job, kept in grader_dir/suites",
    )
    grader_agent_suite: Path | None = Field(
        None,
        description="the agent profile's private suite; default: generated like the endgame's",
    )
    # --- limits: WebSocket ---
    ws_max_queued_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        description="text waiting to be sent to one WebSocket client (characters of JSON) "
        "beyond which the client, too slow to read, is closed with 4008",
    )
    ws_hello_timeout_s: float = Field(
        5.0,
        gt=0,
        description="seconds a new WebSocket may take to send hello before it is closed with 4004",
    )
    ws_max_connections_per_address: int = Field(
        64,
        ge=1,
        description="of an address's connections (max_connections_per_address), how many may "
        "be WebSockets at once (all routes; the address a trusted proxy names); more are closed "
        "with 4009. Above max_connections_per_address it changes nothing",
    )
    ws_max_connections_per_player: int = Field(
        16,
        ge=1,
        description="WebSockets open at once with one player's token (a newer one replaces the "
        "older, but a replaced one counts until it is closed); more are closed with 4009",
    )
    # --- limits: grader ---
    grader_allow_anonymous: bool = Field(
        False,
        description="accept uploads without a player's token (anyone holding such a job's id "
        "may read it); by default POST /grader/jobs needs a token and only the uploader may read "
        "the job",
    )
    # --- courses ---
    public_url: str | None = Field(
        None,
        max_length=512,
        description="the server's public base URL (https://arena.example.edu), used in invite "
        "links; by default a link uses the base URL of the request that made it",
    )
    course_max_per_owner: int = Field(
        20, ge=1, le=10_000, description="courses one player may create"
    )
    course_max_assignments: int = Field(50, ge=1, le=1000, description="assignments in one course")
    course_max_members: int = Field(
        2000, ge=1, le=10_000, description="members (staff and students) in one course"
    )
    course_max_roster_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="largest roster CSV (or JSON) imported at once, in bytes",
    )
    course_suite_timeout_s: float = Field(
        1800.0,
        gt=0,
        le=86_400,
        description="longest a generated assignment suite may take (an endgame puzzle takes "
        "seconds to certify); suites are generated one at a time, each in a child process",
    )
    # --- scale-out: roles and workers (docs/SCALING.md) ---
    role: Literal["all", "server", "worker"] = Field(
        "all",
        description="what this process does: 'all' serves HTTP and grades in-process (one "
        "process); 'server' serves HTTP and sends grading jobs to the queue on PostgreSQL "
        "for `arena worker` processes; 'worker' (set by `arena worker`) runs queued jobs only. "
        "'server' and 'worker' need a PostgreSQL database",
    )
    worker_heartbeat_s: float = Field(
        2.0,
        gt=0,
        le=3600,
        description="seconds between a worker's heartbeats in the job queue; every worker also "
        "looks for stalled jobs this often",
    )
    worker_stalled_s: float = Field(
        10.0,
        gt=0,
        le=86_400,
        description="a worker whose last heartbeat is older than this is dead: its running jobs "
        "are put back in the queue for another worker (a killed worker's job starts again "
        "within worker_stalled_s + worker_heartbeat_s + worker_poll_s)",
    )
    worker_poll_s: float = Field(
        1.0,
        gt=0,
        le=3600,
        description="seconds between a worker's looks for queued jobs when no notification "
        "wakes it (a job put back by the stalled-job check wakes no one)",
    )
    # --- scale-out: tournaments on workers (server.tournaments.service) ---
    tournament_follow_s: float = Field(
        5.0,
        gt=0,
        le=3600,
        description="seconds between two reads of the database for tournaments played "
        "elsewhere (role server: the house-bot tournaments played by workers; in a cluster: "
        "those run by another server process) that this process shows, and, in a cluster, of "
        "the state of each match a tournament runner here waits for that another process "
        "plays (notices and match ends come over Redis at once; this read catches a lost one)",
    )
    # --- limits: rates ---
    rate_limits_enabled: bool = Field(
        True,
        description="enforce the rate limits below; turn off only for trusted or local use "
        "(benchmarks, a classroom server behind its own limiter)",
    )
    redis_url: str | None = Field(
        None,
        description="redis://HOST:PORT/DB (or rediss://): keep the rate-limit counts in Redis, "
        "shared by every server process using it; none: in this process's memory. With a "
        "PostgreSQL database, also the bus between server processes sharing the matches "
        "(clustered); keep this Redis private: whoever reaches it can act for any player",
    )
    redis_key_prefix: str = Field(
        "arena",
        min_length=1,
        max_length=64,
        description="prefix of every rate-limit key and bus channel in Redis (one per "
        "deployment sharing it: channels are not separated by Redis database numbers)",
    )
    rate_registrations_per_address: str = Field(
        "10/minute",
        description="player registrations (POST /players) per client address; limits' syntax, "
        "several separated by ';' (e.g. '10/minute;100/day')",
    )
    rate_matches_per_player: str = Field(
        "60/minute", description="match creations (POST /matches) per token"
    )
    rate_matches_per_address: str = Field(
        "120/minute", description="match creations (POST /matches) per client address"
    )
    rate_tournaments_per_player: str = Field(
        "10/minute", description="tournament creations (POST /tournaments) per token"
    )
    rate_tournaments_per_address: str = Field(
        "20/minute", description="tournament creations (POST /tournaments) per client address"
    )
    rate_uploads_per_player: str = Field(
        "10/minute", description="grader uploads (POST /grader/jobs) per token"
    )
    rate_uploads_per_address: str = Field(
        "20/minute", description="grader uploads (POST /grader/jobs) per client address"
    )
    rate_traces_per_address: str = Field(
        "30/minute",
        description="search traces (POST /explore/trace, the explorer page) per client address",
    )
    rate_positions_per_address: str = Field(
        "120/minute",
        description="positions played into (POST /explore/position: the explorer page asks one "
        "per move played on its board) per client address",
    )
    rate_ws_messages: str = Field(
        "50/second",
        description="sustained rate of messages a client may send on one WebSocket connection",
    )
    rate_ws_burst: int = Field(
        100,
        ge=1,
        description="messages a WebSocket client may send at once above the sustained rate "
        "(the size of the connection's token bucket)",
    )
    rate_ws_refusals: str = Field(
        "50/10 seconds",
        description="RATE_LIMITED refusals one WebSocket connection may get in this window; one "
        "more closes it with 1008",
    )

    @field_validator(
        "rate_registrations_per_address",
        "rate_matches_per_player",
        "rate_matches_per_address",
        "rate_tournaments_per_player",
        "rate_tournaments_per_address",
        "rate_uploads_per_player",
        "rate_uploads_per_address",
        "rate_traces_per_address",
        "rate_positions_per_address",
    )
    @classmethod
    def _check_rates(cls, value: str) -> str:
        """Refuse a rate that limits' syntax cannot read, at start-up rather than per request."""
        try:
            parse_many(value)
        except ValueError as error:
            raise ValueError(f"not a rate limit like '10/minute': {value!r}") from error
        return value

    @field_validator("rate_ws_messages", "rate_ws_refusals")
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

    @model_validator(mode="after")
    def _check_role(self) -> Self:
        """Refuse a clustered role without PostgreSQL: the queue lives in the database."""
        if self.role != "all" and not self.database_url.startswith("postgresql"):
            raise ValueError(
                f"role {self.role!r} needs a PostgreSQL database (postgresql+asyncpg://...), "
                "where the job queue lives; use role 'all' with SQLite"
            )
        return self

    @model_validator(mode="after")
    def _check_lease(self) -> Settings:
        """Refuse a heartbeat that a live process could miss for a whole lease."""
        if self.heartbeat_ms * 2 > self.lease_ttl_ms:
            raise ValueError(
                f"heartbeat_ms ({self.heartbeat_ms}) must be at most half of lease_ttl_ms "
                f"({self.lease_ttl_ms}): a live process must renew its lease in time"
            )
        return self

    @field_validator("public_url")
    @classmethod
    def _check_public_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"a public URL starts with http:// or https://, not {value!r}")
        return value.rstrip("/") if value else None

    @field_validator("trusted_proxies")
    @classmethod
    def _check_trusted_proxies(cls, value: str) -> str:
        parse_trusted_proxies(value)
        return value

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("redis://", "rediss://")):
            raise ValueError(f"a Redis URL starts with redis:// or rediss://, not {value!r}")
        return value or None

    # --- limits: HTTP ---
    max_body_bytes: int = Field(
        MAX_MESSAGE_BYTES,
        ge=256,
        le=2**30,
        description="largest REST request body accepted, in bytes, checked before it is read "
        "(Content-Length, or counted as it arrives); larger ones get 413 MESSAGE_TOO_LARGE. "
        "The grader's uploads (POST /grader/jobs) have their own limit",
    )
    max_header_bytes: int = Field(
        16 * 1024,
        ge=1024,
        le=1024 * 1024,
        description="longest request line and headers, in bytes, however they arrive: longer "
        "ones get 431 HEADERS_TOO_LARGE and are not read further",
    )
    # --- limits: connections (`arena serve`'s connection layer, server.connections) ---
    max_connections_per_address: int = Field(
        256,
        ge=1,
        le=1_000_000,
        description="connections open at once from one client address (IPv6: one /64), HTTP "
        "and WebSocket together; one more is answered 503 TOO_MANY_CONNECTIONS and closed. A "
        "trusted proxy's own connections are not counted (the clients a PROXY header names "
        "are). Each connection is an open file: size it against the open-file limit",
    )
    http_idle_timeout_s: float = Field(
        5.0,
        gt=0,
        le=3600,
        description="seconds a connection may wait without a request, a new one that sends "
        "nothing included, before it is closed",
    )
    http_header_timeout_s: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="seconds from a request's first byte to the end of its headers (per "
        "request, not per byte); later: 408 REQUEST_TIMEOUT and closed",
    )
    http_body_timeout_s: float = Field(
        60.0,
        gt=0,
        le=86_400,
        description="seconds from the end of a request's headers to the end of its body (per "
        "request, not per byte: an upload must arrive within it); later: 408 REQUEST_TIMEOUT "
        "and closed",
    )
    trusted_proxies: str = Field(
        "",
        description="addresses or networks (comma-separated, e.g. 127.0.0.1,10.0.0.0/8) of the "
        "proxies whose word on their client's address is taken: a PROXY protocol header (v1 "
        "or v2) at the start of a connection, else X-Forwarded-For. Default: none, every "
        "client is its socket's peer. Only list proxies that set the client's address",
    )
    # --- limits: bots and games ---
    bot_threads: int = Field(
        2,
        ge=1,
        le=64,
        description="threads that run house bots' searches (their own, apart from the threads "
        "that serve requests, tournaments and grading); more searches wait in a fair queue",
    )
    bot_searches_per_player: int = Field(
        1,
        ge=1,
        le=64,
        description="searches of one player's matches (a tournament's: its owner's) that run at "
        "once; the player's other searches wait, so other players' bots get threads",
    )
    bot_max_depth: int = Field(
        10,
        ge=1,
        le=128,
        description="deepest depth a house or tournament bot may ask for (minimax, alphabeta, "
        "alphabeta_lecture, negamax, and id with neither time nor nodes)",
    )
    bot_max_simulations: int = Field(
        100_000, ge=1, le=10**9, description="most simulations per move an mcts bot may ask for"
    )
    bot_max_seconds: float = Field(
        30.0,
        gt=0,
        le=86_400,
        description="most seconds per move a bot may ask for (id and mcts time); any house-bot "
        "search still running after this long is stopped",
    )
    bot_max_nodes: int = Field(
        10_000_000, ge=1, le=10**12, description="most nodes per move an id bot may ask for"
    )
    nim_max_heaps: int = Field(
        8, ge=1, le=1000, description="most heaps of a Nim game played on the server"
    )
    nim_max_heap: int = Field(
        64, ge=1, le=10**6, description="most objects in one heap of a Nim game on the server"
    )
    # --- limits: the search-tree explorer (POST /explore/trace) ---
    explore_max_depth: int = Field(
        9,
        ge=1,
        le=64,
        description="deepest depth a trace may ask for (tic-tac-toe's whole game is 9 plies)",
    )
    explore_max_nodes: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="most nodes of a traced tree (a trace keeps every node, and the answer "
        "lists them): a larger tree is refused with TRACE_TOO_LARGE",
    )
    explore_max_seconds: float = Field(
        5.0,
        gt=0,
        le=600,
        description="most seconds a trace may run, waiting for a thread included: it is then "
        "stopped and refused with TRACE_TIMEOUT",
    )
    explore_threads: int = Field(
        1,
        ge=1,
        le=64,
        description="traces that run at once, on threads of their own; more wait their turn "
        "(within explore_max_seconds)",
    )
    explore_position_threads: int = Field(
        2,
        ge=1,
        le=64,
        description="explorer positions (POST /explore/position, and a trace's position before "
        "it is traced) worked out at once, on threads of their own; more wait their turn",
    )
    # --- cluster: the bus between server processes (server.cluster.bus) ---
    bus_rpc_timeout_s: float = Field(
        2.0,
        gt=0,
        le=60,
        description="clustered: how long a request to another server process over the Redis "
        "bus waits for its answer before it counts as unanswered",
    )
    bus_reconnect_max_s: float = Field(
        2.0,
        gt=0,
        le=60,
        description="clustered: the longest wait between two attempts to reach Redis again "
        "after the bus lost it (the wait doubles from 50 ms up to this)",
    )

    @property
    def clustered(self) -> bool:
        """Return True when several server processes may share the matches: a Redis URL and a
        PostgreSQL database (SQLite is one process's file; with SQLite, Redis only keeps the
        rate-limit counts)."""
        return bool(self.redis_url) and self.database_url.startswith("postgresql")


def get_settings() -> Settings:
    """Return the settings read from the environment now (no cached global)."""
    return Settings()
