"""The tournament journal: a JSON-lines file that lets a killed run resume where it stopped.

Line 1 is a header, `{"kind": "header", "version": 2, "tournament": {...}}`, where the
tournament object says what is played (the spec and the schedule); every further line is one
finished game, `{"kind": "game", "game": {...}}`, written and fsynced as soon as it ends. A
run killed mid-write leaves at most a truncated last line: reading skips it and opening for
append cuts it off, so the next line starts clean. Any other unreadable line is an error.

The journal handles plain JSON objects; competition.runner turns games into them and back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

__all__ = ["JOURNAL_VERSION", "Journal", "JournalError", "read_journal"]

JOURNAL_VERSION = 2
"""Version 2 stores each game's result code (`code`); version 1 journals had none, and their
games cannot be counted by code, so they are refused rather than guessed at."""


class JournalError(ValueError):
    """A journal that cannot be read, or that records a different tournament."""


def read_journal(path: Path | str) -> tuple[dict[str, Any] | None, list[dict[str, Any]], int]:
    """Return (tournament, games, valid_bytes) as stored in the journal at `path`.

    `tournament` is None for a missing or empty file. `valid_bytes` is the length of the
    well-formed prefix (a truncated last line is left out of it). Raises JournalError for a
    file that is not a journal or has a damaged line before the last.
    """
    source = Path(path)
    if not source.exists():
        return None, [], 0
    data = source.read_bytes()
    tournament: dict[str, Any] | None = None
    games: list[dict[str, Any]] = []
    valid = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        is_last = number == len(lines)
        if not raw.strip():
            valid += len(raw) + (0 if is_last else 1)
            continue
        try:
            entry = json.loads(raw)
            if not isinstance(entry, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            if is_last:
                # A kill during a write leaves the final line cut short: drop it.
                break
            raise JournalError(f"{source}:{number}: damaged journal line ({exc})") from None
        if number == 1 or tournament is None:
            if entry.get("kind") != "header" or "tournament" not in entry:
                raise JournalError(f"{source}:{number}: not a tournament journal (no header)")
            version = entry.get("version")
            if version != JOURNAL_VERSION:
                older = isinstance(version, int) and version < JOURNAL_VERSION
                raise JournalError(
                    f"{source}: journal version {version!r}, this Arena reads version "
                    f"{JOURNAL_VERSION}"
                    + (
                        " (an older Arena wrote it: finish that tournament with that Arena, "
                        "or start a new journal)"
                        if older
                        else ""
                    )
                )
            tournament = entry["tournament"]
        elif entry.get("kind") == "game" and isinstance(entry.get("game"), dict):
            games.append(entry["game"])
        else:
            raise JournalError(f"{source}:{number}: unexpected journal entry")
        valid += len(raw) + (0 if is_last else 1)
    return tournament, games, valid


class Journal:
    """An open journal for one tournament: `finished` games read back, `append` adds one.

    Opening checks that the journal (if it exists and is not empty) records `tournament`
    exactly, else raises JournalError saying what differs and what to do; a new journal gets
    the header. Use as a context manager, or call `close`.
    """

    def __init__(self, path: Path | str, tournament: dict[str, Any]) -> None:
        self.path = Path(path)
        stored, games, valid = read_journal(self.path)
        if stored is not None and stored != tournament:
            differing = sorted(
                key
                for key in set(stored) | set(tournament)
                if stored.get(key) != tournament.get(key)
            )
            raise JournalError(
                f"journal {self.path} records a different tournament (differs in: "
                f"{', '.join(differing)}); resume with the same settings, or use a new journal"
            )
        self.finished: list[dict[str, Any]] = games
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] = self.path.open("a+", encoding="utf-8")
        self._handle.truncate(valid)
        self._handle.seek(valid)
        if stored is None:
            self._write({"kind": "header", "version": JOURNAL_VERSION, "tournament": tournament})
        elif valid and not self.path.read_bytes()[:valid].endswith(b"\n"):
            self._handle.write("\n")

    def append(self, game: dict[str, Any]) -> None:
        """Write one finished game and flush it to disk before returning."""
        self._write({"kind": "game", "game": game})
        self.finished.append(game)

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _write(self, entry: dict[str, Any]) -> None:
        self._handle.write(json.dumps(entry, sort_keys=True) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
