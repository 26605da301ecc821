"""A private test stays private: nothing derived from its input reaches the uploader.

Hostile submissions try every channel a program has on a private test: printing its input
file to stdout and stderr, raising an exception whose message holds the board, writing the
board into its output file (the judge then lists the legal moves), exiting with a code made
from the board, flooding its output, solving it (the judge then names the fastest win's
length), and in the agent profile tracebacks holding the boards of the calls around it. Each
private test's input is rendered every way the grader or a program could show it (the course
board, its FEN, the expected length, the legal moves and the solution's moves, the exit code)
and none of those renderings may appear in anything the uploader can fetch: the job's status,
results.json, the report, the web page, the command line's output and files; while the
owner's view (the stored results; a course's staff) still shows them. A program whose running
time depends on the private boards shows the uploader the same timing fields whatever it does.
"""

from __future__ import annotations

import html
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from autograder.agent_checks import exact_positions
from autograder.agent_suite import AgentSuite, Opponent
from autograder.agent_suite_file import save_agent_suite
from autograder.agent_suite_maker import make_agent_suite
from autograder.course import format_move, side_to_move
from bots.solvers.solve import Solver
from cli.main import create_cli
from games.checkers import Checkers, CheckersMove, format_board, format_fen, parse_board
from server.deps import GUEST_COOKIE
from server.settings import Settings
from tests.server.conftest import start_server
from tests.server.courses.test_courses import Client, add_assignment, iso, new_course, students
from tests.server.grading.test_grading import (
    PUBLIC_SUITE,
    REFERENCE,
    grading_settings,
    upload,
    wait_done,
)

GAME = Checkers()

# -- hostile submissions ---------------------------------------------------------------------

_PRELUDE = """import sys, zlib
args = sys.argv
board = open(args[args.index("--inputfile") + 1]).read()
out = args[args.index("--outputfile") + 1]
"""
_ENDGAME_SOURCES: dict[str, str] = {
    # Its input on stdout and stderr, then a failure, whose explanation quotes stderr's end.
    "echo": _PRELUDE + "print(board)\nprint(board, file=sys.stderr)\nsys.exit(1)\n",
    # An exception whose message is the board: the traceback ends with it.
    "raise": _PRELUDE + "raise RuntimeError(board)\n",
    # An exit code made from the board ("your program exited with code N").
    "exit": _PRELUDE
    + "print(board, file=sys.stderr)\nsys.exit(100 + zlib.crc32(board.encode()) % 150)\n",
    # The board twice: "the board did not change", and the legal moves listed.
    "unchanged": _PRELUDE + "open(out, 'w').write(board + '\\n' + board)\n",
    # The board alone: "the game is not over: red still has legal moves (...)".
    "stop": _PRELUDE + "open(out, 'w').write(board)\n",
    # The board on stderr, then more than the output limit on stdout.
    "flood": _PRELUDE + "print(board, file=sys.stderr)\nsys.stdout.write(board * 20000)\n",
    # A right answer: the judge names the length of the fastest win.
    "solution": REFERENCE.read_text(),
}
ENDGAME_HOSTILE: dict[str, bytes] = {name: s.encode() for name, s in _ENDGAME_SOURCES.items()}
AGENT_HOSTILE: dict[str, bytes] = {
    # The board on both streams, then an exception holding it and the boards of the calls
    # around it (the harness's own requests, read from its frame).
    "raise": b"""import sys
def select_move(board, player, depth_limit, time_limit):
    text = "\\n".join(board)
    print(text)
    print(text, file=sys.stderr)
    calls = sys._getframe(1).f_locals.get("requests") or []
    others = "\\n\\n".join("\\n".join(call["board"]) for call in calls[-2:])
    raise RuntimeError(text + "\\n\\n" + others)
""",
    # A move that is not legal: the judge lists the legal ones.
    "illegal": b"""def select_move(board, player, depth_limit, time_limit):
    mine = "r" if player == "red" else "b"
    for row, line in enumerate(board):
        for col, piece in enumerate(line):
            if piece.lower() == mine:
                return [[row, col], [row, col]], 0
    return [[0, 1], [0, 1]], 0
""",
    # An exit code made from the board, the board's last row the last line of stderr.
    "exit": b"""import os, sys, zlib
def select_move(board, player, depth_limit, time_limit):
    text = "\\n".join(board)
    print(text, file=sys.stderr)
    sys.stderr.flush()
    os._exit(100 + zlib.crc32(text.encode()) % 150)
""",
}


