"""Openings: the shipped decks, seeded random openings, user files, dealing to games."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

from bots.solvers.connect4 import Solver as ConnectFourSolver
from bots.solvers.solve import solve
from competition.openings import (
    CONNECT4_FILTER_MIN_PLIES,
    DECKS,
    DEFAULT_DECKS,
    Opening,
    OpeningError,
    deck,
    default_openings,
    format_openings,
    load_openings,
    parse_opening,
    random_openings,
    select_openings,
)
from games import get_game
from games.connect4 import ConnectFourState
from tests.conftest import shared_file

REPOSITORY = Path(__file__).resolve().parents[2]
CHECKERS = get_game("checkers")
TICTACTOE = get_game("tictactoe")
NIM = get_game("nim")
CONNECT4 = get_game("connect4")


def ballot_lines(path: Path) -> list[tuple[tuple[str, ...], str]]:
    """Return (moves, flag) of every opening line of the reference ballots file.

    Each line holds three moves and a flag (`deck`, `deck-2003` or `barred`), tab-separated;
    `#` lines are comments.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    fields = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    assert all(len(f) == 4 and f[3] in ("deck", "deck-2003", "barred") for f in fields)
    return [(tuple(f[:3]), f[3]) for f in fields]


# --- the shipped decks --------------------------------------------------------------------------


def test_the_acf_deck_has_156_distinct_unfinished_positions_after_three_moves() -> None:
    openings = deck("acf-3move")
    assert len(openings) == 156
    assert all(o.game == "checkers" and o.position is None for o in openings)
    states = []
    for opening in openings:
        state = CHECKERS.initial_state()
        assert len(opening.moves) == 3
        for text in opening.moves:
            move = state.parse_move(text)
            assert move in state.legal_moves()
            state = state.apply(move)
        assert not state.is_terminal()
        assert state == opening.start_state(CHECKERS)
        states.append(state)
    # Three plies from the start: the first player (Black) moved twice, White moves next.
    assert all(s.to_move == 1 for s in states)
    assert len({s.key() for s in states}) == 156
    assert len({o.position_text(CHECKERS) for o in openings}) == 156


def test_the_acf_deck_is_the_deck_of_the_reference_ballots() -> None:
    ballots = ballot_lines(shared_file("data/checkers/ballots-3move.txt"))
    in_deck = [moves for moves, flag in ballots if flag in ("deck", "deck-2003")]
    shipped = [o.moves for o in deck("acf-3move")]
    assert len(shipped) == len(in_deck) == 156
    assert set(shipped) == set(in_deck)
    # The order too: the seed deals openings by their place, so tournaments (and journals)
    # from before the deck shipped with Arena are played the same.
    assert shipped == in_deck
    assert sum(flag == "deck-2003" for _, flag in ballots) == 12
    barred = {moves for moves, flag in ballots if flag == "barred"}
    assert barred and not barred & set(shipped)


def test_the_acf_deck_capture_line_reaches_the_capture() -> None:
    opening = next(o for o in deck("acf-3move") if o.moves == ("9-13", "22-17", "13x22"))
    # Black's man from 9 went to 13 and captured 17, landing on 22; White lost one man.
    assert opening.position_text(CHECKERS) == (
        "W:W21,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,10,11,12,22"
    )


def test_every_deck_file_is_package_data() -> None:
    patterns = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["competition"]
    for named in DECKS.values():
        assert (REPOSITORY / "competition" / "decks" / named.file).is_file()
        assert any(fnmatch.fnmatch(f"decks/{named.file}", p) for p in patterns), named
        assert deck(named.name), named


def test_checkers_tournaments_default_to_the_acf_deck() -> None:
    assert DEFAULT_DECKS == {"checkers": "acf-3move"}
    assert default_openings("checkers", 3, seed=1) == deck("acf-3move", CHECKERS)


