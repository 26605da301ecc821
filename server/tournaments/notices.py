"""Tournament notices between processes: a game recorded, a tournament ended.

A worker that records a game of a tournament played on workers (server.jobs.tournament_games)
publishes a notice on the bus topic `TOPIC`; every server process hands the notices to its
`TournamentService.on_notice`, which updates the tournament it holds in memory and tells its
watchers (each game once, the end once: a notice may come twice, or be lost, see the service).
A notice is a plain JSON object: {"kind": "game", "tournament_id", "game"} or
{"kind": "ended", "tournament_id"}.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from protocol.messages import TournamentGame

log = logging.getLogger(__name__)

TOPIC: Final = "tournaments"
"""The bus topic of tournament notices (the bus prefixes it with the Redis key prefix)."""

ENDED: Final = ("finished", "cancelled", "failed")
"""The statuses of a tournament over."""


Notify = Callable[[dict[str, Any]], Awaitable[None]]
"""Publishes a notice to every server process (the bus topic)."""


@dataclass(frozen=True)
class Notice:
    """A tournament notice: `game` recorded (with its result), or the tournament ended (None)."""

    tournament_id: str
    game: TournamentGame | None = None


def game_notice(tournament_id: str, game: TournamentGame) -> dict[str, Any]:
    """Return the notice that `game` of the tournament has its result stored."""
    return {"kind": "game", "tournament_id": tournament_id, "game": game.model_dump(mode="json")}


def ended_notice(tournament_id: str) -> dict[str, Any]:
    """Return the notice that the tournament's status is stored as ended (finished, ...)."""
    return {"kind": "ended", "tournament_id": tournament_id}


def parse_notice(payload: dict[str, Any]) -> Notice | None:
    """Return the notice of `payload`, or None for anything else (ignored, never raised)."""
    tournament_id = payload.get("tournament_id")
    if not isinstance(tournament_id, str):
        return None
    kind = payload.get("kind")
    if kind == "ended":
        return Notice(tournament_id)
    if kind == "game":
        try:
            game = TournamentGame.model_validate(payload.get("game"))
        except ValidationError:
            return None
        if game.result is not None:
            return Notice(tournament_id, game)
    return None


async def tell(notify: Notify | None, payload: dict[str, Any]) -> None:
    """Publish a notice with `notify`, if any; a failure is logged, never raised (the servers
    read the tournaments they show back from the database)."""
    if notify is None:
        return
    try:
        await notify(payload)
    except Exception:
        log.exception("could not publish a tournament notice")
