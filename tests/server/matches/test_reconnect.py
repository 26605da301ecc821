"""A bot whose connection is cut reconnects and plays on, end to end.

One `arena bot` process reaches the real server only through a TCP proxy inside the test; the
other connects directly. Twice during a checkers match the proxy resets every connection it
carries (RST, no WebSocket close frame), as a network failure would. The test proves that the
bot noticed, reconnected through the proxy (a new TCP connection and a new `welcome` each time),
resynced from the server's `match_state`, kept moving, and finished the match by the rules: not
on time and not by forfeit, with the process exiting 0 after `--matches 1`.

If reconnecting were broken the match would stall with the cut bot to move; every wait below has
its own deadline, so the test then fails within seconds, naming the step that did not happen and
showing both bots' logs.

A second test cuts the bot's connection while its opponent (played by the test over REST) is to
move, resigns for the opponent before letting the bot reconnect, and proves that the bot learns
of the end over REST (the server resyncs only live matches) and exits 0 after `--matches 1`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from tests.server.conftest import RunningServer
from tests.wsclient import connect

HELLO = {"type": "hello", "protocol_version": "1.0", "client": "spectator"}

STEP_TIMEOUT = 20.0
"""Seconds any one awaited step may take before the test fails (the whole test takes ~3 s)."""

CUT_EVERY = 4
"""Plies to play before the first cut, and between the first cut and the second."""


class CuttableProxy:
    """A TCP proxy from a free 127.0.0.1 port to `target_port` that can reset its connections.

    Bytes are forwarded both ways unchanged (an EOF is passed on as a half-close). `cut()`
    aborts both sockets of every open pair with SO_LINGER 0, so both peers see a reset.
    After `hold()` new connections are accepted but not forwarded until `release()`.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.accepted = 0
        self.cuts = 0
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self._open = asyncio.Event()
        self._open.set()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def open_pairs(self) -> int:
        return len(self._pairs)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)

    def hold(self) -> None:
        """Keep new connections waiting (accepted, nothing forwarded) until `release()`."""
        self._open.clear()

    def release(self) -> None:
        """Forward the held connections and every new one."""
        self._open.set()

    def cut(self) -> int:
        """Reset every open connection pair; return how many there were."""
        pairs = list(self._pairs)
        for pair in pairs:
            for writer in pair:
                _reset(writer)
        self.cuts += 1
        return len(pairs)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self.cut()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.accepted += 1
        try:
            await self._open.wait()
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            except OSError:
                _reset(writer)
                return
            pair = (writer, up_writer)
            self._pairs.add(pair)
            try:
                await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            finally:
                self._pairs.discard(pair)
                for end in pair:
                    end.close()
        finally:
            self._handlers.discard(task)


