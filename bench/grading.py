"""Grading burst: a deadline's submissions uploaded at once to one server, graded by N workers.

    python bench/grading.py [--submissions 300] [--workers 1] [--database URL]
                            [--peer sample|all|none] [--peer-repeats 3] [--timeouts 0]
                            [--concurrency 64] [--quick] [--json]
    python bench/grading.py --sandbox-runs 200 [--json]

`--sandbox-runs N` measures the sandbox alone instead: the cost of one run, what every puzzle
and agent session pays. N times, in turn, an empty Python program (`python3 -c pass`) is run
bare (subprocess) and in the sandbox (`run_sandboxed`, as root under a sandbox uid); printed
are the medians (and 10th/90th percentiles) of each one's wall time and CPU (the children's),
and the difference: the sandbox's overhead per run. The first sandboxed run (the probe, the
interpreter's `ldd`, the seccomp filter: once per process) is left out.

Measured in one run:

1. Arena: `arena serve` in its own process (one uvicorn worker, `--workers` grading workers)
   on a fresh SQLite file (or `--database`), with the profiles' public example suites as its
   suites. The bench registers one player per submission (not timed), then uploads every
   submission at once over `POST /grader/jobs` (multipart, each with its player's token,
   `--concurrency` connections at a time) and follows the jobs until the last is graded.
   The mix (`MIX`) is the grader's test gallery: the reference solutions of both profiles,
   broken programs (crashes, garbage, illegal moves, no output), hostile ones (a memory bomb, a
   daemon that outlives its run, a 64 MiB file, network and file-system escapes, an output
   flood) and uploads the intake refuses (no checkers.py). `--timeouts K` adds K programs that
   run into the sandbox's limits on every test (an endless loop and a fork bomb: 50-100 s each).
2. The peer: the same kinds graded one after another by `arena grade` (the command line, in
   the same sandbox, no server): each kind `--peer-repeats` times (`sample`, the default), or
   every submission of the burst (`all`). Its time for the burst's mix is the sum over the
   kinds of count x mean time; its scores are the expected scores of each kind.

Printed: time from the first upload to the last result, upload-to-result p50/p95/max (the
server's `finished_time_ms` less the moment the upload was sent), upload acceptance latency
(sent to 202), jobs/s per grading worker and jobs per CPU-second of the grading children, the
server's own CPU per job, peak memory (the server's RSS, and the server with all its children
and their sandboxes, sampled every 0.25 s), the correctness checks (every accepted upload
graded exactly once, `attempts` 1 in the database, with its kind's expected score; every
refused one refused as expected) and the ratios to the peer: the burst's time over the peer's
serial time for the same mix (the server's overhead with one worker; its speed-up with more)
and CPU per job.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from local import free_port, wait_http  # noqa: E402 - bench/ is put on the path above
from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

SUBMISSIONS = REPO_ROOT / "tests" / "autograder" / "submissions"
GALLERY = REPO_ROOT / "tests" / "sandbox" / "gallery"
AGENTS = REPO_ROOT / "tests" / "autograder" / "agents"
REFERENCE = REPO_ROOT / "autograder" / "reference"
SUITES = {
    "endgame": REPO_ROOT / "autograder" / "examples" / "endgame-puzzles.json",
    "agent": REPO_ROOT / "autograder" / "examples" / "agent-suite.json",
}
UID_BASE = 64700
"""Sandbox uid of worker slot 0 (the tests use 64000-64601; RLIMIT_NPROC counts per uid)."""


@dataclass(frozen=True)
class Kind:
    """A kind of submission: its profile, files, group, and its share of the burst."""

    name: str
    profile: str
    files: dict[str, bytes]
    group: str
    """reference, broken, hostile, timeout, or refused (the intake says no: no job)."""
    weight: float


def _file(path: Path, name: str) -> dict[str, bytes]:
    return {name: path.read_bytes()}


def kinds(timeouts: int) -> list[Kind]:
    """Return the kinds of the mix; weights are shares of the burst (the groups' shares split
    evenly among their kinds). `timeouts` > 0 adds the two limit-bound kinds."""
    groups: dict[str, tuple[float, list[tuple[str, str, dict[str, bytes]]]]] = {
        "reference": (
            0.45,
            [
                (
                    "endgame reference",
                    "endgame",
                    _file(REFERENCE / "endgame_solver.py", "checkers.py"),
                ),
                ("agent reference", "agent", _file(REFERENCE / "agent_solution.py", "agent.py")),
            ],
        ),
        "broken": (
            0.30,
            [
                *(
                    (
                        f"endgame {n}",
                        "endgame",
                        _file(SUBMISSIONS / n / "checkers.py", "checkers.py"),
                    )
                    for n in ("crash", "garbage", "illegal_move", "no_output")
                ),
                *(
                    (f"agent {n}", "agent", _file(AGENTS / f"{n}.py", "agent.py"))
                    for n in ("crash", "garbage", "illegal", "no_function")
                ),
            ],
        ),
        "hostile": (
            0.22,
            [
                (f"hostile {n}", "endgame", _file(GALLERY / f"{n}.py", "checkers.py"))
                for n in (
                    "memory_bomb",
                    "orphan",
                    "huge_file",
                    "socket_connect",
                    "write_outside",
                    "read_file",
                    "garbage",
                )
            ],
        ),
        "refused": (
            0.03,
            [
                (
                    "no checkers.py",
                    "endgame",
                    _file(SUBMISSIONS / "missing_program" / "solution.py", "solution.py"),
                )
            ],
        ),
    }
    found = []
    for group, (share, members) in groups.items():
        for name, profile, files in members:
            weight = share / len(members)
            if name == "agent reference":
                weight /= 4  # a full agent grading takes 5x an endgame's: a smaller share
            found.append(Kind(name, profile, files, group, weight))
    if timeouts:
        found.append(
            Kind(
                "timeout endless loop",
                "endgame",
                _file(SUBMISSIONS / "infinite_loop" / "checkers.py", "checkers.py"),
                "timeout",
                0.0,
            )
        )
        found.append(
            Kind(
                "timeout fork bomb",
                "endgame",
                _file(GALLERY / "fork_bomb.py", "checkers.py"),
                "timeout",
                0.0,
            )
        )
    return found


def burst_of(every: list[Kind], count: int, timeouts: int, seed: int) -> list[Kind]:
    """Return `count` submissions in upload order: each kind by its weight (at least one of
    each), `timeouts` limit-bound ones among them, shuffled with `seed`."""
    weighted = [k for k in every if k.group != "timeout"]
    total = sum(k.weight for k in weighted)
    slots = count - timeouts
    counts = {k.name: max(1, round(slots * k.weight / total)) for k in weighted}
    # Rounding: take from or give to the largest kinds until the counts add up.
    order = sorted(weighted, key=lambda k: -k.weight)
    i = 0
    while sum(counts.values()) != slots:
        kind = order[i % len(order)]
        step = 1 if sum(counts.values()) < slots else -1
        if counts[kind.name] + step >= 1:
            counts[kind.name] += step
        i += 1
    chosen = [k for k in weighted for _ in range(counts[k.name])]
    limit_bound = [k for k in every if k.group == "timeout"]
    chosen += [limit_bound[i % len(limit_bound)] for i in range(timeouts)] if limit_bound else []
    random.Random(seed).shuffle(chosen)
    return chosen


def rss_kb(pid: int) -> int:
    """Return process `pid`'s resident set size in KB; 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_of(pid: int) -> tuple[float, float]:
    """Return (own, reaped children's) user + system CPU seconds of process `pid`."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, (int(fields[13]) + int(fields[14])) / ticks


def descendants(pid: int) -> list[int]:
    """Return the pids of every live descendant of `pid`."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@dataclass
