"""The course pages and their routes over HTTP, by the browser's cookie: signing in with an
invite link, and who may open what, as a matrix of {anonymous, the student who submitted,
another student, a student of another course, the TA, the instructor} over every page and
every `/web/courses` route; forms from another site; programs still get JSON at the pages'
URLs."""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from server.settings import Settings
from server.web.pages import CONTENT_SECURITY_POLICY
from tests.server.conftest import RunningServer, start_server
from tests.server.grading.test_grading import grading_settings

HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
FAILING = b"import sys\nsys.exit(3)\n"
"""A checkers.py failing every puzzle at once: the quickest real grading."""
SUITE_WAIT_S = 180.0
"""Long enough to generate a few puzzles on a busy machine."""
WHO = ("anonymous", "submitter", "classmate", "outsider", "ta", "instructor")


@pytest.fixture
def course_server(server_settings: Settings) -> Iterator[RunningServer]:
    running = start_server(
        grading_settings(server_settings, grader_workers=1, grader_max_upload_bytes=4096)
    )
    try:
        yield running
    finally:
        running.stop()


def wait_for_suite(client: httpx.Client, owner: dict[str, str], path: str) -> None:
    """Wait until an assignment's suite is generated (in the background: `suite_version` 0
    until then, and submissions are refused)."""
    until = time.monotonic() + SUITE_WAIT_S
    while client.get(path, headers=owner).json()["suite_version"] == 0:
        assert time.monotonic() < until, f"the suite of {path} was not generated"
        time.sleep(0.2)


def register(client: httpx.Client, name: str) -> dict[str, str]:
    response = client.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def cookie(token: str) -> dict[str, str]:
    """The headers of a browser signed in with `token` (the invite link's)."""
    return {"Cookie": f"arena_guest={token}"}


@dataclass
class Course:
    """A course made over REST: its ids and the invite token of each person."""

    course_id: int
    assignment_id: int
    owner: dict[str, str]
    tokens: dict[str, str] = field(default_factory=dict)
    members: dict[str, int] = field(default_factory=dict)


def make_course(client: httpx.Client, owner_name: str, roster: str) -> Course:
    owner = register(client, owner_name)
    created = client.post("/courses", json={"name": f"{owner_name}'s course"}, headers=owner)
    assert created.status_code == 201, created.text
    body = created.json()
    course_id = body["course"]["course_id"]
    now = datetime.now(UTC)
    assignment = client.post(
        f"/courses/{course_id}/assignments",
        json={
            "name": "Solver",
            "profile": "endgame",
            "release_at": (now - timedelta(hours=1)).isoformat(),
            "due_at": (now + timedelta(days=1)).isoformat(),
            "public_count": 1,
            "private_count": 1,
        },
        headers=owner,
    )
    assert assignment.status_code == 201, assignment.text
    course = Course(course_id, assignment.json()["assignment_id"], owner)
    wait_for_suite(client, owner, f"/courses/{course_id}/assignments/{course.assignment_id}")
    course.tokens["instructor"] = body["invite_token"]
    course.members["instructor"] = body["course"]["member_id"]
    imported = client.post(
        f"/courses/{course_id}/members",
        content=roster.encode(),
        headers={**owner, "Content-Type": "text/csv"},
    )
    assert imported.status_code in (200, 201), imported.text
    for invite in imported.json()["created"]:
        course.tokens[invite["member"]["student_id"]] = invite["invite_token"]
        course.members[invite["member"]["student_id"]] = invite["member"]["member_id"]
    return course


def form_submit(client: httpx.Client, course: Course, token: str, data: bytes) -> httpx.Response:
    """Post the assignment page's form as a browser does (multipart), from the server's page."""
    return client.post(
        f"/web/courses/{course.course_id}/assignments/{course.assignment_id}/submissions",
        files=[("files", ("checkers.py", data, "text/x-python"))],
        headers={"Origin": str(client.base_url).rstrip("/"), **HTML, **cookie(token)},
    )


