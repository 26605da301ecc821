"""Make an agent suite from a seed: positions of seeded random games, certified and varied."""

from __future__ import annotations

import random
from dataclasses import replace

from autograder.agent_suite import (
    CATEGORIES,
    DEFAULT_COUNT,
    EXAMPLE_STEM,
    GAME,
    MAX_GAME_PLIES,
    MAX_GAMES,
    MIN_GAMES,
    PLAYERS,
    AgentSuite,
    AgentSuiteError,
    position_categories,
)
from autograder.course import side_to_move
from games.checkers import (
    CheckersState,
    format_board,
    parse_board,
)


def _random_positions(rng: random.Random) -> list[tuple[CheckersState, frozenset[str]]]:
    """Return the positions of seeded random games (course boards, no history), categorised.

    Games are played until every (category, player) is found, and at least MIN_GAMES.
    """
    needed = {(c, p) for c in CATEGORIES for p in PLAYERS}
    seen: set[tuple[str, str]] = set()
    pool: list[tuple[CheckersState, frozenset[str]]] = []
    for games in range(1, MAX_GAMES + 1):
        state = GAME.initial_state()
        for _ in range(MAX_GAME_PLIES):
            moves = state.legal_moves()
            if not moves or state.is_terminal():
                break
            board = format_board(state)
            if (board, side_to_move(state)) not in seen:
                seen.add((board, side_to_move(state)))
                fresh = parse_board(GAME, board, to_move=side_to_move(state))
                categories = position_categories(fresh)
                pool.append((fresh, categories))
                needed -= {(c, side_to_move(fresh)) for c in categories}
            state = state.apply_unchecked(rng.choice(moves))
        if not needed and games >= MIN_GAMES:
            return pool
    missing = ", ".join(f"{c} ({p})" for c, p in sorted(needed))
    raise AgentSuiteError(f"{MAX_GAMES} random games found no position for: {missing}")


def _name(stem: str, number: int, categories: frozenset[str]) -> str:
    listed = ", ".join(c for c in CATEGORIES if c in categories) or "no special rule"
    return f"{stem} {number} ({listed})"


def _draw_varied(
    pool: list[tuple[CheckersState, frozenset[str]]],
    rng: random.Random,
    chosen: list[tuple[CheckersState, frozenset[str]]],
    count: int,
) -> None:
    """Move random positions from `pool` to `chosen` until it holds `count` (or `pool` is
    empty), taking each category (and no special rule) in turn."""
    kinds: list[str | None] = [*CATEGORIES, None]  # None: a position with no special rule
    while len(chosen) < count and pool:
        kind = kinds[len(chosen) % len(kinds)]
        fitting = [e for e in pool if (kind in e[1] if kind else not e[1])] or pool
        pick = rng.choice(fitting)
        chosen.append(pick)
        pool.remove(pick)


def make_agent_suite(
    seed: int,
    count: int = DEFAULT_COUNT,
    *,
    examples: int = 0,
    public: bool = False,
    base: AgentSuite | None = None,
) -> AgentSuite:
    """Return an agent suite drawn from `seed`: legal-move positions, examples and fresh seeds.

    The `count` legal-move positions come from seeded random games under Arena's rules: first
    the fewest positions (greedily) that together cover every category of `CATEGORIES` with
    red to move and with black to move, as certified by `position_categories`; then random
    others, taking each category (and no special rule) in turn. The `examples` public
    examples ("example N (...)", see `AgentSuite.example_positions`) are further positions of
    the same games, certified and named the same way, taking each category in turn from
    forced capture on; they need not cover every category, and none is a legal-move position.
    `exact_seed` and `game_seed` are drawn from `seed` too (the games' defaults are set so
    that a correct agent passes with any game seed; see autograder.agent); every other field comes
    from `base` (default `AgentSuite()`). Asking for examples changes nothing else: a seed
    gives the positions and seeds it gave before examples existed. Raises AgentSuiteError if
    `count` positions cannot cover the categories, or if the games hold too few positions.
    """
    rng = random.Random(seed)
    exact_seed = rng.randrange(2**31)
    pool = _random_positions(rng)
    rng.shuffle(pool)
    uncovered = {(c, p) for c in CATEGORIES for p in PLAYERS}
    chosen: list[tuple[CheckersState, frozenset[str]]] = []

    def gain(entry: tuple[CheckersState, frozenset[str]]) -> int:
        return len(uncovered & {(c, side_to_move(entry[0])) for c in entry[1]})

    while uncovered:
        best = max(pool, key=gain)  # the first of the best, in shuffled order
        chosen.append(best)
        pool.remove(best)
        uncovered -= {(c, side_to_move(best[0])) for c in best[1]}
    if count < len(chosen):
        raise AgentSuiteError(
            f"{count} positions cannot cover every category with both colours; "
            f"seed {seed} needs {len(chosen)}"
        )
    _draw_varied(pool, rng, chosen, count)
    game_seed = rng.randrange(2**31)  # drawn after the positions: a seed keeps what it gave
    shown: list[tuple[CheckersState, frozenset[str]]] = []
    _draw_varied(pool, rng, shown, examples)  # last, so that examples change nothing else
    if len(chosen) < count or len(shown) < examples:
        raise AgentSuiteError(
            f"the random games of seed {seed} hold {len(chosen) + len(shown)} positions, "
            f"fewer than the {count + examples} asked for"
        )

    def entries(
        stem: str, drawn: list[tuple[CheckersState, frozenset[str]]]
    ) -> tuple[tuple[str, str, str], ...]:
        return tuple(
            (_name(stem, number, categories), format_board(state), side_to_move(state))
            for number, (state, categories) in enumerate(drawn, 1)
        )

    return replace(
        base or AgentSuite(),
        legal_positions=entries("position", chosen),
        example_positions=entries(EXAMPLE_STEM, shown),
        exact_seed=exact_seed,
        game_seed=game_seed,
        public=public,
    )
