"""A class's Swiss tournament: 300 sandboxed agents, 7 rounds (1,050 games), on one server.

    python bench/class_swiss.py [--agents 300] [--rounds 7] [--concurrency 8] [--ply-cap 200]
                                [--peer | --no-peer] [--on-server | --no-on-server]
                                [--workers N ...] [--worker-concurrency J] [--database URL] [--json]

Measured in one run, each on its own `arena serve` (one uvicorn worker, a fresh SQLite file):

1. Arena: `--agents` hosted bots, each a student's agent as a class tournament hosts it (a
   plug-in, here a random mover, each with its own seed: `AGENT`), uploaded over REST (not
   timed: each upload is started once in the sandbox), then a Swiss tournament of `--rounds`
   rounds among them (`POST /tournaments` with `swiss`), every game a server match whose two
   seats are sandboxed processes (started per match, engine protocol over pipes), `--concurrency`
   games at once. Timed: from the start to the last game's result.
2. The peer: the same tournament with house bots in the server's own process (`random:seed=N`,
   the same random mover without the sandbox): what hosting the agents costs.

3. With `--workers N` (repeatable, e.g. `--workers 1 --workers 2`): the hosted tournament again
   on a cluster's processes, each N on a fresh PostgreSQL database (`--database`, default
   ARENA_TEST_DATABASE_URL): one `arena serve` with ARENA_ROLE=server and N `arena worker`s of
   `--worker-concurrency` jobs each (default `--concurrency / N`), which run the agents in
   their own sandboxes, a Swiss round at a time (docs/SCALING.md). Timed the same way.

Printed: games, the time, games per second, the server's CPU and its children's (the
sandboxes), and the ratio of the hosted tournament's time to the peer's. Both must play every
game of the schedule once (`games_done == games_total`, one match per game).

Needs the sandbox (bubblewrap; as root it gives each program its own uid). Not part of `make
test`: about ten minutes on a 2-CPU machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from local import free_port, wait_http  # noqa: E402 - bench/ is put on the path above
from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

AGENT = b'''import random

from bots.plugin import Plugin, Reply


class Agent(Plugin):
    """A student's agent at its simplest: a random legal move."""

    name = "Agent"

    def __init__(self) -> None:
        self.rng = random.Random(SEED)

    def choose(self, state, limits):
        return Reply(self.rng.choice(list(state.legal_moves())))