def exit_code(board: str) -> int:
    """The code the `exit` programs exit with on `board` (its text as they read it)."""
    return 100 + zlib.crc32(board.encode()) % 150


# -- the suites ------------------------------------------------------------------------------


def endgame_suite() -> dict[str, Any]:
    """The example puzzles: the first public, the four others private."""
    data: dict[str, Any] = json.loads(PUBLIC_SUITE.read_text())
    for index, puzzle in enumerate(data["puzzles"]):
        puzzle["public"] = index == 0
    return data


def agent_suite(tmp_path: Path) -> dict[str, Any]:
    """A private agent suite with two public examples, short to grade: the file's JSON."""
    base = AgentSuite(
        exact_depths=(1,),
        exact_positions=2,
        opponents=(Opponent("random", 2, 0.0),),
        max_timeouts=50,
    )
    suite = make_agent_suite(3, count=4, examples=2, base=base, public=False)
    path = tmp_path / "agent-suite.json"
    save_agent_suite(path, suite)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


# -- renderings of a test's input ------------------------------------------------------------

_NOISE = re.compile(r"[\s│┃║|'\",\[\]\\]+")


def normalize(text: str) -> str:
    """Return `text` without the characters a board may be split or quoted with (whitespace,
    table borders, quotes, commas, brackets): a board rendered any of those ways is then its
    64 squares in a row."""
    return _NOISE.sub("", html.unescape(text))


def position_renderings(board: str, player: str, *, extra: Iterable[str] = ()) -> set[str]:
    """Every way a position could be shown: its board, its FEN, its legal moves, the code an
    `exit` program ends with."""
    state = parse_board(GAME, board, player)
    found = {normalize(board), normalize(format_fen(state)), *extra}
    found |= {normalize(format_move(move)) for move in state.legal_moves()}
    found.add(f"exitedwithcode{exit_code(board)}")
    return found


def puzzle_renderings(puzzle: Mapping[str, Any]) -> set[str]:
    """A puzzle's renderings: its position's, the expected length, the solution's moves."""
    board = "\n".join(puzzle["board"])
    plies = puzzle["plies"]
    solution = Solver().solve(parse_board(GAME, board, "red"), max_plies=30)
    moves = [m for m in solution.best_moves if isinstance(m, CheckersMove)]
    extra = {f"{plies}plies", f"{plies}-ply", *(normalize(format_move(m)) for m in moves)}
    # The program reads the input file, which ends with a newline.
    return position_renderings(board, "red", extra=extra) | {
        f"exitedwithcode{exit_code(board + chr(10))}"
    }


def endgame_secrets(suite: Mapping[str, Any]) -> dict[str, set[str]]:
    """Each private puzzle's renderings, less any that a public puzzle shares."""
    shown = set().union(*(puzzle_renderings(p) for p in suite["puzzles"] if p["public"]))
    return {p["name"]: puzzle_renderings(p) - shown for p in suite["puzzles"] if not p["public"]}


def agent_secrets(suite: Mapping[str, Any]) -> dict[str, set[str]]:
    """Each private position's renderings (the legal-move positions and the exact-minimax
    positions), less any that a public example shares."""
    shown = set().union(
        *(
            position_renderings("\n".join(e["board"]), e["player"])
            for e in suite["example_positions"]
        )
    )
    found = {
        p["name"]: position_renderings("\n".join(p["board"]), p["player"]) - shown
        for p in suite["legal_positions"]
    }
    positions = exact_positions(suite["exact_positions"], suite["exact_seed"])
    for number, state in enumerate(positions, 1):
        found[f"exact position {number}"] = (
            position_renderings(format_board(state), side_to_move(state)) - shown
        )
    return found


