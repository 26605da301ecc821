"""Take the screenshots docs/WEB.md shows: every page of a freshly seeded server, small PNGs.

    make screenshots          # or: .venv/bin/python docs/screenshots.py [--out docs/img]

Starts `arena serve` on a free port with a fresh SQLite file (the REST rate limits lifted for
the seeding, as the benches do), fills it over REST the way users would (two players who play a
checkers match, a Connect Four game against a house bot, a finished tic-tac-toe game, a Nim
game, a round-robin tournament of house bots played to its end, an SPRT match of two house
bots decided early, a course with an endgame
assignment and a roster of three students; in the browser, a guest starts a checkers game
against a house bot from the lobby's form and uploads the reference endgame solver to the
grader, a student signs in with their invite link and submits the reference solver to the
assignment, and the instructor signs in with theirs; in the explorer, a person steps into
alpha-beta on a tic-tac-toe position), then opens each page in
Debian's Chromium (by path, as tests/web does: `ARENA_CHROMIUM` or `chromium` on PATH) and
saves it at a desktop and a phone width. Each PNG is reduced to a 64-colour palette (Pillow,
from the dev extras), so the committed images stay small.

The browser tests take their own screenshots of every page (to a temporary folder); this script
only makes the illustrations of the docs, from data a person would recognise.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from PIL import Image
from playwright.sync_api import FilePayload, Locator, Page, ViewportSize, sync_playwright

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "bench"))

from local import arena_serve  # noqa: E402 - bench/ is put on the path above

DESKTOP = ViewportSize(width=1100, height=760)
PHONE = ViewportSize(width=390, height=760)
PUBLIC_SUITE = REPO_ROOT / "autograder" / "examples" / "endgame-puzzles.json"
REFERENCE = REPO_ROOT / "autograder" / "reference" / "endgame_solver.py"
COLOURS = 64
"""Palette size of the committed images: the pages use a handful of flat colours."""


def find_chromium() -> str:
    named = os.environ.get("ARENA_CHROMIUM")
    found = (
        (named if named and Path(named).is_file() else shutil.which(named))
        if named
        else shutil.which("chromium") or shutil.which("chromium-browser")
    )
    if found is None:
        sys.exit("no Chromium: install Debian's chromium or set ARENA_CHROMIUM to its path")
    return found


@contextmanager
def arena_server(folder: Path) -> Iterator[str]:
    """Run `arena serve` on a fresh SQLite file in `folder`, grading the public example suite
    (five puzzles: a quick real grading); yield its base URL."""
    env = {
        "ARENA_GRADER_DIR": str(folder / "grader"),
        "ARENA_GRADER_ENDGAME_SUITE": str(PUBLIC_SUITE),
    }
    try:
        with arena_serve(folder, env) as (base, _):
            yield base
    except RuntimeError as error:
        sys.exit(f"arena serve did not start ({error}): see {folder / 'server.log'}")


class Seeder:
    """Fills a server over REST as its users would."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.tokens: dict[str, dict[str, str]] = {}
        self.rng = random.Random(14)

    def register(self, name: str) -> None:
        answer = self.http.post("/players", json={"name": name})
        answer.raise_for_status()
        self.tokens[name] = {"Authorization": f"Bearer {answer.json()['token']}"}

    def match(self, game: str, seats: list[object], owner: str, **extra: object) -> str:
        answer = self.http.post(
            "/matches", json={"game": game, "seats": seats, **extra}, headers=self.tokens[owner]
        )
        answer.raise_for_status()
        match_id = str(answer.json()["match_id"])
        for seat in seats:
            if isinstance(seat, str) and seat != owner:
                accepted = self.http.post(f"/matches/{match_id}/accept", headers=self.tokens[seat])
                accepted.raise_for_status()
        return match_id

    def play(self, match_id: str, plies: int) -> None:
        """Play up to `plies` random moves for whichever registered player is to move."""
        for _ in range(plies):
            state = self.http.get(f"/matches/{match_id}").json()
            if state["status"] != "active" or not state["legal_moves"]:
                return
            seat = state["seats"][state["to_move"]]
            if seat.get("player") not in self.tokens:
                time.sleep(0.2)  # a house bot's turn
                continue
            body = {"move": self.rng.choice(state["legal_moves"])}
            mover = self.tokens[seat["player"]]
            answer = self.http.post(f"/matches/{match_id}/moves", json=body, headers=mover)
            answer.raise_for_status()

    def tournament(self, owner: str, body: dict[str, Any]) -> str:
        answer = self.http.post("/tournaments", json=body, headers=self.tokens[owner])
        answer.raise_for_status()
        tournament_id = str(answer.json()["tournament_id"])
        self.http.post(
            f"/tournaments/{tournament_id}/start", headers=self.tokens[owner]
        ).raise_for_status()
        deadline = time.monotonic() + 120
        while self.http.get(f"/tournaments/{tournament_id}").json()["status"] != "finished":
            if time.monotonic() > deadline:
                sys.exit("the tournament did not finish within 120 s")
            time.sleep(0.5)
        return tournament_id


