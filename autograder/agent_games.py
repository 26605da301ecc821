"""The agent profile's games: the agent against each opponent of the suite, played in lockstep
(see autograder/agent.py, "How calls run")."""

from __future__ import annotations

import random
from dataclasses import dataclass

from autograder.agent_checks import (
    GAME,
    Calls,
    board_state,
    material,
)
from autograder.agent_runner import (
    Request,
    Runner,
)
from autograder.agent_suite import AgentSuite, Opponent
from autograder.course import (
    describe_outcome,
    side_name,
    side_to_move,
)
from autograder.results import Reason, TestResult, sorted_reasons
from bots.spec import create_bot
from games.checkers import (
    WHITE,
    CheckersMove,
    CheckersState,
    format_board,
)


@dataclass
class _Game:
    opponent: Opponent
    number: int
    agent_colour: int
    state: CheckersState
    plies: int = 0
    result: float | None = None  # the agent's points: 1, 1/2 or 0
    note: str = ""
    forfeit: Reason | None = None


def _material_lead(state: CheckersState, colour: int) -> float:
    lead = material(state)
    return (lead if state.turn == colour else -lead) + 0.0  # + 0.0 turns -0.0 into 0.0


def _finish_if_over(game: _Game, suite: AgentSuite) -> bool:
    outcome = game.state.outcome()
    if outcome is not None:
        if outcome.winner is None:
            game.result, game.note = 0.5, f"draw ({describe_outcome(game.state)})"
        elif outcome.winner == game.agent_colour:
            game.result, game.note = 1.0, f"won ({describe_outcome(game.state)})"
        else:
            game.result, game.note = 0.0, f"lost ({describe_outcome(game.state)})"
        return True
    # Never mid-exchange: a man just taken is often retaken, so the captures are played out.
    if game.plies >= suite.max_plies and not game.state.has_capture():
        lead = _material_lead(game.state, game.agent_colour)
        verdict = (1.0, "won") if lead > 0 else (0.0, "lost") if lead < 0 else (0.5, "drawn")
        game.result = verdict[0]
        game.note = f"{verdict[1]} on material ({lead:+g}) after {game.plies} plies"
        return True
    return False


def games_parts(runner: Runner, suite: AgentSuite, calls: Calls) -> list[TestResult]:
    games: list[_Game] = []
    bots = {}
    for opponent in suite.opponents:
        bots[opponent.spec] = create_bot(opponent.spec, GAME, rng=random.Random(suite.game_seed))
        for number in range(opponent.games):
            rng = random.Random(f"{suite.game_seed}:{opponent.spec}:{number // 2}")
            state = board_state(format_board(GAME.initial_state()), "red")
            for _ in range(suite.opening_plies):
                state = state.apply_unchecked(rng.choice(state.legal_moves()))
            agent = WHITE if number % 2 == 0 else 1 - WHITE
            games.append(_Game(opponent, number + 1, agent, state, suite.opening_plies))
    active = [g for g in games if not _finish_if_over(g, suite)]
    while active:
        waiting = []
        for game in active:
            while game.state.turn != game.agent_colour and not _finish_if_over(game, suite):
                move = bots[game.opponent.spec].choose(game.state).move
                assert isinstance(move, CheckersMove)
                game.state = game.state.apply_unchecked(move)
                game.plies += 1
            if game.result is None and not _finish_if_over(game, suite):
                waiting.append(game)
        if not waiting:
            break
        requests = [
            Request(
                format_board(g.state), side_to_move(g.state), suite.game_depth, suite.time_limit
            )
            for g in waiting
        ]
        labels = [
            f"games vs {g.opponent.spec}: game {g.number}, ply {g.plies + 1}" for g in waiting
        ]
        replies = runner.run(requests, labels, shuffle=not suite.public)
        for game, reply in zip(waiting, replies, strict=True):
            answer = calls.read(game.state, reply)
            if answer.move is None:
                game.result = 0.0
                game.note = f"forfeited at ply {game.plies + 1}: {answer.problem}"
                game.forfeit = answer.reason or "illegal move"
                continue
            game.state = game.state.apply_unchecked(answer.move)
            game.plies += 1
            _finish_if_over(game, suite)
        active = [g for g in waiting if g.result is None]
    results = []
    for opponent in suite.opponents:
        played = [g for g in games if g.opponent is opponent]
        score = sum(g.result or 0.0 for g in played)
        share = score / len(played) if played else 0.0
        forfeits = sum(1 for g in played if g.forfeit is not None)
        passed = share >= opponent.threshold and not forfeits
        lines = [f"- game {g.number} as {side_name(g.agent_colour)}: {g.note}" for g in played]
        verdict = "passed" if passed else "failed"
        head = (
            f"{verdict}: scored {score:g}/{len(played)} ({share:.0%}; win 1, draw 1/2), "
            f"threshold {opponent.threshold:.0%}"
            + (f"; {forfeits} game(s) forfeited (any forfeit fails the test)" if forfeits else "")
        )
        lost: list[Reason] = [g.forfeit for g in played if g.forfeit is not None]
        if not forfeits:
            lost.append("wrong answer")
        results.append(
            TestResult(
                f"games vs {opponent.spec}",
                opponent.points if passed else 0.0,
                opponent.points,
                head + "\n" + "\n".join(lines),
                reasons=() if passed else sorted_reasons(lost),
            )
        )
    return results
