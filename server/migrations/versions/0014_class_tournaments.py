"""Class tournaments: a tournament among the agents a course assignment's students submitted.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28

A class tournament (server.classes) names the server tournament that plays it, the
submissions that entered (each hosted as its student's bot) and the share of the assignment's
grade it counts for.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the class tournaments."""
    op.create_table(
        "class_tournaments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "course_id",
            sa.Integer(),
            sa.ForeignKey("courses.id", name="fk_class_tournaments_course"),
            nullable=False,
        ),
        sa.Column(
            "assignment_id",
            sa.Integer(),
            sa.ForeignKey("assignments.id", name="fk_class_tournaments_assignment"),
            nullable=False,
        ),
        sa.Column(
            "tournament_id",
            sa.String(36),
            sa.ForeignKey("tournaments.id", name="fk_class_tournaments_tournament"),
            nullable=False,
            unique=True,
        ),
        sa.Column("pick", sa.String(8), nullable=False),
        sa.Column("grade_share", sa.Integer(), nullable=False),
        sa.Column("entrants", sa.JSON(), nullable=False),
        sa.Column(
            "created_by",
            sa.Integer(),
            sa.ForeignKey("players.id", name="fk_class_tournaments_created_by"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_class_tournaments_course_id", "class_tournaments", ["course_id"])


def downgrade() -> None:
    """Drop the class tournaments."""
    op.drop_table("class_tournaments")
