"""Requests addressed to one process over the bus (server.cluster.bus), and their answers.

`request(process_id, payload)` publishes `{"id", "from", "payload"}` on
`...:bus:rpc:<process_id>`; that process's `serve` handler answers on
`...:bus:reply:<asking process id>` with `{"id", "ok"}`, or `{"id", "error"}` when it raised,
and the answer is matched to the waiting request by its id. The bus's reader hands this
process's requests to `answer` and its replies to `on_reply`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable

from server.cluster.envelopes import JSON, BusError, BusUnavailable, RemoteError, RequestHandler

log = logging.getLogger(__name__)

Publish = Callable[[str, str], Awaitable[int]]
"""Publishes a text on a channel; returns how many subscribers got it (BusUnavailable if not)."""


class Requests:
    """The requests of process `process_id` on the channels under `prefix`, sent by `publish`.

    `channel` and `reply_channel` are what the bus subscribes to for this process.
    """

    def __init__(self, process_id: str, prefix: str, publish: Publish, timeout_s: float) -> None:
        self._process_id = process_id
        self._prefix = prefix
        self._publish = publish
        self._timeout_s = timeout_s
        self._server: RequestHandler | None = None
        self._pending: dict[str, asyncio.Future[JSON]] = {}
        self.channel = self._channel_of(process_id)
        """Where the requests addressed to this process arrive."""
        self.reply_channel = prefix + "reply:" + process_id
        """Where the answers to this process's requests arrive."""

    def serve(self, handler: RequestHandler) -> None:
        """Answer the requests addressed to this process with `handler` (the last one set)."""
        self._server = handler

    async def request(self, process_id: str, payload: JSON, timeout_s: float | None) -> JSON:
        """Send `payload` to process `process_id` and return its handler's answer (see
        server.cluster.bus.Bus.request)."""
        timeout = self._timeout_s if timeout_s is None else timeout_s
        request_id = uuid.uuid4().hex
        answer: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        envelope = {"id": request_id, "from": self._process_id, "payload": payload}
        try:
            async with asyncio.timeout(timeout):
                receivers = await self._publish(self._channel_of(process_id), json.dumps(envelope))
                if receivers == 0:
                    raise BusUnavailable(f"no process {process_id} listens on the bus")
                return await answer
        except TimeoutError:
            raise BusUnavailable(
                f"process {process_id} did not answer within {timeout:g} s"
            ) from None
        finally:
            self._pending.pop(request_id, None)

    def fail_pending(self, why: str) -> None:
        """Fail every request still waiting for its answer with BusUnavailable(`why`)."""
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(BusUnavailable(why))

    async def answer(self, data: bytes) -> None:
        """Serve one request and publish the answer to the asking process."""
        request = json.loads(data)
        reply: JSON
        try:
            if self._server is None:
                raise BusError(f"process {self._process_id} serves no requests")
            reply = {"id": request["id"], "ok": await self._server(request["payload"])}
            text = json.dumps(reply)
        except Exception as error:
            log.exception("a bus request failed")
            text = json.dumps({"id": request["id"], "error": f"{type(error).__name__}: {error}"})
        with contextlib.suppress(BusUnavailable):
            await self._publish(self._prefix + "reply:" + request["from"], text)

    def on_reply(self, data: bytes) -> None:
        """Hand one answer to the request waiting for it."""
        reply = json.loads(data)
        answer = self._pending.get(reply["id"])
        if answer is None or answer.done():
            return  # too late: the asker gave up
        if "error" in reply:
            answer.set_exception(RemoteError(reply["error"]))
        else:
            answer.set_result(reply["ok"])

    def _channel_of(self, process_id: str) -> str:
        return self._prefix + "rpc:" + process_id
