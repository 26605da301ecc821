"""Players, matches and match events.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the three tables."""
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_players_name", "players", ["name"], unique=True)
    op.create_index("ix_players_token_hash", "players", ["token_hash"], unique=True)
    op.create_table(
        "matches",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("start_position", sa.String(1024), nullable=True),
        sa.Column("base_ms", sa.BigInteger(), nullable=True),
        sa.Column("increment_ms", sa.BigInteger(), nullable=False),
        sa.Column("move_cap_ms", sa.BigInteger(), nullable=True),
        sa.Column("seat0_player_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=True),
        sa.Column("seat1_player_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=True),
        sa.Column("seat0_bot", sa.String(200), nullable=True),
        sa.Column("seat1_bot", sa.String(200), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("result_winner", sa.Integer(), nullable=True),
        sa.Column("result_reason", sa.String(32), nullable=True),
        sa.Column("result_detail", sa.String(500), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_matches_game", "matches", ["game"])
    op.create_index("ix_matches_status", "matches", ["status"])
    op.create_table(
        "match_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "match_id",
            sa.String(36),
            sa.ForeignKey("matches.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("player", sa.Integer(), nullable=True),
        sa.Column("move", sa.String(200), nullable=True),
        sa.Column("elapsed_ms", sa.BigInteger(), nullable=True),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("match_id", "seq", name="uq_match_events_seq"),
    )
    op.create_index("ix_match_events_match_id", "match_events", ["match_id"])


def downgrade() -> None:
    """Drop the three tables."""
    op.drop_table("match_events")
    op.drop_table("matches")
    op.drop_table("players")
