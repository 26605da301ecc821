"""Rated pools for connected bots, and a booking that keeps a bot to one pool game at once.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28

A pool member is a hosted bot (`bot_id`) or a player whose own client plays it (`player_id`,
a bot connected with `arena bot`): exactly one of the two is set, and so for each side of a pool
game. A connected member the pool paused has its reason in `pool_members.paused` (a hosted bot's
pause stays on the bot). `pool_seats` books each member into the one pool game it plays: its key
(`bot:ID` or `player:ID`) is the primary key, so two servers pairing at once cannot book a member
twice (server.pool); a booking is dropped once its game has ended.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Let players be pool members and sides of pool games; create the bookings."""
    with op.batch_alter_table("pool_members") as batch:
        batch.alter_column("bot_id", existing_type=sa.Integer(), nullable=True)
        batch.add_column(
            sa.Column(
                "player_id",
                sa.Integer(),
                sa.ForeignKey("players.id", name="fk_pool_members_player", ondelete="CASCADE"),
                nullable=True,
            )
        )
        batch.add_column(sa.Column("paused", sa.String(500), nullable=True))
        batch.create_unique_constraint("uq_pool_members_player", ["pool", "player_id"])
        batch.create_check_constraint(
            "ck_pool_members_one", "(bot_id IS NULL) <> (player_id IS NULL)"
        )
    op.create_index("ix_pool_members_player_id", "pool_members", ["player_id"])
    with op.batch_alter_table("pool_games") as batch:
        batch.alter_column("first_bot_id", existing_type=sa.Integer(), nullable=True)
        batch.alter_column("second_bot_id", existing_type=sa.Integer(), nullable=True)
        for side in ("first", "second"):
            batch.add_column(
                sa.Column(
                    f"{side}_player_id",
                    sa.Integer(),
                    sa.ForeignKey(
                        "players.id", name=f"fk_pool_games_{side}_player", ondelete="CASCADE"
                    ),
                    nullable=True,
                )
            )
    op.create_index("ix_pool_games_first_player_id", "pool_games", ["first_player_id"])
    op.create_index("ix_pool_games_second_player_id", "pool_games", ["second_player_id"])
    op.create_table(
        "pool_seats",
        sa.Column("member", sa.String(40), primary_key=True),
        sa.Column("pool", sa.String(32), nullable=False),
        sa.Column("match_id", sa.String(36), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_pool_seats_match_id", "pool_seats", ["match_id"])


def downgrade() -> None:
    """Drop the bookings and the connected members and their games."""
    op.drop_index("ix_pool_seats_match_id", "pool_seats")
    op.drop_table("pool_seats")
    op.execute("DELETE FROM pool_games WHERE first_bot_id IS NULL OR second_bot_id IS NULL")
    op.drop_index("ix_pool_games_second_player_id", "pool_games")
    op.drop_index("ix_pool_games_first_player_id", "pool_games")
    with op.batch_alter_table("pool_games") as batch:
        batch.drop_column("second_player_id")
        batch.drop_column("first_player_id")
        batch.alter_column("second_bot_id", existing_type=sa.Integer(), nullable=False)
        batch.alter_column("first_bot_id", existing_type=sa.Integer(), nullable=False)
    op.execute("DELETE FROM pool_members WHERE bot_id IS NULL")
    op.drop_index("ix_pool_members_player_id", "pool_members")
    with op.batch_alter_table("pool_members") as batch:
        batch.drop_constraint("ck_pool_members_one", type_="check")
        batch.drop_constraint("uq_pool_members_player", type_="unique")
        batch.drop_column("paused")
        batch.drop_column("player_id")
        batch.alter_column("bot_id", existing_type=sa.Integer(), nullable=False)