class Memory:
    """Peak RSS of the server alone and of the server with all its descendants, in KB."""

    server: int = 0
    tree: int = 0
    children: int = 0
    """Most live descendants seen at once."""

    async def sample(self, pid: int, stop: asyncio.Event) -> None:
        while not stop.is_set():
            kids = descendants(pid)
            own = rss_kb(pid)
            self.server = max(self.server, own)
            self.tree = max(self.tree, own + sum(rss_kb(k) for k in kids))
            self.children = max(self.children, len(kids))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.25)


@dataclass
class Upload:
    """One submission of the burst and what became of it."""

    kind: Kind
    token: str = ""
    sent: float = 0.0
    acked: float = 0.0
    status: int = 0
    job_id: str | None = None
    job: dict[str, Any] = field(default_factory=dict)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def upload(http: httpx.AsyncClient, item: Upload, gate: asyncio.Semaphore) -> None:
    async with gate:
        files = [("files", (n, d, "text/x-python")) for n, d in item.kind.files.items()]
        item.sent = time.time()
        response = await http.post(
            "/grader/jobs",
            data={"profile": item.kind.profile},
            files=files,
            headers={"Authorization": f"Bearer {item.token}"},
        )
        item.acked = time.time()
        item.status = response.status_code
        if response.status_code == 202:
            item.job = response.json()
            item.job_id = item.job["job_id"]


