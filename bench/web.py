"""Web pages: the server's time to render the lobby and a match page, and a move's way to the
spectator page in a real browser.

    python bench/web.py [--matches 200] [--renders 200] [--moves 100] [--skip-browser] [--json]

One run of `arena serve` (one uvicorn worker) on a fresh SQLite file. The bench registers 2N
players and starts N timed checkers matches between pairs of them (the REST rate limits lifted,
as bench/server.py does), then plays `--plies` random moves over REST in every fourth match so
the pages have moves to show. Then:

1. Render time. Over one kept-alive httpx connection, sequentially, `--renders` rounds of five
   requests: `/health` (the baseline: a trivial route), the lobby `/` and a match page
   `/matches/{id}` with `Accept: text/html`, and the data of each (`GET /matches?status=active
   &limit=20`, the lobby's live list, and `GET /matches/{id}`, both JSON). A request's server
   time is its round trip less the median round trip of `/health` in the same run (the client's
   and the connection's share); the server sends no `Server-Timing`. The match pages are those
   with moves. The peer is the data: page time over data time shows what the HTML costs.
2. Live latency. Chromium (Debian's, by path, as tests/web does) opens the spectator page of
   one match; the bench plays `--moves` moves over REST one at a time, each once the page shows
   the last. In the page, a MutationObserver on the move list (`#moves`) stamps each new item
   when it enters the DOM and at the next animation frame (the frame that paints it), and a
   listener added to the page's WebSocket before the page's own (an init script) stamps each
   `move_made` frame as it reaches the page: browser epoch times (`performance.timeOrigin +
   performance.now()`), compared with the bench's `time.time()` when the REST answer (the
   mover's acknowledgement) arrived, on the same machine. The peer is the WebSocket frame: the
   page's drawing cost over the network delivery. A match that ends is replaced by a new one
   and the page opens it.

Targets: lobby and match page rendered in <= 20 ms with 200 live matches; a move
shown on an open spectator page <= 50 ms after the mover's acknowledgement (p95 over 100 moves).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from local import arena_serve  # noqa: E402 - bench/ is put on the path above
from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

RENDER_TARGET_MS = 20.0
LIVE_TARGET_MS = 50.0
"""p95 of a move's way from the mover's acknowledgement to the page showing it, at most."""
CLOCK = {"base_ms": 600_000, "increment_ms": 1_000}
GAME = "checkers"
HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
JSON_ACCEPT = {"Accept": "application/json"}

WATCH_SOCKET = """
(() => {
  // Stamp each move_made as it reaches the page, before the page's own listener sees it.
  window.__benchFrames = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const now = performance.timeOrigin + performance.now();
        const message = JSON.parse(event.data);
        if (message.type === "move_made") window.__benchFrames.push([message.ply, now]);
      });
    }
  };
})();
"""

WATCH_MOVES = """
() => {
  // Stamp each new item of the move list: in the DOM, and at the next animation frame.
  window.__benchShown = [];
  const list = document.getElementById("moves");
  new MutationObserver((records) => {
    const now = performance.timeOrigin + performance.now();
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType !== Node.ELEMENT_NODE || !node.dataset.ply) continue;
        const entry = [Number(node.dataset.ply), now, null];
        window.__benchShown.push(entry);
        requestAnimationFrame(() => { entry[2] = performance.timeOrigin + performance.now(); });
      }
    }
  }).observe(list, { childList: true });
}
"""


def find_chromium() -> str | None:
    """Return the Chromium to drive: ARENA_CHROMIUM, else the first on PATH (as tests/web)."""
    named = os.environ.get("ARENA_CHROMIUM")
    if named:
        return named if Path(named).is_file() else shutil.which(named)
    return shutil.which("chromium") or shutil.which("chromium-browser")


def percentiles(values_ms: list[float]) -> dict[str, float]:
    """Return n, p50, p95 and max of `values_ms` (nearest rank)."""
    ordered = sorted(values_ms)
    if not ordered:
        return {"n": 0, "p50_ms": float("nan"), "p95_ms": float("nan"), "max_ms": float("nan")}

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {"n": len(ordered), "p50_ms": pct(0.50), "p95_ms": pct(0.95), "max_ms": ordered[-1]}


def cpu_seconds(pid: int) -> float:
    """Return the user + system CPU seconds process `pid` has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def arena_server() -> Iterator[tuple[str, int]]:
    """Run `arena serve` on a fresh SQLite file; yield its base URL and process id."""
    with tempfile.TemporaryDirectory() as tmp, arena_serve(Path(tmp)) as (base, process):
        yield base, process.pid