def private_secrets(endgame: Mapping[str, Any], agent: Mapping[str, Any]) -> dict[str, set[str]]:
    """Both suites' secrets, less what any public test of either shows: an exit code is one of
    150, so a public agent example may exit with a private puzzle's code, and showing it is no
    leak."""
    shown = set().union(
        *(puzzle_renderings(p) for p in endgame["puzzles"] if p["public"]),
        *(
            position_renderings("\n".join(e["board"]), e["player"])
            for e in agent["example_positions"]
        ),
    )
    both = endgame_secrets(endgame) | agent_secrets(agent)
    return {test: keys - shown for test, keys in both.items()}


def flatten(data: Any) -> str:
    """Return every key and value of JSON data as lines of text."""
    if isinstance(data, dict):
        return "\n".join(f"{key}\n{flatten(value)}" for key, value in data.items())
    if isinstance(data, list):
        return "\n".join(flatten(item) for item in data)
    return str(data)


def leaks(surfaces: Mapping[str, str], secrets: Mapping[str, set[str]]) -> list[str]:
    """Return each rendering of a private input found in a surface, as `surface: test: key`."""
    found = []
    for where, text in surfaces.items():
        flat = normalize(text)
        for test, keys in secrets.items():
            found.extend(f"{where}: {test}: {key}" for key in sorted(keys) if key in flat)
    return found


def shown_all(surfaces: Mapping[str, str], secrets: Mapping[str, set[str]]) -> dict[str, bool]:
    """Return, per private test, whether its board shows in the surfaces (the owner's view)."""
    flat = normalize("\n".join(surfaces.values()))
    return {
        test: any(key in flat for key in keys if len(key) == 64) for test, keys in secrets.items()
    }


def arena(url: str, token: str, *args: str) -> str:
    """Run `arena ARGS` against the server at `url` as `token`; return what it printed."""
    result = CliRunner().invoke(
        create_cli(), list(args), env={"ARENA_SERVER": url, "ARENA_TOKEN": token}
    )
    assert result.exit_code in (0, 1), result.output
    return result.output


# -- the hosted grader -----------------------------------------------------------------------


@dataclass
class Uploaded:
    profile: str
    name: str
    job_id: str


def hosted_surfaces(client: httpx.Client, job_id: str) -> dict[str, str]:
    """Everything the uploader can fetch of a job: its status, results, report and page."""
    base = f"/grader/jobs/{job_id}"
    page = client.get(base, headers={"Accept": "text/html"})
    assert page.status_code == 200 and "<html" in page.text
    report = client.get(f"{base}/report.html")
    assert report.status_code == 200
    results = client.get(f"{base}/results.json")
    assert results.status_code == 200
    return {
        f"{job_id} status": flatten(client.get(base).json()),
        f"{job_id} results.json": flatten(results.json()),
        f"{job_id} report.html": report.text,
        f"{job_id} page": page.text,
    }


@pytest.fixture
def suites(tmp_path: Path) -> tuple[Path, Path]:
    endgame = tmp_path / "endgame-suite.json"
    endgame.write_text(json.dumps(endgame_suite()))
    agent = tmp_path / "agent-suite.json"
    agent.write_text(json.dumps(agent_suite(tmp_path)))
    return endgame, agent


