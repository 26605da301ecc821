"""Server settings, from the environment (`ARENA_*`) with embedded defaults."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

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
    redis_url: str | None = Field(
        None, description="Redis URL, needed only when several server processes share matches"
    )


def get_settings() -> Settings:
    """Return the settings read from the environment now (no cached global)."""
    return Settings()
