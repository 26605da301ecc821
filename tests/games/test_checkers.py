"""English draughts: perft, the rule cases and notation of ../shared/oracles/checkers.md."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import Ending, IllegalMoveError, InvalidMoveError, InvalidPositionError, get_game, perft
from games.checkers import (
    BLACK,
    WHITE,
    CheckersState,
    format_board,
    parse_board,
    parse_move_text,
)
from games.perft import perft_generic
from tests.conftest import shared_file

GAME = get_game("checkers")
START = GAME.initial_state()
START_FEN = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"

# Published perft numbers (Aart Bik 2009, OEIS A133046), from ../shared/oracles/checkers.md.
START_PERFT = [7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963680, 18391564, 85242128]

POSITION_PERFT = {
    "W:WK2,5,17,21,22,24,25,26,27,28,30:B1,3,4,10,11,12,13": [8, 55, 284, 1442, 6503, 28641],
    "B:W6,14:B1,4,25,K28": [1, 0, 0, 0, 0, 0],
    "B:WK1,18,21,27,28,29,31:B3,4,11": [5, 41, 155, 1312, 5404, 45797],
    "W:WK6,7:B4,16,18,20,26": [6, 42, 184, 1297, 6355, 46047],
    "B:W5,18,19,21,25:B1,7,10,11,13,K30,K31": [9, 30, 88, 326, 1265, 4716],
    "W:WK7,17:B23,28,K29,K31": [6, 36, 186, 1116, 5544, 36576],
    "W:W6,K8,19,27:B22,25,K26,28": [10, 59, 472, 1880, 14687, 71769],
    "B:WK5,28:B3,4,10,17,K21,22,K31": [10, 30, 289, 1081, 10283, 33618],
    "B:W14,22,23,26,27,28,29,30,32:B2,4,5,6,7,8,9,12,16": [1, 2, 16, 100, 674, 4518],
    "B:WK1,18,24,26,28,29:B2,3,4,5,13,20,K30": [2, 10, 44, 215, 1465, 7136],
    "W:WK11,15,19,21,23,27,31,32:B6,9,10,12,17": [2, 7, 36, 122, 643, 2146],
    "B:W13,16,21,24,25,26,28,29,31,32:B2,4,5,6,7,8,9,11,12": [2, 3, 13, 81, 510, 3042],
    "B:W5,14,22,23,32:B1,7,8,9,11,16,K21,28": [2, 4, 29, 88, 558, 1770],
    "B:W19,21,24,26,27,28,31:B1,2,3,4,5,8,16,20": [2, 9, 34, 163, 1136, 5885],
}

OPENING_PERFT = {
    "9-13 21-17 5-9": [7, 38, 195, 838, 3829, 17028],
    "9-14 23-18 14x23": [2, 14, 91, 513, 3061, 16147],
    "10-15 22-18 15x22": [2, 14, 101, 635, 4058, 22885],
    "11-15 23-19 8-11": [7, 36, 191, 828, 3706, 15316],
    "12-16 23-19 16x23": [2, 14, 91, 490, 2824, 15155],
}

RULE_CASES = {
    "crowning ends the move": ("B:W26,27:B22", ["22x31"]),
    "any capture, not only the longest": (
        "B:W14,15,23,24:B9,10",
        ["10x19x28", "10x19x26", "10x17", "9x18x27"],
    ),
    "men do not capture backward": ("W:W18:B14,23", ["18x9"]),
    "kings capture backward": ("W:WK18:B14,23", ["18x9", "18x27"]),
    "blocked side loses": ("W:W29:B25,22", []),
    "ring capture, both directions": (
        "W:WK18:B1,15,16,23,24",
        ["18x11x20x27x18", "18x27x20x11x18"],
    ),
}


def texts(state: CheckersState) -> list[str]:
    return sorted(state.format_move(m) for m in state.legal_moves())


@pytest.mark.parametrize("depth", range(1, 9))
def test_start_perft(depth: int) -> None:
    assert perft(START, depth) == START_PERFT[depth - 1]


@pytest.mark.slow
@pytest.mark.parametrize("depth", [9, 10])
def test_start_perft_deep(depth: int) -> None:
    assert perft(START, depth) == START_PERFT[depth - 1]


@pytest.mark.parametrize("fen", sorted(POSITION_PERFT))
def test_position_perft(fen: str) -> None:
    state = GAME.parse_position(fen)
    assert [perft(state, d) for d in range(1, 7)] == POSITION_PERFT[fen]


@pytest.mark.parametrize("opening", sorted(OPENING_PERFT))
def test_opening_perft(opening: str) -> None:
    state = START.play(*opening.split())
    assert [perft(state, d) for d in range(1, 7)] == OPENING_PERFT[opening]


@pytest.mark.parametrize("rule", sorted(RULE_CASES))
def test_rule_case_moves(rule: str) -> None:
    fen, expected = RULE_CASES[rule]
    assert texts(GAME.parse_position(fen)) == sorted(expected)


def test_crowning_makes_a_king_and_ends_the_move() -> None:
    after = GAME.parse_position("B:W26,27:B22").play("22x31")
    assert after.piece_at(31) == "B"
    assert after.piece_at(26) == "."
    assert after.to_move == WHITE


def test_blocked_side_loses() -> None:
    outcome = GAME.parse_position("W:W29:B25,22").outcome()
    assert outcome is not None
    assert outcome.winner == BLACK
    assert "no legal move" in outcome.reason


def test_side_without_pieces_loses() -> None:
    final = GAME.parse_position("B:W18:BK14").play("14x23")
    outcome = final.outcome()
    assert outcome is not None and outcome.winner == BLACK
    assert outcome.reason == "White has no pieces left"


def test_king_captures_after_crowning_only_on_next_move() -> None:
    # Black man on 22 jumps 26 and crowns on 31; a king could continue over 27 but the move ends.
    state = GAME.parse_position("B:W26,27:B22").play("22x31")
    assert state.to_move == WHITE
    assert state.piece_at(27) == "w"


def test_multi_jump_removes_every_captured_piece() -> None:
    state = GAME.parse_position("B:W14,15,23,24:B9,10").play("10x19x28")
    assert GAME.format_position(state) == "W:W14,23:B9,28"


def test_short_form_capture_resolves_when_unique() -> None:
    state = GAME.parse_position("B:W14,15,23,24:B9,10")
    assert state.format_move(state.parse_move("9x27")) == "9x18x27"
    assert state.format_move(state.parse_move("9-27")) == "9x18x27"


def test_short_form_capture_ambiguous_lists_candidates() -> None:
    state = GAME.parse_position("W:WK18:B1,15,16,23,24")
    with pytest.raises(IllegalMoveError) as info:
        state.parse_move("18x18")
    assert "ambiguous" in info.value.reason
    assert set(info.value.legal_moves) == {"18x11x20x27x18", "18x27x20x11x18"}


@pytest.mark.parametrize(
    ("fen", "move", "reason"),
    [
        (START_FEN, "18-22", "no Black piece on square 18"),
        (START_FEN, "22-18", "holds a White piece"),
        (START_FEN, "11x18", "no capture"),
        (START_FEN, "9-14x", None),
        (START_FEN, "1-5", "occupied"),
        (START_FEN, "9-18", "not a diagonal neighbour"),
        ("B:W14,15,23,24:B9,10", "10-15", "compulsory"),
        ("B:W14,15,23,24:B9,10", "10x19", "must be completed"),
        ("B:W32:B14", "14-10", "only forward"),
        ("W:W29:B25,22", "29-25", "game is over"),
    ],
)
def test_illegal_moves_say_why(fen: str, move: str, reason: str | None) -> None:
    state = GAME.parse_position(fen)
    if reason is None:
        with pytest.raises(InvalidMoveError):
            state.parse_move(move)
        return
    with pytest.raises(IllegalMoveError) as info:
        state.parse_move(move)
    assert reason in str(info.value)
    assert sorted(info.value.legal_moves) == texts(state)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "expected squares"),
        ("11", "expected squares"),
        ("11-", "expected squares"),
        ("0-4", "off the board"),
        ("33-29", "off the board"),
        ("11-15-19", "a step joins two squares"),
        ("11x18-25", "mixes"),
        ("a3-b4", "expected squares"),
        ("11--15", "expected squares"),
    ],
)
def test_malformed_move_text(text: str, fragment: str) -> None:
    with pytest.raises(InvalidMoveError, match=fragment):
        parse_move_text(text)


def test_move_text_accepts_spacing_and_case() -> None:
    assert parse_move_text(" 11 X 18 x 25 ") == ((11, 18, 25), "x")
    assert parse_move_text("11-15") == ((11, 15), "-")


@pytest.mark.parametrize(
    ("fen", "fragment"),
    [
        ("", "expected a PDN FEN"),
        ("B:W21", "three fields"),
        ("X:W21:B1", "side to move must be B or W"),
        ("B:W21:W22", "two W piece fields"),
        ("B:W21:X1", "starts with W or B"),
        ("B:W33:B1", "off the board"),
        ("B:W0:B1", "off the board"),
        ("B:W21:B21", "given twice"),
        ("B:W5,5:B1", "given twice"),
        ("B:Wfoo:B1", "bad square"),
        ("B:W3:B1", "would have been crowned"),
        ("B:W21:B30", "would have been crowned"),
        ("B:W21-x:B1", "bad square range"),
        ("B:W25-21:B1", "empty square range"),
    ],
)
def test_malformed_fen(fen: str, fragment: str) -> None:
    with pytest.raises(InvalidPositionError, match=fragment):
        GAME.parse_position(fen)


def test_fen_variants_are_read() -> None:
    assert GAME.parse_position("B:W21-32:B1-12") == START
    assert GAME.parse_position(f'[FEN "{START_FEN}"]') == START
    assert GAME.parse_position("B:B1-12:W21-32.") == START
    assert GAME.format_position(GAME.parse_position("w:bk1,5:wK30")) == "W:WK30:BK1,5"


def test_start_fen_round_trip() -> None:
    assert GAME.format_position(START) == START_FEN
    assert GAME.parse_position(START_FEN) == START


def test_course_board_orientation() -> None:
    board = "\n".join(
        [
            ".b.b.b.b",
            "b.b.b.b.",
            ".b.b.b.b",
            "........",
            "........",
            "r.r.r.r.",
            ".r.r.r.r",
            "r.r.r.r.",
        ]
    )
    state = parse_board(GAME, board)
    # Red is at the bottom and moves up: the squares of White in the standard numbering.
    assert state.to_move == WHITE
    assert GAME.format_position(state) == "W" + START_FEN[1:]
    assert format_board(state) == board
    assert parse_board(GAME, board, to_move="black") == START
    assert GAME.parse_position(board) == state


@pytest.mark.parametrize(
    ("board", "fragment"),
    [
        ("........\n" * 7, "8 rows"),
        ("........\n" * 7 + ".......", "7 characters"),
        ("........\n" * 7 + "......x.", "unexpected 'x'"),
        ("r.......\n" + "........\n" * 7, "light square"),
        (".r......\n" + "........\n" * 7, "is a king"),
        ("........\n" * 7 + ".b......", "light square"),
        ("........\n" * 7 + "b.......", "is a king"),
    ],
)
def test_malformed_course_board(board: str, fragment: str) -> None:
    with pytest.raises(InvalidPositionError, match=fragment):
        parse_board(GAME, board)


def _king_walk(fen: str, plies: int, seed: int) -> list[CheckersState]:
    """Walk king moves at random for `plies` plies, never revisiting a position and never
    offering a capture (which would be compulsory and reset the count)."""
    rng = random.Random(seed)
    state = GAME.parse_position(fen)
    seen = {state.key()}
    path = [state]
    for _ in range(plies):
        options = [
            m
            for m in state.legal_moves()
            if state.apply_unchecked(m).key() not in seen
            and not state.apply_unchecked(m).has_capture()
        ]
        assert options, "the walk ran out of fresh positions"
        state = state.apply_unchecked(rng.choice(options))
        seen.add(state.key())
        path.append(state)
    return path


def test_eighty_quiet_plies_draw() -> None:
    path = _king_walk("B:WK29,K30,K31,K32:BK1,K2,K3,K4", 80, seed=7)
    assert path[79].quiet == 79 and path[79].outcome() is None
    assert path[79].legal_moves()
    final = path[80]
    assert final.quiet == 80
    assert final.legal_moves() == ()
    outcome = final.outcome()
    assert outcome is not None and outcome.winner is None
    assert "80 plies" in outcome.reason
    assert outcome.ending is Ending.MOVE_RULE


def test_threefold_repetition_draw() -> None:
    state = GAME.parse_position("B:WK32:BK1")
    shuffle = ["1-5", "32-28", "5-1", "28-32"]
    state = state.play(*shuffle)
    assert state.repetitions() == 2
    assert state.outcome() is None
    state = state.play(*shuffle)
    assert state.repetitions() == 3
    outcome = state.outcome()
    assert outcome is not None and outcome.winner is None
    assert outcome.reason == "draw: threefold repetition"
    assert outcome.ending is Ending.REPETITION
    assert state.legal_moves() == ()


def test_man_move_and_capture_reset_the_quiet_count() -> None:
    state = GAME.parse_position("B:WK32,20:BK1,9")
    state = state.play("1-5", "32-28", "5-1")
    assert state.quiet == 3
    assert state.play("28-32").quiet == 4
    assert state.play("20-16").quiet == 0  # a man move
    assert state.play("28-32", "9-13").quiet == 0


def test_ballots_are_legal_and_distinct() -> None:
    path = shared_file("data/checkers/ballots-3move.txt")
    positions = set()
    deck = 0
    lines = [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    for line in lines:
        moves, flag = line.split("\t")
        state = START.play(*moves.split())
        positions.add(state.key())
        deck += flag.startswith("deck")
    assert len(lines) == 174
    assert len(positions) == 174
    assert deck == 156


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="BWK:,-0123456789x. ", max_size=40))
def test_any_fen_text_is_parsed_or_rejected_cleanly(text: str) -> None:
    try:
        state = GAME.parse_position(text)
    except InvalidPositionError as exc:
        assert str(exc)
    else:
        assert GAME.parse_position(GAME.format_position(state)) == state


def _random_path(fen: str, plies: int, seed: int) -> list[CheckersState]:
    rng = random.Random(seed)
    state = GAME.parse_position(fen)
    path = [state]
    for _ in range(plies):
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply_unchecked(rng.choice(moves))
        path.append(state)
    return path


@settings(max_examples=60, deadline=None)
@given(
    fen=st.sampled_from(
        [START_FEN, *POSITION_PERFT, "B:WK29,K30,K31,K32:BK1,K2,K3,K4", "W:WK32,K28:BK1,K5"]
    ),
    plies=st.integers(0, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_fast_perft_agrees_with_the_public_interface(fen: str, plies: int, seed: int) -> None:
    """The raw-bitboard perft and perft over legal_moves/apply agree, draws by history included."""
    for state in _random_path(fen, plies, seed)[-3:]:
        for depth in (1, 2, 3):
            assert state.perft(depth) == perft_generic(state, depth)


def test_fast_perft_sees_the_draw_rules() -> None:
    path = _king_walk("B:WK29,K30,K31,K32:BK1,K2,K3,K4", 79, seed=7)
    near = path[77]  # the nodes 3 plies below are drawn, so they have no moves to count
    assert near.quiet == 77
    assert near.perft(4) == perft_generic(near, 4)
    assert near.perft(4) < perft_generic(GAME.parse_position(GAME.format_position(near)), 4)
    shuffle = GAME.parse_position("B:WK32:BK1").play("1-5", "32-28", "5-1", "28-32", "1-5")
    # Three more plies return to a position seen twice already: that line ends in a draw.
    assert shuffle.perft(4) == perft_generic(shuffle, 4)
    assert shuffle.perft(4) < perft_generic(GAME.parse_position(GAME.format_position(shuffle)), 4)
