"""The web pages' infrastructure: vendored assets under /static, escaping, security headers."""

from __future__ import annotations

import re
import time
from importlib.resources import files
from pathlib import Path

import httpx

from protocol.messages import (
    BotPoints,
    BotRating,
    Challenge,
    HeadToHead,
    MatchSummary,
    PlayerProfile,
    PlayerRating,
    SeatInfo,
    TournamentCreate,
    TournamentGame,
    TournamentStandings,
    TournamentState,
)
from server.routes.web_play import play_form_context
from server.settings import Settings
from server.web.pages import CONTENT_SECURITY_POLICY, Pages
from server.web.plots import elo_plot, history_plot
from tests.server.conftest import sqlite_server, start_server

V13 = {"Arena-Protocol-Version": "1.3"}


def test_assets_are_served_from_the_package_with_nosniff(tmp_path: Path) -> None:
    with sqlite_server(tmp_path) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        css = client.get("/static/arena.css")
        assert css.status_code == 200
        assert css.headers["content-type"].startswith("text/css")
        assert css.headers["x-content-type-options"] == "nosniff"
        assert css.text == (files("server.web") / "static" / "arena.css").read_text()
        script = client.get("/static/lobby.js")
        assert script.status_code == 200
        assert "javascript" in script.headers["content-type"]
        missing = client.get("/static/nothing.js")
        assert missing.status_code == 404
        assert missing.json()["code"] == "NOT_FOUND"
        # Every answer, JSON included, tells the browser not to guess its type.
        assert client.get("/health").headers["x-content-type-options"] == "nosniff"


def test_a_page_escapes_what_it_shows_and_carries_its_policy() -> None:
    page = Pages().render(
        "base.html",
        {"section": "lobby", "version": "<script>alert(1)</script>", "protocol_version": "1"},
    )
    html = bytes(page.body).decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY


def test_no_template_has_an_inline_script_or_style() -> None:
    """The policy forbids them: an inline script or style would be silently blocked."""
    templates = files("server.web") / "templates"
    for template in templates.iterdir():
        text = template.read_text()
        assert re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text) is None, template.name
        assert "<style" not in text and " style=" not in text, template.name
        assert re.search(r"\son[a-z]+=", text) is None, template.name


def _register(client: httpx.Client, name: str) -> dict[str, str]:
    response = client.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def _challenge(client: httpx.Client, owner: dict[str, str], invitee: dict[str, str]) -> str:
    """Start a tic-tac-toe match between two players (the first to move); return its id."""
    body = {"game": "tictactoe", "seats": ["ann", "bob"]}
    match_id = str(client.post("/matches", json=body, headers=owner).json()["match_id"])
    assert client.post(f"/matches/{match_id}/accept", headers=invitee).status_code == 200
    return match_id


def start_tournament(client: httpx.Client, owner: dict[str, str]) -> str:
    """Start a tic-tac-toe tournament of its owner, ann, against a house bot; return its id.

    It stays running: ann's game waits for her moves, and the tournament has no clock.
    """
    body = {"game": "tictactoe", "bots": ["player:ann", "random"]}
    tournament_id = str(
        client.post("/tournaments", json=body, headers=owner).json()["tournament_id"]
    )
    started = client.post(f"/tournaments/{tournament_id}/start", headers=owner)
    assert started.json()["status"] == "running", started.text
    # The runner begins its games just after the start's answer; once both are begun nothing
    # changes until ann moves, so two reads of the tournament can be compared.
    deadline = time.monotonic() + 30
    while True:
        state = client.get(f"/tournaments/{tournament_id}").json()
        if len(state["games"]) == state["games_total"]:
            return tournament_id
        assert time.monotonic() < deadline, f"the tournament's games were not begun: {state}"
        time.sleep(0.02)


