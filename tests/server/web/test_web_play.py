"""Playing in the browser (the forms /web/play, /web/matches/{id}/..., and the match's own
routes /matches/{id}/... by the cookie): who may do what, with the guest cookie, over real HTTP
against a real uvicorn (SQLite, and PostgreSQL when configured)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from protocol.version import PROTOCOL_VERSION, VERSION_HEADER
from server.settings import Settings
from server.web.play import HOUSE_BOTS
from tests.server.conftest import RunningServer, start_server

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
FOREIGN = {"Origin": "https://evil.example"}

PLAY = {"game": "tictactoe", "bot": "greedy", "time_control": "untimed", "colour": "first"}

ACTIONS = ("moves", "resign", "offer-draw", "accept-draw", "decline-draw", "abort")
"""The routes of a match being played that the page's script posts to by the cookie."""


def browser(server: RunningServer) -> httpx.Client:
    """A client that keeps cookies, as a browser does (a fresh one has no guest), and names
    the protocol version as the match page's script does."""
    return httpx.Client(base_url=server.url, timeout=30, headers={VERSION_HEADER: PROTOCOL_VERSION})


def guest_of(client: httpx.Client) -> str:
    """Return the name of `client`'s guest, as the lobby shows it."""
    found = re.search(
        r'You play as <a href="/players/(guest-[0-9a-f]{10})">', client.get("/", headers=HTML).text
    )
    assert found is not None
    return found.group(1)


def post_action(client: httpx.Client, match_id: str, action: str, **headers: str) -> httpx.Response:
    body = {"move": "4"} if action == "moves" else None
    return client.post(f"/matches/{match_id}/{action}", json=body, headers=headers)


def start(client: httpx.Client, **form: str) -> str:
    """Post the play form; return the new match's id."""
    answer = client.post("/web/play", data={**PLAY, **form})
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert re.fullmatch(r"/matches/m_[0-9a-f]{16}", location)
    return location.removeprefix("/matches/")


@pytest.fixture
def server(server_settings: Settings) -> Iterator[RunningServer]:
    settings = server_settings.model_copy(
        update={
            "rate_registrations_per_address": "1000/minute",
            "rate_matches_per_player": "6/day",
        }
    )
    running = start_server(settings)
    try:
        yield running
    finally:
        running.stop()


def test_the_play_form_makes_a_guest_and_a_match_against_a_house_bot(server: RunningServer) -> None:
    with browser(server) as ann, httpx.Client(base_url=server.url) as program:
        assert 'action="/web/play"' in ann.get("/", headers=HTML).text
        for spec, _ in HOUSE_BOTS:
            assert f'<option value="{spec}"' in ann.get("/", headers=HTML).text
        got = ann.post("/web/play", data={**PLAY, "time_control": "5+3", "colour": "second"})
        assert got.status_code == 303
        cookie = got.headers["set-cookie"].lower()
        assert (
            cookie.startswith("arena_guest=")
            and "httponly" in cookie
            and "samesite=strict" in cookie
        )
        match_id = got.headers["location"].removeprefix("/matches/")
        name = guest_of(ann)
        state = program.get(f"/matches/{match_id}").json()
        assert state["seats"][1]["player"] == name and state["seats"][0]["bot"] == "greedy"
        assert state["time_control"] == {
            "base_ms": 300_000,
            "increment_ms": 3_000,
            "move_cap_ms": None,
        }
        # The same browser keeps its guest: a second match, no new cookie.
        again = ann.post("/web/play", data=PLAY)
        assert again.status_code == 303 and "set-cookie" not in again.headers
        second = program.get(again.headers["location"]).json()
        assert second["seats"][0]["player"] == name and second["seats"][1]["bot"] == "greedy"
        # The page is in play mode for the guest, and a spectator's page for anyone else.
        page = ann.get(again.headers["location"], headers=HTML).text
        assert 'id="play"' in page and "/static/play.js" in page
        assert 'data-legal-moves="0 1 2 3 4 5 6 7 8"' in page
        other = program.get(again.headers["location"], headers=HTML).text
        assert 'id="play"' not in other and "/static/play.js" not in other
        # Random colour: either seat, the guest's.
        drawn = program.get(f"/matches/{start(ann, colour='random')}").json()
        assert name in (drawn["seats"][0]["player"], drawn["seats"][1]["player"])
        # The lobby lists the guest's live matches.
        assert ann.get("/", headers=HTML).text.count('id="your-matches"') == 1


