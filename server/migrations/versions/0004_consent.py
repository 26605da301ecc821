"""Consent: challenged seats and match creators; tournament invitations and failure reasons.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add who created a match and whom its seats challenge; a tournament's invitations."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("created_by", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("seat0_challenged_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("seat1_challenged_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_matches_created_by", "players", ["created_by"], ["id"])
        batch.create_foreign_key(
            "fk_matches_seat0_challenged", "players", ["seat0_challenged_id"], ["id"]
        )
        batch.create_foreign_key(
            "fk_matches_seat1_challenged", "players", ["seat1_challenged_id"], ["id"]
        )
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("invitations", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("reason", sa.String(500), nullable=True))


def downgrade() -> None:
    """Drop the consent columns."""
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("reason")
        batch.drop_column("invitations")
    with op.batch_alter_table("matches") as batch:
        batch.drop_constraint("fk_matches_seat1_challenged", type_="foreignkey")
        batch.drop_constraint("fk_matches_seat0_challenged", type_="foreignkey")
        batch.drop_constraint("fk_matches_created_by", type_="foreignkey")
        batch.drop_column("seat1_challenged_id")
        batch.drop_column("seat0_challenged_id")
        batch.drop_column("created_by")
