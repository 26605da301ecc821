"""Tournaments: an SPRT tournament's state, for the list of tournaments.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02

An SPRT tournament (protocol 1.3, `TournamentCreate.sprt`, kept in `spec`) is counted from its
games; the row keeps the state as of its last game stored, so that a page of tournaments shows
each one's LLR and verdict without reading its games. Tournaments from before it have none
(none of them is an SPRT).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add each tournament's SPRT state (None: no SPRT, or no game stored yet)."""
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("sprt_state", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop each tournament's SPRT state."""
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("sprt_state")
