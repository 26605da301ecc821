"""Broken submission: a correct idea under the wrong file name (the grader wants checkers.py)."""