def test_the_lobby_lists_live_matches_and_results(tmp_path: Path) -> None:
    with sqlite_server(tmp_path) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        ann, bob = _register(client, "ann"), _register(client, "bob")
        live = _challenge(client, ann, bob)
        done = _challenge(client, ann, bob)
        assert client.post(f"/matches/{done}/resign", headers=bob).status_code == 200
        page = client.get("/", headers={"Accept": "text/html"})
        assert page.status_code == 200
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        live_part, results_part = page.text.split('id="results-heading"')
        assert f'href="/matches/{live}"' in live_part and f"/matches/{done}" not in live_part
        assert f'href="/matches/{done}"' in results_part and "ann won: O resigned" in results_part
        assert "ann vs bob" in live_part
        assert "No tournament is running." in page.text
        tournament = start_tournament(client, ann)
        page = client.get("/", headers={"Accept": "text/html"})
        running = page.text.split('id="tournaments-heading"')[1]
        assert f'href="/tournaments/{tournament}">tictactoe: ann, random</a>' in running
        # Every asset the page names is served.
        for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text):
            assert client.get(asset).status_code == 200, asset


def test_the_lobby_draws_a_name_with_markup_as_text() -> None:
    """The protocol refuses such names; the template escapes them all the same."""
    name = "<script>alert(1)</script>"
    seats = (
        SeatInfo.model_construct(seat=0, side="X", player=name, bot=None, challenged=None),
        SeatInfo.model_construct(seat=1, side="O", player=None, bot="random", challenged=None),
    )
    match = MatchSummary.model_construct(
        match_id="m_1", game="tictactoe", status="active", seats=seats, ply=0, result=None
    )
    context = {
        "section": "lobby",
        "version": "0",
        "protocol_version": "1",
        "live": [match],
        "live_limit": 20,
        "finished": [],
        "tournaments": [],
        "leaderboards": [],
        "links": (),
        "websockets": (),
        # The play block: a challenge from the same name, and the form.
        "guest": None,
        "play": play_form_context(Settings()),
        "challenges": [
            Challenge.model_construct(
                match_id="m_2",
                game="tictactoe",
                seats=seats,
                your_seat=1,
                challenger=name,
                time_control=None,
            )
        ],
        "your_matches": [],
    }
    html = bytes(Pages().render("lobby.html", context).body).decode()
    assert name not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; vs random (house bot)" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; invites you to tictactoe" in html
    assert 'action="/web/matches/m_2/accept"' in html and 'action="/web/play"' in html


HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def test_programs_get_json_and_browsers_pages_from_the_same_urls(tmp_path: Path) -> None:
    with sqlite_server(tmp_path) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        ann, bob = _register(client, "ann"), _register(client, "bob")
        done = _challenge(client, ann, bob)
        assert client.post(f"/matches/{done}/resign", headers=bob).status_code == 200
        tournament = start_tournament(client, ann)
        for path, kind in (
            ("/tournaments", "tournament_list"),
            (f"/tournaments/{tournament}", "tournament_state"),
            ("/players/ann", "player_profile"),
        ):
            default = client.get(path)  # httpx sends Accept: */*, as curl does
            asked = client.get(path, headers={"Accept": "application/json"})
            assert default.headers["content-type"] == "application/json", path
            assert default.json()["type"] == kind
            assert asked.json() == default.json()
            page = client.get(path, headers=HTML)
            assert page.status_code == 200, path
            assert page.headers["content-type"].startswith("text/html"), path
            assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text):
                assert client.get(asset).status_code == 200, asset
        listing = client.get("/tournaments", headers=HTML).text
        assert f'href="/tournaments/{tournament}"' in listing
        detail = client.get(f"/tournaments/{tournament}", headers=HTML).text
        assert 'href="/players/ann"' in detail and 'src="/static/tournament.js"' in detail
        player = client.get("/players/ann", headers=HTML).text
        assert f'href="/matches/{done}"' in player and "1 rated match" in player
        # What does not exist is a 404 for both: a page for a browser, the error for a program.
        for path, code in (
            ("/players/nobody", "UNKNOWN_PLAYER"),
            ("/tournaments/t_0", "UNKNOWN_TOURNAMENT"),
        ):
            missing = client.get(path, headers=HTML)
            assert missing.status_code == 404 and "<h1>Not found</h1>" in missing.text, path
            assert client.get(path).json()["code"] == code


