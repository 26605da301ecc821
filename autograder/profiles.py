"""The assignment profiles and the students' default interpreter, importable at no cost.

The command line reads these for its help texts before it imports the grader itself.
"""

from __future__ import annotations

from typing import Final

PROFILES: Final = ("endgame", "agent")
"""The assignment profiles `autograder.grade.grade` knows, in the order the documentation lists."""

DEFAULT_PYTHON: Final = "/usr/bin/python3"
"""The students' interpreter: it must be readable by the sandbox uid (not a venv under /root)."""
