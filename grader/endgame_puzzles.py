"""Making endgame puzzles: realistic positions, certified wins, a difficulty, chosen by options.

A puzzle is drawn from a seed: a material mix (red's pieces against black's, 3 to 8 pieces by
default, either side ahead), each piece a king with probability `PuzzleOptions.kings` and
otherwise a man on a square it can stand on (never its own crown row), red to move. It is kept
when

- red has at least `min_choices` legal moves (a forced first move, such as a lone capture, is
  no decision; a choice of captures is one);
- Arena's proof search (bots.solve), started afresh, proves a red win in `min_plies` to
  `max_plies` plies within `max_nodes` nodes, and decides each of red's other first moves
  within `max_nodes` too, as the judge (grader.endgame) does when a student plays one: so a
  grading host without the endgame database judges the puzzle quickly;
- its difficulty (`grader.endgame_suite.Difficulty`) passes `max_best` and `min_branching`.

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
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from bots.egdb import DatabaseError
from bots.egdb.probe import Database, DatabaseSolver, default_directory
from bots.solve import Solution, Solver
from games.checkers import (
    BIT_OF_SQUARE,
    WHITE,
    Checkers,
    CheckersMove,
    CheckersState,
    format_board,
    format_fen,
)
from grader.endgame import DEFAULT_MAX_PLIES, WIN_SLACK, fresh
from grader.endgame_suite import Difficulty, Puzzle, PuzzleError

MIN_PIECES: Final = 2
MAX_PIECES: Final = 12
"""The piece counts a puzzle may have: the proof search refuses more (bots.solve)."""
RED_MAN_SQUARES: Final = tuple(range(5, 33))
"""Where a red man may stand: anywhere but red's crown row, row 0 (PDN squares 1-4)."""
BLACK_MAN_SQUARES: Final = tuple(range(1, 29))
"""Where a black man may stand: anywhere but black's crown row, row 7 (PDN squares 29-32)."""

GROW_POSITIONS: Final = 200
"""The most positions one walk of `grow_position` tries before it is given up for a new one."""
GROW_NODES: Final = 5_000
"""The node budget (at most `PuzzleOptions.max_nodes`) for the positions a walk passes through:
they are no puzzles, only a way to the last one, which is certified in full; a small budget
drops costly branches early."""

_MATERIAL_RE: Final = re.compile(r"^\s*(\d+)\s*v\s*(\d+)\s*$", re.IGNORECASE)
_PIECES_RE: Final = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True, slots=True, order=True)
class Material:
    """How many pieces each side has: red (to move) against black; written "3v5"."""

    red: int
    black: int

    def __str__(self) -> str:
        return f"{self.red}v{self.black}"

    @property
    def pieces(self) -> int:
        """Both sides' pieces."""
        return self.red + self.black


def parse_material(text: str) -> Material:
    """Read "RvB" (red's pieces against black's, e.g. "3v5"); PuzzleError says what is wrong."""
    match = _MATERIAL_RE.match(text)
    if match is None:
        raise PuzzleError(
            f"material {text!r} is not RED v BLACK, red's pieces against black's, such as 3v5"
        )
    material = Material(int(match[1]), int(match[2]))
    if material.red < 1 or material.black < 1:
        raise PuzzleError(f"material {text!r}: each side needs at least one piece")
    if not MIN_PIECES <= material.pieces <= MAX_PIECES:
        raise PuzzleError(
            f"material {text!r} has {material.pieces} pieces; a puzzle has {MIN_PIECES} to "
            f"{MAX_PIECES}"
        )
    return material


def parse_pieces(text: str) -> tuple[int, int]:
    """Read a count of pieces, "5", or a range, "3-8"; PuzzleError says what is wrong."""
    match = _PIECES_RE.match(text)
    if match is None:
        raise PuzzleError(f"pieces {text!r} is not a count such as 5 or a range such as 3-8")
    low = int(match[1])
    high = low if match[2] is None else int(match[2])
    if not MIN_PIECES <= low <= high <= MAX_PIECES:
        raise PuzzleError(
            f"pieces {text!r}: need {MIN_PIECES} <= fewest <= most <= {MAX_PIECES} "
            f"(the proof search decides endgames of at most {MAX_PIECES} pieces)"
        )
    return low, high