def test_a_bad_play_form_comes_back_saying_what_was_wrong(server: RunningServer) -> None:
    with browser(server) as ann:
        cases = {
            "game": ("chess", "game: choose one of"),
            "bot": ("nobody", "seats.1.bot: unknown bot &#39;nobody&#39;"),
            "time_control": ("1+0", "time control: choose one of untimed"),
            "colour": ("purple", "colour: choose first, second or random"),
        }
        for field, (value, said) in cases.items():
            answer = ann.post("/web/play", data={**PLAY, field: value})
            assert answer.status_code == 422, (field, answer.text)
            assert answer.headers["content-type"].startswith("text/html")
            assert 'role="alert"' in answer.text and said in answer.text, field
        # A bot beyond the server's maxima is refused by the same policy as POST /matches.
        deep = ann.post("/web/play", data={**PLAY, "bot": "alphabeta:depth=99"})
        assert deep.status_code == 422 and "seats.1.bot" in deep.text
        # A form with markup is shown back as text.
        markup = ann.post("/web/play", data={**PLAY, "bot": "<b>x</b>"})
        assert markup.status_code == 422 and "<b>x</b>" not in markup.text


def test_who_may_play_and_act_in_a_guests_match(server: RunningServer) -> None:
    with (
        browser(server) as ann,
        browser(server) as bob,
        httpx.Client(base_url=server.url) as nobody,
    ):
        # Against random, which declines every draw offer (it judges no position): the offer
        # below stands or is declined, and the resignation after it is the guest's.
        match_id = start(ann, bot="random")
        start(bob)  # bob has a guest (and a match) of his own
        token = nobody.post("/players", json={"name": "carl"}).json()["token"]
        bearer = {"Authorization": f"Bearer {token}"}
        for action in ACTIONS:
            # No cookie: 401; the token of a player without a seat here: 403 NOT_A_PLAYER.
            refused = post_action(nobody, match_id, action)
            assert (refused.status_code, refused.json()["code"]) == (401, "UNAUTHORIZED"), action
            refused = post_action(nobody, match_id, action, **bearer)
            assert (refused.status_code, refused.json()["code"]) == (403, "NOT_A_PLAYER"), action
            # Another guest holds no seat here: 403 NOT_A_PLAYER.
            refused = post_action(bob, match_id, action)
            assert (refused.status_code, refused.json()["code"]) == (403, "NOT_A_PLAYER"), action
            # The seat's guest, from another site's page: 403 FORBIDDEN, nothing done.
            refused = post_action(ann, match_id, action, **FOREIGN)
            assert (refused.status_code, refused.json()["code"]) == (403, "FORBIDDEN"), action
        assert nobody.get(f"/matches/{match_id}").json()["moves"] == []

        # The guest itself: refusals name why (and the legal moves for a move).
        seq = nobody.get(f"/matches/{match_id}").json()["seq"]
        stale = ann.post(f"/matches/{match_id}/moves", json={"move": "4", "expected_seq": seq + 5})
        assert (stale.status_code, stale.json()["code"]) == (409, "STALE_SEQ")
        unreadable = ann.post(f"/matches/{match_id}/moves", json={"move": "x"})
        assert (unreadable.status_code, unreadable.json()["code"]) == (422, "INVALID_MOVE")
        no_offer = post_action(ann, match_id, "accept-draw")
        assert (no_offer.status_code, no_offer.json()["code"]) == (409, "NO_DRAW_OFFER")
        moved = ann.post(f"/matches/{match_id}/moves", json={"move": "4", "expected_seq": seq})
        assert moved.status_code == 200 and moved.json()["type"] == "move_made"
        assert moved.json()["move"] == "4" and moved.json()["seat"] == 0
        taken = ann.post(f"/matches/{match_id}/moves", json={"move": "4"})
        assert taken.status_code in (409, 422)  # the bot's turn, or cell 4 taken
        too_late = post_action(ann, match_id, "abort")
        assert (too_late.status_code, too_late.json()["code"]) == (409, "CANNOT_ABORT")
        offered = post_action(ann, match_id, "offer-draw")
        assert offered.status_code == 200 and offered.json()["draw_offer"] == 0
        resigned = post_action(ann, match_id, "resign")
        assert resigned.status_code == 200
        assert (
            resigned.json()["result"]["code"] == "resign"
            and resigned.json()["result"]["winner"] == 1
        )
        over = post_action(ann, match_id, "resign")
        assert (over.status_code, over.json()["code"]) == (409, "MATCH_OVER")
        # An untouched match may be aborted by its guest.
        fresh = start(ann, colour="first")
        aborted = post_action(ann, fresh, "abort")
        assert aborted.status_code == 200 and aborted.json()["status"] == "aborted"
        unknown = post_action(ann, "m_nosuchmatch", "resign")
        assert (unknown.status_code, unknown.json()["code"]) == (404, "UNKNOWN_MATCH")


