"""A student's daily limit holds under concurrent submissions: exactly `daily_limit` accepted,
the rest 429 SUBMISSION_LIMIT, in one server process and across two on one database.

The races are made certain, not likely: the test holds submissions between their check and
their row (a gate on the grading intake's file storing, which comes between them) and lets
the next one in while they wait.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from server.courses.store import CourseStore
from server.grading.intake_files import FileIntake
from server.settings import Settings
from tests.server.conftest import start_server
from tests.server.courses.test_courses import add_assignment, new_course, students, suite_of

PROGRAM = b"import sys\nsys.exit(1)\n"


def limit_settings(base: Settings) -> Settings:
    """Uploads graded unsandboxed, no rate limit, queue limits far above the test's."""
    return base.model_copy(
        update={
            "rate_limits_enabled": False,
            "grader_allow_unsandboxed": True,
            "grader_max_queued_per_player": 100,
            "grader_max_queued_per_address": 100,
        }
    )


class Gate:
    """Holds every submission at its file storing until `open` lets that one (or all) on,
    and counts the submissions that have read their assignment (the step before the
    course's checks)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = 0
        self.arrived = 0
        self._released = 0
        self._open = False
        self._changed = threading.Condition()
        original = FileIntake._store

        async def held(intake: FileIntake, *args: Any) -> Any:
            with self._changed:
                self.entered += 1
                number = self.entered
                self._changed.notify_all()
            await asyncio.to_thread(self._wait_turn, number)
            return await original(intake, *args)

        monkeypatch.setattr(FileIntake, "_store", held)
        read = CourseStore.assignment

        async def counted(store: CourseStore, *args: Any) -> Any:
            found = await read(store, *args)
            with self._changed:
                self.arrived += 1
                self._changed.notify_all()
            return found

        monkeypatch.setattr(CourseStore, "assignment", counted)

    def _wait_turn(self, number: int) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: self._open or number <= self._released, 120):
                raise TimeoutError("the test never let this submission on")

    def wait_entered(self, count: int) -> None:
        """Wait until `count` submissions have reached the gate."""
        with self._changed:
            assert self._changed.wait_for(lambda: self.entered >= count, 120), self.entered

    def wait_arrived(self, count: int) -> None:
        """Wait until `count` submissions have read their assignment (and so are at the
        course's checks: nothing between them waits for anything else)."""
        with self._changed:
            assert self._changed.wait_for(lambda: self.arrived >= count, 120), self.arrived

    def release(self, count: int) -> None:
        """Let the first `count` submissions on."""
        with self._changed:
            self._released = max(self._released, count)
            self._changed.notify_all()

    def open(self) -> None:
        with self._changed:
            self._open = True
            self._changed.notify_all()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    made = Gate(monkeypatch)
    try:
        yield made
    finally:
        made.open()


def submit_async(url: str, token: str, cid: int, aid: int) -> httpx.Response:
    return httpx.post(
        f"{url}/courses/{cid}/assignments/{aid}/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files=[("files", ("checkers.py", PROGRAM, "text/x-python"))],
        timeout=120,
    )


class Sender:
    """Sends submissions on threads of their own; each answer is kept by its number."""

    def __init__(self) -> None:
        self.answers: dict[int, httpx.Response] = {}
        self._threads: list[threading.Thread] = []

    def send(self, number: int, url: str, token: str, cid: int, aid: int) -> None:
        def run() -> None:
            self.answers[number] = submit_async(url, token, cid, aid)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self._threads.append(thread)

    def wait(self, number: int) -> httpx.Response:
        deadline = time.monotonic() + 120
        while number not in self.answers:
            assert time.monotonic() < deadline, f"submission {number} got no answer"
            time.sleep(0.01)
        return self.answers[number]

    def join(self) -> None:
        for thread in self._threads:
            thread.join(timeout=120)


def assignment_with_limit(url: str, limit: int) -> tuple[int, int, str]:
    """A course with an endgame assignment of daily limit `limit` and one student."""
    prof, cid = new_course(url)
    aid = add_assignment(prof, cid, suite=suite_of(1, 0), daily_limit=limit)["assignment_id"]
    ada = students(prof, url, cid, "s1")["s1"]
    token = ada.http.headers["Authorization"].removeprefix("Bearer ")
    return cid, int(aid), token


def tally(answers: list[httpx.Response], limit: int) -> None:
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [202] * limit + [429] * (len(answers) - limit), [
        (a.status_code, a.text[:200]) for a in answers
    ]
    for answer in answers:
        if answer.status_code == 429:
            body = answer.json()
            assert body["code"] == "SUBMISSION_LIMIT", body
            assert f"{limit} of {limit} submissions" in body["message"], body


def test_a_submission_let_in_while_another_waits_between_check_and_row_is_refused(
    server_settings: Settings, gate: Gate
) -> None:
    """The first is stored; the second is held after its check; a third comes in meanwhile:
    with a limit of 2, one of the last two is refused, whichever stores its row second."""
    running = start_server(limit_settings(server_settings))
    sender = Sender()
    try:
        cid, aid, token = assignment_with_limit(running.url, 2)
        arrived = gate.arrived
        sender.send(1, running.url, token, cid, aid)
        gate.wait_entered(1)
        sender.send(2, running.url, token, cid, aid)
        gate.wait_arrived(arrived + 2)  # the second is at the checks while the first is held
        gate.release(1)
        assert sender.wait(1).status_code == 202, sender.answers[1].text
        gate.wait_entered(2)  # the second has passed its check, its row not yet stored
        sender.send(3, running.url, token, cid, aid)
        gate.wait_entered(3)
        gate.open()
        tally([sender.wait(n) for n in (1, 2, 3)], 2)
    finally:
        gate.open()
        sender.join()
        running.stop()


def test_many_concurrent_submissions_accept_exactly_the_daily_limit(
    server_settings: Settings,
) -> None:
    running = start_server(limit_settings(server_settings))
    try:
        cid, aid, token = assignment_with_limit(running.url, 3)

        async def flood() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=running.url, timeout=120) as client:
                return list(
                    await asyncio.gather(
                        *(
                            client.post(
                                f"/courses/{cid}/assignments/{aid}/submissions",
                                headers={"Authorization": f"Bearer {token}"},
                                files=[("files", ("checkers.py", PROGRAM, "text/x-python"))],
                            )
                            for _ in range(16)
                        )
                    )
                )

        tally(asyncio.run(flood()), 3)
    finally:
        running.stop()


@pytest.mark.skipif(
    not os.environ.get("ARENA_TEST_DATABASE_URL"), reason="ARENA_TEST_DATABASE_URL is not set"
)
def test_two_server_processes_on_one_database_accept_exactly_the_daily_limit(
    server_settings: Settings, gate: Gate
) -> None:
    """Two servers on one PostgreSQL database: a submission to each, both held after their
    check; with a limit of 1 only one is stored."""
    if not server_settings.database_url.startswith("postgresql"):
        pytest.skip("several server processes share a PostgreSQL database only")
    first = start_server(limit_settings(server_settings))
    second = start_server(limit_settings(server_settings))
    sender = Sender()
    try:
        cid, aid, token = assignment_with_limit(first.url, 1)
        sender.send(1, first.url, token, cid, aid)
        sender.send(2, second.url, token, cid, aid)
        gate.wait_entered(2)  # both have passed their checks
        gate.open()
        tally([sender.wait(1), sender.wait(2)], 1)
    finally:
        gate.open()
        sender.join()
        second.stop()
        first.stop()