def test_an_invite_link_signs_a_browser_in(course_server: RunningServer) -> None:
    with httpx.Client(base_url=course_server.url, timeout=60) as client:
        course = make_course(client, "ivy", "student_id,name,email\ns1,Sam <b>,sam@x.edu\n")
        token = course.tokens["s1"]
        page = client.get(f"/join/{token}", headers=HTML)
        assert page.status_code == 200
        assert page.headers["referrer-policy"] == "no-referrer"
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert "Sign in to ivy&#39;s course" in page.text and "Sam &lt;b&gt;" in page.text
        assert 'action="/web/join"' in page.text

        # Another site's form is refused, and sets nothing.
        foreign = client.post(
            "/web/join", data={"token": token}, headers={"Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403 and "set-cookie" not in foreign.headers
        # The join page's no-referrer policy makes a browser send its form with `Origin: null`:
        # taken only when the browser's Fetch Metadata says the form is this server's.
        for site in ("cross-site", "same-site", None):
            metadata = {"Sec-Fetch-Site": site} if site else {}
            unsure = client.post(
                "/web/join", data={"token": token}, headers={"Origin": "null", **metadata}
            )
            assert unsure.status_code == 403 and "set-cookie" not in unsure.headers, site
        signed = client.post(
            "/web/join",
            data={"token": token},
            headers={"Origin": "null", "Sec-Fetch-Site": "same-origin", **HTML},
        )
        assert signed.status_code == 303
        assert signed.headers["location"] == f"/courses/{course.course_id}"
        set_cookie = signed.headers["set-cookie"].lower()
        assert f"arena_guest={token}".lower() in set_cookie
        assert "httponly" in set_cookie and "samesite=strict" in set_cookie
        client.cookies.clear()
        mine = client.get(f"/courses/{course.course_id}", headers={**HTML, **cookie(token)})
        assert mine.status_code == 200 and "Solver" in mine.text

        # A new link replaces the old one: the old link's page and form say it does not work.
        member = course.members["s1"]
        reissued = client.post(
            f"/web/courses/{course.course_id}/members/{member}/invite",
            headers={
                "Origin": course_server.url,
                **HTML,
                **cookie(course.tokens["instructor"]),
            },
        )
        assert reissued.status_code == 200, reissued.text
        assert reissued.headers["cache-control"] == "no-store"
        assert reissued.text.count("/join/") == 1
        old = client.get(f"/join/{token}", headers=HTML)
        assert old.status_code == 404 and "This invite link does not work" in old.text
        again = client.post("/web/join", data={"token": token}, headers=HTML)
        assert again.status_code == 404 and "set-cookie" not in again.headers
        stale = client.get(f"/courses/{course.course_id}", headers={**HTML, **cookie(token)})
        assert stale.status_code == 401 and "Not signed in" in stale.text


def test_who_may_open_what(course_server: RunningServer) -> None:
    with httpx.Client(base_url=course_server.url, timeout=60) as client:
        course = make_course(
            client,
            "una",
            "student_id,name,email,role\n"
            "s1,Ann,ann@x.edu,student\ns2,Bob,bob@x.edu,student\nt1,Tia,tia@x.edu,ta\n",
        )
        other = make_course(client, "vic", "student_id,name,email\nz1,Zed,zed@x.edu\n")
        sent = form_submit(client, course, course.tokens["s1"], FAILING)
        assert sent.status_code == 303, sent.text
        submission = sent.headers["location"].rsplit("/", 1)[1]
        tokens: dict[str, str | None] = {
            "anonymous": None,
            "submitter": course.tokens["s1"],
            "classmate": course.tokens["s2"],
            "outsider": other.tokens["z1"],
            "ta": course.tokens["t1"],
            "instructor": course.tokens["instructor"],
        }
        cid, aid = course.course_id, course.assignment_id
        student = course.members["s1"]
        member = (401, 200, 200, 404, 200, 200)
        own = (401, 200, 404, 404, 200, 200)
        staff = (401, 403, 403, 404, 200, 200)
        rows: list[tuple[str, tuple[int, ...]]] = [
            ("/courses", (200,) * 6),
            (f"/courses/{cid}", member),
            (f"/courses/{cid}/assignments/{aid}", member),
            (f"/courses/{cid}/submissions/{submission}", own),
            (f"/courses/{cid}/students/{student}", staff),
            (f"/courses/{cid}/roster", staff),
            (f"/courses/{cid}/submissions/{submission}/files", own),
            (f"/courses/{cid}/assignments/{aid}/gradebook.csv", staff),
        ]
        for path, expected in rows:
            answers: dict[str, int] = {}
            for who in WHO:
                token = tokens[who]
                headers = {**HTML, **(cookie(token) if token else {})}
                answers[who] = client.get(path, headers=headers).status_code
            assert tuple(answers.values()) == expected, (path, answers)

        # What a page shows: the submitter's course lists their attempt; the roster its members.
        page = client.get(f"/courses/{cid}/roster", headers={**HTML, **cookie(tokens["ta"] or "")})
        assert all(name in page.text for name in ("Ann", "Bob", "Tia"))
        assert "/members/" not in page.text  # a TA changes nothing on the roster
        zipped = client.get(
            f"/courses/{cid}/submissions/{submission}/files",
            headers=cookie(course.tokens["instructor"]),
        )
        assert zipped.headers["content-type"] == "application/zip"
        assert zipped.content[:2] == b"PK"

        # The forms: a student may not regrade, start a class tournament, import or drop;
        # nobody may from another site.
        origin = {"Origin": course_server.url, **HTML}
        for path, body in (
            (f"/web/courses/{cid}/assignments/{aid}/regrade", {}),
            (f"/web/courses/{cid}/assignments/{aid}/tournaments", {"house_bots": "random"}),
            (f"/web/courses/{cid}/members", {"text": "student_id,name,email\nx,X,x@x.edu\n"}),
            (f"/web/courses/{cid}/members/{course.members['s2']}/drop", {}),
            (f"/web/courses/{cid}/members/{course.members['s2']}/invite", {}),
        ):
            answer = client.post(
                path, data=body, headers={**origin, **cookie(tokens["submitter"] or "")}
            )
            assert answer.status_code == 403, (path, answer.status_code)
            assert "Not allowed" in answer.text
            foreign = client.post(
                path,
                data=body,
                headers={"Origin": "https://evil.example", **cookie(course.tokens["instructor"])},
            )
            assert foreign.status_code == 403 and foreign.json()["code"] == "FORBIDDEN"
        # Staff asking a class tournament of an endgame assignment are told why on its page.
        refused = client.post(
            f"/web/courses/{cid}/assignments/{aid}/tournaments",
            data={"house_bots": ["random", "greedy"]},
            headers={**origin, **cookie(course.tokens["instructor"])},
        )
        assert refused.status_code == 422
        assert "Not started:" in refused.text
        assert "only an agent assignment" in refused.text
        ta_import = client.post(
            f"/web/courses/{cid}/members",
            data={"text": "student_id,name,email\nx,X,x@x.edu\n"},
            headers={**origin, **cookie(tokens["ta"] or "")},
        )
        assert ta_import.status_code == 403
        foreign_upload = client.post(
            f"/web/courses/{cid}/assignments/{aid}/submissions",
            files=[("files", ("checkers.py", FAILING, "text/x-python"))],
            headers={"Origin": "https://evil.example", **cookie(course.tokens["s2"])},
        )
        assert foreign_upload.status_code == 403
        anonymous_upload = client.post(
            f"/web/courses/{cid}/assignments/{aid}/submissions",
            files=[("files", ("checkers.py", FAILING, "text/x-python"))],
            headers=origin,
        )
        assert anonymous_upload.status_code == 401 and "Not signed in" in anonymous_upload.text


def test_a_bad_roster_comes_back_with_its_line_and_nothing_imported(
    course_server: RunningServer,
) -> None:
    with httpx.Client(base_url=course_server.url, timeout=60) as client:
        course = make_course(client, "wes", "student_id,name,email\ns1,Ann,ann@x.edu\n")
        headers = {"Origin": course_server.url, **HTML, **cookie(course.tokens["instructor"])}
        bad = "student_id,name,email,role\nn1,New,new@x.edu,student\nn2,Two,two@x.edu,dean\n"
        answer = client.post(
            f"/web/courses/{course.course_id}/members", data={"text": bad}, headers=headers
        )
        assert answer.status_code == 422
        assert "line 3" in answer.text and 'id="form-errors"' in answer.text
        assert "n2,Two,two@x.edu,dean" in answer.text  # the text comes back to be fixed
        assert "/join/" not in answer.text
        empty = client.post(
            f"/web/courses/{course.course_id}/members", data={"text": " "}, headers=headers
        )
        assert empty.status_code == 422 and "the roster is empty" in empty.text
        roster = client.get(f"/courses/{course.course_id}/roster", headers=headers)
        assert "n1" not in roster.text
        made = client.post(
            f"/web/courses/{course.course_id}/members",
            files={"file": ("roster.csv", bad.replace("dean", "ta").encode(), "text/csv")},
            data={"text": ""},
            headers=headers,
        )
        assert made.status_code == 200, made.text
        assert made.text.count(f"{course_server.url}/join/") == 2


def test_programs_get_json_at_the_pages_urls(course_server: RunningServer) -> None:
    with httpx.Client(base_url=course_server.url, timeout=60) as client:
        course = make_course(client, "xia", "student_id,name,email\ns1,Ann,ann@x.edu\n")
        bearer = {"Authorization": f"Bearer {course.tokens['s1']}"}
        cid, aid = course.course_id, course.assignment_id
        for path, kind in (
            ("/courses", "course_list"),
            (f"/courses/{cid}", "course"),
            (f"/courses/{cid}/assignments/{aid}", "assignment"),
        ):
            default = client.get(path, headers=bearer)  # Accept: */*
            assert default.headers["content-type"] == "application/json", path
            assert default.json()["type"] == kind
            page = client.get(path, headers={**HTML, **cookie(course.tokens["s1"])})
            assert page.headers["content-type"].startswith("text/html"), path
            assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        # The OpenAPI document describes the REST routes, not the pages.
        document: dict[str, Any] = client.get("/openapi.json").json()
        assert "/courses/{course_id}/roster" not in document["paths"]
        assert not any(path.startswith("/web/courses") for path in document["paths"])


def test_an_upload_too_large_comes_back_on_the_assignments_page(
    course_server: RunningServer,
) -> None:
    with httpx.Client(base_url=course_server.url, timeout=60) as client:
        course = make_course(client, "yul", "student_id,name,email\ns1,Ann,ann@x.edu\n")
        token = course.tokens["s1"]
        # Past the files' limit (4096 bytes), and past the body's (the limit and 64 KiB).
        for size in (5_000, 200_000):
            answer = form_submit(client, course, token, b"#" * size)
            assert answer.status_code == 413, (size, answer.text)
            assert answer.headers["content-type"].startswith("text/html")
            assert "Not submitted:" in answer.text and "4096 bytes" in answer.text
            assert 'id="files"' in answer.text  # the form, to choose again
        listed = client.get(
            f"/courses/{course.course_id}/assignments/{course.assignment_id}/submissions",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert listed.json()["submissions"] == []


def test_while_the_suite_is_generated_the_page_says_so_and_a_submission_waits(
    course_server: RunningServer,
) -> None:
    with httpx.Client(base_url=course_server.url, timeout=60) as client:
        course = make_course(client, "zoe", "student_id,name,email\ns1,Ann,ann@x.edu\n")
        # Sixty puzzles take minutes to generate: the suite is still being made below (the
        # server stops its generation when the test ends).
        now = datetime.now(UTC)
        slow = client.post(
            f"/courses/{course.course_id}/assignments",
            json={
                "name": "Big suite",
                "profile": "endgame",
                "due_at": (now + timedelta(days=1)).isoformat(),
                "public_count": 30,
                "private_count": 30,
            },
            headers=course.owner,
        )
        assert slow.status_code == 201 and slow.json()["suite_version"] == 0, slow.text
        course.assignment_id = slow.json()["assignment_id"]
        token = course.tokens["s1"]
        path = f"/courses/{course.course_id}/assignments/{course.assignment_id}"
        page = client.get(path, headers={**HTML, **cookie(token)})
        assert page.status_code == 200 and "being generated" in page.text
        refused = form_submit(client, course, token, FAILING)
        assert refused.status_code == 503
        assert "Not submitted:" in refused.text and "still being generated" in refused.text


def test_a_hard_deadline_and_a_drop_are_shown_with_the_services_words(
    course_server: RunningServer,
) -> None:
    with httpx.Client(base_url=course_server.url, timeout=60) as client:
        course = make_course(
            client, "ada", "student_id,name,email\ns1,Ann,ann@x.edu\ns2,Bob,bob@x.edu\n"
        )
        now = datetime.now(UTC)
        closed = client.post(
            f"/courses/{course.course_id}/assignments",
            json={
                "name": "Closed",
                "profile": "endgame",
                "release_at": (now - timedelta(days=2)).isoformat(),
                "due_at": (now - timedelta(days=1)).isoformat(),
                "late_policy": "hard",
                "public_count": 1,
                "private_count": 0,
            },
            headers=course.owner,
        )
        assert closed.status_code == 201, closed.text
        course.assignment_id = closed.json()["assignment_id"]
        path = f"/courses/{course.course_id}/assignments/{course.assignment_id}"
        wait_for_suite(client, course.owner, path)
        page = client.get(path, headers={**HTML, **cookie(course.tokens["s1"])})
        assert "not accepted after the due date" in page.text and "passed 1 day ago" in page.text
        late = form_submit(client, course, course.tokens["s1"], FAILING)
        assert late.status_code == 403
        assert "Not submitted:" in late.text and "DEADLINE_PASSED" not in late.text
        assert "due" in late.text.split("Not submitted:")[1][:300]

        # The instructor drops Bob: the roster says so, and Bob's link signs in no more.
        instructor = {"Origin": course_server.url, **HTML, **cookie(course.tokens["instructor"])}
        dropped = client.post(
            f"/web/courses/{course.course_id}/members/{course.members['s2']}/drop",
            headers=instructor,
        )
        assert dropped.status_code == 303
        assert dropped.headers["location"] == f"/courses/{course.course_id}/roster?dropped=s2"
        roster = client.get(dropped.headers["location"], headers=instructor)
        assert "s2 is dropped: their link no longer signs in" in roster.text
        assert 'class="dropped"' in roster.text
        gone = client.get(path, headers={**HTML, **cookie(course.tokens["s2"])})
        assert gone.status_code == 401 and "Not signed in" in gone.text
        # Dropping yourself is the service's refusal, shown as a page.
        self_drop = client.post(
            f"/web/courses/{course.course_id}/members/{course.members['instructor']}/drop",
            headers=instructor,
        )
        assert self_drop.status_code == 403 and 'id="refusal"' in self_drop.text


def unpacked(answer: httpx.Response) -> dict[str, bytes] | bytes:
    """Return a zip's files (its members' times are the moment it was made), else the body."""
    if answer.headers["content-type"] != "application/zip":
        return answer.content
    with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def settled(client: httpx.Client, path: str, headers: dict[str, str], key: str) -> Any:
    """Poll a JSON resource until `key` says nothing waits or runs; return its body."""
    for _ in range(600):
        body = client.get(path, headers=headers).json()
        if key == "status" and body["status"] in ("done", "error"):
            return body
        if key == "regrade" and body["queued"] + body["running"] == 0:
            return body
        time.sleep(0.2)
    raise AssertionError(f"{path} did not settle")


def test_the_pages_scripts_read_what_the_rest_routes_answer(course_server: RunningServer) -> None:
    """A resource read by programs (a bearer token) and by the pages' scripts and links (the
    cookie) at one URL answers both the same body; its downloads are kept nowhere."""
    with httpx.Client(base_url=course_server.url, timeout=60) as client:
        course = make_course(client, "xia", "student_id,name,email\ns1,Ann,ann@x.edu\n")
        cid, aid = course.course_id, course.assignment_id
        staff = course.tokens["instructor"]
        bearer = {"Authorization": f"Bearer {staff}"}
        sent = form_submit(client, course, course.tokens["s1"], FAILING)
        assert sent.status_code == 303, sent.text
        submission = sent.headers["location"].rsplit("/", 1)[1]
        rest = settled(client, f"/courses/{cid}/submissions/{submission}", bearer, "status")
        web = client.get(f"/courses/{cid}/submissions/{submission}", headers=cookie(staff))
        assert web.status_code == 200 and web.json() == rest

        regraded = client.post(
            f"/courses/{cid}/assignments/{aid}/regrade",
            json={"submission_ids": [submission]},
            headers=bearer,
        )
        assert regraded.status_code == 202, regraded.text
        regrade = regraded.json()["regrade_id"]
        rest = settled(client, f"/courses/{cid}/regrades/{regrade}", bearer, "regrade")
        web = client.get(f"/courses/{cid}/regrades/{regrade}", headers=cookie(staff))
        assert web.status_code == 200 and web.json() == rest

        downloads = {
            f"/submissions/{submission}/files": (
                "application/zip",
                f'attachment; filename="s1-{submission}.zip"',
            ),
            f"/assignments/{aid}/gradebook.csv": (
                "text/csv; charset=utf-8",
                f'attachment; filename="gradebook-{cid}-{aid}.csv"',
            ),
        }
        for path, (media_type, disposition) in downloads.items():
            rest_file = client.get(f"/courses/{cid}{path}", headers=bearer)
            web_file = client.get(f"/courses/{cid}{path}", headers=cookie(staff))
            for answer in (rest_file, web_file):
                assert answer.status_code == 200, (path, answer.text)
                assert answer.headers["content-type"] == media_type
                assert answer.headers["content-disposition"] == disposition
            assert unpacked(web_file) == unpacked(rest_file)
            assert rest_file.headers["cache-control"] == "no-store"
            assert web_file.headers["cache-control"] == "no-store"
