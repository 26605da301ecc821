"""Records of a match, outside the referee: the JSON match record and PDN for checkers.

A format reads a `Referee` or its `MatchView` and never the reverse: the referee holds the rules
of a match only (import-linter keeps `games.referee` from importing this module).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, Final

from games.match import MatchView, ResultCode, Status
from games.referee import Referee
from games.registry import get_game

__all__ = ["PDN_RESULTS", "match_record", "to_pdn"]


def match_record(referee: Referee, now_ms: int) -> dict[str, Any]:
    """Return the whole match as a JSON-ready dict: set-up, every move with its time, result.

    The words are the wire protocol's (`protocol.MatchRecord`): a move's `seat` is the player
    number, and the result is `{winner, code, description}` (the protocol's `MatchResult`
    derives its broad `reason` from the code).
    """
    view = referee.view(now_ms)
    tc = view.time_control
    return {
        "game": view.game,
        "options": dict(referee.game.option_texts),
        "start_position": view.start_position,
        "time_control": None if tc is None else asdict(tc),
        "max_illegal_moves": referee.config.max_illegal_moves,
        "max_plies": referee.config.max_plies,
        "status": view.status.value,
        "result": None
        if view.result is None
        else {
            "winner": view.result.winner,
            "code": view.result.code.value,
            "description": view.result.reason,
        },
        "position": view.position,
        "to_move": view.to_move if view.status is Status.ACTIVE else None,
        "clocks_ms": None if view.clocks_ms is None else list(view.clocks_ms),
        "moves": [
            {
                "ply": m.ply,
                "seat": m.player,
                "move": m.move,
                "elapsed_ms": m.elapsed_ms,
                "clocks_ms": None if m.clocks_ms is None else list(m.clocks_ms),
            }
            for m in referee.move_log
        ],
        "illegal_counts": list(view.illegal_counts),
        "draw_offer": view.draw_offer,
        "seq": view.seq,
    }


PDN_RESULTS: Final = {0: "2-0", 1: "0-2", None: "1-1"}
"""PDN result tokens, ACF style with Black (player 0) first: 2-0 Black won, 0-2 White won."""


def to_pdn(source: Referee | MatchView, headers: Mapping[str, str] | None = None) -> str:
    """Return a checkers match as PDN text.

    Headers given come first (e.g. Event, Black, White, Date), then `GameType "21"`, `FEN` when
    the start is not the standard start, and `Result`. Moves are numbered with Black's move
    first (`1. 11-15 23-19 2. 8-11 ...`); from a position with White to move the first number
    is written `1...`. The result is ACF style with Black first: `2-0` Black won, `0-2` White
    won, `1-1` drawn, `*` unfinished or aborted; the reason follows as a `{comment}`.
    """
    view = source.view(0) if isinstance(source, Referee) else source
    game = get_game(view.game)
    if game.name != "checkers":
        raise ValueError(f"PDN is for checkers, not {view.game}")
    start = game.parse_position(view.start_position)
    result = view.result
    token = (
        "*" if result is None or result.code is ResultCode.ABORTED else PDN_RESULTS[result.winner]
    )
    tags = dict(headers or {})
    tags["GameType"] = "21"
    if start != game.initial_state():
        tags["FEN"] = view.start_position
    tags["Result"] = token
    lines = [f'[{key} "{_pdn_escape(value)}"]' for key, value in tags.items()]
    tokens: list[str] = []
    for index, move in enumerate(view.moves):
        player = (start.to_move + index) % 2
        number = (index + start.to_move) // 2 + 1
        if player == 0:
            tokens.append(f"{number}.")
        elif index == 0:
            tokens.append(f"{number}...")
        tokens.append(move)
    if result is not None:
        tokens.append("{" + result.reason.replace("}", ")") + "}")
    tokens.append(token)
    movetext = textwrap.fill(
        " ".join(tokens), width=79, break_long_words=False, break_on_hyphens=False
    )
    return "\n".join([*lines, "", movetext, ""])


def _pdn_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