def test_deck_refuses_an_unknown_name_and_another_game() -> None:
    with pytest.raises(OpeningError, match=r"no deck is named 'acf'.*acf-3move \(checkers\)"):
        deck("acf")
    with pytest.raises(OpeningError, match="deck 'acf-3move' is for checkers, not tictactoe"):
        deck("acf-3move", "tictactoe")


# --- random openings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "count", "plies"),
    [("tictactoe", 12, 3), ("nim", 8, 2), ("connect4", 12, 4), ("checkers", 12, 6)],
)
def test_random_openings_are_deterministic_distinct_and_unfinished(
    name: str, count: int, plies: int
) -> None:
    game = get_game(name)
    openings = random_openings(game, count, plies, seed=5)
    assert openings == random_openings(name, count, plies, seed=5)
    assert openings != random_openings(game, count, plies, seed=6)
    assert len(openings) == count
    states = [o.start_state(game) for o in openings]
    assert len({s.key() for s in states}) == count
    for opening, state in zip(openings, states, strict=True):
        assert opening.game == name and len(opening.moves) == plies
        assert not state.is_terminal()


def test_random_openings_with_the_filter_are_tictactoe_draws() -> None:
    for plies in (2, 3, 4):
        openings = random_openings(TICTACTOE, 10, plies, seed=11)
        assert {solve(o.start_state(TICTACTOE)).value for o in openings} == {"draw"}


def test_random_openings_without_the_filter_include_tictactoe_non_draws() -> None:
    values = {
        solve(o.start_state(TICTACTOE)).value
        for seed in range(5)
        for o in random_openings(TICTACTOE, 10, 3, seed=seed, solver_filter=False)
    }
    assert values - {"draw"}


def test_random_openings_with_the_filter_keep_the_nim_start_value() -> None:
    # Misere Nim 1,3,5,7 is lost for the first player; openings must keep it so.
    assert solve(NIM.initial_state()).value == "loss"
    for plies in (1, 2):
        for opening in random_openings(NIM, 6, plies, seed=3):
            state = opening.start_state(NIM)
            value = solve(state).value
            assert value == ("loss" if state.to_move == 0 else "win")
    # After two plies the first player moves again; unfiltered, some replies hand it the win.
    unfiltered = random_openings(NIM, 6, 2, seed=3, solver_filter=False)
    assert any(solve(o.start_state(NIM)).value == "win" for o in unfiltered)


def test_random_openings_with_the_filter_keep_connect4_a_first_player_win() -> None:
    solver = ConnectFourSolver()
    for opening in random_openings(CONNECT4, 3, CONNECT4_FILTER_MIN_PLIES, seed=2):
        state = opening.start_state(CONNECT4)
        assert isinstance(state, ConnectFourState)
        assert solver.score(state, weak=True) == (1 if state.to_move == 0 else -1)


def test_random_openings_zero_plies_is_the_start() -> None:
    (opening,) = random_openings(TICTACTOE, 1, 0, seed=1)
    assert opening.moves == () and opening.start_state(TICTACTOE) == TICTACTOE.initial_state()


def test_random_openings_refuse_impossible_requests() -> None:
    with pytest.raises(ValueError, match="found only 9 of 10"):
        random_openings(TICTACTOE, 10, 1, seed=1)
    with pytest.raises(ValueError, match="must be >= 0"):
        random_openings(TICTACTOE, 1, -1, seed=1)


# --- openings and user files --------------------------------------------------------------------


def test_opening_rejects_an_illegal_move_by_number() -> None:
    opening = Opening("bad", "tictactoe", ("4", "4"))
    with pytest.raises(OpeningError, match=r"opening 'bad': move 2 '4'"):
        opening.start_state()


def test_opening_moves_from_a_position() -> None:
    opening = Opening("p", "nim", ("4:2",), position="1,3,5,7/2", options=(("misere", "true"),))
    assert opening.position_text() == "1,3,5,5"