def test_challenges_and_open_seats_from_the_browser(server: RunningServer) -> None:
    with (
        browser(server) as ann,
        browser(server) as bob,
        browser(server) as newcomer,
        httpx.Client(base_url=server.url) as program,
    ):
        start(ann)
        start(bob)
        name = guest_of(ann)
        token = program.post("/players", json={"name": "carol"}).json()["token"]
        carol = {"Authorization": f"Bearer {token}"}

        def challenge() -> str:
            made = program.post(
                "/matches", json={"game": "nim", "seats": ["carol", name]}, headers=carol
            )
            assert made.status_code == 201, made.text
            return str(made.json()["match_id"])

        first, second = challenge(), challenge()
        lobby = ann.get("/", headers=HTML).text
        assert 'id="challenges"' in lobby and lobby.count("carol invites you to nim") == 2
        assert 'id="challenges"' not in bob.get("/", headers=HTML).text
        # Only the guest challenged may answer, with its cookie, from this site.
        for action in ("accept", "decline"):
            assert program.post(f"/web/matches/{first}/{action}").status_code == 401
            # The challenger's own token answers no challenge of theirs: 403 NOT_CHALLENGED.
            mine = program.post(f"/web/matches/{first}/{action}", headers=carol)
            assert mine.status_code == 403 and "NOT_CHALLENGED" in mine.text
            other = bob.post(f"/web/matches/{first}/{action}")
            assert other.status_code == 403 and "NOT_CHALLENGED" in other.text
            assert other.headers["content-type"].startswith("text/html")
            assert ann.post(f"/web/matches/{first}/{action}", headers=FOREIGN).status_code == 403
        # The challenged match's page offers the answers.
        page = ann.get(f"/matches/{first}", headers=HTML).text
        assert f'action="/web/matches/{first}/accept"' in page
        declined = ann.post(f"/web/matches/{first}/decline")
        assert declined.status_code == 303 and declined.headers["location"] == "/"
        assert program.get(f"/matches/{first}").json()["status"] == "aborted"
        accepted = ann.post(f"/web/matches/{second}/accept")
        assert accepted.status_code == 303 and accepted.headers["location"] == f"/matches/{second}"
        state = program.get(f"/matches/{second}").json()
        assert state["status"] == "active" and state["seats"][1]["player"] == name
        again = ann.post(f"/web/matches/{second}/accept")
        assert again.status_code == 403 and "NOT_CHALLENGED" in again.text
        assert 'id="challenges"' not in ann.get("/", headers=HTML).text

        # An open seat: a browser without a guest gets one, and the seat.
        opened = program.post(
            "/matches", json={"game": "connect4", "seats": ["carol", "open"]}, headers=carol
        )
        open_id = opened.json()["match_id"]
        page = newcomer.get(f"/matches/{open_id}", headers=HTML).text
        assert f'action="/web/matches/{open_id}/join"' in page
        assert newcomer.post(f"/web/matches/{open_id}/join", headers=FOREIGN).status_code == 403
        joined = newcomer.post(f"/web/matches/{open_id}/join", data={"seat": "1"})
        assert joined.status_code == 303 and "arena_guest=" in joined.headers["set-cookie"]
        state = program.get(f"/matches/{open_id}").json()
        assert state["status"] == "active" and state["seats"][1]["player"].startswith("guest-")
        full = bob.post(f"/web/matches/{open_id}/join")
        assert full.status_code == 409 and "SEAT_TAKEN" in full.text and 'role="alert"' in full.text
        assert 'id="play"' in newcomer.get(f"/matches/{open_id}", headers=HTML).text


def test_the_play_routes_count_against_the_rest_limits(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "g",
        rate_registrations_per_address="2/day",
        rate_matches_per_player="3/day",
    )
    server = start_server(settings)
    try:
        # A guest made by the form counts as a registration: the third browser is refused.
        for _ in range(2):
            with browser(server) as fresh:
                assert fresh.post("/web/play", data=PLAY).status_code == 303
        with browser(server) as third:
            refused = third.post("/web/play", data=PLAY)
            assert refused.status_code == 429 and refused.json()["code"] == "RATE_LIMITED"
            assert "set-cookie" not in refused.headers
    finally:
        server.stop()
    server = start_server(
        settings.model_copy(update={"database_url": f"sqlite+aiosqlite:///{tmp_path / 'b.db'}"})
    )
    try:
        with browser(server) as ann:
            assert ann.post("/web/guest").status_code == 303
            # The same counts as POST /matches: 3 a day for a player.
            for _ in range(3):
                assert ann.post("/web/play", data=PLAY).status_code == 303
            limited = ann.post("/web/play", data=PLAY)
            assert limited.status_code == 429 and limited.json()["code"] == "RATE_LIMITED"
    finally:
        server.stop()


