"""Glicko-2 ratings of finished matches: the leaderboard, a player's ratings, restarts, and
concurrent rating of one player's matches (SQLite; PostgreSQL if set)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from competition.ratings import Rating, rate_game
from server.db.engine import create_engine, migrate, session_factory
from server.db.models import Base, Match, Player, RatingChange
from server.db.models import Rating as RatingRow
from server.ratings import RatingService
from server.settings import Settings
from tests.server.conftest import start_server

# -- through a real server -------------------------------------------------------------------------


def _register(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def _match(http: httpx.Client, first: dict[str, str], seats: list[Any], second: Any) -> str:
    """A tictactoe match of `seats`, started (the challenged player `second` accepts)."""
    created = http.post("/matches", json={"game": "tictactoe", "seats": seats}, headers=first)
    assert created.status_code == 201, created.text
    match_id = str(created.json()["match_id"])
    if second is not None:
        accepted = http.post(f"/matches/{match_id}/accept", headers=second)
        assert accepted.status_code == 200, accepted.text
    return match_id


def _act(http: httpx.Client, match_id: str, action: str, who: dict[str, str]) -> None:
    response = http.post(f"/matches/{match_id}/{action}", headers=who)
    assert response.status_code == 200, response.text


def _games(http: httpx.Client, name: str) -> int:
    profile = http.get(f"/players/{name}")
    assert profile.status_code == 200, profile.text
    ratings = profile.json()["ratings"]
    return sum(rating["games"] for rating in ratings)


def _wait_games(http: httpx.Client, name: str, games: int) -> None:
    """Wait until `name` has `games` rated games (a match is rated just after it ends)."""
    deadline = time.monotonic() + 20
    while _games(http, name) != games:
        assert time.monotonic() < deadline, f"{name} never reached {games} rated games"
        time.sleep(0.05)


def _board(http: httpx.Client) -> list[dict[str, Any]]:
    response = http.get("/leaderboard", params={"game": "tictactoe"})
    assert response.status_code == 200, response.text
    board = response.json()
    assert board["type"] == "leaderboard" and board["next_offset"] is None
    ratings: list[dict[str, Any]] = board["ratings"]
    return ratings


def _expected() -> dict[str, Rating]:
    """ada beats bob twice, draws bob, then resigns to the random bot: one period per match."""
    ada, bob, bot = Rating(), Rating(), Rating()
    ada, bob = rate_game(ada, bob, 1)
    ada, bob = rate_game(ada, bob, 1)
    ada, bob = rate_game(ada, bob, 0.5)
    ada, bot = rate_game(ada, bot, 0)
    return {"ada": ada, "bob": bob, "random": bot}


def _play(http: httpx.Client) -> None:
    ada, bob = _register(http, "ada"), _register(http, "bob")
    for played in (1, 2):
        _act(http, _match(http, ada, ["ada", "bob"], bob), "resign", bob)
        _wait_games(http, "ada", played)
    # Aborted before the first move: rated for nobody.
    _act(http, _match(http, ada, ["ada", "bob"], bob), "abort", ada)
    drawn = _match(http, ada, ["ada", "bob"], bob)
    _act(http, drawn, "offer-draw", ada)
    _act(http, drawn, "accept-draw", bob)
    _wait_games(http, "ada", 3)
    _act(http, _match(http, ada, ["ada", {"bot": "random"}], None), "resign", ada)
    _wait_games(http, "ada", 4)


def _check(board: list[dict[str, Any]]) -> None:
    expected = _expected()
    names = [row["player"] or row["bot"] for row in board]
    assert names == sorted(expected, key=lambda name: -expected[name].rating)
    for row in board:
        name = row["player"] or row["bot"]
        assert row["rating"] == round(expected[name].rating, 2), name
        assert row["deviation"] == round(expected[name].deviation, 2), name
        assert row["games"] == {"ada": 4, "bob": 3, "random": 1}[name]
    assert [row["bot"] for row in board if row["bot"]] == ["random"]


def test_finished_matches_are_rated_once_and_survive_restarts(server_settings: Settings) -> None:
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            _play(http)
            board = _board(http)
            _check(board)
            profile = http.get("/players/bob").json()
            assert profile["type"] == "player_profile" and profile["name"] == "bob"
            assert [(r["game"], r["games"]) for r in profile["ratings"]] == [("tictactoe", 3)]
            assert http.get("/leaderboard", params={"game": "checkers"}).json()["ratings"] == []
            unknown = http.get("/leaderboard", params={"game": "chess960"})
            assert unknown.status_code == 422 and unknown.json()["code"] == "VALIDATION_ERROR"
            nobody = http.get("/players/nobody")
            assert nobody.status_code == 404 and nobody.json()["code"] == "UNKNOWN_PLAYER"
    finally:
        server.stop()

    # A restart rates nothing again.
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            assert _board(http) == board
    finally:
        server.stop()

    # Finished matches left unrated (here: every rating forgotten) are rated at the next start,
    # oldest first, to the same ratings.
    asyncio.run(_forget_ratings(server_settings.database_url))
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            assert _board(http) == board
    finally:
        server.stop()


def test_a_tournaments_games_rate_its_house_bots(server_settings: Settings) -> None:
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            owner = _register(http, "organiser")
            # A bot is rated under its canonical spec (the default tt=true left out).
            bots = ["alphabeta:tt=true,depth=9", "greedy"]
            body = {"game": "tictactoe", "bots": bots, "games_per_pairing": 4, "seed": 3}
            created = http.post("/tournaments", json=body, headers=owner)
            assert created.status_code == 201, created.text
            tournament_id = created.json()["tournament_id"]
            started = http.post(f"/tournaments/{tournament_id}/start", headers=owner)
            assert started.status_code == 200, started.text
            deadline = time.monotonic() + 60
            while sum(row["games"] for row in _board(http)) < 2 * 4:
                assert time.monotonic() < deadline, _board(http)
                time.sleep(0.05)
            board = _board(http)
            assert [(row["bot"], row["games"]) for row in board] == [
                ("alphabeta:depth=9", 4),
                ("greedy", 4),
            ]
            assert all(row["player"] is None for row in board)
            # A perfect player never loses at tic-tac-toe: it is rated above greedy.
            assert board[0]["rating"] > board[1]["rating"]
    finally:
        server.stop()


async def _forget_ratings(url: str) -> None:
    engine = create_engine(url)
    async with engine.begin() as connection:
        await connection.execute(delete(RatingChange))
        await connection.execute(delete(RatingRow))
    await engine.dispose()


# -- the service, concurrently ---------------------------------------------------------------------

MATCHES = 12


@pytest.fixture
async def engine(server_settings: Settings) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(server_settings.database_url)
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    await migrate(engine)
    yield engine
    await engine.dispose()


async def test_concurrent_ratings_of_one_player_lose_no_update(
    engine: AsyncEngine, server_settings: Settings
) -> None:
    """Matches of one player rated at once by several services (as by several server
    processes, each with its own engine) are each rated once, every update on the last."""
    sessions = session_factory(engine)
    async with sessions() as session:
        ada = Player(name="ada", token_hash="ada")
        rivals = [Player(name=f"rival{i}", token_hash=f"rival{i}") for i in range(MATCHES)]
        session.add_all([ada, *rivals])
        await session.flush()
        for i, rival in enumerate(rivals):
            session.add(
                Match(
                    id=f"m_{i}",
                    game="checkers",
                    status="finished",
                    seat0_player_id=ada.id,
                    seat1_player_id=rival.id,
                    result_winner=i % 2,
                    result_reason="resign",
                )
            )
        await session.commit()
    engines = [create_engine(server_settings.database_url) for _ in range(3)]
    try:
        services = [RatingService(session_factory(each)) for each in engines]
        # Every match is asked of every service: each must still be rated exactly once.
        results = await asyncio.gather(
            *(service.rate(f"m_{i}") for i in range(MATCHES) for service in services)
        )
    finally:
        for each in engines:
            await each.dispose()
    assert sum(results) == MATCHES
    async with sessions() as session:
        row = await session.scalar(select(RatingRow).where(RatingRow.player_id == ada.id))
        assert row is not None and row.games == MATCHES
        history = (
            await session.scalars(
                select(RatingChange)
                .where(RatingChange.rating_id == row.id)
                .order_by(RatingChange.id)
            )
        ).all()
    assert len(history) == MATCHES
    # No lost update: each match was rated from the rating the one before left.
    chain = [1500.0, *(change.rating for change in history)]
    assert [change.rating_before for change in history] == chain[:-1]
    assert row.rating == history[-1].rating


async def test_a_players_history_and_every_games_leaderboard(engine: AsyncEngine) -> None:
    """The history holds the rating after each rated match, per game, oldest first; the
    leaderboards are one page of each game with ratings, in name order."""
    sessions = session_factory(engine)
    games = ["tictactoe", "checkers", "tictactoe", "tictactoe"]
    async with sessions() as session:
        ada, bob = Player(name="ada", token_hash="ada"), Player(name="bob", token_hash="bob")
        session.add_all([ada, bob])
        await session.flush()
        for i, game in enumerate(games):
            session.add(
                Match(
                    id=f"m_{i}",
                    game=game,
                    status="finished",
                    seat0_player_id=ada.id,
                    seat1_player_id=bob.id,
                    result_winner=0 if i != 2 else 1,
                    result_reason="resign",
                )
            )
        await session.commit()
    service = RatingService(sessions)
    for i in range(len(games)):
        assert await service.rate(f"m_{i}")

    expected, rating = [], Rating()
    opponent = Rating()
    for score in (1, 0, 1):
        rating, opponent = rate_game(rating, opponent, score)
        expected.append(rating)
    history = await service.history(ada)
    assert list(history) == ["checkers", "tictactoe"]
    assert [p.match_id for p in history["tictactoe"]] == ["m_0", "m_2", "m_3"]
    assert [p.rating for p in history["tictactoe"]] == pytest.approx([r.rating for r in expected])
    assert [p.deviation for p in history["tictactoe"]] == pytest.approx(
        [r.deviation for r in expected]
    )
    assert [p.match_id for p in history["checkers"]] == ["m_1"]
    # The latest matches over every game: the limit keeps the newest.
    latest = await service.history(ada, limit=2)
    assert {game: [p.match_id for p in points] for game, points in latest.items()} == {
        "tictactoe": ["m_2", "m_3"]
    }

    boards = await service.leaderboards(limit=1)
    assert [board.game for board in boards] == ["checkers", "tictactoe"]
    assert [[r.player for r in board.ratings] for board in boards] == [["ada"], ["ada"]]
    assert [board.next_offset for board in boards] == [1, 1]
    # One query for every game says what each game's own leaderboard says (the lobby's).
    for limit in (1, 2, 3):
        each = [await service.leaderboard(game, limit=limit) for game in ("checkers", "tictactoe")]
        assert list(await service.leaderboards(limit=limit)) == each
