"""Matches: the ply cap of each match (MatchConfig.max_plies), stored with its set-up.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23

A match's ply cap was the host's, kept in memory and set again after a restart; it is now a
rule of the match, rebuilt with the rest of its set-up when the match is loaded. Matches from
before have none (NULL): a tournament game in play across this upgrade plays on to the end its
game's rules give it (every game here has one), and counts as usual.

`matches.result_reason` now holds the referee's fine-grained result code (`no_moves`,
`ply_cap`, `bot_failure`, ...); rows from before keep `rules` (or another broad reason), which
the server shows as it is, with no code.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the ply cap of each match; matches from before have none."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("max_plies", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop the ply cap of each match."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("max_plies")