'''
BOTS_PER_OWNER = 5


def cpu_of(pid: int) -> tuple[float, float]:
    """Return the process's own CPU seconds and its reaped children's (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    own = (int(fields[11]) + int(fields[12])) / tick
    children = (int(fields[13]) + int(fields[14])) / tick
    return own, children


def environment(tmp: Path, name: str, args: argparse.Namespace) -> dict[str, str]:
    return {
        **os.environ,
        "ARENA_HOSTED_DIR": str(tmp / f"{name}-hosted"),
        "ARENA_GRADER_DIR": str(tmp / f"{name}-grader"),
        "ARENA_RATE_LIMITS_ENABLED": "false",
        "ARENA_HOSTED_BOTS_PER_PLAYER": str(BOTS_PER_OWNER),
        "ARENA_HOSTED_MAX_RUNNING": str(2 * args.concurrency),
        "ARENA_HOSTED_MOVE_SECONDS": "5",
    }


async def fresh_database(url: str) -> None:
    """Drop Arena's tables of the database at `url` (the server migrates it afresh; the job
    queue's are kept, and a job of a tournament gone is dropped by the worker)."""
    from sqlalchemy import text

    from server.db.engine import create_engine
    from server.db.models import Base

    engine = create_engine(url)
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    await engine.dispose()


async def serve(
    tmp: Path, name: str, args: argparse.Namespace, database: str | None = None,
    extra: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:  # fmt: skip
    port = free_port()
    env = environment(tmp, name, args) | (extra or {})
    database = database or f"sqlite+aiosqlite:///{tmp / f'{name}.db'}"
    log = open(tmp / f"{name}.log", "wb")  # noqa: SIM115 - the server's, closed with it
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "arena"), "serve", "--port", str(port),
         "--database", database],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    await wait_http(f"{base}/health", process, timeout=60)
    return process, base


async def hosted_agents(http: httpx.AsyncClient, count: int) -> list[str]:
    """Register owners and upload `count` agents (not timed); return their seat specs."""
    specs: list[str] = []
    token = ""
    owner = ""
    for index in range(count):
        if index % BOTS_PER_OWNER == 0:
            owner = f"class{index // BOTS_PER_OWNER:03d}"
            made = await http.post("/players", json={"name": owner})
            made.raise_for_status()
            token = made.json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        name = f"agent{index:03d}"
        created = await http.post(
            "/hosted-bots", json={"name": name, "game": "checkers"}, headers=auth
        )
        created.raise_for_status()
        source = AGENT.replace(b"SEED", str(index).encode())
        version = await http.post(
            f"/hosted-bots/{owner}/{name}/versions",
            data={"kind": "plugin"},
            files=[("files", ("bot.py", source, "text/x-python"))],
            headers=auth,
        )
        version.raise_for_status()
        body = version.json()
        if body["status"] != "ready":
            raise SystemExit(f"agent {index} was refused: {body['note']}")
        specs.append(body["spec"])
        if (index + 1) % 50 == 0:
            print(f"    {index + 1} agents uploaded", flush=True)
    return specs


async def play(
    http: httpx.AsyncClient, process: subprocess.Popen[bytes], bots: list[str],
    args: argparse.Namespace,
) -> dict[str, Any]:  # fmt: skip
    """Create and start the Swiss tournament; follow it to its end; return the figures."""
    made = await http.post("/players", json={"name": "staff"})
    made.raise_for_status()
    auth = {"Authorization": f"Bearer {made.json()['token']}", "Arena-Protocol-Version": "1.4"}
    body = {
        "game": "checkers",
        "bots": bots,
        "swiss": {"rounds": args.rounds},
        "ply_cap": args.ply_cap,
        "concurrency": args.concurrency,
        "seed": 1,
    }
    created = await http.post("/tournaments", json=body, headers=auth)
    created.raise_for_status()
    tournament = created.json()["tournament_id"]
    cpu_before = cpu_of(process.pid)
    started = time.perf_counter()
    (await http.post(f"/tournaments/{tournament}/start", headers=auth)).raise_for_status()
    shown = -1
    while True:
        state = (await http.get(f"/tournaments/{tournament}", headers=auth)).json()
        if state["games_done"] // 50 != shown // 50:
            shown = state["games_done"]
            elapsed = time.perf_counter() - started
            print(f"    {elapsed:7.1f} s  {shown} of {state['games_total']} games", flush=True)
        if state["status"] != "running":
            break
        await asyncio.sleep(1.0)
    elapsed = time.perf_counter() - started
    cpu_after = cpu_of(process.pid)
    matches = len({game["match_id"] for game in state["games"]})
    return {
        "status": state["status"],
        "reason": state.get("reason"),
        "games_done": state["games_done"],
        "games_total": state["games_total"],
        "distinct_matches": matches,
        "seconds": elapsed,
        "games_per_s": state["games_done"] / elapsed if elapsed else 0.0,
        "server_cpu_s": cpu_after[0] - cpu_before[0],
        "children_cpu_s": cpu_after[1] - cpu_before[1],
        "byes": sum(row["byes"] for row in state["standings"]["swiss"]),
    }


async def run(
    args: argparse.Namespace, tmp: Path, hosted: bool, workers: int = 0
) -> dict[str, Any]:
    name = ("hosted" if hosted else "peer") + (f"-{workers}-workers" if workers else "")
    database, extra = None, None
    crew: list[subprocess.Popen[bytes]] = []
    if workers:
        database = args.database
        await fresh_database(database)
        extra = {"ARENA_ROLE": "server", "ARENA_TOURNAMENT_FOLLOW_S": "1"}
    process, base = await serve(tmp, name, args, database, extra)
    for index in range(workers):
        log = open(tmp / f"{name}-worker{index}.log", "wb")  # noqa: SIM115 - closed with it
        crew.append(
            subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "arena"),
                    "worker",
                    "--database",
                    str(database),
                    "--concurrency",
                    str(args.worker_concurrency or max(1, args.concurrency // workers)),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment(tmp, name, args) | (extra or {}),
            )
        )
    try:
        async with httpx.AsyncClient(base_url=base, timeout=600) as http:
            if hosted:
                print(f"  {name}: uploading {args.agents} agents (not timed)", flush=True)
                bots = await hosted_agents(http, args.agents)
            else:
                bots = [f"random:seed={index}" for index in range(args.agents)]
            print(f"  {name}: a Swiss of {args.rounds} rounds", flush=True)
            result = await play(http, process, bots, args)
            for worker in crew:
                own, children = cpu_of(worker.pid)
                result["server_cpu_s"] += own
                result["children_cpu_s"] += children
            return result
    finally:
        for worker in crew:
            worker.terminate()
        for worker in crew:
            try:
                worker.wait(30)
            except subprocess.TimeoutExpired:
                worker.kill()
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--ply-cap", type=int, default=200)
    parser.add_argument("--peer", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--on-server", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--workers", type=int, action="append", default=[])
    parser.add_argument("--worker-concurrency", type=int, default=0)
    parser.add_argument("--database", default=os.environ.get("ARENA_TEST_DATABASE_URL", ""))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.workers and not args.database.startswith("postgresql"):
        parser.error("--workers needs a PostgreSQL --database (or ARENA_TEST_DATABASE_URL)")
    print(describe(machine_info()), flush=True)
    with open("/proc/loadavg") as handle:
        print(f"load before: {handle.read().split()[:3]}", flush=True)
    with tempfile.TemporaryDirectory(prefix="arena-class-swiss-") as folder:
        tmp = Path(folder)
        hosted = asyncio.run(run(args, tmp, hosted=True)) if args.on_server else None
        peer = asyncio.run(run(args, tmp, hosted=False)) if args.peer else None
        clustered = {n: asyncio.run(run(args, tmp, hosted=True, workers=n)) for n in args.workers}
    figures = {"args": vars(args), "hosted": hosted, "peer": peer, "workers": clustered}
    rows = [("hosted on the server", hosted), ("house bots (peer)", peer)]
    rows += [(f"hosted, {n} worker{'s' if n > 1 else ''}", r) for n, r in clustered.items()]
    for label, result in rows:
        if result is None:
            continue
        print(
            f"{label:20s} {result['status']}: {result['games_done']}/{result['games_total']} "
            f"games ({result['distinct_matches']} matches, {result['byes']} byes) in "
            f"{result['seconds']:.1f} s = {result['games_per_s']:.2f} games/s; CPU: server "
            f"{result['server_cpu_s']:.1f} s, sandboxes {result['children_cpu_s']:.1f} s"
        )
    if hosted is not None and peer is not None and peer["seconds"]:
        print(f"hosted / peer time: {hosted['seconds'] / peer['seconds']:.2f}x")
    with open("/proc/loadavg") as handle:
        print(f"load after: {handle.read().split()[:3]}")
    if args.json:
        print(json.dumps(figures, indent=1))
    for n, result in clustered.items():
        if hosted is not None:
            print(f"hosted on {n} worker(s) / hosted on the server: "
                  f"{result['seconds'] / hosted['seconds']:.2f}x")  # fmt: skip
    if len(clustered) > 1:
        fewest = min(clustered)
        for n, result in clustered.items():
            if n != fewest:
                ratio = result["games_per_s"] / clustered[fewest]["games_per_s"]
                print(f"{n} workers / {fewest}: {ratio:.2f}x the games per second")
    ok = all(
        r is None or (r["games_done"] == r["games_total"] == r["distinct_matches"])
        for r in (hosted, peer, *clustered.values())
    )
    if not ok:
        raise SystemExit("not every game was played exactly once")


if __name__ == "__main__":
    main()