@dataclass
class Match:
    """A live match of the bench and what it needs to play it over REST."""

    match_id: str
    seats: tuple[str, str]
    to_move: int | None
    legal_moves: list[str]
    plies: int = 0


class Players:
    """The bench's players and their tokens, and the matches they play over REST."""

    def __init__(self, http: httpx.Client, rng: random.Random) -> None:
        self.http = http
        self.rng = rng
        self.tokens: dict[str, str] = {}

    def register(self, name: str) -> None:
        response = self.http.post("/players", json={"name": name})
        response.raise_for_status()
        self.tokens[name] = response.json()["token"]

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def create(self, a: str, b: str) -> Match:
        """Start a timed match of `a` (seat 0) against `b`, who accepts the challenge."""
        body = {"game": GAME, "seats": [a, b], "time_control": CLOCK}
        response = self.http.post("/matches", json=body, headers=self.auth(a))
        response.raise_for_status()
        match_id = response.json()["match_id"]
        accepted = self.http.post(f"/matches/{match_id}/accept", headers=self.auth(b))
        accepted.raise_for_status()
        state = accepted.json()
        return Match(match_id, (a, b), state["to_move"], list(state["legal_moves"]))

    def move(self, match: Match) -> float:
        """Play a random legal move for the seat to move; return when the answer arrived."""
        assert match.to_move is not None
        mover = match.seats[match.to_move]
        body = {"move": self.rng.choice(match.legal_moves)}
        response = self.http.post(
            f"/matches/{match.match_id}/moves", json=body, headers=self.auth(mover)
        )
        acknowledged = time.time()
        response.raise_for_status()
        made = response.json()
        match.plies = made["ply"]
        match.legal_moves = list(made["legal_moves"])
        match.to_move = made["to_move"] if match.legal_moves else None
        return acknowledged


def is_live(match: Match) -> bool:
    return match.to_move is not None and bool(match.legal_moves)


def set_up(players: Players, count: int, plies: int) -> list[Match]:
    """Register 2 `count` players, start `count` matches, play `plies` moves in every fourth."""
    names = [f"web{i}{side}" for i in range(count) for side in "ab"]
    for name in names:
        players.register(name)
    matches = [players.create(names[2 * i], names[2 * i + 1]) for i in range(count)]
    for match in matches[::4]:
        while match.plies < plies and is_live(match):
            players.move(match)
    ended = [m for m in matches if not is_live(m)]
    for match in ended:  # keep `count` live matches
        matches[matches.index(match)] = players.create(*match.seats)
    return matches