def test_load_openings_round_trips_format_openings(tmp_path: Path) -> None:
    for game, plies in ((TICTACTOE, 3), (CONNECT4, 5), (CHECKERS, 4), (NIM, 2)):
        openings = random_openings(game, 6, plies, seed=9)
        openings.append(Opening("fen", game.name, (), openings[0].position_text(game)))
        path = tmp_path / f"{game.name}.txt"
        path.write_text(format_openings(openings))
        loaded = load_openings(path, game.name)
        assert [o.moves for o in loaded] == [o.moves for o in openings]
        assert loaded[:-1] == openings[:-1]
        assert [o.position_text(game) for o in loaded] == [o.position_text(game) for o in openings]


def test_load_openings_reads_separators_comments_and_positions(tmp_path: Path) -> None:
    path = tmp_path / "checkers.txt"
    path.write_text(
        "# my openings\n\n"
        "9-13, 22-18  10-15\n"
        "11-15 23-19   # the Old Fourteenth starts here\n"
        "B:W18,22:B9,13\n"
        "FEN: W:W18,22:B9,13\n"
    )
    openings = load_openings(path, CHECKERS)
    assert [o.moves for o in openings] == [("9-13", "22-18", "10-15"), ("11-15", "23-19"), (), ()]
    assert openings[2].position_text(CHECKERS) == "B:W18,22:B9,13"
    assert openings[3].start_state(CHECKERS).to_move == 1


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("4\n0 9\n", 2, "move 2 '9'"),
        ("4 0\n\n# c\n4 0 4\n", 4, "move 3 '4'"),
        ("4\nfen:XXXO\n", 2, "bad position"),
        ("fen:\n", 1, "no position"),
        ("0 3 1 4 2\n", 1, "ends the game"),
    ],
)
def test_load_openings_reports_bad_lines_by_number(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = tmp_path / "openings.txt"
    path.write_text(text)
    with pytest.raises(OpeningError, match=rf"openings\.txt:{line}: .*{message}"):
        load_openings(path, "tictactoe")


def test_parse_opening_reads_one_line_of_a_file() -> None:
    assert parse_opening(" 11-15, 23-19 8-11 ", CHECKERS).moves == ("11-15", "23-19", "8-11")
    assert parse_opening("B:W18,22:B9,13", "checkers").position == "B:W18,22:B9,13"
    assert parse_opening("fen:1,3,5,7/2", NIM).position_text(NIM) == "1,3,5,7/2"
    assert parse_opening("4 0", TICTACTOE).name == "4 0"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("  ", "blank"),
        ("fen: ", "no position"),
        ("4 4", "move 2 '4' is rejected"),
        ("4 # centre", "move 2 '#' is rejected"),
        ("fen:XXXO", "bad position"),
        ("0 3 1 4 2", "ends the game"),
    ],
)
def test_parse_opening_refuses_what_cannot_be_played(text: str, message: str) -> None:
    with pytest.raises(OpeningError, match=message):
        parse_opening(text, TICTACTOE)


# --- dealing openings ---------------------------------------------------------------------------


def test_select_openings_is_a_seeded_shuffle_that_cycles() -> None:
    openings = random_openings(TICTACTOE, 7, 2, seed=1)
    chosen = select_openings(openings, 23, seed=4)
    assert chosen == select_openings(openings, 23, seed=4)
    assert sorted(chosen[:7], key=lambda o: o.name) == sorted(openings, key=lambda o: o.name)
    assert all(chosen[i] == chosen[i + 7] for i in range(16))
    orders = {tuple(o.name for o in select_openings(openings, 7, seed)) for seed in range(6)}
    assert len(orders) > 1
    assert select_openings(openings, 3, seed=4) == chosen[:3]


def test_select_openings_refuses_an_empty_list_or_negative_count() -> None:
    assert select_openings([], 0, seed=1) == []
    with pytest.raises(ValueError, match="empty"):
        select_openings([], 1, seed=1)
    with pytest.raises(ValueError, match="negative"):
        select_openings([Opening("o", "nim")], -1, seed=1)