async def follow(
    http: httpx.AsyncClient, jobs: list[Upload], workers: int, started: float, memory: Memory
) -> None:
    """Poll the jobs until every one is done or failed, printing progress every 5 s.

    Jobs are graded in the order the server stored them, so each round reads the oldest
    unfinished jobs and stops after `workers + 8` that are still waiting or running: a few
    requests a round, whatever the burst's size (a round that polled every job would load the
    server it measures). The figures come from the jobs' own times, not from these polls.
    """
    pending = sorted(jobs, key=lambda item: item.job["created_time_ms"])
    last_print = 0.0
    while pending:
        still: list[Upload] = []
        unfinished = 0
        for item in pending:
            if unfinished > workers + 8:
                still.append(item)
                continue
            response = await http.get(
                f"/grader/jobs/{item.job_id}", headers={"Authorization": f"Bearer {item.token}"}
            )
            response.raise_for_status()
            body = response.json()
            if body["status"] in ("done", "error"):
                item.job = body
            else:
                unfinished += 1
                still.append(item)
        pending = still
        now = time.time()
        if now - last_print >= 5 or not pending:
            last_print = now
            done = len(jobs) - len(pending)
            print(
                f"    {now - started:6.1f} s  graded {done}/{len(jobs)}"
                f"  peak RSS server {memory.server / 1024:.0f} MB,"
                f" with children {memory.tree / 1024:.0f} MB",
                flush=True,
            )
        if pending:
            await asyncio.sleep(0.5)


async def attempts_in_database(database: str, job_ids: list[str]) -> Counter[int]:
    """Return how many of the jobs have each `attempts` count in the server's database."""
    from sqlalchemy import select

    from server.db.engine import create_engine
    from server.db.models import GradingJob

    engine = create_engine(database)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                select(GradingJob.id, GradingJob.attempts).where(GradingJob.id.in_(job_ids))
            )
            found = {row.id: row.attempts for row in rows}
    finally:
        await engine.dispose()
    counts: Counter[int] = Counter(found.values())
    missing = len(set(job_ids) - set(found))
    if missing:
        counts[0] += missing  # jobs the database does not hold
    return counts