def test_a_persons_slips_on_the_page_never_forfeit_the_match(server: RunningServer) -> None:
    # max_illegal_moves is 3: a program sending three bad moves over REST forfeits, a person
    # typing them on the page is only told why, however many there are.
    with browser(server) as ann, httpx.Client(base_url=server.url) as nobody:
        match_id = start(ann)
        for text in ("x", "9", "x", "0-0", "x"):
            refused = ann.post(f"/matches/{match_id}/moves", json={"move": text})
            assert (refused.status_code, refused.json()["code"]) == (422, "INVALID_MOVE")
            assert refused.json()["legal_moves"] == [str(cell) for cell in range(9)]
            assert refused.json()["details"]["rejections"] == 0
        assert nobody.get(f"/matches/{match_id}").json()["status"] == "active"
        moved = ann.post(f"/matches/{match_id}/moves", json={"move": "4"})
        assert moved.status_code == 200 and moved.json()["move"] == "4"


def test_a_rematch_swaps_the_colours_of_a_finished_match(server: RunningServer) -> None:
    """The finished match's players only; a house bot plays again, a player is challenged;
    created as any match is, and counted as one."""
    with (
        browser(server) as ann,
        browser(server) as bob,
        httpx.Client(base_url=server.url) as program,
    ):
        match_id = start(ann, time_control="5+3", colour="first")
        start(bob)
        name = guest_of(ann)
        # Not before the end, not for anyone else, only from this site, with a guest.
        early = ann.post(f"/web/matches/{match_id}/rematch")
        assert early.status_code == 409 and "MATCH_NOT_OVER" in early.text
        assert early.headers["content-type"].startswith("text/html")
        assert post_action(ann, match_id, "resign").status_code == 200
        other = bob.post(f"/web/matches/{match_id}/rematch")
        assert other.status_code == 403 and "NOT_A_PLAYER" in other.text
        anonymous = program.post(f"/web/matches/{match_id}/rematch")
        assert (anonymous.status_code, anonymous.json()["code"]) == (401, "UNAUTHORIZED")
        foreign = ann.post(f"/web/matches/{match_id}/rematch", headers=FOREIGN)
        assert (foreign.status_code, foreign.json()["code"]) == (403, "FORBIDDEN")
        unknown = ann.post("/web/matches/m_nosuchmatch/rematch")
        assert unknown.status_code == 404 and "UNKNOWN_MATCH" in unknown.text
        page = ann.get(f"/matches/{match_id}", headers=HTML).text
        assert f'action="/web/matches/{match_id}/rematch"' in page
        assert "you play O" in page

        again = ann.post(f"/web/matches/{match_id}/rematch")
        assert again.status_code == 303, again.text
        rematch = program.get(again.headers["location"]).json()
        old = program.get(f"/matches/{match_id}").json()
        assert rematch["match_id"] != match_id and rematch["status"] == "active"
        assert rematch["seats"][0]["bot"] == "greedy" and rematch["seats"][1]["player"] == name
        assert (rematch["game"], rematch["time_control"]) == (old["game"], old["time_control"])

        # Against a player: the rematch challenges them, the seats swapped.
        token = program.post("/players", json={"name": "carol"}).json()["token"]
        carol = {"Authorization": f"Bearer {token}"}
        body = {"game": "nim", "seats": ["carol", name], "max_plies": 30}
        challenged = program.post("/matches", json=body, headers=carol).json()["match_id"]
        assert ann.post(f"/web/matches/{challenged}/accept").status_code == 303
        assert program.post(f"/matches/{challenged}/resign", headers=carol).status_code == 200
        answered = ann.post(f"/web/matches/{challenged}/rematch")
        assert answered.status_code == 303, answered.text
        version = {"Arena-Protocol-Version": "1.2"}  # max_plies is in 1.1 and later
        waiting = program.get(answered.headers["location"], headers=version).json()
        assert waiting["status"] == "waiting" and waiting["max_plies"] == 30
        assert waiting["seats"][0]["player"] == name
        assert waiting["seats"][1]["challenged"] == "carol"
        invited = program.get("/challenges", headers=carol).json()
        assert [c["match_id"] for c in invited] == [waiting["match_id"]]

        # Each rematch is a match created: the guest's daily count (6 here) runs out.
        statuses = [ann.post(f"/web/matches/{match_id}/rematch").status_code for _ in range(4)]
        assert statuses[:2] == [303, 303] and statuses[2:] == [429, 429], statuses
