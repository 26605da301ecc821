"""Match events: a move's search statistics (protocol 1.2, `SearchInfo`), stored with the move.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23

A bot may send its depth, nodes, score and principal variation with its move, and the house
bots report theirs; they are kept as JSON on the move's event so that a match's record replays
them after a restart. Events from before have none (NULL), as do moves sent without them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the search statistics of each move event; events from before have none."""
    with op.batch_alter_table("match_events") as batch:
        batch.add_column(sa.Column("search", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    """Drop the search statistics of each move event."""
    with op.batch_alter_table("match_events") as batch:
        batch.drop_column("search")
