"""Scale-out: several server processes and workers on one PostgreSQL and one Redis.

    python bench/scale.py [--database URL] [--redis URL] [--parts moves,tournament,takeover]
                          [--matches 200] [--seconds 10] [--rate 1500] [--workers 1,2,4]
                          [--kills 10] [--json]

Every topology is started by `arena cluster`'s library (cli/cluster_topology.py) on the
database and Redis given (or ARENA_DATABASE_URL / ARENA_REDIS_URL; the bench says what it skips
without them). Nothing is deleted: each run registers players with names of its own.

1. Moves: the load of bench/server.py (N concurrent timed checkers matches of random movers on
   WebSockets, a finished match replaced at once), flat out (throughput) and paced at --rate
   moves/s offered (latency), against
   - 1 server without Redis (not clustered: today's single process, on PostgreSQL);
   - 1 server, clustered (it publishes every event on the bus, nobody else listens);
   - 2 servers, "affine": both players of a match and its creation on one server, the matches
     spread evenly (the best case: what a proxy sticky by match would give);
   - 2 servers, "split": the two players of each match on different servers, the match created
     on the first's (every move of the second is forwarded to the owner and every event crosses
     Redis: a proxy that places connections blindly gives this for half the matches).
   Clients connect to the servers directly (the proxy's copying would be CPU of its own).
   Printed: moves/s, p50/p99/max round trip, and the CPU of each side in the window: all
   server processes together, their PostgreSQL backends, the load generator (this process),
   and moves per server CPU-second (the scaling figure on a machine whose CPUs the load
   generator shares).
2. Tournament games/s on workers: one server (ARENA_ROLE=server) and W `arena worker`
   processes for each W of --workers; a checkers round robin of alpha-beta house bots started
   over REST, timed from the start to `finished`; the workers' CPU in that time.
3. Takeover: two servers; a match created on one (its owner), one move played there, then the
   owner SIGKILLed; the time from the kill until the other server accepts the next move over
   REST (it answers UNAVAILABLE meanwhile, or takes the match over when the lease has expired).
   --kills times (alternating victims, the killed server started again in between): p50 and
   max, against the documented bound lease_ttl + heartbeat.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

BENCH = Path(__file__).resolve().parent
REPO_ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from cli.cluster_member import ClusterError  # noqa: E402
from cli.cluster_services import check_services  # noqa: E402
from cli.cluster_topology import Cluster, ClusterSpec  # noqa: E402


def _load_server_bench() -> Any:
    """bench/server.py as a module (its name would clash with the `server` package)."""
    spec = importlib.util.spec_from_file_location("bench_server", BENCH / "server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_server"] = module
    spec.loader.exec_module(module)
    return module


load = _load_server_bench()
cpu_seconds: Callable[[int], float] = load.cpu_seconds

LIFTED = {
    **{
        f"ARENA_RATE_{name}": "1000000/minute"
        for name in (
            "REGISTRATIONS_PER_ADDRESS",
            "MATCHES_PER_PLAYER",
            "MATCHES_PER_ADDRESS",
            "TOURNAMENTS_PER_PLAYER",
            "TOURNAMENTS_PER_ADDRESS",
        )
    },
}
"""The load is one address registering hundreds of players and replacing finished matches
hundreds of times a minute: the REST limits for strangers are lifted (as bench/server.py does);
the WebSocket message limits stay on."""
TAKEOVER_OPENING = ("11-15", "23-19")
"""Checkers: the owner's last move before the kill (Black), and the move the survivor is asked
to accept after it (White)."""


def available(module: str) -> bool:
    """True if this build has `module`."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def tree_cpu(pid: int) -> float:
    """CPU seconds of process `pid` and of its children still running (Linux /proc)."""
    total = cpu_seconds(pid)
    for child in _children(pid):
        total += tree_cpu(child)
    return total


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


class PostgresBackends:
    """The CPU of the PostgreSQL backends serving one database (PostgreSQL on this machine)."""

    def __init__(self, database_url: str) -> None:
        self.url = database_url

    async def pids(self) -> list[int]:
        from sqlalchemy import text
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(self.url)
        try:
            async with engine.connect() as connection:
                rows = await connection.execute(
                    text(
                        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                        "AND pid <> pg_backend_pid()"
                    )
                )
                return [int(row[0]) for row in rows]
        finally:
            await engine.dispose()

    async def cpu(self) -> dict[int, float]:
        """CPU seconds so far of each backend (those /proc shows: PostgreSQL runs here)."""
        return {pid: cpu_seconds(pid) for pid in await self.pids() if Path(f"/proc/{pid}").exists()}


