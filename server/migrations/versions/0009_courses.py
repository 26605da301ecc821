"""Courses: courses, their members (roster and staff), assignments, regrades; course jobs.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23

A course submission is a grading job like any other (same queue, same durability) that also
names its assignment and the member who submitted it; `regrades` counts the times staff had it
graded again. Jobs from before are no course's (NULL) and were never regraded (0).
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def _created_at() -> sa.Column[datetime]:
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    """Create the course tables and give grading jobs their assignment, member and regrades."""
    op.create_table(
        "courses",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column(
            "owner_id",
            sa.Integer(),
            sa.ForeignKey("players.id", name="fk_courses_owner"),
            nullable=False,
        ),
        _created_at(),
    )
    op.create_index("ix_courses_owner_id", "courses", ["owner_id"])
    op.create_table(
        "course_members",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "course_id",
            sa.Integer(),
            sa.ForeignKey("courses.id", name="fk_course_members_course"),
            nullable=False,
        ),
        sa.Column(
            "player_id",
            sa.Integer(),
            sa.ForeignKey("players.id", name="fk_course_members_player"),
            nullable=False,
        ),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("student_id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("invite_hash", sa.String(64), nullable=True, unique=True),
        _created_at(),
        sa.Column("dropped_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("course_id", "player_id", name="uq_course_members_player"),
        sa.UniqueConstraint("course_id", "student_id", name="uq_course_members_student"),
    )
    op.create_index("ix_course_members_course_id", "course_members", ["course_id"])
    op.create_index("ix_course_members_player_id", "course_members", ["player_id"])
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "course_id",
            sa.Integer(),
            sa.ForeignKey("courses.id", name="fk_assignments_course"),
            nullable=False,
        ),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("profile", sa.String(32), nullable=False),
        sa.Column("release_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("late_policy", sa.String(16), nullable=False),
        sa.Column("late_penalty_per_day", sa.Float(), nullable=False),
        sa.Column("late_days_max", sa.Integer(), nullable=False),
        sa.Column("daily_limit", sa.Integer(), nullable=False),
        sa.Column("score_policy", sa.String(16), nullable=False),
        sa.Column("before_due", sa.String(16), nullable=False),
        sa.Column("suite_version", sa.Integer(), nullable=False),
        sa.Column("public_tests", sa.Integer(), nullable=False),
        sa.Column("private_tests", sa.Integer(), nullable=False),
        _created_at(),
        sa.UniqueConstraint("course_id", "name", name="uq_assignments_name"),
    )
    op.create_index("ix_assignments_course_id", "assignments", ["course_id"])
    op.create_table(
        "course_regrades",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "assignment_id",
            sa.Integer(),
            sa.ForeignKey("assignments.id", name="fk_course_regrades_assignment"),
            nullable=False,
        ),
        sa.Column(
            "requested_by",
            sa.Integer(),
            sa.ForeignKey("course_members.id", name="fk_course_regrades_member"),
            nullable=False,
        ),
        _created_at(),
        sa.Column("job_ids", sa.JSON(), nullable=False),
    )
    op.create_index("ix_course_regrades_assignment_id", "course_regrades", ["assignment_id"])
    with op.batch_alter_table("grading_jobs") as batch:
        batch.add_column(sa.Column("assignment_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("member_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("regrades", sa.Integer(), nullable=False, server_default="0"))
        batch.create_foreign_key(
            "fk_grading_jobs_assignment", "assignments", ["assignment_id"], ["id"]
        )
        batch.create_foreign_key("fk_grading_jobs_member", "course_members", ["member_id"], ["id"])
        batch.create_index("ix_grading_jobs_assignment_id", ["assignment_id"])
        batch.create_index("ix_grading_jobs_member_id", ["member_id"])


def downgrade() -> None:
    """Drop the course tables and the course columns of grading jobs."""
    with op.batch_alter_table("grading_jobs") as batch:
        batch.drop_index("ix_grading_jobs_member_id")
        batch.drop_index("ix_grading_jobs_assignment_id")
        batch.drop_constraint("fk_grading_jobs_member", type_="foreignkey")
        batch.drop_constraint("fk_grading_jobs_assignment", type_="foreignkey")
        batch.drop_column("regrades")
        batch.drop_column("member_id")
        batch.drop_column("assignment_id")
    op.drop_table("course_regrades")
    op.drop_table("assignments")
    op.drop_table("course_members")
    op.drop_table("courses")
