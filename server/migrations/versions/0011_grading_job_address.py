"""Grading jobs: the client address each was uploaded from.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01

The grading queue takes addresses in turn, then the players of an address in turn, and bounds
the jobs one address has waiting (server.grading.queue, server.grading.shared): the row keeps
the uploader's address (as the rate limits count it: an IPv6 address by its /64). Jobs from
before it have none and share one lane.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the uploader's address of each grading job, indexed for the per-address counts."""
    with op.batch_alter_table("grading_jobs") as batch:
        batch.add_column(sa.Column("address", sa.String(64), nullable=True))
    op.create_index("ix_grading_jobs_address", "grading_jobs", ["address"])


def downgrade() -> None:
    """Drop the uploader's address of each grading job."""
    op.drop_index("ix_grading_jobs_address", "grading_jobs")
    with op.batch_alter_table("grading_jobs") as batch:
        batch.drop_column("address")
