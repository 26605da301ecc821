"""Forwarding calls on a match to the process that owns it, over the bus.

A call on a match owned by another live process (server.matches.service, `MatchService.remote`) is
sent to that process as a bus request (server.cluster.bus) and answered with the owner's
result, or its refusal with the same code, message, details and legal moves. On the owner,
`handle` (the bus's request handler) runs the call with `MatchService.serve_forwarded`, which
never forwards it again: when the match has moved on to yet another process, the answer says
so and the asking process looks the owner up again.

Request: `{"kind": "match_call", "op": ..., "call": {"match_id": ..., ...}}`; answer: one of
`{"result": <JSON>}`, `{"error": {"code", "message", "details", "legal_moves"}}`,
`{"not_owner": <process id>}`, `{"unanswered": <why>}` (the owner is stopping: the call was
not carried out; asked again, it is run once the stopping process has released the match).

A request that gets no answer (the owner is dead, slow or cut off from Redis; `BusUnavailable`)
may or may not have been carried out: the service sends it again after checking the owner's
lease, under the same `call_id`. An owner answers a call id it has run (or is running) with
that first answer (the last ANSWERS_KEPT are kept), so a call is never run twice by one owner.
A call retried at a new owner (the first one died after storing it but before answering) runs
there: a move sent with `expected_seq` (as bots.client sends every move) is then refused as
STALE_SEQ; one without may be refused as NOT_YOUR_TURN, which counts toward the forfeit:
clients should send `expected_seq`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

from protocol.errors import ErrorCode, ProtocolError
from server.cluster.bus import JSON, Bus, BusUnavailable, RemoteError
from server.cluster.leases import NotOwnerError, UnansweredError
from server.errors import MatchError
from server.matches.service import MatchService

KIND = "match_call"
"""The `kind` of a forwarded call's bus request."""

ANSWERS_KEPT = 10_000
"""Forwarded calls whose answer an owner keeps, by call id, to answer a retry alike."""


class BusRemote:
    """Sends calls on matches to their owners over `bus` and serves those sent here to
    `service` (install `handle` with `bus.serve`). `timeout_s`: how long an owner may take to
    answer (default: the bus's `bus_rpc_timeout_s`)."""

    def __init__(self, bus: Bus, service: MatchService, timeout_s: float | None = None) -> None:
        self._bus = bus
        self._service = service
        self._timeout_s = timeout_s
        self._answers: OrderedDict[str, asyncio.Future[JSON]] = OrderedDict()

    async def call(self, owner_id: str, op: str, payload: dict[str, Any]) -> Any:
        """Run `op` at `owner_id`; return its JSON result (see server.matches.service.Remote)."""
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
        return reply.get("result")

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
            result = await self._service.serve_forwarded(str(request["op"]), request["call"])
        except NotOwnerError as error:
            return {"not_owner": error.owner_id}
        except UnansweredError as error:
            return {"unanswered": str(error)}
        except ProtocolError as error:
            return {"error": encode_error(error)}
        return {"result": result}


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
