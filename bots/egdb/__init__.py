"""The checkers endgame database: retrograde analysis, storage and probing.

`bots.egdb.index` ranks positions per material signature, `bots.egdb.solve` computes the
values by retrograde analysis, `bots.egdb.store` builds and keeps a database directory and
`bots.egdb.probe` reads it. This module itself imports nothing heavy (numpy is loaded only by
the submodules), so naming `DatabaseError` costs nothing at start-up.
"""

from __future__ import annotations


class DatabaseError(ValueError):
    """A database directory that cannot be used: missing, damaged, or of another format."""


__all__ = ["DatabaseError"]
