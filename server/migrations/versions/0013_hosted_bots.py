"""Hosted bots: bots players upload for the server to run, their versions and failures, and
the rated pools they join.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28

A hosted bot (server.hosted) belongs to a player and plays one game; each upload is a version
kept for good, whose seat spec `hosted:OWNER/NAME@N` names its matches and its rating. A
failure's words (and the program's last stderr lines) are kept for the owner only. A pool
(server.pool) keeps its members and the matches it made.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the hosted bots, their versions and their failures."""
    op.create_table(
        "hosted_bots",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "owner_id",
            sa.Integer(),
            sa.ForeignKey("players.id", name="fk_hosted_bots_owner"),
            nullable=False,
        ),
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("description", sa.String(200), nullable=False),
        sa.Column("active", sa.Integer(), nullable=True),
        sa.Column("paused", sa.String(500), nullable=True),
        sa.Column("failures_in_row", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("owner_id", "name", name="uq_hosted_bots_owner_name"),
    )
    op.create_index("ix_hosted_bots_owner_id", "hosted_bots", ["owner_id"])
    op.create_table(
        "hosted_bot_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "bot_id",
            sa.Integer(),
            sa.ForeignKey("hosted_bots.id", name="fk_hosted_bot_versions_bot", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("entry", sa.String(128), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("note", sa.String(2000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("bot_id", "number", name="uq_hosted_bot_versions"),
    )
    op.create_index("ix_hosted_bot_versions_bot_id", "hosted_bot_versions", ["bot_id"])
    op.create_table(
        "hosted_bot_failures",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "bot_id",
            sa.Integer(),
            sa.ForeignKey("hosted_bots.id", name="fk_hosted_bot_failures_bot", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.String(64), nullable=True),
        sa.Column("words", sa.String(2000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_hosted_bot_failures_bot_id", "hosted_bot_failures", ["bot_id"])
    op.create_table(
        "pool_members",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("pool", sa.String(32), nullable=False),
        sa.Column(
            "bot_id",
            sa.Integer(),
            sa.ForeignKey("hosted_bots.id", name="fk_pool_members_bot", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("pool", "bot_id", name="uq_pool_members"),
    )
    op.create_index("ix_pool_members_pool", "pool_members", ["pool"])
    op.create_index("ix_pool_members_bot_id", "pool_members", ["bot_id"])
    op.create_table(
        "pool_games",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("pool", sa.String(32), nullable=False),
        sa.Column("match_id", sa.String(36), nullable=False, unique=True),
        sa.Column(
            "first_bot_id",
            sa.Integer(),
            sa.ForeignKey("hosted_bots.id", name="fk_pool_games_first", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "second_bot_id",
            sa.Integer(),
            sa.ForeignKey("hosted_bots.id", name="fk_pool_games_second", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_pool_games_pool", "pool_games", ["pool"])
    op.create_index("ix_pool_games_first_bot_id", "pool_games", ["first_bot_id"])
    op.create_index("ix_pool_games_second_bot_id", "pool_games", ["second_bot_id"])


def downgrade() -> None:
    """Drop the pools, the hosted bots, their versions and failures."""
    op.drop_table("pool_games")
    op.drop_table("pool_members")
    op.drop_table("hosted_bot_failures")
    op.drop_table("hosted_bot_versions")
    op.drop_table("hosted_bots")
