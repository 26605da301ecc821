"""Server throughput and latency: N concurrent matches of random-move bots over WebSockets.

    python bench/server.py [--matches 200] [--seconds 10] [--rate 1500] [--mode both]
                           [--game checkers] [--database URL] [--skip-peer]
                           [--memory 10000] [--memory-game tictactoe] [--json]

Measured in one run, with the same load generator and the same message pattern:

1. Arena: `arena serve` in its own process (one uvicorn worker) on a fresh SQLite file (or
   `--database`). The bench registers 2N players, creates N timed matches between pairs of
   them, connects every player over `/ws` and plays random legal moves, each sent with
   `expected_seq` once the player's turn is announced, as a real bot does. A finished match is
   replaced at once by a new one between the same pair (over REST), so N matches stay in play.
   Every move is validated, committed to the database and fanned out to both players before
   the mover's `move_made` arrives: that arrival is the measured round trip.
2. The peer: a bare `websockets` server in its own process that knows nothing of games. It
   keeps the same N pairs and answers each `move` by sending a `move_made` of the same shape
   and size to both players: the same message pattern with no validation, no database, no
   pydantic.

Each is run twice, measured over the same window after a warm-up:
- flat out: every bot answers at once, so N moves are always in flight; this gives the
  throughput (moves/s) and the ratio to the peer. Its round trips are queueing time by
  Little's law (N / throughput), not a latency figure.
- paced: each match moves on its own open-loop schedule (`--rate` moves/s in all, jittered),
  the load of N real bots that think; this gives the round-trip latency at that load.

Printed: moves/s, p50/p99/max round trip, and the CPU each process used in the window (the
load generator shares the machine). Then the memory run: Arena alone, the same N pairs playing
`--memory-game` flat out until `--memory` matches have finished, each finished match read once
over REST (as a results page would); the server's RSS is read after 100 and after all of
them, so what a finished match leaves behind shows as growth.

Targets with 200 matches on SQLite, against the bare-ASGI peer in the same run: CPU per move
<= 2.0x the peer's, flat out and paced; p99 <= 10 ms paced at 1,500 moves/s; RSS after 10,000
finished matches <= RSS after 100 + 50 MB. The flat-out moves/s ratio is printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from local import arena_serve, free_port  # noqa: E402 - bench/ is put on the path above
from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

PACED_RATE = 1_500.0
"""Moves/s offered in all by the paced runs (the load for the p99 target)."""
P99_TARGET_MS = 10.0
CPU_RATIO_TARGET = 2.0
"""Arena's CPU per move over the bare-ASGI peer's, at most, in each mode."""
PEER = "asgi echo"
"""The peer the targets are set against: uvicorn and a bare ASGI app, as Arena runs."""
MEMORY_FIRST = 100
MEMORY_GROWTH_TARGET_MB = 50.0
"""RSS after `--memory` finished matches minus RSS after MEMORY_FIRST, at most."""
CLOCK = {"base_ms": 600_000, "increment_ms": 1_000}
"""Every bench match is timed, so the server keeps and checks both clocks on every move."""

HELLO = json.dumps({"type": "hello", "protocol_version": "1.0", "client": "bench"})


def rss_mb(pid: int) -> float:
    """Return the resident set size of process `pid` in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """Return the user + system CPU seconds process `pid` has used (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


@dataclass
class Stats:
    """Moves and round trips counted while `measuring` is set."""

    measuring: bool = False
    interval: float = 0.0
    """Seconds between the moves of one match when pacing (0: as fast as the replies come)."""
    due: dict[str, float] = field(default_factory=dict)
    """When each match's next move is due, when pacing."""
    moves: int = 0
    rtts: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    ended: int = 0
    server_pid: int = 0
    cpu_start: tuple[float, float] = (0.0, 0.0)
    server_cpu: float = 0.0
    """CPU seconds the server process used in the measured window."""
    client_cpu: float = 0.0
    """CPU seconds the load generator (this process) used in the measured window."""

    def summary(self, seconds: float) -> dict[str, Any]:
        rtts = sorted(self.rtts)

        def pct(p: float) -> float:
            if not rtts:
                return float("nan")
            return rtts[min(len(rtts) - 1, int(p * len(rtts)))] * 1000

        return {
            "moves": self.moves,
            "seconds": seconds,
            "moves_per_s": self.moves / seconds,
            "p50_ms": pct(0.50),
            "p99_ms": pct(0.99),
            "max_ms": rtts[-1] * 1000 if rtts else float("nan"),
            "matches_ended": self.ended,
            "server_cpu_s": self.server_cpu,
            "client_cpu_s": self.client_cpu,
            "server_cpu_us_per_move": self.server_cpu / self.moves * 1e6 if self.moves else 0.0,
            "errors": dict(self.errors),
        }


