"""Hosted bots over a real uvicorn: create a bot, upload versions (checked, tried, kept),
choose the one that plays, play matches in which the server runs it, and a failure told to its
owner alone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server

ROOT = Path(__file__).resolve().parents[3]
RANDOM_ENGINE = (ROOT / "examples" / "engines" / "random_engine.py").read_bytes()
FIRST_WIN = (ROOT / "examples" / "plugins" / "first_win.py").read_bytes()
SECRET = "the-owner-only-secret-1234"
CRASHER = f"""
import sys
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "arena":
        print("id name Crasher", flush=True)
        print("arenaok 1", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "go":
        print("{SECRET}", file=sys.stderr, flush=True)
        sys.exit(3)
""".encode()
TIMEOUT = 60.0
"""Seconds a request may take, and a match between bots may last: generous, for a loaded
machine."""


@pytest.fixture
def server(server_settings: Settings, tmp_path: Path) -> Iterator[RunningServer]:
    """A server on SQLite (and on PostgreSQL when the tests have one) that runs hosted bots
    without the sandbox when this machine cannot make one (tests/sandbox has the sandbox's)."""
    settings = Settings(
        database_url=server_settings.database_url,
        grader_dir=tmp_path / "grader",
        hosted_dir=tmp_path / "hosted",
        hosted_allow_unsandboxed=True,
        hosted_failures_to_pause=2,
        hosted_bots_per_player=2,
        hosted_matches_per_bot=1,
        hosted_max_running=1,
        hosted_versions_per_bot=3,
    )
    running = start_server(settings)
    try:
        yield running
    finally:
        running.stop()


class Client:
    def __init__(self, server: RunningServer) -> None:
        self.http = httpx.Client(base_url=server.url, timeout=TIMEOUT)
        self.tokens: dict[str, str] = {}

    def register(self, name: str) -> None:
        response = self.http.post("/players", json={"name": name})
        assert response.status_code == 201, response.text
        self.tokens[name] = response.json()["token"]

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def create(self, who: str, name: str, game: str = "tictactoe") -> httpx.Response:
        return self.http.post(
            "/hosted-bots", json={"name": name, "game": game}, headers=self.auth(who)
        )

    def upload(
        self, who: str, bot: str, kind: str, files: dict[str, bytes], owner: str | None = None
    ) -> httpx.Response:
        return self.http.post(
            f"/hosted-bots/{owner or who}/{bot}/versions",
            data={"kind": kind},
            files=[("files", (name, data)) for name, data in files.items()],
            headers=self.auth(who),
        )

    def play(self, who: str, seats: list[Any], game: str = "tictactoe") -> dict[str, Any]:
        response = self.http.post(
            "/matches", json={"game": game, "seats": seats}, headers=self.auth(who)
        )
        assert response.status_code == 201, response.text
        match_id = response.json()["match_id"]
        deadline = time.monotonic() + TIMEOUT
        while True:
            state: dict[str, Any] = self.http.get(f"/matches/{match_id}").json()
            if state["status"] == "finished" or time.monotonic() > deadline:
                return state
            time.sleep(0.05)


@pytest.fixture
def client(server: RunningServer) -> Iterator[Client]:
    client = Client(server)
    client.register("ada")
    client.register("bob")
    yield client
    client.http.close()


def test_a_bot_is_created_uploaded_and_plays_its_active_version(client: Client) -> None:
    created = client.create("ada", "rnd")
    assert created.status_code == 201, created.text
    assert created.headers["location"] == "/hosted-bots/ada/rnd"
    assert (created.json()["spec"], created.json()["active"]) == ("hosted:ada/rnd", None)

    version = client.upload("ada", "rnd", "engine", {"bot.py": RANDOM_ENGINE})
    assert version.status_code == 201, version.text
    body = version.json()
    assert (body["number"], body["status"], body["spec"]) == (1, "ready", "hosted:ada/rnd@1")
    assert body["note"] == "Random (Python) 1.0"
    assert client.http.get("/hosted-bots/ada/rnd").json()["active"] == 1

    state = client.play("ada", [{"bot": "hosted:ada/rnd"}, {"bot": "random"}])
    assert state["status"] == "finished"
    assert state["seats"][0]["bot"] == "hosted:ada/rnd@1"
    assert state["result"]["reason"] != "adjudication"

    # A second version (a plug-in) is kept beside the first; the owner chooses it to play.
    second = client.upload("ada", "rnd", "plugin", {"first_win.py": FIRST_WIN})
    assert (second.json()["number"], second.json()["status"]) == (2, "ready")
    assert client.http.get("/hosted-bots/ada/rnd").json()["active"] == 1
    patched = client.http.patch(
        "/hosted-bots/ada/rnd", json={"active": 2}, headers=client.auth("ada")
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["active"] == 2
    state = client.play("bob", [{"bot": "random"}, {"bot": "hosted:ada/rnd"}])
    assert state["seats"][1]["bot"] == "hosted:ada/rnd@2"
    assert state["status"] == "finished"
    listed = client.http.get("/hosted-bots", params={"owner": "ada"}).json()["bots"]
    assert [(b["name"], len(b["versions"])) for b in listed] == [("rnd", 2)]


def test_an_upload_is_checked_before_it_is_kept(client: Client) -> None:
    assert client.create("ada", "checked").status_code == 201
    broken = client.upload("ada", "checked", "engine", {"bot.py": b"def f(:\n    pass\n"})
    assert broken.status_code == 422
    assert broken.json()["code"] == "BAD_SUBMISSION"
    assert "bot.py, line 1" in broken.json()["message"]
    several = client.upload("ada", "checked", "engine", {"a.py": b"", "b.py": b""})
    assert several.status_code == 422
    assert "name the one to run bot.py" in several.json()["message"]
    # A program that does not answer the handshake is kept as refused, and cannot play.
    silent = client.upload("ada", "checked", "engine", {"bot.py": b"import sys\nsys.exit(4)\n"})
    assert silent.status_code == 201, silent.text
    assert silent.json()["status"] == "refused"
    assert "exited with code 4" in silent.json()["note"]
    bot = client.http.get("/hosted-bots/ada/checked").json()
    assert bot["active"] is None
    refused = client.http.patch(
        "/hosted-bots/ada/checked", json={"active": 1}, headers=client.auth("ada")
    )
    assert refused.status_code == 422
    assert "was refused and cannot play" in refused.json()["message"]
    seat = client.http.post(
        "/matches",
        json={"game": "tictactoe", "seats": [{"bot": "hosted:ada/checked"}, "ada"]},
        headers=client.auth("ada"),
    )
    assert seat.status_code == 422
    assert "has no version that plays yet" in seat.json()["message"]


def test_only_the_owner_changes_a_bot_or_reads_its_failures(client: Client) -> None:
    assert client.create("ada", "mine").status_code == 201
    assert client.create("ada", "mine").json()["code"] == "NAME_TAKEN"
    assert client.create("ada", "second").status_code == 201
    over = client.create("ada", "third")
    assert (over.status_code, over.json()["code"]) == (403, "QUOTA_EXCEEDED")
    upload = client.upload("bob", "mine", "engine", {"bot.py": RANDOM_ENGINE}, owner="ada")
    assert (upload.status_code, upload.json()["code"]) == (403, "FORBIDDEN")
    patch = client.http.patch(
        "/hosted-bots/ada/mine", json={"description": "mine now"}, headers=client.auth("bob")
    )
    assert patch.status_code == 403
    failures = client.http.get("/hosted-bots/ada/mine/failures", headers=client.auth("bob"))
    assert failures.status_code == 403
    assert client.http.get("/hosted-bots/ada/nobody").json()["code"] == "NOT_FOUND"
    anonymous = client.http.post("/hosted-bots", json={"name": "x", "game": "nim"})
    assert anonymous.status_code == 401


def test_a_failing_bot_loses_tells_its_owner_why_and_is_paused(client: Client) -> None:
    assert client.create("ada", "crash").status_code == 201
    version = client.upload("ada", "crash", "engine", {"bot.py": CRASHER})
    assert version.json()["status"] == "ready", version.text
    for _ in range(2):
        state = client.play("bob", [{"bot": "hosted:ada/crash"}, "bob"])
        assert state["status"] == "finished"
        assert state["result"]["winner"] == 1
        assert "failed (its owner is told why)" in state["result"]["description"]
        assert SECRET not in str(state)
    failures = client.http.get("/hosted-bots/ada/crash/failures", headers=client.auth("ada"))
    assert failures.status_code == 200
    listed = failures.json()["failures"]
    assert len(listed) == 2
    assert SECRET in listed[0]["words"]
    assert "exited with code 3" in listed[0]["words"]
    bot = client.http.get("/hosted-bots/ada/crash").json()
    assert bot["paused"] is not None and "2 failures in a row" in bot["paused"]
    assert SECRET not in str(bot)
    again = client.http.post(
        "/matches",
        json={"game": "tictactoe", "seats": [{"bot": "hosted:ada/crash"}, "bob"]},
        headers=client.auth("bob"),
    )
    assert again.status_code == 422
    assert "is paused" in again.json()["message"]
    assert SECRET not in again.text
    resumed = client.http.patch(
        "/hosted-bots/ada/crash", json={"resume": True}, headers=client.auth("ada")
    )
    assert resumed.json()["paused"] is None


def test_hosted_bots_sit_in_a_bounded_number_of_matches_at_once(client: Client) -> None:
    assert client.create("ada", "busy").status_code == 201
    assert client.upload("ada", "busy", "engine", {"bot.py": RANDOM_ENGINE}).status_code == 201
    # The match waits for bob's moves: unfinished, it holds the bot's one place.
    first = client.http.post(
        "/matches",
        json={"game": "tictactoe", "seats": [{"bot": "hosted:ada/busy"}, "bob"]},
        headers=client.auth("bob"),
    )
    assert first.status_code == 201, first.text
    second = client.http.post(
        "/matches",
        json={"game": "tictactoe", "seats": [{"bot": "hosted:ada/busy"}, "bob"]},
        headers=client.auth("bob"),
    )
    assert second.status_code == 422
    assert "plays 1 matches already" in second.json()["message"]
    # The server's one hosted seat is taken: another bot waits too.
    assert client.create("bob", "also").status_code == 201
    assert client.upload("bob", "also", "engine", {"bot.py": RANDOM_ENGINE}).status_code == 201
    third = client.http.post(
        "/matches",
        json={"game": "tictactoe", "seats": ["bob", {"bot": "hosted:bob/also"}]},
        headers=client.auth("bob"),
    )
    assert third.status_code == 422
    assert "runs 1 hosted bots' seats already" in third.json()["message"]
    resigned = client.http.post(
        f"/matches/{first.json()['match_id']}/resign", headers=client.auth("bob")
    )
    assert resigned.status_code == 200, resigned.text
    state = client.play("bob", [{"bot": "hosted:ada/busy"}, {"bot": "random"}])
    assert state["status"] == "finished"


def test_a_bot_keeps_a_bounded_number_of_versions(client: Client) -> None:
    assert client.create("ada", "many").status_code == 201
    silent = {"bot.py": b"import sys\nsys.exit(4)\n"}
    for number in (1, 2, 3):
        version = client.upload("ada", "many", "engine", silent)
        assert (version.status_code, version.json()["number"]) == (201, number), version.text
    over = client.upload("ada", "many", "engine", silent)
    assert (over.status_code, over.json()["code"]) == (403, "QUOTA_EXCEEDED")
    assert "has 3 versions, the most a bot may have" in over.json()["message"]
    assert len(client.http.get("/hosted-bots/ada/many").json()["versions"]) == 3


def test_the_class_tournaments_names_are_not_a_players_to_take(client: Client) -> None:
    refused = client.create("ada", "class-7", game="checkers")
    assert refused.status_code == 422, refused.text
    assert "the class tournaments' own" in refused.json()["message"]
