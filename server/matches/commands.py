"""The calls on one match, as values: what the match service runs under the match's lock.

Each public call of `MatchService` on an existing match becomes one of these frozen dataclasses
and goes through the service's `route` (by default `MatchService.execute`, which runs it here).
A cluster (server.cluster.routing) routes them instead: here, or to the process that owns the
match, sent over the bus as JSON (server.cluster.forwarding). `MatchCall[T]` says what a call
returns, and a `Route` runs one where the match is played. `Read`, with its arbitrary reader,
is never sent to another process.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from protocol.messages import Challenge, MatchState, MoveMade, SearchInfo
from server.db.models import Player
from server.matches.live import LiveMatch

T = TypeVar("T")


class Action(enum.Enum):
    """What a player may do in a match besides moving: each is one referee action."""

    RESIGN = "resign"
    OFFER_DRAW = "offer_draw"
    ACCEPT_DRAW = "accept_draw"
    DECLINE_DRAW = "decline_draw"
    ABORT = "abort"


@dataclass(frozen=True)
class MatchCall(Generic[T]):
    """A call on the match `match_id` that returns a `T`."""

    match_id: str


@dataclass(frozen=True)
class Join(MatchCall[MatchState]):
    """Seat `player` in an open seat (`seat` None: any)."""

    player: Player
    seat: int | None


@dataclass(frozen=True)
class Accept(MatchCall[MatchState]):
    """Accept the challenge inviting `player`: take the seat it offers."""

    player: Player


@dataclass(frozen=True)
class Decline(MatchCall[MatchState]):
    """Decline the challenge inviting `player`: the match is aborted."""

    player: Player


@dataclass(frozen=True)
class PendingChallenge(MatchCall[Challenge | None]):
    """Return the challenge of the match waiting for `player`'s answer, if any."""

    player: Player


@dataclass(frozen=True)
class PlayMove(MatchCall[MoveMade | None]):
    """Play `player`'s move `text`; `counted`: a refusal counts toward the forfeit; `reply`:
    return the move's `move_made` (else None: the player learns of it from the broadcast)."""

    player: Player
    text: str
    expected_seq: int | None
    search: SearchInfo | None
    counted: bool
    reply: bool = True


@dataclass(frozen=True)
class Act(MatchCall[MatchState]):
    """Run `action` for `player`."""

    player: Player
    action: Action


@dataclass(frozen=True)
class Adjudicate(MatchCall[MatchState]):
    """End an active match by the server's decision: `winner` wins (None: a draw)."""

    winner: int | None
    reason: str


@dataclass(frozen=True)
class ShowState(MatchCall[MatchState]):
    """Return the match's state as `viewer` sees it (None: a spectator)."""

    viewer: Player | None


@dataclass(frozen=True)
class Read(MatchCall[T]):
    """Return `reader` of the match (under its lock); never sent to another process."""

    reader: Callable[[LiveMatch], T]


class Route(Protocol):
    """Runs a call on a match where the match is played; returns its result."""

    async def __call__(self, call: MatchCall[T]) -> T:
        """Run `call`; raise its MatchError when refused."""