def seed(http: httpx.Client) -> dict[str, str]:
    """Fill the server; return the pages to show, by the name of their image."""
    seeder = Seeder(http)
    for name in ("ann", "bob"):
        seeder.register(name)
    clock = {"base_ms": 300_000, "increment_ms": 2_000}
    checkers = seeder.match("checkers", ["ann", "bob"], "ann", time_control=clock)
    seeder.play(checkers, 17)
    connect4 = seeder.match(
        "connect4", ["ann", {"bot": "alphabeta:depth=4"}], "ann", time_control=clock
    )
    seeder.play(connect4, 20)
    tictactoe = seeder.match("tictactoe", ["bob", "ann"], "bob")
    seeder.play(tictactoe, 9)
    nim = seeder.match("nim", ["ann", "bob"], "ann")
    seeder.play(nim, 3)
    tournament = seeder.tournament(
        "ann", {"game": "tictactoe", "bots": ["alphabeta:depth=3", "greedy", "random"], "seed": 7}
    )
    sprt = seeder.tournament(
        "bob",
        {
            "game": "tictactoe",
            "bots": ["alphabeta:depth=4", "random"],
            "seed": 7,
            "sprt": {"elo0": 0, "elo1": 50, "max_pairs": 200},
        },
    )
    return {
        "lobby": "/",
        "match-checkers": f"/matches/{checkers}",
        "match-connect4": f"/matches/{connect4}",
        "match-tictactoe": f"/matches/{tictactoe}",
        "match-nim": f"/matches/{nim}",
        "tournaments": "/tournaments",
        "tournament": f"/tournaments/{tournament}",
        "tournament-sprt": f"/tournaments/{sprt}",
        "player": "/players/ann",
        "grader": "/grader",
        "api-docs": "/docs",
    }


COURSE_ROSTER = (
    "student_id,name,email\n"
    "s001,Ada Lovelace,ada@example.edu\n"
    "s002,Alan Turing,alan@example.edu\n"
    "s003,Grace Hopper,grace@example.edu\n"
)


def seed_course(http: httpx.Client) -> dict[str, str]:
    """Make a course over REST as its instructor (`prof`) does: an endgame assignment due in
    a week, a roster; return the instructor's and the first student's invite links and the
    course's pages."""
    answer = http.post("/players", json={"name": "prof"})
    answer.raise_for_status()
    owner = {"Authorization": f"Bearer {answer.json()['token']}"}
    created = http.post("/courses", json={"name": "CS 1: Search and games"}, headers=owner)
    created.raise_for_status()
    course_id = created.json()["course"]["course_id"]
    now = time.time()
    assignment = http.post(
        f"/courses/{course_id}/assignments",
        json={
            "name": "Endgame solver",
            "profile": "endgame",
            "release_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 3600)),
            "due_at": time.strftime("%Y-%m-%dT%H:%M:00Z", time.gmtime(now + 7 * 86400)),
            "late_policy": "penalty",
            "late_penalty_per_day": 10,
            "late_days_max": 3,
            "daily_limit": 5,
            "public_count": 2,
            "private_count": 3,
        },
        headers=owner,
    )
    assignment.raise_for_status()
    assignment_id = assignment.json()["assignment_id"]
    # The suite is generated in the background; submissions wait for it.
    deadline = time.monotonic() + 600
    path = f"/courses/{course_id}/assignments/{assignment_id}"
    while http.get(path, headers=owner).json()["suite_version"] == 0:
        if time.monotonic() > deadline:
            sys.exit("the assignment's suite was not generated within 600 s")
        time.sleep(0.5)
    imported = http.post(
        f"/courses/{course_id}/members",
        content=COURSE_ROSTER.encode(),
        headers={**owner, "Content-Type": "text/csv"},
    )
    imported.raise_for_status()
    return {
        "instructor": created.json()["invite_url"],
        "student": imported.json()["created"][0]["invite_url"],
        "course": f"/courses/{course_id}",
        "assignment": f"/courses/{course_id}/assignments/{assignment_id}",
        "roster": f"/courses/{course_id}/roster",
    }


def sign_in(page: Page, link: str) -> None:
    """Open an invite link and press its button, as a course member does."""
    page.goto(link)
    page.locator("#join").click()
    page.wait_for_url("**/courses/*")


def as_a_student(page: Page, course: dict[str, str]) -> dict[str, str]:
    """Sign in with the student's link and submit the reference solver to the assignment;
    return the pages only that student sees."""
    sign_in(page, course["student"])
    page.goto(course["assignment"])
    upload = FilePayload(
        name="checkers.py", mimeType="text/x-python", buffer=REFERENCE.read_bytes()
    )
    page.set_input_files("#files", files=[upload])
    page.get_by_role("button", name="Submit and grade").click()
    page.wait_for_url("**/submissions/*")
    submission = page.url.removeprefix(page.url.split("/courses/")[0])
    page.locator("#report .total").wait_for(timeout=120_000)
    return {
        "course": course["course"],
        "course-assignment-student": course["assignment"],
        "course-submission": submission,
    }


