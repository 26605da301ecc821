"""Forwarding calls on a match to the process that owns it, over the bus.

A call on a match owned by another live process (server.cluster.routing, `MatchRouter.remote`)
is sent to that process as a bus request (server.cluster.bus) and answered with the owner's
result, or its refusal with the same code, message, details and legal moves. On the owner,
`handle` (the bus's request handler) runs the call with `MatchRouter.serve`, which never
forwards it again: when the match has moved on to yet another process, the answer says so and
the asking process looks the owner up again.

The calls travel as JSON (`encode_call`, `decode_call`): players by id and name, the answer as
the protocol model the call returns. Request: `{"kind": "match_call", "op": ..., "call":
{"match_id": ..., "call_id": ..., ...}}`; answer: one of `{"result": <JSON>}`, `{"error":
{"code", "message", "details", "legal_moves"}}`, `{"not_owner": <process id>}`,
`{"unanswered": <why>}` (the owner is stopping: the call was not carried out; asked again, it
is run once the stopping process has released the match).

A request that gets no answer (the owner is dead, slow or cut off from Redis; `BusUnavailable`)
may or may not have been carried out: the router sends it again after checking the owner's
lease, under the same `call_id`. An owner answers a call id it has run (or is running) with
that first answer (the last ANSWERS_KEPT are kept), so a call is never run twice by one owner.
A call retried at a new owner (the first one died after storing it but before answering) runs
there: a move sent with `expected_seq` (as the bot client sends every move) is then refused as
STALE_SEQ; one without may be refused as NOT_YOUR_TURN, which counts toward the forfeit:
clients should send `expected_seq`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import Challenge, MatchState, MoveMade, SearchInfo
from server.cluster.bus import Bus
from server.cluster.envelopes import JSON, BusUnavailable, RemoteError
from server.cluster.routing import UnansweredError
from server.db.models import Player
from server.errors import MatchError
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
    Route,
    ShowState,
)
from server.matches.ownership import NotOwnerError

T = TypeVar("T")

KIND = "match_call"
"""The `kind` of a forwarded call's bus request."""

ANSWERS_KEPT = 10_000
"""Forwarded calls whose answer an owner keeps, by call id, to answer a retry alike."""


class BusRemote:
    """Sends calls on matches to their owners over `bus` and runs those sent here with `serve`
    (`MatchRouter.serve`; install `handle` with `bus.serve`). `timeout_s`: how long an owner
    may take to answer (default: the bus's `bus_rpc_timeout_s`)."""

    def __init__(self, bus: Bus, serve: Route, timeout_s: float | None = None) -> None:
        self._bus = bus
        self._serve = serve
        self._timeout_s = timeout_s
        self._answers: OrderedDict[str, asyncio.Future[JSON]] = OrderedDict()

    async def call(self, owner_id: str, call: MatchCall[T], call_id: str) -> T:
        """Run `call` at `owner_id`; return its result (see server.cluster.routing.Remote)."""
        op, payload = encode_call(call, call_id)
        request = {"kind": KIND, "op": op, "call": payload}
        try:
            reply = await self._bus.request(owner_id, request, self._timeout_s)
        except BusUnavailable as error:
            raise UnansweredError(owner_id, str(error)) from None
        except RemoteError as error:
            raise MatchError(
                ErrorCode.INTERNAL_ERROR,
                "the server process playing this match failed; the match is unchanged, retry",
                match_id=payload.get("match_id"),
            ) from error
        if "not_owner" in reply:
            raise NotOwnerError(str(payload.get("match_id")), str(reply["not_owner"]))
        if "unanswered" in reply:
            raise UnansweredError(owner_id, str(reply["unanswered"]))
        if "error" in reply:
            raise decode_error(reply["error"], payload.get("match_id"))
        return decode_result(call, reply.get("result"))

    async def handle(self, request: JSON) -> JSON:
        """Answer a call another process forwarded here (a `Bus.serve` handler)."""
        if request.get("kind") != KIND:
            raise ValueError(f"not a forwarded match call: {request.get('kind')!r}")
        call_id = request["call"].get("call_id")
        if not isinstance(call_id, str):
            return await self._answer(request)
        known = self._answers.get(call_id)
        if known is not None:
            return await asyncio.shield(known)  # run once; a retry gets the same answer
        answer: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self._answers[call_id] = answer
        while len(self._answers) > ANSWERS_KEPT:
            self._answers.popitem(last=False)
        try:
            reply = await self._answer(request)
        except Exception as error:
            self._answers.pop(call_id, None)  # not answered: a retry runs it
            answer.set_exception(error)
            answer.exception()  # retrieved: no warning when nobody else awaits it
            raise
        except BaseException:
            self._answers.pop(call_id, None)
            answer.cancel()
            raise
        answer.set_result(reply)
        return reply

    async def _answer(self, request: JSON) -> JSON:
        try:
            call = decode_call(str(request["op"]), request["call"])
            result = await self._serve(call)
        except NotOwnerError as error:
            return {"not_owner": error.owner_id}
        except UnansweredError as error:
            return {"unanswered": str(error)}
        except ProtocolError as error:
            return {"error": encode_error(error)}
        return {"result": encode_result(result)}