def _reset(writer: asyncio.StreamWriter) -> None:
    """Abort `writer`'s socket so that the peer gets a TCP reset, not an orderly close."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy `reader` to `writer` until EOF (then half-close `writer`) or a failure (abort)."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof() and not writer.is_closing():
            writer.write_eof()
    except OSError:
        writer.transport.abort()


class Spectator:
    """Follow one match from its spectator socket, recording every message after `welcome`."""

    def __init__(self, server: RunningServer, match_id: str) -> None:
        self.url = f"{server.ws_url}/ws/matches/{match_id}"
        self.messages: list[dict[str, Any]] = []
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async with connect(self.url) as ws:
            await ws.send(json.dumps(HELLO))
            while True:
                message = json.loads(await ws.recv())
                if message["type"] == "welcome":
                    continue
                self.messages.append(message)
                if message["type"] == "match_ended":
                    return

    @property
    def ply(self) -> int:
        """The number of moves played so far, as far as the spectator has seen."""
        ply = 0
        for message in self.messages:
            if message["type"] == "match_state":
                ply = len(message["moves"])
            elif message["type"] == "move_made":
                ply = message["ply"]
        return ply

    @property
    def ended(self) -> dict[str, Any] | None:
        return next((m for m in self.messages if m["type"] == "match_ended"), None)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


async def _create_match(http: httpx.AsyncClient) -> tuple[dict[str, str], str]:
    """Register north and south; create a checkers match between them with a generous clock."""
    tokens: dict[str, str] = {}
    for name in ("north", "south"):
        response = await http.post("/players", json={"name": name})
        assert response.status_code == 201, response.text
        tokens[name] = response.json()["token"]
    created = await http.post(
        "/matches",
        json={
            "game": "checkers",
            "seats": ["north", "south"],
            "time_control": {"base_ms": 120_000, "increment_ms": 1_000},
        },
        headers={"Authorization": f"Bearer {tokens['north']}"},
    )
    assert created.status_code == 201, created.text
    match_id = str(created.json()["match_id"])
    accepted = await http.post(
        f"/matches/{match_id}/accept", headers={"Authorization": f"Bearer {tokens['south']}"}
    )
    assert accepted.status_code == 200, accepted.text
    return tokens, match_id


async def test_a_bot_reconnects_after_its_connection_is_cut_and_plays_on(
    live_server: RunningServer, tmp_path: Path
) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    async with httpx.AsyncClient(base_url=live_server.url, timeout=STEP_TIMEOUT) as http:
        tokens, match_id = await _create_match(http)
        spectator = Spectator(live_server, match_id)
        proxy = CuttableProxy(live_server.port)
        logs = {name: tmp_path / f"{name}.log" for name in ("north", "south")}
        files: list[IO[str]] = []
        processes: dict[str, subprocess.Popen[str]] = {}

        def report() -> str:
            return (
                f"\nproxy: {proxy.accepted} connection(s) accepted, {proxy.open_pairs} open, "
                f"{proxy.cuts} cut(s); spectator: ply {spectator.ply}, ended {spectator.ended}"
                + "".join(f"\n--- {name} (arena bot) ---\n{_read(p)}" for name, p in logs.items())
            )

        async def wait_until(condition: Callable[[], bool], what: str) -> None:
            """Wait until `condition()` holds; fail naming `what` after STEP_TIMEOUT seconds."""
            try:
                async with asyncio.timeout(STEP_TIMEOUT):
                    while not condition():
                        task = spectator.task
                        if task is not None and task.done() and task.exception() is not None:
                            pytest.fail(f"the spectator failed: {task.exception()!r}{report()}")
                        await asyncio.sleep(0.01)
            except TimeoutError:
                pytest.fail(f"timed out after {STEP_TIMEOUT} s waiting for {what}{report()}")

        def ply_reached(ply: int) -> Callable[[], bool]:
            return lambda: spectator.ply >= ply

        def accepted_more_than(count: int) -> Callable[[], bool]:
            return lambda: proxy.accepted > count

        try:
            await proxy.start()
            spectator.start()
            await wait_until(lambda: bool(spectator.messages), "the spectator's match_state")

            # north (seat 0) reaches the server only through the proxy; south connects directly.
            routes = {
                "north": (proxy.url, "alphabeta:depth=1"),
                "south": (live_server.url, "greedy"),
            }
            for name, (server_url, spec) in routes.items():
                log_file = logs[name].open("w", encoding="utf-8")
                files.append(log_file)
                command = [exe, "bot", "--server", server_url, "--token", tokens[name]]
                processes[name] = subprocess.Popen(
                    [*command, "--bot", spec, "--matches", "1"],
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    text=True,
                )

            cut_plies: list[int] = []
            for number in (1, 2):
                target = (cut_plies[-1] if cut_plies else 0) + CUT_EVERY
                await wait_until(ply_reached(target), f"ply {target} before cut {number}")
                assert spectator.ended is None, f"the match ended before cut {number}{report()}"
                assert proxy.cut() == 1, f"north had no open connection at cut {number}{report()}"
                # The server's ply just after the cut. At most one more north move (in flight
                # at the cut) can still arrive over the reset connection; north cannot send
                # another without first receiving south's reply. So reaching ply + 3 takes a
                # north move sent over a new connection.
                state = (await http.get(f"/matches/{match_id}")).json()
                assert state["status"] == "active", (state, report())
                cut_plies.append(len(state["moves"]))
                await wait_until(
                    accepted_more_than(number),
                    f"north to reconnect through the proxy after cut {number}",
                )
                await wait_until(
                    ply_reached(cut_plies[-1] + 3),
                    f"north to play on after cut {number} at ply {cut_plies[-1]}",
                )

            await wait_until(lambda: spectator.ended is not None, "the end of the match")
            for name, process in processes.items():
                try:
                    async with asyncio.timeout(STEP_TIMEOUT):
                        await asyncio.to_thread(process.wait)
                except TimeoutError:
                    pytest.fail(f"the {name} bot did not exit after the match{report()}")
            final = (await http.get(f"/matches/{match_id}")).json()
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=10)
            for opened in files:
                opened.close()
            await proxy.close()
            if spectator.task is not None:
                spectator.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await spectator.task

    context = report()
    assert {name: p.returncode for name, p in processes.items()} == {"north": 0, "south": 0}, (
        context
    )
    assert final["status"] == "finished", final
    assert final["result"]["reason"] == "rules", (final["result"], context)
    ended = spectator.ended
    assert ended is not None
    assert ended["result"] == final["result"]
    # Every move was seen once and in order: nothing lost or replayed around the cuts.
    first = spectator.messages[0]
    assert first["type"] == "match_state"
    seen_moves = [m["move"] for m in spectator.messages if m["type"] == "move_made"]
    assert first["moves"] + seen_moves == final["moves"]
    assert len(final["moves"]) >= cut_plies[-1] + 3, context
    # One TCP connection per session (the first and one after each cut) plus one per REST
    # check of the tracked match after each reconnection; no spare ones.
    assert proxy.accepted == 3 + 2, context
    north = _read(logs["north"])
    assert north.count("waiting for the Arena server at ") == 2, context  # one per cut
    assert north.count("connected to ") == 3, context  # one welcome per session
    assert "done: 1 match(es) ended" in north, context
    south = _read(logs["south"])
    assert "waiting for the Arena server" not in south, context
    assert south.count("connected to ") == 1, context
    # North retried after the first steps of its backoff (0.5 s doubling, drawn from the upper
    # half of each step), not after a long wait: every wait it announced is within them.
    retries = [float(s) for s in re.findall(r"retrying in ([0-9.]+) s", north)]
    assert len(retries) == 2 and all(0 < delay <= 1.0 for delay in retries), (retries, context)


async def test_a_bot_learns_over_rest_of_a_match_that_ended_while_it_was_cut_off(
    live_server: RunningServer, tmp_path: Path
) -> None:
    """South (the test, over REST) resigns while north's `arena bot` is cut off; north exits.

    On its new connection north gets `welcome` and no `match_state` (the match is no longer
    live) and no `match_ended` (it was sent to the dead connection), so only asking the REST
    API tells it the match is over.
    """
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    async with httpx.AsyncClient(base_url=live_server.url, timeout=STEP_TIMEOUT) as http:
        tokens, match_id = await _create_match(http)
        south = {"Authorization": f"Bearer {tokens['south']}"}
        spectator = Spectator(live_server, match_id)
        proxy = CuttableProxy(live_server.port)
        log = tmp_path / "north.log"
        process: subprocess.Popen[str] | None = None

        def report() -> str:
            return (
                f"\nproxy: {proxy.accepted} connection(s) accepted, {proxy.cuts} cut(s); "
                f"spectator: ply {spectator.ply}\n--- north (arena bot) ---\n{_read(log)}"
            )

        async def wait_until(condition: Callable[[], bool], what: str) -> None:
            try:
                async with asyncio.timeout(STEP_TIMEOUT):
                    while not condition():
                        await asyncio.sleep(0.01)
            except TimeoutError:
                pytest.fail(f"timed out after {STEP_TIMEOUT} s waiting for {what}{report()}")

        with log.open("w", encoding="utf-8") as log_file:
            try:
                await proxy.start()
                spectator.start()
                await wait_until(lambda: bool(spectator.messages), "the spectator's match_state")
                command = [exe, "bot", "--server", proxy.url, "--token", tokens["north"]]
                process = subprocess.Popen(
                    [*command, "--bot", "alphabeta:depth=1", "--matches", "1"],
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                await wait_until(lambda: spectator.ply >= 1, "north's first move")
                state = (await http.get(f"/matches/{match_id}")).json()
                body = {"move": state["legal_moves"][0], "expected_seq": state["seq"]}
                played = await http.post(f"/matches/{match_id}/moves", json=body, headers=south)
                assert played.status_code == 200, played.text
                await wait_until(lambda: spectator.ply >= 3, "north's second move")

                # South to move: north sends nothing more. Cut it off, keep it off until the
                # match is over, then let it reconnect.
                proxy.hold()
                assert proxy.cut() == 1, f"north had no open connection{report()}"
                resigned = await http.post(f"/matches/{match_id}/resign", headers=south)
                assert resigned.status_code == 200, resigned.text
                final = resigned.json()
                assert final["status"] == "finished", final
                assert final["result"]["winner"] == 0 and final["result"]["reason"] == "resign"
                proxy.release()

                try:
                    async with asyncio.timeout(STEP_TIMEOUT):
                        await asyncio.to_thread(process.wait)
                except TimeoutError:
                    pytest.fail(f"north did not exit after the match ended{report()}")
            finally:
                if process is not None and process.poll() is None:
                    process.kill()
                    process.wait(timeout=10)
                await proxy.close()
                if spectator.task is not None:
                    spectator.task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await spectator.task

    context = report()
    assert process.returncode == 0, context
    north = _read(log)
    assert north.count("waiting for the Arena server at ") == 1, context
    assert north.count("connected to ") == 2, context  # it reconnected after the end
    assert f"match {match_id} ended while we were disconnected" in north, context
    assert f"match {match_id} won (resign: " in north, context
    assert "done: 1 match(es) ended" in north, context
