"""Tournaments and their games.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the tournaments and tournament_games tables."""
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("games_total", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.Integer(), sa.ForeignKey("players.id"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_tournaments_status", "tournaments", ["status"])
    op.create_table(
        "tournament_games",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "tournament_id",
            sa.String(36),
            sa.ForeignKey("tournaments.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("game_index", sa.Integer(), nullable=False),
        sa.Column("pair", sa.Integer(), nullable=False),
        sa.Column("first", sa.String(256), nullable=False),
        sa.Column("second", sa.String(256), nullable=False),
        sa.Column("opening", sa.Text(), nullable=False),
        # No foreign key: a game's row is stored before its match, so a restart can create a
        # match that a crash left unmade under the id already recorded.
        sa.Column("match_id", sa.String(36), nullable=False),
        sa.Column("result", sa.Float(), nullable=True),
        sa.Column("reason", sa.String(500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("tournament_id", "game_index", name="uq_tournament_games_index"),
    )
    op.create_index("ix_tournament_games_tournament_id", "tournament_games", ["tournament_id"])
    op.create_index("ix_tournament_games_match_id", "tournament_games", ["match_id"])


def downgrade() -> None:
    """Drop the tournament tables."""
    op.drop_table("tournament_games")
    op.drop_table("tournaments")
