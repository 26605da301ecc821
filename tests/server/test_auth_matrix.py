"""Who may do what, route by route: every route of the app x {no token, a malformed token,
another player's token, the right token}, then the same by the browser's cookie.

The routes are enumerated from the application's own route table, so a route added without a
row here fails `test_every_route_has_a_row`. Each row prepares what its route acts on (a match,
a challenge, a tournament) and says which player holds "the right token" and which one is
"another player"; the four requests go in that order (the refused ones first, so a state change
by the right token comes last) and each answer's status must be the row's. Then the row's
route is prepared again and asked by the cookie holding each token: first the right player's
from another site's page (`Origin`), refused 403 by every route that takes a credential when
the method changes something, then another player's and the right player's from this site,
answered as their tokens are (or as the row's `cookie` says).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.routing import Mount
from websockets.exceptions import ConnectionClosed

from server.app import create_app
from server.deps import GUEST_COOKIE, current_caller, optional_caller
from server.routes.web_courses.join import check_join_origin
from server.settings import Settings
from server.web.security import SAFE_METHODS, check_origin
from tests.server.conftest import RunningServer
from tests.server.courses.test_courses_auth import course_routes
from tests.wsclient import connect

CELLS = ("none", "malformed", "other", "right")
COOKIE_CELLS = ("other", "right")
MALFORMED = {"Authorization": "Bearer arena_not-a-real-token"}
FOREIGN = {"Origin": "https://evil.example"}
GUARDS = (optional_caller, current_caller, check_origin, check_join_origin)
"""What refuses a request by the cookie from another site's page: the credential's dependency,
or a form's own Origin check."""
HELLO = json.dumps({"type": "hello", "protocol_version": "1.0"})
_names = itertools.count()