async def bench_arena(args: argparse.Namespace, burst: list[Kind], tmp: Path) -> dict[str, Any]:
    """Run the burst against `arena serve`; return the figures and every upload's fate."""
    port = free_port()
    database = args.database or f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
    env = {
        **os.environ,
        "ARENA_GRADER_DIR": str(tmp / "grader"),
        "ARENA_GRADER_WORKERS": str(args.workers),
        "ARENA_GRADER_UID_BASE": str(args.uid_base),
        "ARENA_GRADER_ENDGAME_SUITE": str(SUITES["endgame"]),
        "ARENA_GRADER_AGENT_SUITE": str(SUITES["agent"]),
        # One address registers every student and uploads for all of them: lift the
        # per-address limits, which a real deadline (one address per student) never meets.
        "ARENA_RATE_REGISTRATIONS_PER_ADDRESS": "1000000/minute",
        "ARENA_RATE_UPLOADS_PER_ADDRESS": "1000000/minute",
    }
    if args.max_queued:
        env["ARENA_GRADER_MAX_QUEUED"] = str(args.max_queued)
    arena = Path(sys.executable).parent / "arena"
    log_file = open(tmp / "server.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [str(arena), "serve", "--port", str(port), "--database", database],
        stdout=log_file,
        stderr=subprocess.STDOUT,
        env=env,
    )
    memory = Memory()
    stop = asyncio.Event()
    try:
        base = f"http://127.0.0.1:{port}"
        await wait_http(f"{base}/health", process, timeout=60)
        limits = httpx.Limits(max_connections=args.concurrency)
        async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as http:
            uploads = [Upload(kind) for kind in burst]
            for i, item in enumerate(uploads):
                response = await http.post("/players", json={"name": f"student{i:04d}"})
                response.raise_for_status()
                item.token = response.json()["token"]
            sampler = asyncio.create_task(memory.sample(process.pid, stop))
            cpu_before = cpu_of(process.pid)
            gate = asyncio.Semaphore(args.concurrency)
            started = time.time()
            print(f"    uploading {len(uploads)} submissions at once", flush=True)
            await asyncio.gather(*(upload(http, item, gate) for item in uploads))
            uploaded = time.time()
            cpu_uploaded = cpu_of(process.pid)
            accepted = [item for item in uploads if item.status == 202]
            print(
                f"    {uploaded - started:6.1f} s  all uploads answered: {len(accepted)} accepted, "
                f"{len(uploads) - len(accepted)} refused",
                flush=True,
            )
            await follow(http, accepted, args.workers, started, memory)
            finished = time.time()
            cpu_after = cpu_of(process.pid)
            stop.set()
            await sampler
    finally:
        stop.set()
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log_file.close()
    attempts = await attempts_in_database(database, [u.job_id for u in accepted if u.job_id])
    last = max(item.job["finished_time_ms"] / 1000 for item in accepted) if accepted else finished
    to_result = [item.job["finished_time_ms"] / 1000 - item.sent for item in accepted]
    acceptance = [item.acked - item.sent for item in uploads]
    grading_cpu = cpu_after[1] - cpu_before[1]
    server_cpu = cpu_after[0] - cpu_before[0]
    wall = last - started
    return {
        "uploads": uploads,
        "submissions": len(uploads),
        "accepted": len(accepted),
        "time_to_last_s": wall,
        "uploads_answered_s": uploaded - started,
        "intake_cpu_ms_per_upload": (cpu_uploaded[0] - cpu_before[0]) / len(uploads) * 1000,
        "to_result_p50_s": percentile(to_result, 0.50),
        "to_result_p95_s": percentile(to_result, 0.95),
        "to_result_max_s": max(to_result, default=float("nan")),
        "acceptance_p50_ms": percentile(acceptance, 0.50) * 1000,
        "acceptance_p95_ms": percentile(acceptance, 0.95) * 1000,
        "acceptance_max_ms": max(acceptance, default=float("nan")) * 1000,
        "jobs_per_s": len(accepted) / wall if wall else float("nan"),
        "jobs_per_s_per_worker": len(accepted) / wall / args.workers if wall else float("nan"),
        "grading_cpu_s": grading_cpu,
        "jobs_per_grading_cpu_s": len(accepted) / grading_cpu if grading_cpu else float("nan"),
        "server_cpu_s": server_cpu,
        "server_cpu_ms_per_job": server_cpu / len(accepted) * 1000 if accepted else float("nan"),
        "peak_rss_server_mb": memory.server / 1024,
        "peak_rss_with_children_mb": memory.tree / 1024,
        "most_children": memory.children,
        "attempts": dict(attempts),
    }