def bench_render(http: httpx.Client, pid: int, matches: list[Match], rounds: int) -> dict[str, Any]:
    """Time the pages and their data, interleaved over one kept-alive connection; then the
    server's CPU per request of each kind (`rounds` of it in a row), which other work on the
    machine does not lengthen as it does the round trips."""
    shown = [m for m in matches if m.plies] or matches
    kinds = {
        "health": ("/health", JSON_ACCEPT),
        "lobby page": ("/", HTML),
        "lobby data": ("/matches?status=active&limit=20", JSON_ACCEPT),
        "match page": ("/matches/{id}", HTML),
        "match data": ("/matches/{id}", JSON_ACCEPT),
    }
    trips: dict[str, list[float]] = {kind: [] for kind in kinds}
    for warm in range(2):  # templates compiled, caches warm: not measured
        for path, headers in kinds.values():
            http.get(path.format(id=shown[warm % len(shown)].match_id), headers=headers)
    # The bench's own collections would count as the server's time.
    gc.collect()
    gc.disable()
    try:
        for i in range(rounds):
            match_id = shown[i % len(shown)].match_id
            for kind, (path, headers) in kinds.items():
                begin = time.perf_counter()
                response = http.get(path.format(id=match_id), headers=headers)
                elapsed = (time.perf_counter() - begin) * 1000
                response.raise_for_status()
                kind_of = response.headers["content-type"]
                if "page" in kind and not kind_of.startswith("text/html"):
                    raise RuntimeError(f"{kind}: not a page ({kind_of})")
                trips[kind].append(elapsed)
        cpu_ms: dict[str, float] = {}
        for kind, (path, headers) in kinds.items():
            begin_cpu = cpu_seconds(pid)
            for i in range(rounds):
                http.get(path.format(id=shown[i % len(shown)].match_id), headers=headers)
            cpu_ms[kind] = (cpu_seconds(pid) - begin_cpu) * 1000 / rounds
    finally:
        gc.enable()
    baseline = statistics.median(trips["health"])
    figures: dict[str, Any] = {"baseline_ms": baseline, "pages_with_moves": len(shown)}
    for kind, values in trips.items():
        figures[kind] = {
            "round_trip": percentiles(values),
            "server": percentiles([max(0.0, v - baseline) for v in values]),
            "cpu_ms": cpu_ms[kind],
        }
    for what in ("lobby", "match"):
        page = figures[f"{what} page"]["server"]["p50_ms"]
        data = figures[f"{what} data"]["server"]["p50_ms"]
        figures[f"{what} ratio"] = page / data if data else float("nan")
        figures[f"{what} cpu ratio"] = cpu_ms[f"{what} page"] / cpu_ms[f"{what} data"]
    return figures


def bench_live(
    base: str, players: Players, pair: tuple[str, str], moves: int, chromium: str
) -> dict[str, Any]:
    """Play `moves` moves one at a time while a browser watches; return the delays."""
    from playwright.sync_api import sync_playwright

    acks: list[tuple[str, int, float]] = []
    frames: dict[tuple[str, int], float] = {}
    dom: dict[tuple[str, int], float] = {}
    painted: dict[tuple[str, int], float] = {}
    offsets: list[float] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page()
            page.add_init_script(WATCH_SOCKET)

            def collect(match_id: str) -> None:
                for ply, at in page.evaluate("window.__benchFrames"):
                    frames[(match_id, ply)] = at
                for ply, at, frame in page.evaluate("window.__benchShown"):
                    dom[(match_id, ply)] = at
                    if frame is not None:
                        painted[(match_id, ply)] = frame

            def open_page(match: Match) -> None:
                page.goto(f"{base}/matches/{match.match_id}")
                page.wait_for_function(
                    "() => document.getElementById('connection').textContent === 'Live.'"
                )
                page.evaluate(WATCH_MOVES)
                # Both clocks are this machine's: check that the browser's epoch agrees.
                before = time.time()
                at = page.evaluate("performance.timeOrigin + performance.now()")
                after = time.time()
                offsets.append(at - (before + after) / 2 * 1000)

            match = players.create(*pair)
            open_page(match)
            for _ in range(moves):
                if not is_live(match):
                    page.wait_for_timeout(100)
                    collect(match.match_id)
                    match = players.create(*pair)
                    open_page(match)
                acknowledged = players.move(match)
                acks.append((match.match_id, match.plies, acknowledged * 1000))
                page.wait_for_function(
                    "(ply) => window.__benchShown.some((e) => e[0] === ply && e[2] !== null)",
                    arg=match.plies,
                )
            collect(match.match_id)
        finally:
            browser.close()
    delays: dict[str, list[float]] = {"frame": [], "dom": [], "painted": [], "drawing": []}
    for match_id, ply, at in acks:
        key = (match_id, ply)
        for kind, stamps in (("frame", frames), ("dom", dom), ("painted", painted)):
            if key in stamps:
                delays[kind].append(stamps[key] - at)
        if key in frames and key in painted:
            delays["drawing"].append(painted[key] - frames[key])
    return {
        "moves": len(acks),
        "matches": len({m for m, _, _ in acks}),
        "clock_offset_ms": max(offsets, key=abs),
        "websocket frame": percentiles(delays["frame"]),
        "in the DOM": percentiles(delays["dom"]),
        "painted": percentiles(delays["painted"]),
        "page's own part": percentiles(delays["drawing"]),
    }