def walk(routes: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Yield (METHOD or WS, path) for every route of an app, through included routers."""
    for route in routes:
        if hasattr(route, "original_router"):
            included = getattr(route.include_context, "prefix", "") or ""
            yield from walk(route.original_router.routes, prefix + included)
        elif isinstance(route, Mount):
            # A mounted app (the web pages' static assets) answers GET for any path below it.
            yield "GET", prefix + route.path + "/{path}"
        elif hasattr(route, "methods") and route.methods:
            for method in sorted(route.methods - {"HEAD"}):
                yield method, prefix + route.path
        else:
            yield "WS", prefix + route.path


def app_routes(app: FastAPI) -> set[tuple[str, str]]:
    return set(walk(app.routes))


def _is_guarded(dependant: Dependant) -> bool:
    return any(d.call in GUARDS or _is_guarded(d) for d in dependant.dependencies)


def guarded_routes(routes: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Yield (METHOD, path) of every route that changes something and takes a credential or
    checks the Origin: a request by the cookie from another site's page is refused there."""
    for route in routes:
        if hasattr(route, "original_router"):
            included = getattr(route.include_context, "prefix", "") or ""
            yield from guarded_routes(route.original_router.routes, prefix + included)
        elif isinstance(route, APIRoute) and _is_guarded(route.dependant):
            for method in sorted((route.methods or set()) - SAFE_METHODS):
                yield method, prefix + route.path


@dataclass
class World:
    """Registered players (owner, other, invitee) and a client of the live server."""

    http: httpx.Client
    ws_url: str
    tokens: dict[str, str] = field(default_factory=dict)
    checkers: str | None = None

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def register(self, name: str) -> None:
        response = self.http.post("/players", json={"name": name})
        assert response.status_code == 201, response.text
        self.tokens[name] = response.json()["token"]

    def post(self, path: str, who: str, body: Any = None) -> dict[str, Any]:
        response = self.http.post(path, json=body, headers=self.auth(who))
        assert response.status_code in (200, 201), response.text
        result: dict[str, Any] = response.json()
        return result

    def match(self, game: str = "tictactoe", seats: tuple[Any, Any] | None = None) -> str:
        """A match of owner against invitee, accepted: active, owner (seat 0) to move."""
        seats = seats or ("owner", "invitee")
        state = self.post("/matches", "owner", {"game": game, "seats": list(seats)})
        if "invitee" in seats:
            state = self.post(f"/matches/{state['match_id']}/accept", "invitee")
        return str(state["match_id"])

    def challenge(self) -> str:
        """A match in which owner challenges invitee (waiting for invitee's answer)."""
        body = {"game": "tictactoe", "seats": ["owner", "invitee"]}
        return str(self.post("/matches", "owner", body)["match_id"])

    def job(self) -> str:
        """A grading job uploaded by owner; still being graded (the first job of a server makes
        its private suite first, which takes seconds)."""
        response = self.http.post(
            "/grader/jobs",
            data={"profile": "endgame"},
            files={"files": ("checkers.py", b"import sys\nsys.exit(3)\n")},
            headers=self.auth("owner"),
        )
        assert response.status_code == 202, response.text
        return str(response.json()["job_id"])

    def hosted_bot(self) -> dict[str, str]:
        """A hosted bot of owner's, with no version."""
        name = f"bot{next(_names)}"
        self.post("/hosted-bots", "owner", {"name": name, "game": "tictactoe"})
        return {"owner": "owner", "name": name}

    def checkers_bot(self) -> str:
        """A hosted checkers bot of owner's (with no version: a pool never pairs it), the same
        one each time."""
        if self.checkers is None:
            self.checkers = f"bot{next(_names)}"
            self.post("/hosted-bots", "owner", {"name": self.checkers, "game": "checkers"})
        return self.checkers

    def pooled_bot(self) -> dict[str, str]:
        """Owner's checkers bot, in the checkers pool."""
        name = self.checkers_bot()
        self.post("/pools/checkers/members", "owner", {"bot": f"owner/{name}"})
        return {"pool": "checkers", "owner": "owner", "name": name}

    def pooled_player(self) -> dict[str, str]:
        """Owner itself, a connected bot, in the checkers pool."""
        self.post("/pools/checkers/members", "owner", {"bot": "owner"})
        return {"pool": "checkers", "player": "owner"}

    def tournament(self, *bots: str) -> str:
        body = {"game": "tictactoe", "bots": list(bots or ("random", "greedy"))}
        return str(self.post("/tournaments", "owner", body)["tournament_id"])


@dataclass(frozen=True)
class Row:
    """One route: what it acts on, who is "right" and "other", and the four statuses."""

    method: str
    path: str
    expected: tuple[int | str, int | str, int | str, int | str]
    prepare: Callable[[World], dict[str, str]] = lambda world: {}
    body: Callable[[World], Any] = lambda world: None
    right: str = "owner"
    other: str = "other"
    query: dict[str, str] = field(default_factory=dict)
    cookie: tuple[int | str, int | str] | None = None
    """The statuses by another player's cookie and the right one's, when not their tokens'."""

    def by_cookie(self) -> tuple[int | str, int | str]:
        return self.cookie or (self.expected[2], self.expected[3])


def fresh_player(_world: World) -> Any:
    return {"name": f"newcomer{next(_names)}"}


def drawn_offer(world: World) -> dict[str, str]:
    match_id = world.match()
    world.post(f"/matches/{match_id}/offer-draw", "owner")
    return {"match_id": match_id}


COURSE_IDS = {
    "course_id": "1",
    "assignment_id": "1",
    "member_id": "1",
    "submission_id": "j_1",
    "regrade_id": "1",
}
"""Ids for the course routes the cookie guards (refused before any is looked up)."""

PUBLIC = (200, 200, 200, 200)
PLAYER = (401, 401, 200, 200)
OWN_MATCH = (401, 401, 403, 200)
NO_COURSE = (401, 401, 404, 404)

ROWS = [
    Row("GET", "/openapi.json", PUBLIC),
    Row("GET", "/docs", PUBLIC),
    Row("GET", "/", PUBLIC),
    Row("GET", "/health", PUBLIC),
    Row("GET", "/games", PUBLIC),
    Row("GET", "/bots", PUBLIC),
    Row("GET", "/bots/online", PUBLIC),
    Row("GET", "/protocol/schema", PUBLIC),
    # The web pages' assets are public, and a token changes nothing.
    Row("GET", "/static/{path}", PUBLIC, lambda w: {"path": "arena.css"}),
    Row("GET", "/docs/assets/{path}", PUBLIC, lambda w: {"path": "swagger-ui.css"}),
    # Registering needs no token (and ignores one).
    Row("POST", "/players", (201, 201, 201, 201), body=fresh_player),
    # Ratings are public reads.
    Row("GET", "/players/{name}", PUBLIC, lambda w: {"name": "invitee"}),
    Row("GET", "/leaderboard", PUBLIC, query={"game": "checkers"}),
    # Any player may create a match; seating another player only challenges them.
    Row(
        "POST",
        "/matches",
        (401, 401, 201, 201),
        body=lambda w: {"game": "connect4", "seats": ["owner", {"bot": "random"}]},
    ),
    Row("GET", "/matches", PUBLIC),
    # A token is optional when reading a match, but a wrong one is refused, not ignored.
    Row("GET", "/matches/{match_id}", (200, 401, 200, 200), lambda w: {"match_id": w.match()}),
    Row(
        "POST",
        "/matches/{match_id}/join",
        (401, 401, 409, 200),
        lambda w: {"match_id": w.match(seats=("owner", "open"))},
        body=lambda w: {},
        right="other",
        other="owner",
    ),
    Row(
        "POST",
        "/matches/{match_id}/moves",
        OWN_MATCH,
        lambda w: {"match_id": w.match()},
        body=lambda w: {"move": "4"},
    ),
    Row(
        "POST",
        "/matches/{match_id}/accept",
        (401, 401, 403, 200),
        lambda w: {"match_id": w.challenge()},
        right="invitee",
    ),
    Row(
        "POST",
        "/matches/{match_id}/decline",
        (401, 401, 403, 200),
        lambda w: {"match_id": w.challenge()},
        right="invitee",
    ),
    Row("POST", "/matches/{match_id}/resign", OWN_MATCH, lambda w: {"match_id": w.match()}),
    Row("POST", "/matches/{match_id}/offer-draw", OWN_MATCH, lambda w: {"match_id": w.match()}),
    Row("POST", "/matches/{match_id}/accept-draw", OWN_MATCH, drawn_offer, right="invitee"),
    Row("POST", "/matches/{match_id}/decline-draw", OWN_MATCH, drawn_offer, right="invitee"),
    Row("POST", "/matches/{match_id}/abort", OWN_MATCH, lambda w: {"match_id": w.match()}),
    Row("GET", "/matches/{match_id}/record", PUBLIC, lambda w: {"match_id": w.match()}),
    Row(
        "GET",
        "/matches/{match_id}/pdn",
        PUBLIC,
        lambda w: {"match_id": w.match("checkers", ("owner", {"bot": "random"}))},
    ),
    Row("GET", "/challenges", PLAYER),
    Row(
        "POST",
        "/tournaments",
        (401, 401, 201, 201),
        body=lambda w: {"game": "tictactoe", "bots": ["random", "greedy"]},
    ),
    Row("GET", "/tournaments", PUBLIC),
    Row("GET", "/tournaments/{tournament_id}", PUBLIC, lambda w: {"tournament_id": w.tournament()}),
    Row(
        "POST",
        "/tournaments/{tournament_id}/start",
        OWN_MATCH,
        lambda w: {"tournament_id": w.tournament()},
    ),
    Row(
        "POST",
        "/tournaments/{tournament_id}/cancel",
        OWN_MATCH,
        lambda w: {"tournament_id": w.tournament()},
    ),
    Row(
        "POST",
        "/tournaments/{tournament_id}/accept",
        OWN_MATCH,
        lambda w: {"tournament_id": w.tournament("player:invitee", "random")},
        right="invitee",
    ),
    Row(
        "POST",
        "/tournaments/{tournament_id}/decline",
        OWN_MATCH,
        lambda w: {"tournament_id": w.tournament("player:invitee", "random")},
        right="invitee",
    ),
    # The browser's forms: a guest for anyone; the tournament form acts as its credential's
    # player and makes a guest for a browser without one once the form is read (this body is
    # no form: 422, a wrong token 401; tests/server/web/test_web.py has the form).
    Row("POST", "/web/guest", (303, 303, 303, 303)),
    Row("POST", "/web/guest/forget", (303, 303, 303, 303)),
    Row("POST", "/web/tournaments", (422, 401, 422, 422)),
    # Playing in the browser (tests/server/web/test_web_play.py has the guests' own matrix): the
    # play form and a join make a guest for a request without a credential (the play form:
    # this body is not a form, 422; the join: the first request's new guest takes the open
    # seat); every other form acts as its credential's player, 401 without one.
    Row("POST", "/web/play", (422, 401, 422, 422)),
    Row(
        "POST",
        "/web/matches/{match_id}/join",
        (303, 401, 409, 409),
        lambda w: {"match_id": w.match(seats=("owner", "open"))},
        # By the cookie, another player takes the open seat first.
        cookie=(303, 409),
    ),
    *(
        Row(
            "POST",
            f"/web/matches/{{match_id}}/{action}",
            (401, 401, 403, 303),
            prepare,
            right="invitee",
        )
        for action, prepare in (
            ("accept", lambda w: {"match_id": w.challenge()}),
            ("decline", lambda w: {"match_id": w.challenge()}),
        )
    ),
    # A rematch follows a finished match only: the owner's is still being played.
    Row(
        "POST",
        "/web/matches/{match_id}/rematch",
        (401, 401, 403, 409),
        lambda w: {"match_id": w.match()},
    ),
    # The search-tree explorer: public, its page and its JSON routes alike; a token (even a
    # malformed one) changes nothing.
    Row("GET", "/explore", PUBLIC),
    Row("POST", "/explore/position", PUBLIC, body=lambda w: {"game": "tictactoe", "moves": ["4"]}),
    Row(
        "POST",
        "/explore/trace",
        PUBLIC,
        body=lambda w: {"game": "tictactoe", "position": "X...O....", "depth": 2},
    ),
    Row("GET", "/grader/profiles", PUBLIC),
    # A profile's starter file, as a course hands it out: public like the profiles.
    Row("GET", "/grader/starters/{profile}", PUBLIC, lambda w: {"profile": "endgame"}),
    Row("GET", "/grader", PUBLIC),
    # The grader page's form: no credential asked (a guest is made for a browser without
    # one), but a post without files is refused before that (a wrong token first, 401).
    Row("POST", "/web/grader/jobs", (422, 401, 422, 422)),
    # Uploading needs a player's token (unless ARENA_GRADER_ALLOW_ANONYMOUS); a job is read
    # with its uploader's token or cookie only (the job page's script reads its JSON by the
    # cookie). Its results are not ready yet: JOB_NOT_FINISHED (409).
    Row("GET", "/grader/jobs/{job_id}", OWN_MATCH, lambda w: {"job_id": w.job()}),
    Row(
        "GET",
        "/grader/jobs/{job_id}/results.json",
        (401, 401, 403, 409),
        lambda w: {"job_id": w.job()},
    ),
    Row(
        "GET",
        "/grader/jobs/{job_id}/report.html",
        (401, 401, 403, 409),
        lambda w: {"job_id": w.job()},
    ),
    # An upload that cannot be graded (no checkers.py): refused before anything is queued.
    Row(
        "POST",
        "/grader/jobs",
        (401, 401, 422, 422),
    ),
    # The course pages and their forms (server/routes/web_courses/) act as the credential's
    # player: without one a page or a form is refused (401), a player of no such course is
    # told so (404); an unknown invite link is a 404 page. tests/server/web/test_web_courses.py
    # has the members' own matrix (student, another student, TA, instructor, a non-member).
    Row("GET", "/join/{token}", (404,) * 4, lambda w: {"token": "arena_" + "x" * 32}),
    Row("POST", "/web/join", (404,) * 4),
    Row("GET", "/courses/{course_id}/roster", NO_COURSE, lambda w: {"course_id": "1"}),
    Row(
        "GET",
        "/courses/{course_id}/students/{member_id}",
        NO_COURSE,
        lambda w: {"course_id": "1", "member_id": "1"},
    ),
    *(
        Row(method, path, NO_COURSE, lambda w: COURSE_IDS)
        for method, path in (
            ("POST", "/web/courses/{course_id}/assignments/{assignment_id}/submissions"),
            ("POST", "/web/courses/{course_id}/assignments/{assignment_id}/regrade"),
            ("POST", "/web/courses/{course_id}/assignments/{assignment_id}/tournaments"),
            ("POST", "/web/courses/{course_id}/members"),
            ("POST", "/web/courses/{course_id}/members/{member_id}/invite"),
            ("POST", "/web/courses/{course_id}/members/{member_id}/drop"),
        )
    ),
    # Hosted bots: any player creates their own; anyone reads them; only the owner changes
    # one, uploads its versions (a file that does not compile: 422) or reads its failures.
    Row(
        "POST",
        "/hosted-bots",
        (401, 401, 201, 201),
        body=lambda w: {"name": f"bot{next(_names)}", "game": "nim"},
    ),
    # Reading takes an optional credential (the owner reads why a version was refused): a
    # malformed one is refused.
    Row("GET", "/hosted-bots", (200, 401, 200, 200)),
    Row("GET", "/hosted-bots/{owner}/{name}", (200, 401, 200, 200), lambda w: w.hosted_bot()),
    Row(
        "PATCH",
        "/hosted-bots/{owner}/{name}",
        OWN_MATCH,
        lambda w: w.hosted_bot(),
        body=lambda w: {"description": "changed"},
    ),
    Row(
        "POST",
        "/hosted-bots/{owner}/{name}/versions",
        (401, 401, 403, 422),
        lambda w: w.hosted_bot(),
    ),
    Row("GET", "/hosted-bots/{owner}/{name}/failures", OWN_MATCH, lambda w: w.hosted_bot()),
    # Rated pools: anyone reads them; an owner enters or takes out their own bot only.
    Row("GET", "/pools", PUBLIC),
    Row("GET", "/pools/{pool}", PUBLIC, lambda w: {"pool": "checkers"}),
    Row(
        "POST",
        "/pools/{pool}/members",
        (401, 401, 403, 201),
        lambda w: {"pool": "checkers"},
        body=lambda w: {"bot": f"owner/{w.checkers_bot()}"},
    ),
    Row(
        "DELETE",
        "/pools/{pool}/members/{owner}/{name}",
        (401, 401, 403, 204),
        lambda w: w.pooled_bot(),
    ),
    # A player enters and takes out only itself as a connected bot.
    Row(
        "POST",
        "/pools/{pool}/members",
        (401, 401, 403, 201),
        lambda w: {"pool": "checkers"},
        body=lambda w: {"bot": "owner"},
    ),
    Row(
        "DELETE",
        "/pools/{pool}/members/{player}",
        (401, 401, 403, 204),
        lambda w: w.pooled_player(),
    ),
    # The hosted bots' pages' forms (tests/server/web/test_hosted_pages.py has them filled
    # in): creating acts as the credential's player, made a guest for a browser without one
    # once the form is read (this body is no form: 422, a wrong token 401); the bot's own
    # forms are its owner's alone (another player 403), and this empty body names no
    # version, kind or pool (422) except resume's, which needs none.
    Row("POST", "/web/hosted-bots", (422, 401, 422, 422)),
    *(
        Row(
            "POST",
            f"/web/hosted-bots/{{owner}}/{{name}}/{form}",
            (401, 401, 403, answer),
            lambda w: w.hosted_bot(),
        )
        for form, answer in (
            ("versions", 422),
            ("active", 422),
            ("resume", 303),
            ("join", 422),
            ("leave", 422),
        )
    ),
    # WebSockets: the answer is the first message, or the close code.
    Row("WS", "/ws", (4001, 4001, "welcome", "welcome")),
    Row("WS", "/ws/matches/{match_id}", ("welcome",) * 4, lambda w: {"match_id": w.match()}),
    Row(
        "WS",
        "/ws/tournaments/{tournament_id}",
        ("welcome",) * 4,
        lambda w: {"tournament_id": w.tournament()},
    ),
]


def test_every_route_has_a_row() -> None:
    """A new route without a row here fails: its authorization must be decided and tested."""
    app = create_app(Settings())
    # The course REST routes have their own matrix, by role
    # (tests/server/courses/test_courses_auth.py).
    routes = app_routes(app) - course_routes(app)
    rows = {(row.method, row.path) for row in ROWS}
    assert routes - rows == set(), "routes with no row in the auth matrix"
    assert rows - routes == set(), "rows for routes that no longer exist"


async def _ws_answer(url: str, headers: dict[str, str]) -> int | str:
    """Connect, say hello; return the first message's type, or the close code."""
    try:
        async with connect(url, additional_headers=headers) as ws:
            await ws.send(HELLO)
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if message["type"] != "error":
                    return str(message["type"])
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd is not None else "closed"


def _headers(world: World, row: Row, cell: str) -> dict[str, str]:
    if cell == "none":
        return {}
    if cell == "malformed":
        return dict(MALFORMED)
    return world.auth(row.other if cell == "other" else row.right)


def _ask(http: httpx.Client, world: World, row: Row, path: str, headers: dict[str, str]) -> int:
    """Send the row's request to `path` with `headers` (and no cookie but theirs)."""
    http.cookies.clear()
    if row.path == "/grader/jobs":
        files = {"files": ("notes.txt", b"not a program")}
        return http.post(
            path, data={"profile": "endgame"}, files=files, headers=headers
        ).status_code
    if row.path == "/hosted-bots/{owner}/{name}/versions":
        files = {"files": ("bot.py", b"def broken(:\n")}
        return http.post(path, data={"kind": "engine"}, files=files, headers=headers).status_code
    response = http.request(
        row.method, path, json=row.body(world), headers=headers, params=row.query
    )
    return response.status_code


def _cookie(world: World, who: str, *, origin: str) -> dict[str, str]:
    """The headers of a browser whose cookie holds `who`'s token, on a page of `origin`."""
    return {"Cookie": f"{GUEST_COOKIE}={world.tokens[who]}", "Origin": origin}


GUARDED = frozenset(guarded_routes(create_app(Settings()).routes))


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.method} {row.path}")
def test_route_answers_each_token_as_documented(live_server: RunningServer, row: Row) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        world = World(http, live_server.ws_url)
        for name in ("owner", "other", "invitee"):
            world.register(name)
        path = row.path.format(**row.prepare(world))
        answers: list[int | str] = []
        for cell in CELLS:
            headers = _headers(world, row, cell)
            if row.method == "WS":
                answers.append(asyncio.run(_ws_answer(live_server.ws_url + path, headers)))
            else:
                answers.append(_ask(http, world, row, path, headers))
        assert tuple(answers) == row.expected, dict(zip(CELLS, answers, strict=True))
        if row.method == "WS":
            return

        # The same route by the cookie: from another site's page first (nothing done when
        # refused), then another player's and the right player's from this site.
        path = row.path.format(**row.prepare(world))
        this_site = live_server.url
        if row.method not in SAFE_METHODS:
            foreign = _ask(
                http, world, row, path, _cookie(world, row.right, origin=FOREIGN["Origin"])
            )
            expected = 403 if (row.method, row.path) in GUARDED else row.expected[3]
            assert foreign == expected, ("another site's page", foreign)
            if foreign != 403:
                path = row.path.format(**row.prepare(world))
        by_cookie = tuple(
            _ask(http, world, row, path, _cookie(world, who, origin=this_site))
            for who in (row.other, row.right)
        )
        assert by_cookie == row.by_cookie(), dict(zip(COOKIE_CELLS, by_cookie, strict=True))
