"""A call on a match crosses the bus unchanged: every call type, encoded and decoded, is the
same call, and a move that asked for no reply comes back as None."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from protocol.messages import MoveMade, SearchInfo
from server.cluster.forwarding import decode_call, decode_result, encode_call, encode_result
from server.db.models import Player
from server.matches.commands import (
    Accept,
    Act,
    Action,
    Adjudicate,
    Decline,
    Join,
    MatchCall,
    PendingChallenge,
    PlayMove,
    ShowState,
)

ALICE = Player(id=7, name="alice")
SEARCH = SearchInfo(depth=6, nodes=1234, score=35)

CALLS: list[MatchCall[Any]] = [
    ShowState("m_1", None),
    ShowState("m_1", ALICE),
    Adjudicate("m_1", 0, "time forfeit agreed"),
    Adjudicate("m_1", None, "drawn by the arbiter"),
    PlayMove("m_1", ALICE, "11-15", 4, SEARCH, True),
    PlayMove("m_1", ALICE, "11-15", None, None, True, False),
    PlayMove("m_1", ALICE, "9-14", 2, None, False),
    *(Act("m_1", ALICE, action) for action in Action),
    Join("m_1", ALICE, 1),
    Join("m_1", ALICE, None),
    Accept("m_1", ALICE),
    Decline("m_1", ALICE),
    PendingChallenge("m_1", ALICE),
]


def _plain(call: MatchCall[Any]) -> tuple[type, dict[str, Any]]:
    """The call's type and fields, a player as its id and name (a row has no value equality)."""
    fields = {
        name: (value.id, value.name) if isinstance(value, Player) else value
        for name, value in ((f.name, getattr(call, f.name)) for f in dataclasses.fields(call))
    }
    return type(call), fields


@pytest.mark.parametrize("call", CALLS, ids=lambda call: type(call).__name__)
def test_a_call_decodes_to_itself(call: MatchCall[Any]) -> None:
    op, payload = encode_call(call, "c1")
    assert payload["call_id"] == "c1"
    assert _plain(decode_call(op, payload)) == _plain(call)


def test_a_move_sent_by_an_older_process_asks_for_its_reply() -> None:
    op, payload = encode_call(PlayMove("m_1", ALICE, "11-15", None, None, True), "c1")
    del payload["reply"]
    decoded = decode_call(op, payload)
    assert isinstance(decoded, PlayMove) and decoded.reply


def test_a_move_without_reply_returns_none_across_the_bus() -> None:
    call = PlayMove("m_1", ALICE, "11-15", None, None, True, False)
    assert encode_result(None) is None
    assert decode_result(call, encode_result(None)) is None


def test_a_move_made_returns_across_the_bus() -> None:
    made = MoveMade(
        match_id="m_1",
        seq=3,
        ply=1,
        seat=0,
        move="11-15",
        position="B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,12,15",
        to_move=1,
        legal_moves=["22-18", "23-18", "23-19", "24-19", "24-20"],
    )
    call = PlayMove("m_1", ALICE, "11-15", None, None, True)
    assert decode_result(call, encode_result(made)) == made
