"""The grader's own errors, below every profile so that each can raise them."""

from __future__ import annotations


class GradeError(Exception):
    """The grader's own mistake or a usage error (never something the submission did)."""