def as_the_instructor(page: Page, course: dict[str, str]) -> dict[str, str]:
    """Sign in with the instructor's link; return the staff's pages."""
    sign_in(page, course["instructor"])
    return {"course-gradebook": course["assignment"], "course-roster": course["roster"]}


def first_legal_move(panel: Locator) -> list[str]:
    """Return the squares of the first legal move the play panel offers, in clicking order."""
    legal = panel.locator("#legal-moves option").first.get_attribute("value")
    return re.split(r"[-x]", str(legal))


def as_a_guest(page: Page) -> dict[str, str]:
    """Play a few moves against a house bot and upload to the grader, as a browser's guest
    does; return the pages only that guest sees (its game in play mode, its graded job)."""
    page.goto("/")
    form = page.locator("form.play-form")
    form.get_by_label("Game").select_option("checkers")
    form.get_by_label("House bot").select_option("alphabeta:depth=4")
    form.get_by_label("Time control").select_option("5+3")
    form.locator('input[name="colour"][value="first"]').check()
    form.get_by_role("button", name="Play").click()
    page.wait_for_url("**/matches/m_*")
    game = page.url.removeprefix(page.url.split("/matches/")[0])
    panel = page.locator("#play[data-turn=you]")
    for played in (1, 2):
        panel.wait_for()
        for number in first_legal_move(panel):
            page.locator(f'#board rect.hit[data-square="{number}"]').click()
        page.locator("#moves li").nth(2 * played - 1).wait_for()  # the bot's answer
    panel.wait_for()
    page.goto("/grader")
    # The assignment's program is checkers.py: the reference solver, as a student names it.
    upload = FilePayload(
        name="checkers.py", mimeType="text/x-python", buffer=REFERENCE.read_bytes()
    )
    page.set_input_files("#files", files=[upload])
    page.get_by_role("button", name="Upload and grade").click()
    page.wait_for_url("**/grader/jobs/*")
    job = page.url.removeprefix(page.url.split("/grader/")[0])
    page.locator("#report .total").wait_for(timeout=120_000)
    return {"play": game, "grader-job": job}


def shoot(page: Page, path: str, target: Path) -> None:
    """Open `path`, let it settle, save a palette PNG of its first screen to `target`."""
    page.goto(path)
    page.wait_for_load_state("networkidle")
    save_small(page, target)


EXPLORED = ("X...O....", "8", 2, 13)
"""The explorer's picture: a tic-tac-toe position, a move played into it on the board,
alpha-beta's depth, and the node stepped to (a MIN node's cut-off is in view)."""


def explore(page: Page, target: Path) -> None:
    """Trace alpha-beta in the explorer as a person would (type a position, click a move on
    the board, choose the search, trace, step with the arrow key); save the first screen."""
    position, move, depth, steps = EXPLORED
    page.goto("/explore")
    page.wait_for_load_state("networkidle")
    page.fill("#explore-position", position)
    page.click("#explore-load")
    page.locator("#explore-turn").filter(has_text=position).wait_for()
    page.locator(f'#explore-board rect.hit[data-cell="{move}"]').click()
    page.locator("#explore-moves").filter(has_text=move).wait_for()
    page.select_option("#explore-search", "alphabeta")
    page.fill("#explore-depth", str(depth))
    page.click("#explore-run")
    page.locator("#trace").wait_for()
    for _ in range(steps):
        page.keyboard.press("ArrowRight")
    page.locator(f'#trace[data-step="{steps}"]').wait_for()
    page.evaluate("() => document.getElementById('trace').scrollIntoView()")
    save_small(page, target)


def save_small(page: Page, target: Path) -> None:
    """Save a palette PNG of the page's first screen, as it is scrolled, to `target`."""
    page.screenshot(path=str(target))
    with Image.open(target) as image:
        small = image.convert("RGB").quantize(colors=COLOURS, method=Image.Quantize.MEDIANCUT)
    small.save(target, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, arena_server(Path(tmp)) as base:
        with httpx.Client(base_url=base, timeout=30) as http:
            pages = seed(http)
            course = seed_course(http)
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=find_chromium())
            try:
                # Each browser (a guest, a student, the instructor) and the pages it shows.
                people = []
                for act, shown in (
                    (as_a_guest, pages),
                    (lambda page: as_a_student(page, course), {}),
                    (lambda page: as_the_instructor(page, course), {}),
                ):
                    context = browser.new_context(viewport=DESKTOP, base_url=base)
                    own = act(context.new_page())
                    people.append((context.storage_state(), {**shown, **own}))
                    context.close()
                for width, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
                    for cookies, shown in people:
                        context = browser.new_context(
                            viewport=viewport, base_url=base, storage_state=cookies
                        )
                        page = context.new_page()
                        for name, path in shown.items():
                            target = args.out / f"{name}-{width}.png"
                            shoot(page, path, target)
                            print(f"{target}: {target.stat().st_size:,} bytes")
                        context.close()
                    context = browser.new_context(viewport=viewport, base_url=base)
                    target = args.out / f"explore-{width}.png"
                    explore(context.new_page(), target)
                    print(f"{target}: {target.stat().st_size:,} bytes")
                    context.close()
            finally:
                browser.close()


if __name__ == "__main__":
    main()
