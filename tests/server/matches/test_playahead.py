"""PlayAhead: two house bots' moves played ahead in a child process, in order, stoppable."""

from __future__ import annotations

import asyncio

from bots.spec import create_bot
from games import get_game
from server.matches.playahead import PlayAhead


def local_game(game_name: str, specs: tuple[str, str]) -> list[str]:
    game = get_game(game_name)
    bots = [create_bot(spec, game) for spec in specs]
    state, moves = game.initial_state(), []
    while not state.is_terminal():
        move = bots[state.to_move].choose(state).move
        moves.append(state.format_move(move))
        state = state.apply_unchecked(move)
    return moves


async def test_the_child_plays_the_same_game_as_a_local_loop() -> None:
    specs = ("alphabeta:depth=3", "greedy")
    game = get_game("connect4")
    ahead = PlayAhead(specs, game.initial_state(), 7)
    items = []
    try:
        while (item := await asyncio.wait_for(ahead.next(), 30)) is not None:
            items.append(item)
    finally:
        await ahead.close()
    assert [seq for seq, _, _, _ in items] == list(range(7, 7 + len(items)))
    assert [seat for _, seat, _, _ in items] == [i % 2 for i in range(len(items))]
    assert [move for _, _, move, _ in items] == local_game("connect4", specs)
    # Each move comes with its bot's search statistics, its first PV move the move played.
    for _, seat, move, search in items:
        assert search is not None and search.nodes > 0 and search.pv[0] == move
        assert search.depth == (3 if seat == 0 else 1)


async def test_close_stops_the_child_mid_game() -> None:
    game = get_game("checkers")
    ahead = PlayAhead(("alphabeta:depth=5", "alphabeta:depth=5"), game.initial_state(), 0)
    first = await asyncio.wait_for(ahead.next(), 30)
    assert first is not None and first[:2] == (0, 0)
    await asyncio.wait_for(ahead.close(), 10)
    assert not ahead.alive
