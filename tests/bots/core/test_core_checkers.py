"""The compiled checkers core against the published perft numbers and against games.checkers.

The published numbers are read from ../shared/oracles/checkers.md (those tests skip without
it); the differential tests play random games with games.checkers and ask the compiled core
for the same moves, resulting positions and perft counts, draws by history included.
"""

from __future__ import annotations

import random
import re
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import get_game, perft
from games.checkers import CheckersState
from tests.conftest import shared_file
from tests.games.test_checkers import _king_walk

GAME = get_game("checkers")
START = GAME.initial_state()
KING_FENS = ("B:WK29,K30,K31,K32:BK1,K2,K3,K4", "W:WK32,K28:BK1,K5", "W:WK18:B1,15,16,23,24")


@pytest.fixture(scope="session")
def core() -> ModuleType:
    """The compiled core, loaded (or compiled, once per machine) for the whole session."""
    from bots.core import load

    load("checkers")
    import bots.core.checkers

    return bots.core.checkers


def oracle_text() -> str:
    return shared_file("oracles/checkers.md").read_text(encoding="utf-8")


def published_start_perft() -> dict[int, int]:
    """Depth -> count of the table 'Perft from the start position'."""
    section = oracle_text().split("## Perft from the start position", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*([\d,]+)\s*\|", section, re.MULTILINE)
    return {int(depth): int(count.replace(",", "")) for depth, count in rows}


def published_position_perft() -> dict[str, list[int]]:
    """FEN -> perft 1..6 of the table 'Perft 1..6 from other positions'."""
    section = oracle_text().split("## Perft 1..6 from other positions", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\|\s*`([^`]+)`\s*\|\s*([\d, ]+)\|", section, re.MULTILINE)
    return {fen: [int(n) for n in counts.split(",")] for fen, counts in rows}


def random_positions(seed: int, games: int, plies: int) -> list[CheckersState]:
    """Every position of `games` random games of at most `plies` plies from the start and from
    positions with kings (so that kings, long captures and the draw rules all occur)."""
    rng = random.Random(seed)
    positions = []
    for number in range(games):
        fen = KING_FENS[number % len(KING_FENS)] if number % 4 == 3 else None
        state = GAME.parse_position(fen) if fen else START
        assert isinstance(state, CheckersState)
        for _ in range(plies):
            positions.append(state)
            moves = state.legal_moves()
            if not moves:
                break
            state = state.apply_unchecked(rng.choice(moves))
    return positions


# -- perft against the published numbers -------------------------------------------------------


def test_start_perft_is_the_published_one(core: ModuleType) -> None:
    published = published_start_perft()
    assert published[1] == 7 and len(published) >= 10
    for depth in range(1, 11):
        assert core.perft(START, depth) == published[depth], depth


def test_position_perft_is_the_published_one(core: ModuleType) -> None:
    published = published_position_perft()
    assert len(published) >= 10
    for fen, counts in published.items():
        state = GAME.parse_position(fen)
        assert [core.perft(state, depth) for depth in range(1, 7)] == counts, fen


@pytest.mark.slow
def test_start_perft_11_is_the_published_one(core: ModuleType) -> None:
    assert core.perft(START, 11) == published_start_perft()[11]


def test_start_perft_equals_the_rules_perft(core: ModuleType) -> None:
    for depth in range(7):
        assert core.perft(START, depth) == perft(START, depth)


@pytest.mark.slow
def test_start_perft_equals_the_rules_perft_deep(core: ModuleType) -> None:
    assert core.perft(START, 9) == perft(START, 9)


def test_perft_refuses_a_negative_depth(core: ModuleType) -> None:
    with pytest.raises(ValueError, match="depth must be >= 0"):
        core.perft(START, -1)


# -- the same moves and positions as games.checkers ---------------------------------------------


def test_moves_and_positions_equal_the_rules_in_random_games(core: ModuleType) -> None:
    positions = random_positions(seed=2027, games=40, plies=80)
    assert len(positions) >= 500
    captures = multi_jumps = crownings = 0
    for state in positions:
        expected = state.legal_moves()
        compiled = core.legal_moves(state)
        # Same moves in the same order, each with the same captured pieces.
        assert [(m.path, m.captured) for m in compiled] == [
            (m.path, m.captured) for m in expected
        ], GAME.format_position(state)
        for move in expected:
            after = state.apply_unchecked(move)
            assert core.play(state, move) == after.key(), (GAME.format_position(state), move)
            captures += move.is_capture
            multi_jumps += len(move.path) > 2 and move.is_capture
            crownings += not state.kings & move.frm and bool(after.kings & move.to)
    # The sample reaches what the core must get right.
    assert captures > 100 and multi_jumps > 10 and crownings > 10


def test_a_drawn_position_has_no_moves(core: ModuleType) -> None:
    shuffle = GAME.parse_position("B:WK32:BK1").play("1-5", "32-28", "5-1", "28-32", "1-5")
    assert core.legal_moves(shuffle) == shuffle.legal_moves() != ()
    repeated = shuffle.play("32-28", "5-1", "28-32")  # the start position a third time
    assert repeated.repetitions() == 3 and core.legal_moves(repeated) == ()
    walk = _king_walk("B:WK29,K30,K31,K32:BK1,K2,K3,K4", 80, seed=7)
    assert core.legal_moves(walk[79]) == walk[79].legal_moves() != ()
    assert walk[80].quiet == 80 and core.legal_moves(walk[80]) == ()


def test_rule_cases_of_the_oracle(core: ModuleType) -> None:
    text = oracle_text().split("## Rule cases with their exact legal moves", 1)[1]
    rows = re.findall(r"^\|[^|]+\|\s*`([^`]+)`\s*\|([^|]+)\|", text, re.MULTILINE)
    assert len(rows) >= 6
    for fen, listed in rows:
        expected = sorted(re.findall(r"`([^`]+)`", listed))
        state = GAME.parse_position(fen)
        assert sorted(str(m) for m in core.legal_moves(state)) == expected, fen


@settings(max_examples=40, deadline=None)
@given(
    fen=st.sampled_from(["start", *KING_FENS, "B:WK1,18,21,27,28,29,31:B3,4,11"]),
    plies=st.integers(0, 60),
    seed=st.integers(0, 2**32 - 1),
)
def test_perft_equals_the_rules_perft_on_random_paths(
    core: ModuleType, fen: str, plies: int, seed: int
) -> None:
    """Perft after random play agrees with games.perft, repetitions and the 80-ply rule too."""
    rng = random.Random(seed)
    state = GAME.parse_position(fen)
    for _ in range(plies):
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply_unchecked(rng.choice(moves))
    for depth in range(5):
        assert core.perft(state, depth) == perft(state, depth)


def test_perft_sees_repetitions_and_the_80_ply_rule(core: ModuleType) -> None:
    shuffle = GAME.parse_position("B:WK32:BK1").play("1-5", "32-28", "5-1", "28-32", "1-5")
    fresh = GAME.parse_position(GAME.format_position(shuffle))
    # Three more plies return to a position seen twice already: that line ends in a draw.
    assert core.perft(shuffle, 4) == perft(shuffle, 4) < core.perft(fresh, 4)
    near = _king_walk("B:WK29,K30,K31,K32:BK1,K2,K3,K4", 77, seed=7)[77]
    fresh = GAME.parse_position(GAME.format_position(near))
    # The nodes 3 plies below are drawn by the 80-ply rule: they have no moves to count.
    assert core.perft(near, 4) == perft(near, 4) < core.perft(fresh, 4)


@pytest.mark.slow
def test_deep_perft_equals_the_rules_perft_in_random_games(core: ModuleType) -> None:
    for state in random_positions(seed=11, games=12, plies=60)[::7]:
        assert core.perft(state, 5) == perft(state, 5), GAME.format_position(state)