@dataclass(frozen=True, slots=True)
class PuzzleOptions:
    """What puzzles to make (see the module docstring); `check` says what is wrong with them.

    `materials` are the mixes to draw from; when empty, every split of a total in `pieces`
    where neither side is more than two pieces ahead (`mixes`). The suite is spread evenly:
    over the given mixes, else over the totals of pieces, no share holding more than its part
    of `count` (rounded up); positions are drawn from the shares not yet full.
    """

    materials: tuple[Material, ...] = ()
    pieces: tuple[int, int] = (3, 8)
    kings: float = 0.25
    min_plies: int = 3
    max_plies: int = 11
    min_choices: int = 2
    max_best: int | None = None
    min_branching: float = 0.0
    max_nodes: int = 20_000
    max_tries: int = 50_000

    def check(self) -> None:
        """Raise PuzzleError naming the first option out of range, and its range."""
        low, high = self.pieces
        if not MIN_PIECES <= low <= high <= MAX_PIECES:
            raise PuzzleError(f"pieces must be a range within {MIN_PIECES}-{MAX_PIECES}")
        if not 0.0 <= self.kings <= 1.0:
            raise PuzzleError(f"kings is a probability from 0 to 1, not {self.kings:g}")
        if not 1 <= self.min_plies <= self.max_plies <= DEFAULT_MAX_PLIES:
            raise PuzzleError(
                f"need 1 <= min plies <= max plies <= {DEFAULT_MAX_PLIES} (the judge's "
                f"horizon), got {self.min_plies} and {self.max_plies}"
            )
        if self.min_plies % 2 == 0 and self.min_plies == self.max_plies:
            raise PuzzleError(
                f"a red win (red to move) takes an odd number of plies: {self.min_plies} to "
                f"{self.max_plies} holds none"
            )
        if self.min_choices < 1:
            raise PuzzleError(f"min choices must be at least 1, not {self.min_choices}")
        if self.max_best is not None and self.max_best < 1:
            raise PuzzleError(f"max best must be at least 1, not {self.max_best}")
        if self.min_branching < 0:
            raise PuzzleError(f"min branching must be at least 0, not {self.min_branching:g}")
        if self.max_nodes < 1:
            raise PuzzleError(f"max nodes must be at least 1, not {self.max_nodes}")
        if self.max_tries < 1:
            raise PuzzleError(f"tries must be at least 1, not {self.max_tries}")

    def describe(self) -> str:
        """The options in a few words, for messages."""
        mixes = (
            ", ".join(str(m) for m in self.materials)
            if self.materials
            else f"{self.pieces[0]}-{self.pieces[1]} pieces"
        )
        parts = [
            mixes,
            f"kings {self.kings:g}",
            f"{self.min_plies}-{self.max_plies} plies",
            f"at least {self.min_choices} first moves",
            f"{self.max_nodes:,} nodes",
        ]
        if self.max_best is not None:
            parts.append(f"at most {self.max_best} best first moves")
        if self.min_branching:
            parts.append(f"branching at least {self.min_branching:g}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Found:
    """A puzzle made by `make_puzzles`: its board, win, material, difficulty, certification.

    `egdb` is True when the endgame database held the position and agreed with the proof
    search.
    """

    board: str
    plies: int
    material: Material
    difficulty: Difficulty
    egdb: bool


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a generation is: puzzles found of those asked for, positions drawn so far."""

    found: int
    count: int
    tries: int
    max_tries: int


def built_database() -> Database | None:
    """Return the endgame database where `arena egdb build` put it, or None if there is none."""
    try:
        return Database(default_directory())
    except (DatabaseError, OSError):
        return None


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
            kept = _certify_new(
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
    the first that `_certify` keeps is the puzzle; short of them, one where red still has a
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
    if not _proved_win(state, options):
        return None
    left = [GROW_POSITIONS - 1]

    def grow(position: CheckersState) -> Found | None:
        for bigger in black_additions(rng, position, options.kings):
            if left[0] <= 0 or not spend():
                return None
            left[0] -= 1
            if bigger.black.bit_count() == material.black:
                kept = _certify_new(bigger, material, options, checker, seen)
            else:
                kept = grow(bigger) if _proved_win(bigger, options) else None
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


def _proved_win(state: CheckersState, options: PuzzleOptions) -> bool:
    """Whether the proof search, started afresh, proves a red win within `options.max_plies`
    in at most GROW_NODES nodes (a step of `grow_position`'s walk)."""
    solution = Solver().solve(
        state, max_plies=options.max_plies, max_nodes=min(options.max_nodes, GROW_NODES)
    )
    return solution.value == "win" and solution.limit is None


def _certify_new(
    state: CheckersState,
    material: Material,
    options: PuzzleOptions,
    checker: DatabaseSolver | None,
    seen: set[str],
) -> Found | None:
    """`_certify` a position not yet in `seen` (then added to it); None for one seen before."""
    text = format_board(state)
    if text in seen:
        return None
    seen.add(text)
    return _certify(state, material, options, checker)


def _certify(
    state: CheckersState,
    material: Material,
    options: PuzzleOptions,
    checker: DatabaseSolver | None,
) -> Found | None:
    """Return the puzzle `state` makes if `options` keep it (module docstring), else None."""
    moves = state.legal_moves()
    if len(moves) < options.min_choices:
        return None
    prover = Solver()  # a fresh table: whether a position is kept depends on it alone
    solution = prover.solve(state, max_plies=options.max_plies, max_nodes=options.max_nodes)
    if solution.value != "win" or solution.plies is None or solution.limit is not None:
        return None
    plies = solution.plies
    if plies < options.min_plies:
        return None
    best = [m for m in solution.best_moves if isinstance(m, CheckersMove)]
    if options.max_best is not None and len(best) > options.max_best:
        return None
    nodes = _judge_nodes(prover, state, plies, best, solution.nodes, options.max_nodes)
    if nodes is None:
        return None
    branching = _branching(prover, state, plies, best[0])
    if branching < options.min_branching:
        return None
    egdb = checker is not None and checker.database.covers(state)
    if egdb:
        assert checker is not None
        _cross_check(checker, state, options.max_plies, solution)
    difficulty = Difficulty(branching=branching, best=len(best), nodes=nodes)
    return Found(format_board(state), plies, material, difficulty, egdb)


def _judge_nodes(
    prover: Solver,
    state: CheckersState,
    plies: int,
    best: Sequence[CheckersMove],
    spent: int,
    max_nodes: int,
) -> int | None:
    """Decide each of red's first moves that is not a fastest win as the judge does (grader.
    endgame: within the fastest win plus WIN_SLACK plies); return the nodes of it all, or None
    when one of them takes more than `max_nodes`."""
    bound = min(plies - 1 + WIN_SLACK, DEFAULT_MAX_PLIES)
    total = spent
    for move in state.legal_moves():
        if move in best:
            continue
        reply = prover.solve(
            fresh(state.apply_unchecked(move)), max_plies=max(bound, 1), max_nodes=max_nodes
        )
        if reply.limit == "nodes":
            return None
        total += reply.nodes
    return total


def _branching(prover: Solver, state: CheckersState, plies: int, first: CheckersMove) -> float:
    """Return the mean number of legal moves per ply along the main line: `first`, then each
    side's first best move (the proof search's order), until the game ends."""
    counts = [len(state.legal_moves())]
    position = fresh(state.apply_unchecked(first))
    left = plies - 1
    while left > 0:
        counts.append(len(position.legal_moves()))
        solution = prover.solve(position, max_plies=left)
        assert solution.plies == left and solution.best_moves, (solution.value, left)
        move = solution.best_moves[0]
        assert isinstance(move, CheckersMove)
        position = fresh(position.apply_unchecked(move))
        left -= 1
    return round(sum(counts) / len(counts), 2)


def _cross_check(
    checker: DatabaseSolver, state: CheckersState, max_plies: int, proof: Solution
) -> None:
    """Raise PuzzleError unless the database's value, distance and best moves are the proof
    search's."""
    known = checker.solve(state, max_plies=max_plies)
    same = (known.value, known.plies) == (proof.value, proof.plies) and set(
        known.best_moves
    ) == set(proof.best_moves)
    if not same:
        raise PuzzleError(
            f"the endgame database and the proof search disagree on {format_fen(state)}: database "
            f"{known.value} in {known.plies} by {sorted(map(str, known.best_moves))}, proof "
            f"search {proof.value} in {proof.plies} by {sorted(map(str, proof.best_moves))}; "
            "check it with `arena egdb status` and rebuild what is damaged"
        )


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