def grade_with_cli(kind: Kind, tmp: Path) -> tuple[float, float, dict[str, Any] | None]:
    """Grade one submission of `kind` with `arena grade`; return wall s, CPU s and results."""
    folder = Path(tempfile.mkdtemp(dir=tmp))
    for name, data in kind.files.items():
        (folder / name).write_bytes(data)
    arena = Path(sys.executable).parent / "arena"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [str(arena), "grade", str(folder), "--profile", kind.profile, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    shutil.rmtree(folder, ignore_errors=True)
    try:
        results: dict[str, Any] | None = json.loads(done.stdout)
    except ValueError:
        results = None
    return wall, cpu, results


def bench_peer(args: argparse.Namespace, burst: list[Kind], tmp: Path) -> dict[str, Any]:
    """Grade the burst's kinds serially with `arena grade`; return the times and scores."""
    graded = [kind for kind in burst if kind.group != "refused"]
    counts = Counter(kind.name for kind in graded)
    by_name = {kind.name: kind for kind in graded}
    if args.peer == "all":
        plan = [(kind, 1) for kind in graded]
    else:
        plan = [(by_name[name], args.peer_repeats) for name in counts]
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    scores: dict[str, set[tuple[float, float]]] = {}
    started = time.perf_counter()
    runs = sum(n for _, n in plan)
    done = 0
    for kind, repeats in plan:
        for _ in range(repeats):
            wall, cpu, results = grade_with_cli(kind, tmp)
            walls.setdefault(kind.name, []).append(wall)
            cpus.setdefault(kind.name, []).append(cpu)
            if results is not None:
                scores.setdefault(kind.name, set()).add((results["score"], results["max_score"]))
            done += 1
            if done % 10 == 0 or done == runs:
                print(
                    f"    {time.perf_counter() - started:6.1f} s  graded {done}/{runs} serially",
                    flush=True,
                )
    serial = sum(sum(walls[k.name]) / len(walls[k.name]) for k in graded)
    cpu = sum(sum(cpus[k.name]) / len(cpus[k.name]) for k in graded)
    return {
        "runs": runs,
        "serial_s": serial,
        "jobs_per_s": len(graded) / serial if serial else float("nan"),
        "cpu_s": cpu,
        "jobs_per_cpu_s": len(graded) / cpu if cpu else float("nan"),
        "mean_s": {name: sum(v) / len(v) for name, v in walls.items()},
        "scores": {name: sorted(v) for name, v in scores.items()},
    }


def check(arena: dict[str, Any], peer: dict[str, Any] | None) -> list[str]:
    """Return the correctness failures: jobs not graded once, scores not their kind's."""
    failures = []
    expected = peer["scores"] if peer else {}
    for item in arena["uploads"]:
        kind = item.kind
        if kind.group == "refused":
            if item.status != 422:
                failures.append(f"{kind.name}: status {item.status}, expected 422 (refused)")
            continue
        if item.status != 202:
            failures.append(f"{kind.name}: status {item.status}, expected 202")
            continue
        job = item.job
        got = (job["score"], job["max_score"])
        if job["status"] != "done":
            failures.append(f"{kind.name}: job {item.job_id} {job['status']}: {job['summary']}")
        elif kind.group == "reference" and got[0] != got[1]:
            failures.append(f"{kind.name}: scored {got}, expected full marks")
        elif kind.name in expected and expected[kind.name] != [got]:
            failures.append(f"{kind.name}: scored {got}, the command line {expected[kind.name]}")
    if set(arena["attempts"]) - {1}:
        failures.append(f"attempts per job in the database: {arena['attempts']} (expected 1 each)")
    return failures


def show(arena: dict[str, Any], peer: dict[str, Any] | None, workers: int) -> list[str]:
    """Print the figures; return the summary lines (ratios to the peer)."""
    print(
        f"  arena, {workers} worker(s): {arena['accepted']} jobs graded, the last "
        f"{arena['time_to_last_s']:.1f} s after the first upload "
        f"(all {arena['submissions']} uploads answered in {arena['uploads_answered_s']:.2f} s, "
        f"{arena['intake_cpu_ms_per_upload']:.1f} ms of server CPU each)"
    )
    print(
        f"    upload to result  p50 {arena['to_result_p50_s']:.1f} s  "
        f"p95 {arena['to_result_p95_s']:.1f} s  max {arena['to_result_max_s']:.1f} s"
    )
    print(
        f"    upload accepted   p50 {arena['acceptance_p50_ms']:.0f} ms  "
        f"p95 {arena['acceptance_p95_ms']:.0f} ms  max {arena['acceptance_max_ms']:.0f} ms"
    )
    print(
        f"    throughput        {arena['jobs_per_s']:.2f} jobs/s, "
        f"{arena['jobs_per_s_per_worker']:.2f} jobs/s per worker, "
        f"{arena['jobs_per_grading_cpu_s']:.3f} jobs per grading CPU-s "
        f"({arena['grading_cpu_s']:.0f} CPU-s in the grading children)"
    )
    print(
        f"    server process    {arena['server_cpu_s']:.1f} CPU-s "
        f"({arena['server_cpu_ms_per_job']:.1f} ms per job: intake, queue, database, polls)"
    )
    print(
        f"    peak memory       server {arena['peak_rss_server_mb']:.0f} MB, with its children "
        f"{arena['peak_rss_with_children_mb']:.0f} MB (at most {arena['most_children']} "
        "child processes at once)"
    )
    lines = []
    if peer is not None:
        print(
            f"  peer, arena grade serially ({peer['runs']} runs): {peer['serial_s']:.1f} s for the "
            f"burst's mix, {peer['jobs_per_s']:.2f} jobs/s, {peer['jobs_per_cpu_s']:.3f} jobs/CPU-s"
        )
        ratio = arena["time_to_last_s"] / peer["serial_s"]
        cpu = (arena["grading_cpu_s"] + arena["server_cpu_s"]) / peer["cpu_s"]
        lines.append(
            f"burst time / serial command-line time: {ratio:.2f} "
            f"(speed-up {1 / ratio:.2f}x with {workers} worker(s))"
        )
        lines.append(f"CPU per job, server (children + own) / command line: {cpu:.2f}")
    return lines


def bench_sandbox(runs: int, python: str, uid: int) -> dict[str, Any]:
    """Time `runs` empty programs run bare and in the sandbox, in turn; return the figures."""
    from sandbox import Isolation, run_sandboxed

    argv = [python, "-c", "pass"]
    isolation = Isolation(uid=uid, gid=uid)
    first = run_sandboxed(argv, files={}, isolation=isolation)
    if not first.is_ok:
        raise SystemExit(f"the sandbox failed: {first.reason}")
    times: dict[str, list[float]] = {"bare": [], "sandboxed": []}
    cpu: dict[str, list[float]] = {"bare": [], "sandboxed": []}
    for _ in range(runs):
        for kind in ("bare", "sandboxed"):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            if kind == "bare":
                subprocess.run(argv, check=True, env={"PATH": "/usr/bin:/bin"})
            else:
                result = run_sandboxed(argv, files={"checkers.py": b"pass\n"}, isolation=isolation)
                if not result.is_ok:
                    raise SystemExit(f"the sandbox failed: {result.reason}")
            times[kind].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[kind].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)

    def spread(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        return {
            "p10": ordered[len(ordered) // 10],
            "median": statistics.median(ordered),
            "p90": ordered[len(ordered) * 9 // 10],
        }

    figures = {kind: {"wall": spread(times[kind]), "cpu": spread(cpu[kind])} for kind in times}
    return {
        **figures,
        "overhead_wall": figures["sandboxed"]["wall"]["median"] - figures["bare"]["wall"]["median"],
        "overhead_cpu": figures["sandboxed"]["cpu"]["median"] - figures["bare"]["cpu"]["median"],
        "isolation": str(first.isolation),
    }


def show_sandbox(figures: dict[str, Any]) -> list[str]:
    """Return the sandbox bench's lines."""
    lines = []
    for kind in ("bare", "sandboxed"):
        wall, cpu = figures[kind]["wall"], figures[kind]["cpu"]
        lines.append(
            f"{kind:9}: wall median {wall['median'] * 1000:.1f} ms "
            f"(p10 {wall['p10'] * 1000:.1f}, p90 {wall['p90'] * 1000:.1f}); "
            f"CPU median {cpu['median'] * 1000:.1f} ms"
        )
    lines.append(
        f"overhead per run: {figures['overhead_wall'] * 1000:.1f} ms wall, "
        f"{figures['overhead_cpu'] * 1000:.1f} ms CPU"
    )
    lines.append(f"isolation: {figures['isolation']}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=300, help="uploads in the burst")
    parser.add_argument("--workers", type=int, default=1, help="grading workers of the server")
    parser.add_argument("--database", help="database URL (default: a fresh SQLite file)")
    parser.add_argument(
        "--peer",
        choices=("sample", "all", "none"),
        default="sample",
        help="arena grade on each kind --peer-repeats times (sample), on every submission "
        "(all), or not at all",
    )
    parser.add_argument("--peer-repeats", type=int, default=3, help="runs per kind (sample)")
    parser.add_argument(
        "--timeouts", type=int, default=0, help="limit-bound submissions in the burst (0)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=64, help="uploads in flight at once (64)"
    )
    parser.add_argument(
        "--max-queued", type=int, default=0, help="the server's queue limit (default: its own)"
    )
    parser.add_argument("--uid-base", type=int, default=UID_BASE, help="sandbox uid of slot 0")
    parser.add_argument("--seed", type=int, default=1, help="seed of the upload order")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 30 uploads, 1 peer run")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument(
        "--sandbox-runs", type=int, default=0, help="measure one sandboxed run instead (N runs)"
    )
    args = parser.parse_args()
    if args.sandbox_runs:
        info, load = machine_info(), os.getloadavg()
        print(f"Sandbox overhead: {args.sandbox_runs} empty programs, bare and sandboxed in turn")
        print(describe(info))
        print(f"  load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        figures = bench_sandbox(args.sandbox_runs, "/usr/bin/python3", args.uid_base)
        after = os.getloadavg()
        print(f"  load average after: {after[0]:.2f}")
        for line in show_sandbox(figures):
            print("  " + line)
        if args.json:
            print(json.dumps({"machine": info, "load": [load, after], **figures}, indent=2))
        return
    if args.quick:
        args.submissions, args.peer_repeats = 30, 1

    every = kinds(args.timeouts)
    burst = burst_of(every, args.submissions, args.timeouts, args.seed)
    mix = Counter(kind.group for kind in burst)
    info = machine_info()
    load = os.getloadavg()
    print(
        f"Grading burst: {len(burst)} uploads at once to arena serve with {args.workers} grading "
        f"worker(s), {args.database or 'SQLite'}; peer: arena grade serially ({args.peer})"
    )
    print("  mix: " + ", ".join(f"{n} {g}" for g, n in mix.most_common()))
    print(describe(info))
    print(f"  load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    result: dict[str, Any] = {"machine": info, "args": vars(args), "load_before": load}
    with tempfile.TemporaryDirectory(prefix="arena-bench-grading-") as name:
        tmp = Path(name)
        tmp.chmod(0o700)
        arena = asyncio.run(bench_arena(args, burst, tmp))
        peer = None
        if args.peer != "none":
            print("  the peer: arena grade, one submission after another", flush=True)
            peer = bench_peer(args, burst, tmp)
    result["load_after"] = os.getloadavg()
    print(f"  load average after: {result['load_after'][0]:.2f}")
    lines = show(arena, peer, args.workers)
    failures = check(arena, peer)
    graded = sum(1 for item in arena["uploads"] if item.kind.group != "refused")
    lines.append(
        f"correctness: {graded} submissions, {arena['attempts']} jobs by attempts in the "
        "database; "
        + (
            f"FAILURES: {len(failures)}"
            if failures
            else "each graded once with its kind's score, every refused upload refused"
        )
    )
    for line in lines:
        print("  " + line)
    for failure in failures[:20]:
        print("    " + failure)
    result["arena"] = {k: v for k, v in arena.items() if k != "uploads"}
    result["peer"] = peer
    result["failures"] = failures
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