def encode_error(error: ProtocolError) -> JSON:
    """Return a refusal as a forwarded call's answer carries it."""
    return {
        "code": error.code.value,
        "message": error.message,
        "details": dict(error.details),
        "legal_moves": None if error.legal_moves is None else list(error.legal_moves),
    }


def decode_error(encoded: JSON, match_id: str | None) -> MatchError:
    """Return the MatchError of a forwarded call's refusal."""
    legal = encoded.get("legal_moves")
    return MatchError(
        ErrorCode(encoded["code"]),
        str(encoded["message"]),
        match_id=match_id,
        legal_moves=None if legal is None else [str(move) for move in legal],
        details=dict(encoded.get("details") or {}),
    )


def encode_call(call: MatchCall[Any], call_id: str) -> tuple[str, JSON]:
    """Return the `op` and the payload of a forwarded call."""
    sent: JSON = {"match_id": call.match_id, "call_id": call_id}
    match call:
        case ShowState(viewer=viewer):
            return "state", sent | {"player": None if viewer is None else _who(viewer)}
        case Adjudicate(winner=winner, reason=reason):
            return "adjudicate", sent | {"winner": winner, "reason": reason}
        case PlayMove(counted=True, search=search):
            search_json = None if search is None else search.model_dump(mode="json")
            return "move", sent | _move(call) | {"search": search_json, "reply": call.reply}
        case PlayMove(counted=False):
            return "move_by_hand", sent | _move(call)
        case Act(player=player, action=action):
            return "act", sent | {"player": _who(player), "action": action.value}
        case Join(player=player, seat=seat):
            return "join", sent | {"player": _who(player), "seat": seat}
        case Accept(player=player):
            return "accept", sent | {"player": _who(player)}
        case Decline(player=player):
            return "decline", sent | {"player": _who(player)}
        case PendingChallenge(player=player):
            return "challenge", sent | {"player": _who(player)}
    raise ValueError(f"a call that is not forwarded: {call!r}")


def decode_call(op: str, sent: JSON) -> MatchCall[Any]:
    """Return the call of a forwarded call's `op` and payload."""
    match_id = str(sent["match_id"])
    if op == "state":
        who = sent.get("player")
        return ShowState(match_id, None if who is None else _player(who))
    if op == "adjudicate":
        return Adjudicate(match_id, sent["winner"], str(sent["reason"]))
    if sent.get("player") is None:
        raise ValueError(f"a forwarded {op} names no player")
    player = _player(sent["player"])
    if op in ("move", "move_by_hand"):
        search = sent.get("search")
        info = None if search is None else SearchInfo.model_validate(search)
        counted = op == "move"
        reply = bool(sent.get("reply", True))
        text, expected_seq = str(sent["text"]), sent["expected_seq"]
        return PlayMove(match_id, player, text, expected_seq, info, counted, reply)
    if op == "act":
        return Act(match_id, player, Action(sent["action"]))
    if op == "join":
        return Join(match_id, player, sent["seat"])
    if op == "accept":
        return Accept(match_id, player)
    if op == "decline":
        return Decline(match_id, player)
    if op == "challenge":
        return PendingChallenge(match_id, player)
    raise ValueError(f"unknown forwarded call {op!r}")


def encode_result(result: object) -> Any:
    """Return a forwarded call's result as JSON (None, or its protocol model)."""
    if result is None:
        return None
    if not isinstance(result, BaseModel):
        raise TypeError(f"not a result a forwarded call returns: {result!r}")
    return result.model_dump(mode="json")


def decode_result(call: MatchCall[T], result: Any) -> T:
    """Return the result of a forwarded `call` from its JSON."""
    decoded: object
    match call:
        case PlayMove():
            decoded = None if result is None else MoveMade.model_validate(result)
        case PendingChallenge():
            decoded = None if result is None else Challenge.model_validate(result)
        case _:
            decoded = MatchState.model_validate(result)
    return cast(T, decoded)


def _move(call: PlayMove) -> JSON:
    return {"player": _who(call.player), "text": call.text, "expected_seq": call.expected_seq}


def _who(player: Player) -> JSON:
    """Return a player as a forwarded call names it: id and name."""
    return {"id": player.id, "name": player.name}


def _player(who: Any) -> Player:
    """Return the player a forwarded call names (not loaded: the id and name are all a call
    on a match reads of a player)."""
    return Player(id=int(who["id"]), name=str(who["name"]))
