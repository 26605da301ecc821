"""Making endgame puzzles: realistic positions, certified wins, a difficulty, chosen by options.

A puzzle is drawn from a seed: a material mix (red's pieces against black's, 3 to 8 pieces by
default, either side ahead), each piece a king with probability `PuzzleOptions.kings` and
otherwise a man on a square it can stand on (never its own crown row), red to move. It is kept
when

- red has at least `min_choices` legal moves (a forced first move, such as a lone capture, is
  no decision; a choice of captures is one);
- Arena's proof search (bots.solvers.solve), started afresh, proves a red win in `min_plies` to
  `max_plies` plies within `max_nodes` nodes, and decides each of red's other first moves
  within `max_nodes` too, as the judge (autograder.endgame_judge) does when a student plays
  one: so a grading host without the endgame database judges the puzzle quickly;
- its difficulty (`autograder.endgame_suite.Difficulty`) passes `max_best` and `min_branching`.

Where red has fewer pieces than black (the handout's 3 against 5), random placement almost never
gives red a forced win, so such a position is grown instead (`grow_position`): a random position
with as many black pieces as red ones, kept when the proof search proves a red win, then one
black piece at a time added on a random empty square (a king with probability `kings`, a man
never on its crown row), each addition kept only while red still has a proved win within
`max_plies`; the position with all of black's pieces is kept on the conditions above, checked
in full like any other. The walk chooses which positions are tried, never what is certified.

Where an endgame database is given and holds the position, it certifies the win too: its
value, distance and best moves must equal the proof search's (they always do; a difference is a
damaged database and stops the generation). Whether a database is given never changes which
puzzles are made: the same seed and options make the same suite on every host.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from autograder.endgame_certification import certify_new, proved_win
from autograder.endgame_puzzle_options import (
    BLACK_MAN_SQUARES,
    GROW_POSITIONS,
    RED_MAN_SQUARES,
    Found,
    Material,
    Progress,
    PuzzleOptions,
)
from autograder.endgame_suite import Puzzle, PuzzleError
from bots.egdb.probe import Database, DatabaseSolver
from games.checkers import (
    BIT_OF_SQUARE,
    WHITE,
    Checkers,
    CheckersState,
)


def make_puzzle_suite(
    seed: int,
    count: int,
    options: PuzzleOptions | None = None,
    *,
    public: bool = False,
    database: Database | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> list[Puzzle]:
    """Return `count` puzzles drawn from `seed` (see `make_puzzles`), easiest first.

    Puzzles are ordered by the length of their win, then by their branching, and named
    "puzzle 1", "puzzle 2", ... in that order. Raises PuzzleError for options out of range or
    when not enough puzzles are found, saying which options to loosen.
    """
    if count < 1:
        raise PuzzleError(f"a suite needs at least one puzzle, asked for {count}")
    found = make_puzzles(random.Random(seed), count, options or PuzzleOptions(), database, progress)
    ordered = sorted(found, key=lambda f: (f.plies, f.difficulty.branching, f.board))
    return [
        Puzzle(
            name=f"puzzle {index}",
            board=f.board,
            plies=f.plies,
            public=public,
            material=str(f.material),
            difficulty=f.difficulty,
        )
        for index, f in enumerate(ordered, 1)
    ]


def make_puzzles(
    rng: random.Random,
    count: int,
    options: PuzzleOptions,
    database: Database | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> list[Found]:
    """Return `count` distinct puzzles drawn from `rng` and kept by `options` (module docstring).

    `progress` is called after every position drawn. Raises PuzzleError for options out of
    range, or when `options.max_tries` positions are not enough.
    """
    options.check()
    game = Checkers()
    checker = None if database is None else DatabaseSolver(database)
    choices = mixes(options)
    groups = {_group(options, m): 0 for m in choices}
    share = -(-count // len(groups))  # each group's most: the suite spreads over all of them
    found: list[Found] = []
    seen: set[str] = set()
    tries = 0

    def spend() -> bool:
        """Count one more position examined; False when `options.max_tries` are used up."""
        nonlocal tries
        if tries >= options.max_tries:
            return False
        tries += 1
        if progress is not None:
            progress(Progress(len(found), count, tries, options.max_tries))
        return True

    while len(found) < count and tries < options.max_tries:
        open_groups = {g for g, n in groups.items() if n < share}
        material = rng.choice([m for m in choices if _group(options, m) in open_groups])
        if material.red < material.black:
            kept = grow_position(rng, game, material, options, checker, seen, spend)
        else:
            spend()
            kept = certify_new(
                draw_position(rng, game, material, options.kings), material, options, checker, seen
            )
        if kept is not None:
            found.append(kept)
            groups[_group(options, material)] += 1
            if progress is not None:
                progress(Progress(len(found), count, tries, options.max_tries))
    if len(found) < count:
        short = ", ".join(f"{g}: {n} of {share}" for g, n in groups.items() if n < share)
        raise PuzzleError(
            f"found {len(found)} of {count} puzzles in {tries:,} positions ({options.describe()};"
            f" each share of the suite holds at most {share}, short: {short}): loosen the "
            "options: more tries, a wider plies range, more nodes, fewer first moves required, "
            "no limit on best moves or branching, more kings, or material where red is not "
            "behind"
        )
    return found


def mixes(options: PuzzleOptions) -> list[Material]:
    """Return the material mixes `options` draw from: `options.materials`, else every split of
    a total in `options.pieces` where neither side has more than two pieces more than the
    other (either may be ahead)."""
    if options.materials:
        return sorted(set(options.materials))
    low, high = options.pieces
    return [
        Material(red, total - red)
        for total in range(low, high + 1)
        for red in range(max(1, (total - 1) // 2), total)
        if abs(2 * red - total) <= 2
    ]


def _group(options: PuzzleOptions, material: Material) -> str:
    """The share of the suite `material` counts towards: its mix when mixes are given, else
    its number of pieces."""
    return str(material) if options.materials else f"{material.pieces} pieces"


def draw_position(
    rng: random.Random, game: Checkers, material: Material, kings: float
) -> CheckersState:
    """Return a random position of `material`, red (White) to move.

    Each piece is a king with probability `kings`, else a man; a man never stands on its own
    crown row.
    """
    black = white = crowned = 0
    taken: set[int] = set()
    sides = [True] * material.red + [False] * material.black
    for red in sides:
        king = rng.random() < kings
        squares = range(1, 33) if king else RED_MAN_SQUARES if red else BLACK_MAN_SQUARES
        square = rng.choice([s for s in squares if s not in taken])
        taken.add(square)
        bit = 1 << BIT_OF_SQUARE[square]
        if king:
            crowned |= bit
        if red:
            white |= bit
        else:
            black |= bit
    return CheckersState(game, black, white, crowned, WHITE)


def grow_position(
    rng: random.Random,
    game: Checkers,
    material: Material,
    options: PuzzleOptions,
    checker: DatabaseSolver | None,
    seen: set[str],
    spend: Callable[[], bool],
) -> Found | None:
    """Return a puzzle of `material` grown from a red win with fewer black pieces, or None.

    The walk (module docstring) starts from a random position with as many black pieces as red
    ones; it is dropped unless red has a proved win. From a position, each addition of a black
    piece (`black_additions`, in random order) is tried in turn: with all of black's pieces
    the first that `certify` keeps is the puzzle; short of them, one where red still has a
    proved win within `options.max_plies` (in at most GROW_NODES nodes) is grown further, and
    when nothing comes of it the next addition is tried. A walk tries at most GROW_POSITIONS
    positions. Every position tried is one of `spend`'s (False: no tries left, the walk ends);
    `seen` holds the boards already certified or refused.
    """
    if not spend():
        return None
    state = draw_position(
        rng, game, Material(material.red, min(material.red, material.black)), options.kings
    )
    if not proved_win(state, options):
        return None
    left = [GROW_POSITIONS - 1]

    def grow(position: CheckersState) -> Found | None:
        for bigger in black_additions(rng, position, options.kings):
            if left[0] <= 0 or not spend():
                return None
            left[0] -= 1
            if bigger.black.bit_count() == material.black:
                kept = certify_new(bigger, material, options, checker, seen)
            else:
                kept = grow(bigger) if proved_win(bigger, options) else None
            if kept is not None:
                return kept
        return None

    return grow(state)


def black_additions(
    rng: random.Random, state: CheckersState, kings: float
) -> Iterator[CheckersState]:
    """Yield `state` (red to move) with one more black piece, on each empty square once in a
    random order: a king with probability `kings`, else a man, and no man on black's crown row
    (such a square is passed over)."""
    taken = state.black | state.white
    squares = [s for s in range(1, 33) if not taken >> BIT_OF_SQUARE[s] & 1]
    rng.shuffle(squares)
    for square in squares:
        king = rng.random() < kings
        if not king and square not in BLACK_MAN_SQUARES:
            continue
        bit = 1 << BIT_OF_SQUARE[square]
        crowned = state.kings | bit if king else state.kings
        yield CheckersState(state.game, state.black | bit, state.white, crowned, WHITE)


def describe_puzzles(puzzles: Sequence[Puzzle], *, public: bool) -> str:
    """Say in one line what a generated suite holds: its plies, materials and branching."""
    kind = "public" if public else "private"
    lengths = ", ".join(str(p.plies) for p in puzzles)
    materials = Counter(p.material or "?" for p in puzzles)
    mixes = ", ".join(f"{m} x{n}" if n > 1 else m for m, n in sorted(materials.items()))
    branching = [p.difficulty.branching for p in puzzles if p.difficulty is not None]
    spread = ""
    if branching:
        low, high = min(branching), max(branching)
        spread = f"; branching {low:g}" if low == high else f"; branching {low:g}-{high:g}"
    noun = "puzzle" if len(puzzles) == 1 else "puzzles"
    return f"{len(puzzles)} {kind} endgame {noun} (plies: {lengths}; material: {mixes}{spread})"
