"""Perft: count the leaf nodes of the legal-move tree to a fixed depth."""

from __future__ import annotations

from typing import Any

from games.base import State, perft_generic


def perft(state: State[Any], depth: int) -> int:
    """Return the number of move paths of exactly `depth` plies from `state`.

    A terminal state before `depth` contributes nothing; perft(state, 0) is 1. Uses the game's
    fast path where it has one (see `State.perft`).
    """
    return state.perft(depth)


def divide(state: State[Any], depth: int) -> list[tuple[str, int]]:
    """Return (move text, perft of the child at depth - 1) for every legal move, in move order."""
    if depth < 1:
        raise ValueError(f"divide needs a depth >= 1, not {depth}")
    return [
        (state.format_move(move), perft(state.apply_unchecked(move), depth - 1))
        for move in state.legal_moves()
    ]


__all__ = ["divide", "perft", "perft_generic"]
