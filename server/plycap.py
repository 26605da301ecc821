"""A host's ply cap: a match drawn ("ply cap") once so many moves are played.

A tournament caps its games' length; the match service (server.matches) asks `PlyCaps.draw`
after every commit, under the match's lock, so no move is played past the cap, and the house
bots (server.housebots) play ahead no further than the cap. The caps are kept in memory only:
after a restart a host sets them again before the matches resume.
"""

from __future__ import annotations

from games.match import Effect, Status
from server.live import LiveMatch

PLY_CAP_REASON = "ply cap"
"""The description of a match drawn at a host's ply cap."""


class PlyCaps:
    """The ply cap of each capped match, by match id."""

    def __init__(self) -> None:
        self._caps: dict[str, int] = {}

    def limit(self, match_id: str, plies: int) -> None:
        """Draw the match once `plies` moves are played."""
        self._caps[match_id] = plies

    def cap(self, match_id: str) -> int | None:
        """Return the number of moves after which the match is drawn, if it has one."""
        return self._caps.get(match_id)

    def forget(self, match_id: str) -> None:
        """Drop the cap of a match that is over."""
        self._caps.pop(match_id, None)

    def draw(self, live: LiveMatch, now_ms: int) -> list[Effect]:
        """Return the referee's effects of drawing `live` if it is active at its cap, else none
        (call under the match's lock, then let the service run them)."""
        cap = self._caps.get(live.id)
        referee = live.referee
        if cap is not None and referee.status is Status.ACTIVE and referee.ply >= cap:
            return referee.adjudicate(None, PLY_CAP_REASON, now_ms)
        return []