def test_the_tournament_and_player_pages_draw_names_with_markup_as_text() -> None:
    """The protocol refuses such names; the templates escape them all the same."""
    name = "<script>alert(1)</script>"
    bots = (f"player:{name}", "random")
    spec = TournamentCreate.model_construct(
        game="tictactoe", bots=bots, format="round-robin", games_per_pairing=2
    )
    points = tuple(
        BotPoints.model_construct(bot=bot, points=1.0, games=2, wins=1, draws=0, losses=1)
        for bot in bots
    )
    record = HeadToHead.model_construct(games=2, wins=1, draws=0, losses=1, points=1.0)
    ratings = tuple(
        BotRating.model_construct(
            bot=bot, elo=0.0, lower=None, upper=None, games=2, points=1.0, score=0.5
        )
        for bot in bots
    )
    standings = TournamentStandings.model_construct(
        points=points,
        ratings=ratings,
        first_move_advantage=None,
        crosstable={bots[0]: {bots[1]: record}, bots[1]: {bots[0]: record}},
        los={bots[0]: {bots[1]: 0.5}, bots[1]: {bots[0]: 0.5}},
        rating_note=None,
    )
    game = TournamentGame.model_construct(
        index=0,
        pair=0,
        first=bots[0],
        second=bots[1],
        opening="",
        match_id="m_1",
        result=1.0,
        reason="three in a row",
    )
    state = TournamentState.model_construct(
        tournament_id="t_1",
        spec=spec,
        status="finished",
        owner=name,
        invitations={name: "accepted"},
        reason=None,
        games_done=2,
        games_total=2,
        standings=standings,
        games=(game,),
    )
    context = {"section": "tournaments", "version": "0", "protocol_version": "1"}
    pages = Pages()
    html = bytes(
        pages.render(
            "tournament.html",
            {**context, "tournament": state, "elo_plot": elo_plot(standings.ratings)},
        ).body
    ).decode()
    assert name not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; vs random" in html
    profile = PlayerProfile.model_construct(
        name=name,
        ratings=(
            PlayerRating.model_construct(
                game="tictactoe", player=name, rating=1600.0, deviation=200.0, games=1
            ),
        ),
    )
    html = bytes(
        pages.render(
            "player.html",
            {
                **context,
                "profile": profile,
                "plots": {"tictactoe": history_plot([(1500.0, 350.0), (1600.0, 200.0)])},
                "recent": [],
            },
        ).body
    ).decode()
    assert name not in html
    assert '<h1 id="player-name">&lt;script&gt;alert(1)&lt;/script&gt;</h1>' in html