def show(label: str, figures: dict[str, float], extra: str = "") -> None:
    print(
        f"  {label:<16} p50 {figures['p50_ms']:6.2f} ms  p95 {figures['p95_ms']:6.2f} ms"
        f"  max {figures['max_ms']:7.2f} ms  (n={figures['n']}){extra}"
    )


def verdict(label: str, value: float, target: float) -> str:
    return f"{label} {value:.1f} ms (target <= {target:g} ms): " + (
        "met" if value <= target else "NOT met"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="live matches (200)")
    parser.add_argument("--renders", type=int, default=200, help="requests of each kind (200)")
    parser.add_argument("--moves", type=int, default=100, help="moves the browser watches (100)")
    parser.add_argument(
        "--plies", type=int, default=20, help="moves played in every fourth match first (20)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the random moves")
    parser.add_argument("--skip-browser", action="store_true", help="measure render times only")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()

    chromium = None if args.skip_browser else find_chromium()
    if not args.skip_browser and chromium is None:
        print(
            "No Chromium found (ARENA_CHROMIUM, or `chromium` on PATH): the live latency is "
            "not measured, its target has no verdict."
        )
    info = machine_info()
    print(f"Web bench: {args.matches} live {GAME} matches on SQLite, one uvicorn worker;")
    print(f"{args.renders} sequential requests of each kind, {args.moves} moves watched")
    print(describe(info))
    # Other work on the machine lengthens round trips (not the server's CPU per request).
    print(f"  load average before: {os.getloadavg()[0]:.2f} (1 min)")
    result: dict[str, Any] = {"machine": info, "args": vars(args), "load": [os.getloadavg()[0]]}
    verdicts: list[str] = []
    with arena_server() as (base, pid), httpx.Client(base_url=base, timeout=60) as http:
        players = Players(http, random.Random(args.seed))
        began = time.perf_counter()
        matches = set_up(players, args.matches, args.plies)
        print(f"  set-up: {len(matches)} live matches in {time.perf_counter() - began:.1f} s")
        render = bench_render(http, pid, matches, args.renders)
        result["render"] = render
        print(f"  render, server time (round trip less /health's {render['baseline_ms']:.2f} ms)")
        for kind in ("health", "lobby page", "lobby data", "match page", "match data"):
            cpu = f"  server CPU {render[kind]['cpu_ms']:.2f} ms/request"
            show(kind, render[kind]["server"], cpu)
        print("  render, round trip")
        for kind in ("lobby page", "match page"):
            show(kind, render[kind]["round_trip"])
        for what in ("lobby", "match"):
            print(
                f"  {what} page over its data: {render[f'{what} ratio']:.2f}x server time"
                f" (p50), {render[f'{what} cpu ratio']:.2f}x server CPU"
            )
            verdicts.append(
                verdict(
                    f"{what} page server time p95",
                    render[f"{what} page"]["server"]["p95_ms"],
                    RENDER_TARGET_MS,
                )
            )
        if chromium is not None:
            live = bench_live(base, players, matches[1].seats, args.moves, chromium)
            result["live"] = live
            print(
                f"  live: {live['moves']} moves in {live['matches']} matches, from the "
                f"mover's acknowledgement (browser clock offset "
                f"{live['clock_offset_ms']:+.2f} ms)"
            )
            for kind in ("websocket frame", "in the DOM", "painted"):
                show(kind, live[kind])
            show("page's own part", live["page's own part"], "  (painted less frame)")
            # The frame often arrives before the REST answer (the server publishes, then
            # answers), so a ratio of the two delays is noise: compare p95s, with the frame's
            # delay from the acknowledgement counted from 1 ms at least.
            frame = max(1.0, live["websocket frame"]["p95_ms"])
            ratio = live["painted"]["p95_ms"] / frame
            result["live ratio"] = ratio
            print(f"  painted over websocket frame (p95, frame >= 1 ms): {ratio:.2f}x")
            verdicts.append(
                verdict("move shown on the page p95", live["painted"]["p95_ms"], LIVE_TARGET_MS)
            )
    result["load"].append(os.getloadavg()[0])
    print(f"  load average after: {result['load'][1]:.2f} (1 min)")
    for line in verdicts:
        print("  " + line)
    if args.json:
        print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
