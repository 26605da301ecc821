"""What travels on the bus between server processes (server.cluster.bus), and what it raises.

The bus's errors, the types of its handlers, a `MatchNotice`, and a match broadcast's
envelope on the matches channel: its events' seqs, and the JSON it travels as (a broadcast's
messages as protocol JSON at the newest version, or a notice's newest seq).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from protocol.messages import Challenge, ServerMessage, dump_server_message
from server.matches.publisher import Broadcast

JSON = dict[str, Any]
"""A payload: a JSON object."""


class BusError(Exception):
    """The bus's errors."""


class BusUnavailable(BusError):  # noqa: N818 -- the spec's name, shared with server.cluster users
    """A request or publish that could not be delivered or answered in time: Redis cannot be
    reached, no process listens at the address, or no answer came within the timeout.

    Whether a request was carried out is unknown: the caller decides whether to retry (for a
    match: after checking its owner's lease).
    """


class RemoteError(BusError):
    """The serving process's handler raised; the message names its error."""


@dataclass(frozen=True)
class MatchNotice:
    """News that a match changed without its broadcast: its followers fetch its state.

    Published by the owner for each match whose broadcasts were lost while Redis was away;
    `seq` is the newest seq among them, `players` the seats' player ids (as in a Broadcast).
    """

    match_id: str
    players: tuple[int | None, int | None]
    seq: int


MatchHandler = Callable[[Broadcast | MatchNotice], Awaitable[None]]
"""Awaited with each other process's broadcast or notice, in order; must not block."""

Seats = tuple[int | None, int | None]
"""Each seat's player id, as in a Broadcast."""

MatchFilter = Callable[[str, Seats, tuple[int, int] | None], bool]
"""Told a broadcast's match id, seats' players and lowest and highest event seq (None: no event)
before it is parsed; False when its handler does not need it: it is then neither parsed nor
handed over (most broadcasts concern matches nobody follows in a given process)."""

RequestHandler = Callable[[JSON], Awaitable[JSON]]
"""Answers a request addressed to this process; what it raises reaches the asker as
RemoteError."""

TopicCallback = Callable[[JSON], Awaitable[None]]
"""Awaited with each payload published on a topic, in order; must not block."""

ReconnectHandler = Callable[[], Awaitable[None]]
"""Awaited after the bus reached Redis again following an outage (subscriptions in place)."""


def _seq(message: ServerMessage) -> int | None:
    """Return the match seq `message` announces; None for a challenge (not an event)."""
    if isinstance(message, Challenge):
        return None
    seq = getattr(message, "seq", None)
    return seq if isinstance(seq, int) else None


def broadcast_seqs(broadcast: Broadcast) -> tuple[int, int] | None:
    """Return the lowest and highest seq of the events in `broadcast` (None: no event)."""
    seqs = [seq for seq in map(_seq, broadcast.messages) if seq is not None]
    return (min(seqs), max(seqs)) if seqs else None


def seats_of(value: Any) -> Seats:
    """Return an envelope's `players` as a Broadcast's seats."""
    first, second = value
    return (first, second)


def encode_broadcast(origin: str, broadcast: Broadcast) -> str:
    """Return the envelope of `broadcast` published by process `origin`."""
    seqs = broadcast_seqs(broadcast)
    return json.dumps(
        {
            "origin": origin,
            "match_id": broadcast.match_id,
            "players": list(broadcast.players),
            "seqs": None if seqs is None else list(seqs),
            "messages": [dump_server_message(m) for m in broadcast.messages],
        }
    )


def encode_notice(origin: str, notice: MatchNotice) -> str:
    """Return the envelope of `notice` published by process `origin`."""
    envelope = {
        "origin": origin,
        "match_id": notice.match_id,
        "players": list(notice.players),
        "seq": notice.seq,
    }
    return json.dumps(envelope)