def test_the_uploader_of_a_hosted_grading_sees_nothing_of_its_private_tests(
    server_settings: Settings, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    endgame_path, agent_path = suites
    settings = grading_settings(
        server_settings,
        grader_endgame_suite=endgame_path,
        grader_agent_suite=agent_path,
        grader_workers=2,
        grader_max_queued_per_player=20,
        rate_limits_enabled=False,
    )
    running = start_server(settings)
    uploaded: list[Uploaded] = []
    surfaces: dict[str, str] = {}
    try:
        with httpx.Client(base_url=running.url, timeout=60) as client:
            for name, source in ENDGAME_HOSTILE.items():
                job = upload(client, "endgame", {"checkers.py": source})
                uploaded.append(Uploaded("endgame", name, job["job_id"]))
            for name, source in AGENT_HOSTILE.items():
                job = upload(client, "agent", {"agent.py": source})
                uploaded.append(Uploaded("agent", name, job["job_id"]))
            for item in uploaded:
                wait_done(client, item.job_id, timeout=300)
                surfaces |= hosted_surfaces(client, item.job_id)
            # The command line shows and writes what the server gives it.
            token = client.headers["Authorization"].removeprefix("Bearer ")
            for profile, name, main, source in (
                ("endgame", "echo", "checkers.py", ENDGAME_HOSTILE["echo"]),
                ("agent", "raise", "agent.py", AGENT_HOSTILE["raise"]),
            ):
                folder = tmp_path / f"cli-{profile}"
                folder.mkdir()
                (folder / main).write_bytes(source)
                results, report = tmp_path / f"{profile}.json", tmp_path / f"{profile}.html"
                printed = arena(
                    running.url,
                    token,
                    *("grader", "submit", str(folder / main), "--profile", profile),
                    *("--results", str(results), "--html", str(report)),
                )
                surfaces[f"arena grader submit {profile} {name}"] = printed
                surfaces[f"arena grader submit {profile} --results"] = results.read_text()
                surfaces[f"arena grader submit {profile} --html"] = report.read_text()
    finally:
        running.stop()

    secrets = private_secrets(endgame_suite(), json.loads(agent_path.read_text()))
    assert all(secrets.values())
    assert leaks(surfaces, secrets) == []
    # The owner's view, the stored results, still shows every private board.
    owner = {
        item.job_id: flatten(
            json.loads((settings.grader.dir / "jobs" / item.job_id / "results.json").read_text())
        )
        for item in uploaded
        if item.name in ("echo", "raise")
    }
    assert all(shown_all(owner, secrets).values()), shown_all(owner, secrets)


# -- courses ---------------------------------------------------------------------------------


def course_surfaces(
    url: str, student: Client, token: str, cid: int, aid: int, sid: str
) -> dict[str, str]:
    """Everything a student can fetch of a submission: it, its results, its report, its page,
    the assignment's listings."""
    base = f"/courses/{cid}/submissions/{sid}"
    page = httpx.get(f"{url}{base}", headers={"Accept": "text/html"}, cookies={GUEST_COOKIE: token})
    assert page.status_code == 200 and "<html" in page.text
    return {
        f"{sid} submission": flatten(student.call("GET", base, 200)),
        f"{sid} results": flatten(student.call("GET", f"{base}/results", 200)),
        f"{sid} report": student.call("GET", f"{base}/report", 200).text,
        f"{sid} page": page.text,
        f"{sid} list": flatten(
            student.call("GET", f"/courses/{cid}/assignments/{aid}/submissions", 200)
        ),
    }


def test_a_course_student_sees_nothing_of_the_private_tests_before_the_due_date(
    server_settings: Settings, tmp_path: Path
) -> None:
    settings = server_settings.model_copy(
        update={
            "grader_workers": 2,
            "rate_limits_enabled": False,
            "grader_allow_unsandboxed": True,
            "grader_max_queued_per_player": 20,
        }
    )
    running = start_server(settings)
    url = running.url
    endgame, agent = endgame_suite(), agent_suite(tmp_path)
    try:
        prof, cid = new_course(url)
        assignments = {
            "endgame": add_assignment(prof, cid, suite=endgame, before_due="score", daily_limit=50)[
                "assignment_id"
            ],
            "agent": add_assignment(
                prof, cid, profile="agent", suite=agent, before_due="score", daily_limit=50
            )["assignment_id"],
        }
        imported = students(prof, url, cid, "s1")
        ada = imported["s1"]
        token = str(ada.http.headers["Authorization"]).removeprefix("Bearer ")
        submitted: list[tuple[str, str]] = []
        for profile, programs, main in (
            ("endgame", ENDGAME_HOSTILE, "checkers.py"),
            ("agent", AGENT_HOSTILE, "agent.py"),
        ):
            for source in programs.values():
                body = ada.call(
                    "POST",
                    f"/courses/{cid}/assignments/{assignments[profile]}/submissions",
                    202,
                    files=[("files", (main, source, "text/x-python"))],
                )
                submitted.append((profile, body["submission_id"]))
        for _, sid in submitted:
            ada.wait(cid, sid, timeout=300)

        def everything() -> dict[str, str]:
            found: dict[str, str] = {}
            for profile, sid in submitted:
                found |= course_surfaces(url, ada, token, cid, assignments[profile], sid)
            for profile, aid in assignments.items():
                found[f"arena course submissions {profile}"] = arena(
                    url, token, "course", "submissions", str(cid), str(aid)
                )
            found["assignments"] = flatten(ada.call("GET", f"/courses/{cid}/assignments", 200))
            return found

        # Under `score`: every test's points, the private ones as their outcome.
        shown = everything()
        folder = tmp_path / "cli"
        folder.mkdir()
        (folder / "checkers.py").write_bytes(ENDGAME_HOSTILE["echo"])
        shown["arena grader submit --course"] = arena(
            url,
            token,
            *("grader", "submit", str(folder / "checkers.py")),
            *("--course", str(cid), "--assignment", str(assignments["endgame"])),
        )
        secrets = private_secrets(endgame, agent)
        assert leaks(shown, secrets) == []
        # Under `public`: the private tests left out.
        for aid in assignments.values():
            prof.call(
                "PATCH", f"/courses/{cid}/assignments/{aid}", 200, json={"before_due": "public"}
            )
        assert leaks(everything(), secrets) == []
        # Staff see every private board.
        staff = {
            sid: flatten(prof.call("GET", f"/courses/{cid}/submissions/{sid}/results", 200))
            for _, sid in submitted
        }
        assert all(shown_all(staff, secrets).values()), shown_all(staff, secrets)
    finally:
        running.stop()


# -- timing ----------------------------------------------------------------------------------

# Sleeps by the number of black pieces on each private board; the other sleeps the same on
# every board.
SLEEPS_BY_BOARD = _PRELUDE + "import time\ntime.sleep(0.4 * board.count('b'))\nsys.exit(1)\n"
SLEEPS_ALIKE = _PRELUDE + "import time\ntime.sleep(0.05)\nsys.exit(1)\n"
TIMES = ("started_time_ms", "finished_time_ms")


def test_a_running_time_made_of_private_boards_cannot_be_read_back(
    server_settings: Settings, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    endgame_path, _ = suites
    settings = grading_settings(
        server_settings,
        grader_endgame_suite=endgame_path,
        grader_max_queued_per_player=20,
        rate_limits_enabled=False,
    )
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=60) as client:
            hosted = [
                wait_done(client, upload(client, "endgame", {"checkers.py": p.encode()})["job_id"])
                for p in (SLEEPS_BY_BOARD, SLEEPS_ALIKE)
            ]
        # The uploader sees the same timing fields whatever the program slept.
        assert [(job.started_time_ms, job.finished_time_ms) for job in hosted] == [(None, None)] * 2

        prof, cid = new_course(running.url)
        aid = add_assignment(prof, cid, suite=endgame_suite(), before_due="score")["assignment_id"]
        ada = students(prof, running.url, cid, "s1")["s1"]
        sids = [
            ada.submit(cid, aid, program.encode())["submission_id"]
            for program in (SLEEPS_BY_BOARD, SLEEPS_ALIKE)
        ]
        seen = [ada.wait(cid, sid).model_dump() for sid in sids]
        assert [tuple(s[key] for key in TIMES) for s in seen] == [(None, None)] * 2
        # Staff see the times, and after the due date the student does too.
        staff = [prof.call("GET", f"/courses/{cid}/submissions/{sid}", 200) for sid in sids]
        assert all(s[key] is not None for s in staff for key in TIMES)
        prof.call(
            "PATCH",
            f"/courses/{cid}/assignments/{aid}",
            200,
            json={"due_at": iso(datetime.now(UTC) - timedelta(seconds=1))},
        )
        after = ada.call("GET", f"/courses/{cid}/submissions/{sids[0]}", 200)
        assert all(after[key] is not None for key in TIMES)
    finally:
        running.stop()
