"""docs/PROTOCOL.md's examples are what the server sends: its complete session is played against a
real server, and every message it shows (and the examples of the same match elsewhere in the
document) is compared with the real one, the values that differ from run to run aside (tokens,
match ids, times and clocks, node counts)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from bots.spec import describe_bots
from games import get_game
from server.limits.compute import house_bots
from server.settings import Settings
from tests.server.conftest import RunningServer
from tests.server.routes.test_ws import TIMEOUT
from tests.wsclient import ClientConnection, connect

DOCS = Path(__file__).resolve().parents[3] / "docs" / "PROTOCOL.md"
VOLATILE = {
    "token",
    "id",
    "server_time_ms",
    "created_time_ms",
    "elapsed_ms",
    "remaining_ms",
    "clocks_ms",
    "time_ms",
    "nps",
    "nodes",
}
"""Fields whose values differ from run to run: compared by presence, not value."""
DOC_MATCH_ID = "m_42"


def section(title: str) -> str:
    """Return the text of the `## title` section of PROTOCOL.md."""
    text = DOCS.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def fenced(text: str) -> list[tuple[str, str]]:
    """Return the fenced code blocks of `text` in order, each as (its info string, its text)."""
    blocks: list[tuple[str, str]] = []
    info: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        if line.startswith("```"):
            if info is None:
                info, body = line[3:].strip(), []
            else:
                blocks.append((info, "\n".join(body)))
                info = None
        elif info is not None:
            body.append(line)
    return blocks


def json_blocks(text: str) -> list[dict[str, Any]]:
    """Return the JSON object of every ```json block of `text`, in order."""
    return [json.loads(body) for info, body in fenced(text) if info == "json"]


def exchanges(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Return the `>` (sent) and `<` (received) lines of the plain code blocks of `text`, in
    order, each as its JSON with the elided `...` fields left out."""
    lines: list[tuple[str, dict[str, Any]]] = []
    for info, body in fenced(text):
        for line in body.splitlines() if info == "" else ():
            if line[:2] in ("> ", "< "):
                shown = re.sub(r"\.\.\.,\s*|,\s*\.\.\.", "", line[2:])
                lines.append((line[0], json.loads(shown)))
    return lines


def by_type(examples: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """Return the first example of type `kind`."""
    return next(example for example in examples if example.get("type") == kind)


def normal(value: Any, match_id: str) -> Any:
    """Return `value` with the volatile fields blanked and the match's id as the docs write it."""
    if isinstance(value, dict):
        return {
            key: "*" if key in VOLATILE and item is not None else normal(item, match_id)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [normal(item, match_id) for item in value]
    if value == match_id:
        return DOC_MATCH_ID
    return value


class Session:
    """Alice's side of the documented session: her socket and what it has received."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.match_id = ""

    async def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await self.ws.recv(decode=True))
        return message

    def same(self, real: dict[str, Any], documented: dict[str, Any]) -> None:
        assert normal(real, self.match_id) == normal(documented, DOC_MATCH_ID)

    def shown(self, real: dict[str, Any], documented: dict[str, Any]) -> None:
        """Assert the fields the docs show (an elided example) are the real ones."""
        real = normal(real, self.match_id)
        for key, value in normal(documented, DOC_MATCH_ID).items():
            assert real.get(key) == value, (key, real)


async def test_the_documented_session_is_what_the_server_sends(
    live_server: RunningServer,
) -> None:
    session_text = section("A complete session")
    session = json_blocks(session_text)
    lines = exchanges(session_text)
    messages = json_blocks(section("WebSocket messages"))
    rest = json_blocks(section("REST endpoints and bodies"))
    registered, hello, welcome, create, bot_reply, illegal, refusal = session

    async with httpx.AsyncClient(base_url=live_server.url, timeout=TIMEOUT) as http:
        # 1. Register.
        created = await http.post("/players", json={"name": "alice"})
        assert normal(created.json(), "") == normal(registered, "")
        auth = {"Authorization": f"Bearer {created.json()['token']}"}
        versioned = {"Arena-Protocol-Version": "1.3"}
        # 2. Connect and say hello.
        async with connect(f"{live_server.ws_url}/ws", additional_headers=auth) as ws:
            alice = Session(ws)
            await ws.send(json.dumps(hello))
            alice.same(await alice.receive(), welcome)
            assert welcome == by_type(messages, "welcome")
            # 3. Create the match: its state, over REST and on the socket.
            answer = await http.post("/matches", json=create, headers=auth | versioned)
            assert answer.status_code == 201, answer.text
            alice.match_id = answer.json()["match_id"]
            alice.same(answer.json(), by_type(messages, "match_state"))
            alice.same(await alice.receive(), by_type(messages, "match_started"))
            alice.same(await alice.receive(), by_type(messages, "match_state"))
            # 4. Alice's move and the bot's reply.
            (sent, move), (_, acknowledged), *rest_of_lines = lines
            assert sent == ">"
            await ws.send(json.dumps({**move, "match_id": alice.match_id}))
            made = await alice.receive()
            alice.shown(made, acknowledged)
            alice.same(made, by_type(messages, "move_made"))
            alice.same(await alice.receive(), bot_reply)
            # 5. The illegal move.
            await ws.send(json.dumps({**illegal, "match_id": alice.match_id}))
            alice.same(await alice.receive(), refusal)
            # 6 and 7: the rest, line by line; the listing after ply 4, the draw's and the
            # end's messages as the WebSocket section shows them in full.
            for direction, shown in rest_of_lines:
                if direction == ">":
                    await ws.send(json.dumps({**shown, "match_id": alice.match_id}))
                    continue
                real = await alice.receive()
                alice.shown(real, shown)
                if real["type"] in ("draw_offered", "draw_declined", "match_ended"):
                    alice.same(real, by_type(messages, real["type"]))
                if real.get("ply") == 4:
                    listed = await http.get(
                        "/matches?status=active&game=checkers&limit=20", headers=versioned
                    )
                    alice.same(listed.json(), by_type(rest, "match_list"))
            assert real["type"] == "match_ended"
        # The record of the match, and an unknown match's error.
        record = await http.get(f"/matches/{alice.match_id}/record", headers=versioned)
        alice.same(record.json(), by_type(rest, "match_record"))
        errors = {error["code"]: error for error in rest if error.get("type") == "error"}
        unknown = await http.get("/matches/m_9")
        assert unknown.status_code == 404
        assert unknown.json() == errors["UNKNOWN_MATCH"]
        taken = await http.post("/players", json={"name": "Alice"})
        assert taken.status_code == 409
        assert taken.json() == errors["NAME_TAKEN"]


def test_the_documented_house_bots_are_the_servers() -> None:
    text = section("REST endpoints and bodies")
    house = text[text.index("### House bots") : text.index("**Draws with house bots.**")]
    table = dict(re.findall(r"^\| `([a-z_]+)` \| (.+) \|$", house, re.MULTILINE))
    assert table == {name: description for name, description, _ in describe_bots()}
    real = house_bots(Settings()).model_dump(mode="json")
    documented = by_type(json_blocks(house), "bot_list")
    assert documented["limits"] == real["limits"]
    assert documented["bots"]
    for bot in documented["bots"]:
        assert bot in real["bots"]


def test_the_documented_checkers_notation_is_the_games() -> None:
    text = section("Moves and positions")
    checkers = get_game("checkers")
    diagram = next(body for info, body in fenced(text) if info == "")
    rows = [[int(n) for n in re.findall(r"\b\d+\b", line)] for line in diagram.splitlines()]
    assert [row[:4] for row in rows] == [list(range(r * 4 + 1, r * 4 + 5)) for r in range(8)]
    start = checkers.format_position(checkers.initial_state())
    assert f"`{start}`" in text
    kings = checkers.parse_position("W:WK23,K28:B3")
    assert kings.to_move == 1 and "W:WK23,K28:B3" in text
    assert checkers.format_position(kings) == "W:WK23,K28:B3"
    for move in ("11-15", "15x24"):
        assert f"`{move}`" in text
    # 11-15, then 24-19: the capture 15x24 is the only move, and its text is as written here.
    state = checkers.initial_state().play("11-15", "24-19")
    assert [state.format_move(m) for m in state.legal_moves()] == ["15x24"]
