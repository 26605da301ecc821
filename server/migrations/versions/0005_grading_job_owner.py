"""Grading jobs: the player who uploaded each (None for an anonymous upload).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the uploader of each grading job; jobs from before it stay anonymous."""
    with op.batch_alter_table("grading_jobs") as batch:
        batch.add_column(sa.Column("player_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_grading_jobs_player", "players", ["player_id"], ["id"])


def downgrade() -> None:
    """Drop the uploader of each grading job."""
    with op.batch_alter_table("grading_jobs") as batch:
        batch.drop_constraint("fk_grading_jobs_player", type_="foreignkey")
        batch.drop_column("player_id")
