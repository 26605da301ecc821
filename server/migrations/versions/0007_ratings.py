"""Ratings: a Glicko-2 rating per player (or house bot) and game, and its history per match.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23

`ratings` holds each rated player's (or house bot's, by canonical spec) current rating in a
game; `rating_history` one row per side of each rated match, unique on (match, seat), which is
what makes a match rated at most once. Matches finished before this migration are rated when
the server next starts, oldest first, like any finished match it finds unrated.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the ratings and rating_history tables."""
    op.create_table(
        "ratings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column(
            "player_id",
            sa.Integer(),
            sa.ForeignKey("players.id", name="fk_ratings_player"),
            nullable=True,
        ),
        sa.Column("bot", sa.String(256), nullable=True),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("deviation", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("game", "player_id", name="uq_ratings_player"),
        sa.UniqueConstraint("game", "bot", name="uq_ratings_bot"),
    )
    op.create_index("ix_ratings_game_rating", "ratings", ["game", "rating"])
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "match_id",
            sa.String(36),
            sa.ForeignKey("matches.id", name="fk_rating_history_match", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column(
            "rating_id",
            sa.Integer(),
            sa.ForeignKey("ratings.id", name="fk_rating_history_rating"),
            nullable=False,
        ),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("rating_before", sa.Float(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("deviation", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("match_id", "seat", name="uq_rating_history_seat"),
    )
    op.create_index("ix_rating_history_match_id", "rating_history", ["match_id"])
    op.create_index("ix_rating_history_rating_id", "rating_history", ["rating_id"])


def downgrade() -> None:
    """Drop the rating tables."""
    op.drop_table("rating_history")
    op.drop_table("ratings")
