"""Bots playing checkers: they find short forced wins and convert two kings against one."""

from __future__ import annotations

import pytest

from bots.lectures.alphabeta import alphabeta
from bots.scoring import ENGINE
from bots.spec import create_bot
from games import get_game
from tests.bots.solvers.test_solve import FORCED_WINS

CHECKERS = get_game("checkers")


def certified_winning_moves(fen: str, plies: int) -> set[str]:
    """The moves that keep a forced win in `plies`, by full-width search without a table."""
    state = CHECKERS.parse_position(fen)
    winning = set()
    for move in state.legal_moves():
        child = state.apply_unchecked(move)
        if child.is_terminal():
            outcome = child.outcome()
            if outcome is not None and outcome.winner == state.to_move:
                winning.add(state.format_move(move))
            continue
        reply = alphabeta(child, depth=plies - 1, evaluate=lambda s: 0.0, scoring=ENGINE)
        if ENGINE.is_loss(reply.score):
            winning.add(state.format_move(move))
    return winning


@pytest.mark.parametrize("fen", sorted(FORCED_WINS))
@pytest.mark.parametrize("spec", ["alphabeta:depth={plies}", "id:time=5,depth={plies}"])
def test_bots_find_the_forced_win(fen: str, spec: str) -> None:
    plies = FORCED_WINS[fen]
    state = CHECKERS.parse_position(fen)
    bot = create_bot(spec.format(plies=plies), CHECKERS)
    result = bot.choose(state)
    assert state.format_move(result.move) in certified_winning_moves(fen, plies)
    assert result.score == ENGINE.win - plies


@pytest.mark.parametrize(
    "fen",
    ["W:WK1,K2:BK32", "B:WK29:BK3,K4", "W:WK18,K19:BK5", "B:WK28:BK10,K11", "W:WK14,K15:BK32"],
)
def test_two_kings_beat_one_king(fen: str) -> None:
    state = CHECKERS.parse_position(fen)
    attacker = state.to_move
    strong = create_bot("alphabeta:depth=6", CHECKERS)
    defender = create_bot("alphabeta:depth=4", CHECKERS)
    for _ in range(120):
        if state.is_terminal():
            break
        bot = strong if state.to_move == attacker else defender
        state = state.apply(bot.choose(state).move)
    outcome = state.outcome()
    assert outcome is not None, "no result within 120 plies"
    assert outcome.winner == attacker
