"""Scale-out: the server processes of a cluster, and which one owns each match (a lease).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23

Several `arena serve` processes may share one PostgreSQL database (docs/SCALING.md). Each
clustered process has a row in `arena_processes` and renews its `heartbeat_at` (PostgreSQL's
now()) every `heartbeat_ms`; a process whose heartbeat is older than `lease_ttl_ms` is dead.
A match is played by its owner (`matches.owner_id`) while that process is alive; every write
of the match names the owner's `owner_epoch` and is refused once another process has claimed
the match (the claim adds one to the epoch): the fence (server.cluster.leases).

Matches from before, and every match of a single process, have no owner (NULL, epoch 0): a
clustered process claims such a match when it first touches it. Tournaments get the same two
columns for the process that runs a tournament.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the process table; give matches and tournaments an owner and its epoch."""
    op.create_table(
        "arena_processes",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_arena_processes_heartbeat_at", "arena_processes", ["heartbeat_at"])
    for table in ("matches", "tournaments"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("owner_id", sa.String(128), nullable=True))
            batch.add_column(
                sa.Column("owner_epoch", sa.Integer(), nullable=False, server_default="0")
            )
        op.create_index(f"ix_{table}_owner_id", table, ["owner_id"])


def downgrade() -> None:
    """Drop the owners and the process table."""
    for table in ("matches", "tournaments"):
        op.drop_index(f"ix_{table}_owner_id", table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column("owner_epoch")
            batch.drop_column("owner_id")
    op.drop_index("ix_arena_processes_heartbeat_at", "arena_processes")
    op.drop_table("arena_processes")