def test_a_browser_guest_creates_a_tournament_from_the_form(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "g",
        rate_tournaments_per_player="3/day",
    )
    server = start_server(settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            # The form is there at once: no button to press for a guest first.
            page = client.get("/tournaments", headers=HTML)
            assert 'action="/web/tournaments"' in page.text and 'id="get-guest"' not in page.text
            assert 'id="guest-note"' in page.text
            body = {"game": "tictactoe", "bots": "random\ngreedy", "games_per_pairing": "2"}
            # A form that cannot be read makes no guest: it comes back, saying why.
            one = client.post("/web/tournaments", data={**body, "bots": "random"})
            assert one.status_code == 422 and "set-cookie" not in one.headers
            assert "Players: needs at least 2 players (house bots or player:NAME), not 1" in (
                one.text
            )
            # A browser without a guest gets one by creating the tournament, which is its.
            first = client.post("/web/tournaments", data=body)
            assert first.status_code == 303, first.text
            cookie = first.headers["set-cookie"].lower()
            assert cookie.startswith("arena_guest=arena_")
            assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
            guest = client.cookies["arena_guest"]
            page = client.get("/tournaments", headers=HTML)
            name = re.search(r'You are <a href="/players/(guest-[0-9a-f]{10})">', page.text)
            assert name is not None and 'action="/web/tournaments"' in page.text
            first_id = first.headers["location"].removeprefix("/tournaments/")
            assert client.get(f"/tournaments/{first_id}").json()["owner"] == name.group(1)

            # The cookie is a credential on every route, as a token is; a request by it that
            # changes something is refused from another site's page, before it is counted.
            assert client.get("/challenges").status_code == 200
            rest = client.post(
                "/tournaments",
                json={"game": "tictactoe", "bots": ["random", "greedy"]},
                headers={"Origin": "https://evil.example"},
            )
            assert (rest.status_code, rest.json()["code"]) == (403, "FORBIDDEN")
            # A form posted from another site's page is refused.
            foreign = client.post(
                "/web/tournaments", data=body, headers={"Origin": "https://evil.example"}
            )
            assert foreign.status_code == 403

            created = client.post("/web/tournaments", data={**body, "start": "on"})
            assert created.status_code == 303, created.text
            tournament_id = created.headers["location"].removeprefix("/tournaments/")
            state = client.get(f"/tournaments/{tournament_id}").json()
            assert state["owner"] == name.group(1)
            assert state["status"] in ("running", "finished")
            assert state["spec"]["bots"] == ["random", "greedy"]
            # Not started when not asked.
            waiting = client.post("/web/tournaments", data=body)
            waiting_id = waiting.headers["location"].removeprefix("/tournaments/")
            assert client.get(f"/tournaments/{waiting_id}").json()["status"] == "created"

            # What is wrong comes back in the form, with what was typed (escaped).
            bad = client.post("/web/tournaments", data={**body, "bots": "random\n<b>nobody</b>"})
            assert bad.status_code == 422 and bad.headers["content-type"].startswith("text/html")
            assert 'role="alert"' in bad.text and "&lt;b&gt;nobody&lt;/b&gt;" in bad.text
            assert "<b>nobody</b>" not in bad.text

            # The form counts against the same limits as POST /tournaments (3 a day here,
            # the refused one above included; the first was counted before the guest was made).
            limited = client.post("/web/tournaments", data=body)
            assert limited.status_code == 429, limited.text
            assert guest == client.cookies["arena_guest"]
    finally:
        server.stop()


def test_a_guest_forgets_itself_and_its_cookie_is_cleared(tmp_path: Path) -> None:
    with sqlite_server(tmp_path) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        client.post("/web/guest")
        page = client.get("/tournaments", headers=HTML)
        name = re.search(r'You are <a href="/players/(guest-[0-9a-f]{10})">', page.text)
        assert name is not None and 'action="/web/guest/forget"' in page.text
        # Another site's page cannot make the browser forget its guest.
        foreign = client.post("/web/guest/forget", headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403
        assert client.cookies.get("arena_guest")

        forgot = client.post("/web/guest/forget", data={"next": "/tournaments"})
        assert forgot.status_code == 303 and forgot.headers["location"] == "/tournaments"
        cookie = forgot.headers["set-cookie"].lower()
        assert cookie.startswith('arena_guest=""') and "max-age=0" in cookie
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
        assert client.cookies.get("arena_guest") is None
        page = client.get("/tournaments", headers=HTML)
        assert 'id="guest-note"' in page.text and "You are" not in page.text
        # The player stays, under its name.
        assert client.get(f"/players/{name.group(1)}").status_code == 200

        # Forgetting goes to a path of this server only (and works without a guest).
        for wanted in ("https://evil.example/", "//evil.example/x", "/a b", "/x\n", None):
            data = {} if wanted is None else {"next": wanted}
            away = client.post("/web/guest/forget", data=data)
            assert away.status_code == 303 and away.headers["location"] == "/tournaments"
        assert client.post("/web/guest/forget", data={"next": "/"}).headers["location"] == "/"


def test_the_tournament_form_takes_what_an_organiser_sets(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "g",
        rate_tournaments_per_player="100/minute",
        rate_tournaments_per_address="100/minute",
    )
    server = start_server(settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            client.post("/web/guest")
            page = client.get("/tournaments", headers=HTML).text
            for field in ("format", "base_s", "increment_s", "move_cap_s", "deck", "openings"):
                assert f'name="{field}"' in page
            assert '<option value="acf-3move">' in page
            body = {
                "game": "checkers",
                "bots": "random\ngreedy\nrandom:seed=2",
                "format": "gauntlet",
                "games_per_pairing": "4",
                "seed": "7",
                "ply_cap": "30",
                "concurrency": "3",
                "base_s": "90",
                "increment_s": "0.5",
                "move_cap_s": "10",
                "deck": "acf-3move",
            }
            created = client.post("/web/tournaments", data=body)
            assert created.status_code == 303, created.text
            spec = client.get(created.headers["location"]).json()["spec"]
            assert spec["format"] == "gauntlet"
            assert (spec["games_per_pairing"], spec["seed"]) == (4, 7)
            assert (spec["ply_cap"], spec["concurrency"]) == (30, 3)
            assert spec["time_control"] == {
                "base_ms": 90_000,
                "increment_ms": 500,
                "move_cap_ms": 10_000,
            }
            assert spec["openings"] == "acf-3move"

            listed = {**body, "deck": "", "openings": "11-15 23-19\n\n9-13 22-18\n"}
            created = client.post("/web/tournaments", data=listed)
            assert created.status_code == 303, created.text
            spec = client.get(created.headers["location"]).json()["spec"]
            assert spec["openings"] == ["11-15 23-19", "9-13 22-18"]
            untimed = {**body, "base_s": "", "increment_s": "", "move_cap_s": "", "deck": ""}
            created = client.post("/web/tournaments", data=untimed)
            spec = client.get(created.headers["location"]).json()["spec"]
            assert spec["time_control"] is None and spec["openings"] is None
            assert 'name="sprt"' in page and 'name="sprt_pairs"' in page
            # The SPRT's settings are read as `arena match --sprt` reads them.
            sprt = {**untimed, "bots": "random\ngreedy", "sprt": "elo0=0 elo1=20, beta=0.1"}
            created = client.post("/web/tournaments", data={**sprt, "sprt_pairs": "50"})
            assert created.status_code == 303, created.text
            state = client.get(created.headers["location"], headers=V13).json()
            assert state["spec"]["sprt"] == {
                "elo0": 0,
                "elo1": 20,
                "alpha": 0.05,
                "beta": 0.1,
                "model": "normalized",
                "max_pairs": 50,
            }
            assert state["games_total"] == 100 and state["sprt"]["max_pairs"] == 50

            # Each refusal names the field by its label, with what was wrong; all at once.
            refusals = {
                "Time per side: a number of seconds": {"base_s": "soon"},
                "Increment: a number of seconds": {"increment_s": "-1"},
                "Time control: an increment": {"base_s": "", "move_cap_s": ""},
                "Openings: name a deck or list openings, not both": {"openings": "11-15"},
                "Games at once: must be at most 16, not 17": {"concurrency": "17"},
                "Ply cap: a whole number": {"ply_cap": "many"},
                "Format: must be &#39;round-robin&#39; or &#39;gauntlet&#39;, not &#39;sw": {
                    "format": "swiss"
                },
                "Players: player 2 (&#39;Not A Bot&#39;) is not a bot spec": {
                    "bots": "random\nNot A Bot"
                },
                "Players: needs at least 2 players (house bots or player:NAME), not 1": {
                    "bots": "random"
                },
                "Players: &#39;random&#39; is named twice": {"bots": "random\nrandom"},
                "Time per side: must be at least 1, not 0": {"base_s": "0"},
                "Openings: opening 2 of 2 (&#39;11-15 99-1&#39;): move 2 &#39;99-1&#39; is "
                "rejected: cannot read checkers move &#39;99-1&#39;": {
                    "deck": "",
                    "openings": "11-15\n11-15 99-1",
                },
            }
            refusals |= {
                "SPRT: elo1 (0) must be greater than elo0 (5)": {"sprt": "elo0=5 elo1=0"},
                "SPRT: unknown SPRT setting &#39;h0&#39;": {"sprt": "elo0=0 elo1=5 h0=1"},
                "SPRT alpha: must be less than 0.5, not 0.6": {"sprt": "elo0=0 elo1=5 alpha=0.6"},
                "Most SPRT pairs: must be at most 5000, not 6000": {
                    "sprt": "elo0=0 elo1=5",
                    "sprt_pairs": "6000",
                },
                "SPRT: an SPRT tournament is a match between exactly 2 bots, not 3": {
                    "sprt": "elo0=0 elo1=5"
                },
            }
            for expected, change in refusals.items():
                refused = client.post("/web/tournaments", data={**body, **change})
                assert refused.status_code == 422, (change, refused.text)
                assert expected in refused.text, (change, refused.text)
            both = client.post("/web/tournaments", data={**body, "seed": "x", "ply_cap": "y"})
            assert "Seed: a whole number" in both.text and "Ply cap: a whole number" in both.text
            # A deck of another game is the service's refusal, shown the same way.
            other = client.post("/web/tournaments", data={**body, "game": "connect4"})
            assert other.status_code == 422 and "acf-3move" in other.text
    finally:
        server.stop()
