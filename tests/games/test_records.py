"""Match records outside the referee: the JSON match record and PDN, which reads back."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from games import Game, State, get_game
from games.match import MatchConfig, Status, TimeControl
from games.records import match_record, to_pdn
from games.referee import Referee

CHECKERS = get_game("checkers")
START_FEN = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"


def referee(
    game: Game = CHECKERS, start: str | None = None, tc: TimeControl | None = None
) -> Referee:
    """Return a started referee for `game`."""
    ref = Referee(MatchConfig(game, start, tc))
    ref.start(0)
    return ref


_MOVE_NUMBER = re.compile(r"^\d+\.(\.\.)?$")
_RESULTS = {"2-0": 0, "1-0": 0, "0-2": 1, "0-1": 1, "1-1": None, "1/2-1/2": None, "*": None}


def read_pdn(text: str) -> tuple[dict[str, str], State[Any], list[str], str]:
    """Return the tags, the start, the moves and the result token of one PDN game."""
    tags = dict(re.findall(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$', text, re.MULTILINE))
    movetext = "\n".join(line for line in text.splitlines() if not line.startswith("["))
    movetext = re.sub(r"\{[^}]*\}", " ", movetext)
    state = CHECKERS.parse_position(tags["FEN"]) if "FEN" in tags else CHECKERS.initial_state()
    start = state
    moves: list[str] = []
    token = ""
    for word in movetext.split():
        if _MOVE_NUMBER.match(word):
            continue
        if word in _RESULTS:
            token = word
            continue
        state = state.apply(state.parse_move(word))
        moves.append(word)
    return tags, start, moves, token


def play_random(ref: Referee, seed: int, limit: int = 400) -> None:
    rng = random.Random(seed)
    for ply in range(limit):
        state = ref.state
        if state.outcome() is not None:
            break
        text = state.format_move(rng.choice(list(state.legal_moves())))
        ref.move(state.to_move, text, ply)


def test_pdn_numbers_black_first_and_reads_back() -> None:
    ref = referee()
    for ply, text in enumerate(["11-15", "23-19", "8-11", "22-17"]):
        ref.move(ply % 2, text, ply)
    pdn = to_pdn(ref, {"Event": 'Test "cup"', "Black": "alice", "White": "bob"})
    assert "1. 11-15 23-19 2. 8-11 22-17 *" in pdn
    assert "..." not in pdn
    assert "[FEN" not in pdn
    assert '[GameType "21"]' in pdn
    assert '[Event "Test \\"cup\\""]' in pdn
    tags, start, moves, token = read_pdn(pdn)
    assert start == CHECKERS.initial_state()
    assert moves == ["11-15", "23-19", "8-11", "22-17"]
    assert (tags["Result"], token) == ("*", "*")


@pytest.mark.parametrize("seed", range(4))
def test_pdn_of_a_whole_game_reproduces_it(seed: int) -> None:
    ref = referee()
    play_random(ref, seed)
    view = ref.view(0)
    assert view.status is Status.FINISHED
    tags, start, moves, token = read_pdn(to_pdn(view))
    assert list(view.moves) == moves
    assert CHECKERS.format_position(start.play(*moves)) == view.position
    assert view.result is not None
    assert _RESULTS[token] == view.result.winner
    assert tags["Result"] == token
    assert token in {"2-0", "0-2", "1-1"}
    assert max(len(line) for line in to_pdn(view).splitlines()) <= 79


def test_pdn_of_a_set_position_has_a_fen_and_numbers_white_first() -> None:
    fen = "W:W18,K30:B14,23"
    ref = referee(start=fen)
    ref.move(1, "18x9", 1)
    ref.move(0, "23-27", 2)
    ref.move(1, "30-26", 3)
    ref.resign(0, 4)
    pdn = to_pdn(ref)
    assert f'[FEN "{fen}"]' in pdn
    assert "1... 18x9 2. 23-27 30-26 {Black resigned} 0-2" in pdn
    _, start, moves, token = read_pdn(pdn)
    assert CHECKERS.format_position(start.play(*moves)) == ref.view(4).position
    assert token == "0-2"


def test_pdn_is_for_checkers_only() -> None:
    with pytest.raises(ValueError, match="PDN is for checkers"):
        to_pdn(referee(get_game("tictactoe")))


def test_match_record_is_json_with_every_move() -> None:
    ref = referee(tc=TimeControl(10_000, 100))
    ref.move(0, "11-15", 1_000)
    ref.move(1, "23-19", 1_500)
    ref.resign(1, 1_600)
    record = json.loads(json.dumps(match_record(ref, 2_000)))
    assert record["moves"] == [
        {"ply": 1, "seat": 0, "move": "11-15", "elapsed_ms": 1_000, "clocks_ms": [9_100, 10_000]},
        {"ply": 2, "seat": 1, "move": "23-19", "elapsed_ms": 500, "clocks_ms": [9_100, 9_600]},
    ]
    assert record["result"] == {"winner": 0, "code": "resign", "description": "White resigned"}
    assert record["status"] == "finished"
    assert record["start_position"] == START_FEN
    assert record["time_control"] == {"base_ms": 10_000, "increment_ms": 100, "move_cap_ms": None}
    assert record["clocks_ms"] == [9_000, 9_600]


def test_match_record_options_rebuild_the_game() -> None:
    game = get_game("nim", {"heaps": "2, 3", "misere": "false"})
    record = match_record(Referee(MatchConfig(game)), 0)
    assert record["options"] == {"heaps": "2, 3", "misere": "false"}
    rebuilt = get_game("nim", record["options"])
    assert rebuilt.options == game.options