def window_cpu(start: dict[int, float], end: dict[int, float]) -> float:
    """CPU used between two readings by processes alive at the end (new ones from zero)."""
    return sum(cpu - start.get(pid, 0.0) for pid, cpu in end.items() if not math.isnan(cpu))


# -- 1. moves -----------------------------------------------------------------------------------


async def moves_run(
    cluster: Cluster, args: argparse.Namespace, placement: str, rate: float, tag: str
) -> dict[str, Any]:
    """Play the load on `cluster`'s servers with `placement`; return the window's figures."""
    servers = cluster.servers
    stats = load.Stats(interval=args.matches / rate if rate else 0.0)
    rng = random.Random(args.seed)
    names = [f"s{tag}{i}{side}" for i in range(args.matches) for side in "ab"]

    def home(index: int, side: str) -> int:
        """The server a player connects to (and the first of a pair creates its matches on)."""
        if placement == "split":
            return "ab".index(side) % len(servers)
        return index % len(servers)

    # uvicorn closes a connection idle for 5 s; a request sent on it just then fails. Under
    # load, connecting 2N WebSockets can leave the pool idle that long: drop them sooner.
    limits = httpx.Limits(max_connections=50, keepalive_expiry=2.0)
    clients = {
        i: httpx.AsyncClient(base_url=s.url or "", timeout=60, limits=limits)
        for i, s in enumerate(servers)
    }
    tokens: dict[str, str] = {}
    try:
        registered = await asyncio.gather(
            *(
                clients[home(i // 2, name[-1])].post("/players", json={"name": name})
                for i, name in enumerate(names)
            )
        )
        for name, response in zip(names, registered, strict=True):
            response.raise_for_status()
            tokens[name] = response.json()["token"]
        ended: asyncio.Queue[str] = asyncio.Queue()
        pairs: dict[str, tuple[int, str, str]] = {}
        players = []
        for i, name in enumerate(names):
            player = load.Player(stats, random.Random(rng.random()))
            player.on_ended = ended
            url = (servers[home(i // 2, name[-1])].url or "").replace("http://", "ws://")
            players.append((player, f"{url}/ws", {"Authorization": f"Bearer {tokens[name]}"}))

        async def create(index: int, a: str, b: str) -> None:
            http = clients[home(index, "a")]
            body = {"game": args.game, "seats": [a, b], "time_control": load.CLOCK}
            response = await http.post(
                "/matches", json=body, headers={"Authorization": f"Bearer {tokens[a]}"}
            )
            response.raise_for_status()
            match_id = response.json()["match_id"]
            pairs[match_id] = (index, a, b)
            accepted = await http.post(
                f"/matches/{match_id}/accept", headers={"Authorization": f"Bearer {tokens[b]}"}
            )
            accepted.raise_for_status()

        background: set[asyncio.Task[None]] = set()

        async def replace() -> None:
            while True:
                match_id = await ended.get()
                task = asyncio.create_task(create(*pairs.pop(match_id)))
                background.add(task)
                task.add_done_callback(background.discard)

        async def start_matches() -> None:
            await asyncio.gather(
                *(create(i, names[2 * i], names[2 * i + 1]) for i in range(args.matches))
            )
            background.add(asyncio.create_task(replace()))

        postgres = PostgresBackends(cluster.spec.database_url)

        async def measure() -> dict[str, Any]:
            await asyncio.sleep(args.warmup)
            import gc

            gc.collect()
            gc.disable()
            pids = [s.pid for s in servers]
            server_start = [tree_cpu(pid) for pid in pids]
            pg_start = await postgres.cpu()
            own_start = time.process_time()
            stats.measuring = True
            begin = time.perf_counter()
            await asyncio.sleep(args.seconds)
            stats.measuring = False
            elapsed = time.perf_counter() - begin
            own = time.process_time() - own_start
            per_server = [tree_cpu(pid) - s for pid, s in zip(pids, server_start, strict=True)]
            pg = window_cpu(pg_start, await postgres.cpu())
            gc.enable()
            figures: dict[str, Any] = stats.summary(elapsed)
            figures["server_cpu_s"] = sum(per_server)
            figures["server_cpu_each_s"] = per_server
            figures["client_cpu_s"] = own
            figures["postgres_cpu_s"] = pg
            figures["server_rss_mb_each"] = [load.rss_mb(pid) for pid in pids]
            moves = figures["moves"]
            figures["server_cpu_us_per_move"] = sum(per_server) / moves * 1e6 if moves else 0.0
            figures["postgres_cpu_us_per_move"] = pg / moves * 1e6 if moves else 0.0
            figures["moves_per_server_cpu_s"] = moves / sum(per_server) if per_server else 0.0
            return figures

        try:
            return dict(await load.drive(players, start_matches, measure))
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
    finally:
        for http in clients.values():
            await http.aclose()


def show_moves(label: str, f: dict[str, Any]) -> None:
    each = " + ".join(f"{c:.1f}" for c in f["server_cpu_each_s"])
    print(
        f"  {label:<28} {f['moves_per_s']:>7,.0f} moves/s  p50 {f['p50_ms']:6.2f} ms"
        f"  p99 {f['p99_ms']:7.2f} ms  max {f['max_ms']:7.1f} ms\n"
        f"  {'':<28} cpu: servers {each} s ({f['server_cpu_us_per_move']:.0f} us/move,"
        f" {f['moves_per_server_cpu_s']:,.0f} moves per server CPU-s),"
        f" postgres {f['postgres_cpu_s']:.1f} s ({f['postgres_cpu_us_per_move']:.0f} us/move),"
        f" load {f['client_cpu_s']:.1f} s; RSS "
        + " + ".join(f"{mb:.0f}" for mb in f["server_rss_mb_each"])
        + " MB"
    )
    if f["errors"]:
        print(f"  {'':<28} errors: {f['errors']}")


def bench_moves(args: argparse.Namespace, result: dict[str, Any]) -> None:
    # The baseline: one server that is not clustered (no Redis), today's single process on
    # PostgreSQL; then one- and two-server clusters.
    runs = [
        ("1 server, no Redis", 1, "affine", {"ARENA_REDIS_URL": ""}),
        ("1 server", 1, "affine", {}),
        ("2 servers, affine", 2, "affine", {}),
    ]
    if available("server.cluster.bus"):
        runs.append(("2 servers, split", 2, "split", {}))
    else:
        print("  2 servers, split: skipped (no bus between servers in this build)")
    modes = [("flat out", 0.0), ("paced", args.rate)]
    for label, servers, placement, env in runs:
        with started(args, servers=servers, workers=0, env=env) as cluster:
            for mode, rate in modes:
                if args.mode not in ("both", mode.split()[0]):
                    continue
                tag = uuid.uuid4().hex[:6]
                figures = load.run(moves_run(cluster, args, placement, rate, tag))
                result[f"moves {label} {mode}"] = figures
                show_moves(f"{label}, {mode}", figures)


# -- 2. tournaments on workers ---------------------------------------------------------------


def tournament_run(cluster: Cluster, args: argparse.Namespace) -> dict[str, Any]:
    """Play one round robin on `cluster` (its games on the workers); return its timing."""
    bots = [f"alphabeta:depth={args.depth - k}" for k in range(3)]
    with httpx.Client(base_url=cluster.url, timeout=60) as http:
        name = f"t{uuid.uuid4().hex[:10]}"
        token = http.post("/players", json={"name": name}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        body = {
            "game": "checkers",
            "bots": bots,
            "games_per_pairing": args.games // 3,
            "seed": args.seed,
            "concurrency": 16,
        }
        created = http.post("/tournaments", json=body, headers=auth)
        created.raise_for_status()
        tournament_id = created.json()["tournament_id"]
        workers = [w.pid for w in cluster.workers]
        cpu_start = [tree_cpu(pid) for pid in workers]
        start = time.perf_counter()
        http.post(f"/tournaments/{tournament_id}/start", headers=auth).raise_for_status()
        deadline = time.monotonic() + args.tournament_timeout
        while True:
            state = http.get(f"/tournaments/{tournament_id}").json()
            if state["status"] == "finished":
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the tournament did not finish in {args.tournament_timeout} s")
            time.sleep(0.05)
        seconds = time.perf_counter() - start
        cpu = sum(tree_cpu(pid) - s for pid, s in zip(workers, cpu_start, strict=True))
    games = int(state["games_total"])
    return {
        "workers": len(workers),
        "games": games,
        "seconds": seconds,
        "games_per_s": games / seconds,
        "worker_cpu_s": cpu,
        "worker_cpu_s_per_game": cpu / games,
    }


def bench_tournaments(args: argparse.Namespace, result: dict[str, Any]) -> None:
    if not available("server.jobs.tournament_games"):
        print("  skipped: tournament games do not run on workers in this build")
        return
    base: float | None = None
    for workers in args.workers:
        with started(args, servers=1, workers=workers) as cluster:
            figures = tournament_run(cluster, args)
        result[f"tournament {workers} workers"] = figures
        base = base or figures["games_per_s"]
        print(
            f"  {workers} worker(s): {figures['games']} games in {figures['seconds']:.1f} s,"
            f" {figures['games_per_s']:.2f} games/s ({figures['games_per_s'] / base:.2f}x),"
            f" workers' CPU {figures['worker_cpu_s_per_game'] * 1000:.0f} ms per game"
        )


# -- 3. takeover -------------------------------------------------------------------------------


def takeover_run(cluster: Cluster, victim: int, timeout: float) -> dict[str, Any]:
    """Kill the owner of a live match; return how long until the other server takes a move."""
    owner, survivor = cluster.servers[victim], cluster.servers[1 - victim]
    tokens = {}
    with httpx.Client(base_url=owner.url or "", timeout=10) as http:
        for seat in "pq":
            name = f"k{seat}{uuid.uuid4().hex[:10]}"
            tokens[seat] = http.post("/players", json={"name": name}).json()["token"]
            tokens[seat + "name"] = name
        body = {
            "game": "checkers",
            "seats": [tokens["pname"], tokens["qname"]],
            "time_control": load.CLOCK,
        }
        p_auth = {"Authorization": f"Bearer {tokens['p']}"}
        created = http.post("/matches", json=body, headers=p_auth)
        created.raise_for_status()
        match_id = created.json()["match_id"]
        q_auth = {"Authorization": f"Bearer {tokens['q']}"}
        http.post(f"/matches/{match_id}/accept", headers=q_auth).raise_for_status()
        moved = http.post(
            f"/matches/{match_id}/moves", json={"move": TAKEOVER_OPENING[0]}, headers=p_auth
        )
        moved.raise_for_status()
        seq = moved.json()["seq"]
    killed = time.perf_counter()
    cluster.kill(owner)
    answers: dict[str, int] = {}
    with httpx.Client(base_url=survivor.url or "", timeout=timeout) as http:
        while True:
            if time.perf_counter() - killed > timeout:
                raise RuntimeError(f"no move accepted {timeout:g} s after the kill: {answers}")
            try:
                response = http.post(
                    f"/matches/{match_id}/moves",
                    json={"move": TAKEOVER_OPENING[1], "expected_seq": seq},
                    headers=q_auth,
                )
            except httpx.HTTPError as exc:
                answers[type(exc).__name__] = answers.get(type(exc).__name__, 0) + 1
                continue
            if response.status_code < 300:
                break
            code = response.json().get("code", str(response.status_code))
            answers[code] = answers.get(code, 0) + 1
            time.sleep(0.05)
    took = time.perf_counter() - killed
    cluster.restart(owner)
    return {"seconds": took, "answers_before": answers}


def bench_takeover(args: argparse.Namespace, result: dict[str, Any]) -> None:
    if not available("server.cluster.leases"):
        print("  skipped: matches are not taken over in this build")
        return
    from server.settings import Settings

    settings = Settings()
    bound = (settings.lease_ttl_ms + settings.heartbeat_ms) / 1000  # type: ignore[attr-defined]
    times = []
    with started(args, servers=2, workers=0) as cluster:
        for kill in range(args.kills):
            figures = takeover_run(cluster, kill % 2, args.takeover_timeout)
            times.append(figures["seconds"])
            print(
                f"  kill {kill + 1}: {figures['seconds']:.2f} s "
                f"(answers before: {figures['answers_before'] or 'none'})"
            )
    result["takeover"] = {
        "seconds": times,
        "p50_s": statistics.median(times),
        "max_s": max(times),
        "bound_s": bound,
    }
    print(
        f"  takeover after a kill: p50 {statistics.median(times):.2f} s, max {max(times):.2f} s"
        f" over {len(times)} kills (bound lease_ttl + heartbeat = {bound:g} s)"
    )


# -- running -----------------------------------------------------------------------------------


class started:  # noqa: N801 - used as a function: `with started(...) as cluster`
    """A cluster for one measurement, stopped after it."""

    def __init__(
        self,
        args: argparse.Namespace,
        servers: int,
        workers: int,
        env: dict[str, str] | None = None,
    ) -> None:
        env = {
            **LIFTED,
            "ARENA_WS_MAX_CONNECTIONS_PER_ADDRESS": str(2 * args.matches + 16),
            "ARENA_MAX_CONNECTIONS_PER_ADDRESS": str(4 * args.matches + 64),
            "ARENA_REDIS_KEY_PREFIX": f"bench-{uuid.uuid4().hex[:8]}",
            **(env or {}),
        }
        self.cluster = Cluster(
            ClusterSpec(
                database_url=args.database,
                redis_url=args.redis,
                servers=servers,
                workers=workers,
                env=env,
                cwd=args.workdir,
                log_dir=args.workdir / "logs" / f"{servers}s{workers}w-{uuid.uuid4().hex[:4]}",
            )
        )

    def __enter__(self) -> Cluster:
        self.cluster.start()
        return self.cluster

    def __exit__(self, *exc: object) -> None:
        self.cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--database", default=os.environ.get("ARENA_DATABASE_URL"))
    parser.add_argument("--redis", default=os.environ.get("ARENA_REDIS_URL"))
    parser.add_argument("--parts", default="moves,tournament,takeover")
    parser.add_argument("--matches", type=int, default=200, help="concurrent matches (200)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window (10 s)")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured start (3 s)")
    parser.add_argument("--rate", type=float, default=1500.0, help="paced moves/s (1,500)")
    parser.add_argument("--mode", choices=("both", "flat", "paced"), default="both")
    parser.add_argument("--game", default="checkers")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--workers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4]
    )
    parser.add_argument("--games", type=int, default=24, help="tournament games (24)")
    parser.add_argument("--depth", type=int, default=4, help="strongest bot's depth (4)")
    parser.add_argument("--tournament-timeout", type=float, default=600.0)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--takeover-timeout", type=float, default=60.0)
    parser.add_argument("--workdir", type=Path, default=None, help="logs and grader files")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    parts = set(args.parts.split(","))

    info = machine_info()
    print("Scale-out bench: several `arena serve` and `arena worker` on PostgreSQL + Redis")
    print(describe(info))
    if not (args.database and args.redis):
        print(
            "  skipped: needs PostgreSQL and Redis (--database and --redis, or "
            "ARENA_DATABASE_URL and ARENA_REDIS_URL)"
        )
        return
    try:
        check_services(args.database, args.redis)
    except ClusterError as exc:
        sys.exit(f"error: {exc}")
    import tempfile

    own = None
    if args.workdir is None:
        own = tempfile.TemporaryDirectory(prefix="arena-scale-")
        args.workdir = Path(own.name)
    result: dict[str, Any] = {"machine": info, "args": {k: str(v) for k, v in vars(args).items()}}
    if "moves" in parts:
        print(
            f"Moves: {args.matches} concurrent {args.game} matches, {args.seconds:g} s after "
            f"{args.warmup:g} s warm-up; flat out, then paced at {args.rate:,.0f} moves/s"
        )
        bench_moves(args, result)
    if "tournament" in parts:
        print(
            f"Tournament games on workers: checkers round robin, {args.games} games, "
            f"alpha-beta depths {args.depth}, {args.depth - 1}, {args.depth - 2}"
        )
        bench_tournaments(args, result)
    if "takeover" in parts:
        print(f"Takeover: 2 servers, the owner of a live match SIGKILLed {args.kills} times")
        bench_takeover(args, result)
    if own is not None:
        own.cleanup()
    if args.json:
        print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
