"""Openings: the checkers 3-move deck, seeded random openings, user files, dealing to games."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.connect4_solver import Solver as ConnectFourSolver
from bots.solve import solve
from games import get_game
from games.connect4 import ConnectFourState
from tests.conftest import shared_file
from tournament.openings import (
    BALLOTS_RELATIVE_PATH,
    CONNECT4_FILTER_MIN_PLIES,
    Opening,
    OpeningError,
    checkers_deck,
    find_ballots_file,
    format_openings,
    load_openings,
    random_openings,
    select_openings,
)

BALLOTS = "data/checkers/ballots-3move.txt"
CHECKERS = get_game("checkers")
TICTACTOE = get_game("tictactoe")
NIM = get_game("nim")
CONNECT4 = get_game("connect4")


def _ballot_lines(path: Path) -> list[list[str]]:
    """Return the fields of every opening line of the ballots file, read independently."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split() for line in lines if line.strip() and not line.startswith("#")]


# --- the checkers deck --------------------------------------------------------------------------


def test_checkers_deck_has_the_156_deck_openings_in_file_order() -> None:
    path = shared_file(BALLOTS)
    deck = checkers_deck(path)
    fields = _ballot_lines(path)
    in_deck = [f[:3] for f in fields if f[3] in ("deck", "deck-2003")]
    assert len(deck) == 156
    assert [list(o.moves) for o in deck] == in_deck
    first = next(f for f in fields if f[3] == "deck")
    assert deck[0].moves == tuple(first[:3]) == ("9-13", "21-17", "5-9")
    barred = {tuple(f[:3]) for f in fields if f[3] == "barred"}
    assert barred and not barred & {o.moves for o in deck}


def test_checkers_deck_openings_are_playable_and_distinct_positions() -> None:
    deck = checkers_deck(shared_file(BALLOTS))
    states = [o.start_state(CHECKERS) for o in deck]
    assert all(not s.is_terminal() for s in states)
    # Three plies from the start: the first player (Black) moved twice, White moves next.
    assert all(s.to_move == 1 for s in states)
    assert len({s.key() for s in states}) == 156
    assert len({o.position_text(CHECKERS) for o in deck}) == 156


def test_checkers_deck_capture_line_reaches_the_capture() -> None:
    deck = checkers_deck(shared_file(BALLOTS))
    opening = next(o for o in deck if o.moves == ("9-13", "22-17", "13x22"))
    # Black's man from 9 went to 13 and captured 17, landing on 22; White lost one man.
    assert opening.position_text(CHECKERS) == (
        "W:W21,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,10,11,12,22"
    )


def test_checkers_deck_reports_an_illegal_move_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ballots.txt"
    path.write_text("# header\n9-13 21-17 5-9\tdeck\n\n9-13 21-17 13-18\tdeck\n")
    with pytest.raises(OpeningError, match=r"ballots\.txt:4: .*move 3 '13-18'"):
        checkers_deck(path)


def test_checkers_deck_reports_a_bad_flag_or_shape_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ballots.txt"
    path.write_text("9-13 21-17 5-9\tdeck\n9-13 21-17 6-9\tmaybe\n")
    with pytest.raises(OpeningError, match=r"ballots\.txt:2: expected three moves and a flag"):
        checkers_deck(path)
    path.write_text("9-13 21-17\tdeck\n")
    with pytest.raises(OpeningError, match=r"ballots\.txt:1: "):
        checkers_deck(path)


def test_checkers_deck_keeps_deck_2003_and_drops_barred(tmp_path: Path) -> None:
    path = tmp_path / "ballots.txt"
    path.write_text("9-13 21-17 5-9 deck\n9-13 21-17 10-14 barred\n9-13 22-18 10-14 deck-2003\n")
    assert [o.name for o in checkers_deck(path)] == ["9-13 21-17 5-9", "9-13 22-18 10-14"]


def test_find_ballots_file_searches_root_then_current_directory(tmp_path: Path) -> None:
    root, cwd = tmp_path / "a" / "repo", tmp_path / "b" / "work"
    root.mkdir(parents=True)
    cwd.mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"ballots-3move\.txt") as info:
        find_ballots_file(root, cwd)
    assert str(root / BALLOTS_RELATIVE_PATH) in str(info.value)
    assert str(cwd / BALLOTS_RELATIVE_PATH) in str(info.value)
    in_cwd = cwd / BALLOTS_RELATIVE_PATH
    in_cwd.parent.mkdir(parents=True)
    in_cwd.write_text("9-13 21-17 5-9 deck\n")
    assert find_ballots_file(root, cwd) == in_cwd.resolve()
    in_root = root / BALLOTS_RELATIVE_PATH
    in_root.parent.mkdir(parents=True)
    in_root.write_text("9-13 21-17 6-9 deck\n")
    assert find_ballots_file(root, cwd) == in_root.resolve()


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
