"""Server settings, from the environment (`ARENA_*`) with embedded defaults."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from grader.profiles import DEFAULT_PYTHON
from protocol.messages import MAX_MESSAGE_BYTES


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
        3, ge=1, description="rejected moves in one match after which a player forfeits"
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
        100, ge=1, description="jobs that may wait at once; more uploads get QUEUE_FULL"
    )
    grader_max_upload_bytes: int = Field(
        2 * 1024 * 1024, ge=1024, description="largest upload (all files, unzipped), in bytes"
    )
    grader_max_files: int = Field(50, ge=1, le=1000, description="most files in one upload")
    grader_python: str = Field(
        DEFAULT_PYTHON,
        description="the interpreter that runs student programs (readable by the sandbox uid)",
    )
    grader_job_timeout_s: float = Field(
        1800.0, gt=0, description="a grading job that runs longer is stopped and reported"
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
        "and id with neither time nor nodes)",
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


def get_settings() -> Settings:
    """Return the settings read from the environment now (no cached global)."""
    return Settings()