class Player:
    """One random-move bot on one WebSocket: it moves whenever it is its turn in any match."""

    def __init__(self, stats: Stats, rng: random.Random) -> None:
        self.stats = stats
        self.rng = rng
        self.seats: dict[str, int] = {}
        self.sent: dict[str, float] = {}
        self.ws: ClientConnection | None = None
        self.ready = asyncio.Event()
        self.on_ended: asyncio.Queue[str] | None = None
        self.later: set[asyncio.Future[None]] = set()

    async def run(self, url: str, headers: dict[str, str]) -> None:
        async with connect(url, additional_headers=headers, max_size=None, compression=None) as ws:
            self.ws = ws
            await ws.send(HELLO)
            async for text in ws:
                await self.handle(ws, json.loads(text))

    async def handle(self, ws: ClientConnection, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if kind == "welcome":
            self.ready.set()
            return
        if kind == "error":
            code = msg["code"]
            self.stats.errors[code] = self.stats.errors.get(code, 0) + 1
            return
        match_id = msg.get("match_id")
        if match_id is None:
            return
        if kind == "match_state":
            if msg["status"] != "active":
                return
            self.seats[match_id] = msg["your_seat"]
        elif kind == "move_made":
            if msg["seat"] == self.seats.get(match_id):
                sent = self.sent.pop(match_id, None)
                if sent is not None and self.stats.measuring:
                    self.stats.moves += 1
                    self.stats.rtts.append(time.perf_counter() - sent)
        elif kind == "match_ended":
            if self.seats.pop(match_id, None) == 0 and self.on_ended is not None:
                self.on_ended.put_nowait(match_id)
                self.stats.ended += 1
            self.sent.pop(match_id, None)
            return
        else:
            return
        if msg["to_move"] == self.seats.get(match_id) and msg["legal_moves"]:
            move = self.rng.choice(msg["legal_moves"])
            if not self.stats.interval:
                await self.send(ws, match_id, move, msg["seq"])
                return
            # Open loop: each match keeps its own schedule of moves, `interval` apart on
            # average, whatever the replies' delays (a late reply is caught up at once).
            now = time.perf_counter()
            due = self.stats.due.get(match_id) or now
            self.stats.due[match_id] = due + self.stats.interval * self.rng.uniform(0.5, 1.5)
            asyncio.get_running_loop().call_later(
                max(0.0, due - now), self.send_soon, ws, match_id, move, msg["seq"]
            )

    def send_soon(self, ws: ClientConnection, match_id: str, move: str, seq: int) -> None:
        task = asyncio.ensure_future(self.send(ws, match_id, move, seq))
        self.later.add(task)
        task.add_done_callback(self.later.discard)

    async def send(self, ws: ClientConnection, match_id: str, move: str, seq: int) -> None:
        self.sent[match_id] = time.perf_counter()
        text = {"type": "move", "match_id": match_id, "move": move, "expected_seq": seq}
        with contextlib.suppress(ConnectionClosed):  # the run ended
            await ws.send(json.dumps(text))


async def drive(
    players: list[tuple[Player, str, dict[str, str]]],
    start_matches: Callable[[], Awaitable[None]],
    measure: Measure,
) -> dict[str, Any]:
    """Connect every player, start the matches, and return what `measure` measures then."""
    tasks = [asyncio.create_task(p.run(url, headers)) for p, url, headers in players]
    try:
        await asyncio.wait_for(asyncio.gather(*(p.ready.wait() for p, _, _ in players)), 60)
        await start_matches()
        figures = await measure()
        failed = [task for task in tasks if task.done() and task.exception() is not None]
        if failed:
            raise RuntimeError(f"{len(failed)} players failed") from failed[0].exception()
        return figures
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


Measure = Callable[[], Awaitable[dict[str, Any]]]
"""What `drive` measures once the matches run: a window of moves, or memory."""


def throughput(stats: Stats, warmup: float, seconds: float) -> Measure:
    """Measure moves, round trips and CPU for `seconds` after `warmup` seconds."""

    async def measure() -> dict[str, Any]:
        await asyncio.sleep(warmup)
        # The load generator's own collections (up to 20 ms) would count as the server's
        # latency: the window runs without them (what it allocates is freed by refcounting).
        gc.collect()
        gc.disable()
        stats.measuring = True
        begin = time.perf_counter()
        stats.cpu_start = (cpu_seconds(stats.server_pid), time.process_time())
        await asyncio.sleep(seconds)
        stats.measuring = False
        elapsed = time.perf_counter() - begin
        stats.server_cpu = cpu_seconds(stats.server_pid) - stats.cpu_start[0]
        stats.client_cpu = time.process_time() - stats.cpu_start[1]
        gc.enable()
        return stats.summary(elapsed)

    return measure


def memory(stats: Stats, first: int, last: int) -> Measure:
    """Measure the server's RSS once `first` matches have finished and again after `last`."""

    async def rss_after(finished: int) -> float:
        while stats.ended < finished:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # let the matches' last writes and sends settle
        return rss_mb(stats.server_pid)

    async def measure() -> dict[str, Any]:
        begin = time.perf_counter()
        early = await rss_after(first)
        late = await rss_after(last)
        return {
            "first": first,
            "last": last,
            "rss_first_mb": early,
            "rss_last_mb": late,
            "growth_mb": late - early,
            "seconds": time.perf_counter() - begin,
            "errors": dict(stats.errors),
        }

    return measure


async def bench_arena(
    args: argparse.Namespace, rate: float, memory_game: str | None = None
) -> dict[str, Any]:
    """Run the load against `arena serve` in a subprocess; return the figures.

    With `memory_game`, play that game flat out and measure memory instead (`memory`).
    """
    # Every player connects from this machine and the load generator is one address that
    # registers 2N players and replaces finished matches hundreds of times a minute: lift the
    # per-address connection limits (256 connections, 64 of them WebSockets) as well as the REST
    # rate limits (arena_serve does), which exist for strangers; the WebSocket message limits
    # stay on, their cost is part of every move.
    lifted = {
        "ARENA_WS_MAX_CONNECTIONS_PER_ADDRESS": str(2 * args.matches + 16),
        "ARENA_MAX_CONNECTIONS_PER_ADDRESS": str(4 * args.matches + 64),
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        arena_serve(Path(tmp), lifted, args.database) as (base, process),
    ):
        return await _arena_load(args, base, process.pid, rate, memory_game)


async def _arena_load(
    args: argparse.Namespace, base: str, pid: int, rate: float, memory_game: str | None
) -> dict[str, Any]:
    game = memory_game or args.game
    stats = Stats(interval=args.matches / rate if rate else 0.0)
    rng = random.Random(args.seed)
    limits = httpx.Limits(max_connections=50)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        names = [f"bench{i}{side}" for i in range(args.matches) for side in "ab"]
        tokens: dict[str, str] = {}
        for name in names:
            response = await http.post("/players", json={"name": name})
            response.raise_for_status()
            tokens[name] = response.json()["token"]
        ended: asyncio.Queue[str] = asyncio.Queue()
        pairs: dict[str, tuple[str, str]] = {}
        players: list[tuple[Player, str, dict[str, str]]] = []
        for name in names:
            player = Player(stats, random.Random(rng.random()))
            player.on_ended = ended
            headers = {"Authorization": f"Bearer {tokens[name]}"}
            players.append((player, f"ws://{base.removeprefix('http://')}/ws", headers))

        async def create(a: str, b: str) -> None:
            body = {"game": game, "seats": [a, b], "time_control": CLOCK}
            auth = {"Authorization": f"Bearer {tokens[a]}"}
            response = await http.post("/matches", json=body, headers=auth)
            response.raise_for_status()
            match_id = response.json()["match_id"]
            pairs[match_id] = (a, b)
            # b is challenged (PROTOCOL.md, consent): the match starts once b accepts.
            accepted = await http.post(
                f"/matches/{match_id}/accept", headers={"Authorization": f"Bearer {tokens[b]}"}
            )
            accepted.raise_for_status()

        async def start_matches() -> None:
            pairs_wanted = [(names[2 * i], names[2 * i + 1]) for i in range(args.matches)]
            await asyncio.gather(*(create(a, b) for a, b in pairs_wanted))
            replacer = asyncio.create_task(replace())
            background.add(replacer)

        async def review_and_create(match_id: str, a: str, b: str) -> None:
            # The memory run also reads each finished match once, as a results page or a
            # spectator arriving late would: reading must not bring it back into memory.
            (await http.get(f"/matches/{match_id}")).raise_for_status()
            await create(a, b)

        async def replace_one(match_id: str, a: str, b: str) -> None:
            # An idle keep-alive connection the server closes as it is reused fails the
            # request: try again on a fresh one, and count what still fails.
            for attempt in range(3):
                try:
                    if memory_game:
                        await review_and_create(match_id, a, b)
                    else:
                        await create(a, b)
                    return
                except httpx.TransportError as error:
                    if attempt == 2:
                        name = f"replacement: {type(error).__name__}"
                        stats.errors[name] = stats.errors.get(name, 0) + 1

        async def replace() -> None:
            while True:
                match_id = await ended.get()
                a, b = pairs.pop(match_id)
                task = asyncio.create_task(replace_one(match_id, a, b))
                background.add(task)
                task.add_done_callback(background.discard)

        background: set[asyncio.Task[None]] = set()
        stats.server_pid = pid
        measure = (
            memory(stats, MEMORY_FIRST, args.memory)
            if memory_game
            else throughput(stats, args.warmup, args.seconds)
        )
        figures = await drive(players, start_matches, measure)
        for task in background:
            task.cancel()
    return figures


# -- the peers: the same message pattern with nothing behind it ----------------------------------

ECHO_COMMON = r"""
import json

LEGAL = ["9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"]
POSITION = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
CLOCKS = {"remaining_ms": [600000, 600000], "running": 0, "server_time_ms": 0}
pairs = {}   # match id -> what sends to seat 0 and to seat 1
seq = {}

def seat_of(path):
    player = path.rsplit("/", 1)[1]
    return player, f"m{int(player[:-1])}", "ab".index(player[-1])

def welcome(player):
    return json.dumps({"type": "welcome", "protocol_version": "1.0", "player": player,
                       "server_time_ms": 0})

def match_states(match_id):
    # Both seats are connected: the match starts, each seat told its own seat.
    seq[match_id] = 0
    return [json.dumps({"type": "match_state", "match_id": match_id, "status": "active",
                        "your_seat": s, "to_move": 0, "legal_moves": LEGAL, "seq": 0,
                        "position": POSITION, "moves": []}) for s in (0, 1)]

def move_made(match_id, seat, text):
    # What Arena sends for a move, minus the game: a move_made of the same size to both.
    msg = json.loads(text)
    if msg.get("type") != "move":
        return None
    seq[match_id] += 1
    n = seq[match_id]
    return json.dumps({"type": "move_made", "match_id": match_id, "seq": n, "ply": n,
                       "seat": seat, "move": msg["move"], "position": POSITION,
                       "to_move": 1 - seat, "legal_moves": LEGAL,
                       "clocks": {**CLOCKS, "running": 1 - seat}})
"""

ECHO_SERVER = (
    ECHO_COMMON
    + r"""
import asyncio, sys
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

async def handler(ws):
    player, match_id, seat = seat_of(ws.request.path)
    seats = pairs.setdefault(match_id, [None, None])
    seats[seat] = ws
    await ws.recv()  # hello
    await ws.send(welcome(player))
    if None not in seats:
        for conn, text in zip(seats, match_states(match_id)):
            await conn.send(text)
    try:
        async for text in ws:
            out = move_made(match_id, seat, text)
            if out is not None:
                for conn in pairs[match_id]:
                    await conn.send(out)
    except ConnectionClosed:
        pass

async def main(port):
    async with serve(handler, "127.0.0.1", port, max_size=None, compression=None):
        print("ready", flush=True)
        await asyncio.get_running_loop().create_future()

try:
    import uvloop
    uvloop.run(main(int(sys.argv[1])))
except ImportError:
    asyncio.run(main(int(sys.argv[1])))
"""
)

ASGI_ECHO_SERVER = (
    ECHO_COMMON
    + r"""
import sys
import uvicorn

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            kind = message["type"].rsplit(".", 1)[1]
            await send({"type": f"lifespan.{kind}.complete"})
            if kind == "shutdown":
                return
    player, match_id, seat = seat_of(scope["path"])
    await receive()  # connect
    await send({"type": "websocket.accept"})
    seats = pairs.setdefault(match_id, [None, None])
    seats[seat] = send
    await receive()  # hello
    await send({"type": "websocket.send", "text": welcome(player)})
    if None not in seats:
        for out, text in zip(seats, match_states(match_id)):
            await out({"type": "websocket.send", "text": text})
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        text = move_made(match_id, seat, message["text"])
        if text is not None:
            for out in pairs[match_id]:
                await out({"type": "websocket.send", "text": text})

class Ready(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets)
        print("ready", flush=True)

# uvicorn as `arena serve` runs it: uvloop, its default WebSocket protocol, h11, no deflate.
Ready(uvicorn.Config(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
                     http="h11", ws_per_message_deflate=False)).run()
"""
)


async def bench_peer(
    args: argparse.Namespace, rate: float, script: str = ECHO_SERVER
) -> dict[str, Any]:
    """Run the same load against a bare websockets server (or `script`) in a subprocess."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", script, str(port)], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 30)
        if line.strip() != b"ready":
            raise RuntimeError("the echo server did not start")
        stats = Stats(interval=args.matches / rate if rate else 0.0)
        rng = random.Random(args.seed)
        players: list[tuple[Player, str, dict[str, str]]] = [
            (Player(stats, random.Random(rng.random())), f"ws://127.0.0.1:{port}/{i}{side}", {})
            for i in range(args.matches)
            for side in "ab"
        ]

        async def nothing() -> None:
            return None

        stats.server_pid = process.pid
        return await drive(players, nothing, throughput(stats, args.warmup, args.seconds))
    finally:
        process.kill()
        process.wait()


def run(main: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    """Run `main` on uvloop when it is installed (as uvicorn does), else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def show(label: str, figures: dict[str, Any]) -> None:
    print(
        f"  {label:<14} {figures['moves_per_s']:>7,.0f} moves/s  p50 {figures['p50_ms']:6.2f} ms"
        f"  p99 {figures['p99_ms']:6.2f} ms  max {figures['max_ms']:7.2f} ms"
        f"  cpu: server {figures['server_cpu_s']:4.1f} s"
        f" ({figures['server_cpu_us_per_move']:.0f} us/move), load {figures['client_cpu_s']:4.1f} s"
    )
    if figures["errors"]:
        print(f"                 errors: {figures['errors']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="concurrent matches (200)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window (10 s)")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured start (3 s)")
    parser.add_argument(
        "--rate", type=float, default=PACED_RATE, help="offered moves/s of the paced runs (1,500)"
    )
    parser.add_argument(
        "--mode",
        choices=("both", "flat", "paced", "memory"),
        default="both",
        help="which throughput runs (both; memory: none, only the memory run)",
    )
    parser.add_argument("--game", default="checkers", help="game of the matches (checkers)")
    parser.add_argument("--database", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random movers")
    parser.add_argument("--skip-peer", action="store_true", help="measure Arena only")
    parser.add_argument(
        "--memory",
        type=int,
        default=10_000,
        help="finished matches of the memory run (10,000; 0 skips it)",
    )
    parser.add_argument(
        "--memory-game", default="tictactoe", help="game of the memory run (tictactoe: short)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()

    info = machine_info()
    print(f"Server bench: {args.matches} concurrent {args.game} matches of random movers,")
    print(f"{args.seconds:g} s measured after {args.warmup:g} s warm-up, one uvicorn worker;")
    print(f"flat out, then paced at {args.rate:,.0f} moves/s offered")
    print(describe(info))
    result: dict[str, Any] = {"machine": info, "args": vars(args)}
    runs: list[
        tuple[str, Callable[[argparse.Namespace, float], Coroutine[Any, Any, dict[str, Any]]]]
    ]
    runs = [("arena", bench_arena)]
    if not args.skip_peer:
        runs.append(("echo", bench_peer))
        runs.append(("asgi echo", functools.partial(bench_peer, script=ASGI_ECHO_SERVER)))
    for name, bench in runs:
        modes = [("flat out", 0.0), ("paced", args.rate)]
        for mode, rate in [m for m in modes if args.mode in ("both", m[0].split()[0])]:
            figures = run(bench(args, rate))
            result[f"{name} {mode}"] = figures
            show(f"{name} {mode}", figures)
    verdict = []
    flat, peer_flat = result.get("arena flat out"), result.get(f"{PEER} flat out")
    if flat is not None and peer_flat is not None:
        ratio = flat["moves_per_s"] / peer_flat["moves_per_s"]
        result["ratio"] = ratio
        verdict.append(f"moves/s flat out, arena/{PEER} {ratio:.2f}")
    for mode in ("flat out", "paced"):
        ours, peer = result.get(f"arena {mode}"), result.get(f"{PEER} {mode}")
        if ours is not None and peer is not None and peer["server_cpu_us_per_move"]:
            cpu = ours["server_cpu_us_per_move"] / peer["server_cpu_us_per_move"]
            result[f"cpu ratio {mode}"] = cpu
            verdict.append(
                f"CPU per move {mode}, arena/{PEER} {cpu:.2f} (target <= {CPU_RATIO_TARGET}): "
                + ("met" if cpu <= CPU_RATIO_TARGET else "NOT met")
            )
    paced = result.get("arena paced")
    if paced is not None:
        verdict.append(
            f"p99 paced {paced['p99_ms']:.1f} ms at {paced['moves_per_s']:,.0f} moves/s "
            f"(target <= {P99_TARGET_MS:g} ms): "
            + ("met" if paced["p99_ms"] <= P99_TARGET_MS else "NOT met")
        )
    if args.memory:
        mem = run(bench_arena(args, 0.0, memory_game=args.memory_game))
        result["arena memory"] = mem
        print(
            f"  arena memory   RSS {mem['rss_first_mb']:.1f} MB after {mem['first']:,} finished "
            f"{args.memory_game} matches, {mem['rss_last_mb']:.1f} MB after {mem['last']:,} "
            f"({mem['seconds']:.0f} s)"
        )
        verdict.append(
            f"RSS growth {mem['growth_mb']:+.1f} MB from {mem['first']:,} to {mem['last']:,} "
            f"finished matches (target <= {MEMORY_GROWTH_TARGET_MB:g} MB): "
            + ("met" if mem["growth_mb"] <= MEMORY_GROWTH_TARGET_MB else "NOT met")
        )
    for line in verdict:
        print("  " + line)
    if args.json:
        print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
