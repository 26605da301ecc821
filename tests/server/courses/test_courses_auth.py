"""Who may do what on every course REST route: each route x {anonymous, a student of the
course, another student of the course, a student of another course, a TA, an instructor}.

The routes are enumerated from the application's own route table (every route of
server/routes/courses/), so a course route added without a row fails
`test_every_course_route_has_a_row`. One course is set up per test; each row prepares what its
route acts on and the six requests go in the order of `ORDER` (the refused first, so that a
state change by staff comes last); each answer's status must be the row's. The browser's
cookie holding each token is asked too: a route that changes something refuses it from another
site's page (403, before anything is done), and a read answers it as it answers the token.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute

from server.app import create_app
from server.deps import GUEST_COOKIE
from server.settings import Settings
from server.web.security import SAFE_METHODS
from tests.server.conftest import RunningServer
from tests.server.grading.test_grading import PUBLIC_SUITE, sandboxed

CELLS = ("anonymous", "student", "other", "outsider", "ta", "instructor")
ORDER = ("anonymous", "outsider", "other", "student", "ta", "instructor")
"""The order the requests go in: the refused ones first."""
SUITE = json.loads(PUBLIC_SUITE.read_text())
SUITE["puzzles"] = SUITE["puzzles"][:1]
FAILING = b"import sys\nsys.exit(1)\n"


def course_routes(app: FastAPI) -> set[tuple[str, str]]:
    """Return (METHOD, path) of every route of server/routes/courses/ in `app`."""

    def walk(routes: Any, prefix: str) -> Iterator[tuple[str, str]]:
        for route in routes:
            if hasattr(route, "original_router"):
                included = getattr(route.include_context, "prefix", "") or ""
                yield from walk(route.original_router.routes, prefix + included)
            elif isinstance(route, APIRoute) and route.endpoint.__module__.startswith(
                "server.routes.courses."
            ):
                for method in sorted((route.methods or set()) - {"HEAD"}):
                    yield method, prefix + route.path

    return set(walk(app.routes, ""))


@dataclass
class World:
    """A course (instructor, TA, two students) and a student of another course."""

    http: httpx.Client
    tokens: dict[str, str] = field(default_factory=dict)
    ids: dict[str, Any] = field(default_factory=dict)

    def auth(self, who: str) -> dict[str, str]:
        token = self.tokens.get(who)
        return {} if token is None else {"Authorization": f"Bearer {token}"}

    def call(self, method: str, path: str, who: str, expect: int, **kwargs: Any) -> Any:
        headers = {**kwargs.pop("headers", {}), **self.auth(who)}
        response = self.http.request(method, path, headers=headers, **kwargs)
        assert response.status_code == expect, (method, path, response.text)
        return response.json() if response.content else None

    def course(self, owner: str) -> tuple[int, dict[str, str]]:
        """Make a course owned by `owner` with students s1, s2 and TA t1; return its id and
        the invite tokens by student id."""
        cid = self.call("POST", "/courses", owner, 201, json={"name": "course"})["course"][
            "course_id"
        ]
        roster = "student_id,name,email,role\ns1,Ada,,student\ns2,Bob,,student\nt1,Tom,,ta\n"
        imported = self.call(
            "POST",
            f"/courses/{cid}/members",
            owner,
            200,
            content=roster.encode(),
            headers={"Content-Type": "text/csv"},
        )
        links = {i["member"]["student_id"]: i["invite_token"] for i in imported["created"]}
        return int(cid), links

    def set_up(self) -> None:
        for name in ("instructor", "stranger"):
            response = self.http.post("/players", json={"name": f"{name}-{secrets.token_hex(4)}"})
            assert response.status_code == 201, response.text
            self.tokens[name] = response.json()["token"]
        cid, links = self.course("instructor")
        self.tokens.update(student=links["s1"], other=links["s2"], ta=links["t1"])
        _, elsewhere = self.course("stranger")
        self.tokens["outsider"] = elsewhere["s1"]
        now = datetime.now(UTC)
        assignment = self.call(
            "POST",
            f"/courses/{cid}/assignments",
            "instructor",
            201,
            json={
                "name": "endgame",
                "profile": "endgame",
                "release_at": (now - timedelta(hours=1)).isoformat(),
                "due_at": (now + timedelta(days=1)).isoformat(),
                "daily_limit": 100,
                "suite": SUITE,
            },
        )
        self.ids.update(course_id=cid, assignment_id=assignment["assignment_id"])

    def submission(self) -> str:
        """A submission by the student, graded."""
        cid, aid = self.ids["course_id"], self.ids["assignment_id"]
        sid = self.call(
            "POST",
            f"/courses/{cid}/assignments/{aid}/submissions",
            "student",
            202,
            files=[("files", ("checkers.py", FAILING, "text/x-python"))],
        )["submission_id"]
        deadline = time.monotonic() + 120
        while self.call("GET", f"/courses/{cid}/submissions/{sid}", "student", 200)[
            "status"
        ] not in ("done", "error"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        return str(sid)

    def new_member(self) -> int:
        cid = self.ids["course_id"]
        sid = f"x{secrets.token_hex(3)}"
        imported = self.call(
            "POST",
            f"/courses/{cid}/members",
            "instructor",
            200,
            json={"rows": [{"student_id": sid}]},
        )
        return int(imported["created"][0]["member"]["member_id"])

    def class_tournament(self) -> int:
        """A class tournament of a new agent assignment, its references only (no student has
        submitted to it)."""
        cid = self.ids["course_id"]
        due = (datetime.now(UTC) + timedelta(days=1)).isoformat()
        aid = self.call(
            "POST",
            f"/courses/{cid}/assignments",
            "instructor",
            201,
            json={"name": "agent", "profile": "agent", "due_at": due, "private_count": 8},
        )["assignment_id"]
        return int(
            self.call(
                "POST",
                f"/courses/{cid}/assignments/{aid}/tournaments",
                "instructor",
                201,
                json={"house_bots": ["random", "greedy"], "ply_cap": 10},
            )["class_tournament_id"]
        )

    def regrade(self) -> int:
        cid, aid = self.ids["course_id"], self.ids["assignment_id"]
        return int(
            self.call("POST", f"/courses/{cid}/assignments/{aid}/regrade", "instructor", 202)[
                "regrade_id"
            ]
        )


@dataclass(frozen=True)
class Row:
    """One route: what it acts on, its body, and the six statuses in `CELLS` order."""

    method: str
    path: str
    expected: tuple[int, int, int, int, int, int]
    prepare: Callable[[World], dict[str, Any]] = lambda world: {}
    body: Callable[[World], dict[str, Any]] = lambda world: {}


MEMBER = (401, 200, 200, 404, 200, 200)
STAFF = (401, 403, 403, 404, 200, 200)
INSTRUCTOR = (401, 403, 403, 404, 403, 200)
OWNER = (401, 200, 404, 404, 200, 200)
"""A submission: its submitter and staff."""


def _submission(world: World) -> dict[str, Any]:
    return {"submission_id": world.submission()}


def _class_tournament(world: World) -> dict[str, Any]:
    return {"class_id": world.class_tournament()}


def _member(world: World) -> dict[str, Any]:
    return {"member_id": world.new_member()}


def _suite(world: World) -> dict[str, Any]:
    return {"json": SUITE}


def _csv(world: World) -> dict[str, Any]:
    sid = f"r{secrets.token_hex(3)}"
    return {"content": f"{sid},Rae,\n".encode(), "headers": {"Content-Type": "text/csv"}}


def _upload(world: World) -> dict[str, Any]:
    return {"files": [("files", ("checkers.py", FAILING, "text/x-python"))]}


def _new_assignment(world: World) -> dict[str, Any]:
    due = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    name = f"a{secrets.token_hex(3)}"
    return {"json": {"name": name, "profile": "endgame", "due_at": due, "suite": SUITE}}


ROWS = [
    Row("POST", "/courses", (401, 201, 201, 201, 201, 201), body=lambda w: {"json": {"name": "c"}}),
    Row("GET", "/courses", (401, 200, 200, 200, 200, 200)),
    Row("GET", "/courses/{course_id}", MEMBER),
    Row("GET", "/courses/{course_id}/assignments", MEMBER),
    Row(
        "POST",
        "/courses/{course_id}/assignments",
        (401, 403, 403, 404, 403, 201),
        body=_new_assignment,
    ),
    Row("GET", "/courses/{course_id}/assignments/{assignment_id}", MEMBER),
    Row(
        "PATCH",
        "/courses/{course_id}/assignments/{assignment_id}",
        INSTRUCTOR,
        body=lambda w: {"json": {"daily_limit": 100}},
    ),
    Row("PUT", "/courses/{course_id}/assignments/{assignment_id}/suite", INSTRUCTOR, body=_suite),
    Row("GET", "/courses/{course_id}/members", STAFF),
    Row("POST", "/courses/{course_id}/members", INSTRUCTOR, body=_csv),
    Row("POST", "/courses/{course_id}/members/{member_id}/invite", INSTRUCTOR, _member),
    Row(
        "DELETE",
        "/courses/{course_id}/members/{member_id}",
        (401, 403, 403, 404, 403, 204),
        _member,
    ),
    Row(
        "POST",
        "/courses/{course_id}/assignments/{assignment_id}/submissions",
        (401, 202, 202, 404, 202, 202),
        body=_upload,
    ),
    Row("GET", "/courses/{course_id}/assignments/{assignment_id}/submissions", MEMBER),
    Row("GET", "/courses/{course_id}/submissions/{submission_id}", OWNER, _submission),
    Row("GET", "/courses/{course_id}/submissions/{submission_id}/results", OWNER, _submission),
    Row("GET", "/courses/{course_id}/submissions/{submission_id}/report", OWNER, _submission),
    Row("GET", "/courses/{course_id}/submissions/{submission_id}/files", OWNER, _submission),
    Row(
        "POST",
        "/courses/{course_id}/assignments/{assignment_id}/regrade",
        (401, 403, 403, 404, 202, 202),
    ),
    Row(
        "GET",
        "/courses/{course_id}/regrades/{regrade_id}",
        STAFF,
        lambda w: {"regrade_id": w.regrade()},
    ),
    # The world's assignment grades endgame programs: staff pass the check of who may start
    # a class tournament and are told only an agent assignment's can.
    Row(
        "POST",
        "/courses/{course_id}/assignments/{assignment_id}/tournaments",
        (401, 403, 403, 404, 422, 422),
        body=lambda w: {"json": {"house_bots": ["random", "greedy"]}},
    ),
    Row("GET", "/courses/{course_id}/assignments/{assignment_id}/tournaments", MEMBER),
    Row("GET", "/courses/{course_id}/tournaments/{class_id}", MEMBER, _class_tournament),
    Row("GET", "/courses/{course_id}/tournaments/{class_id}.csv", STAFF, _class_tournament),
    Row("GET", "/courses/{course_id}/assignments/{assignment_id}/gradebook", STAFF),
    Row("GET", "/courses/{course_id}/assignments/{assignment_id}/gradebook.csv", STAFF),
]


def test_every_course_route_has_a_row() -> None:
    """A course route added without a row here fails: its authorization must be decided."""
    routes = course_routes(create_app(Settings()))
    rows = {(row.method, row.path) for row in ROWS}
    assert routes - rows == set(), "course routes with no row in the matrix"
    assert rows - routes == set(), "rows for course routes that no longer exist"


@sandboxed
@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.method} {row.path}")
def test_course_route_answers_each_member_as_documented(
    live_server: RunningServer, row: Row
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=60) as http:
        world = World(http)
        world.set_up()
        path = row.path.format(**world.ids, **row.prepare(world))

        def ask(credential: str, **sent: str) -> dict[str, int]:
            answers: dict[str, int] = {}
            for cell in ORDER:
                kwargs = row.body(world)
                headers = {**kwargs.pop("headers", {}), **sent}
                token = world.tokens.get(cell)
                if credential == "cookie" and token is not None:
                    headers["Cookie"] = f"{GUEST_COOKIE}={token}"
                elif credential == "token":
                    headers.update(world.auth(cell))
                http.cookies.clear()
                response = http.request(row.method, path, headers=headers, **kwargs)
                answers[cell] = response.status_code
            return answers

        unsafe = row.method not in SAFE_METHODS
        if unsafe:
            foreign = ask("cookie", Origin="https://evil.example")
            got = tuple(foreign[cell] for cell in CELLS)
            assert got == (row.expected[0], *(403,) * 5), dict(zip(CELLS, got, strict=True))
        answers = ask("token")
        got = tuple(answers[cell] for cell in CELLS)
        assert got == row.expected, dict(zip(CELLS, got, strict=True))
        if not unsafe:
            by_cookie = ask("cookie")
            got = tuple(by_cookie[cell] for cell in CELLS)
            assert got == row.expected, ("by the cookie", dict(zip(CELLS, got, strict=True)))
