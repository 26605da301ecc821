"""Where tournament games start: named decks, random openings, user files.

An `Opening` is a start position written as moves from the game's start, a position text, or
both (the moves are then played from that position). Openings come from

- `deck`: a named deck shipped in this package (competition/decks/); `acf-3move` is the
  American Checkers Federation three-move deck (156 openings), `DECKS` lists them all;
- `random_openings`: seeded random legal plies, filtered by Arena's exact solver where it can
  afford to (see its docstring for the rule);
- `load_openings`: a user file, one opening per line (`format_openings` writes one), and
  `parse_opening`: one such line.

`default_openings` says which of these a tournament uses when it is given none.
`select_openings` deals n openings from a list in a seeded shuffled order, so the games of a
pairing start from different openings and a rerun with the same seed starts from the same ones.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from bots.solvers.connect4 import Solver as ConnectFourSolver
from bots.solvers.solve import Solver
from competition.decks import DECKS, DEFAULT_DECKS, Deck
from games import Game, GameError, State, get_game
from games.connect4 import ConnectFourState

__all__ = [
    "CONNECT4_FILTER_MIN_PLIES",
    "DECKS",
    "DEFAULT_DECKS",
    "Deck",
    "Opening",
    "OpeningError",
    "deck",
    "default_openings",
    "format_openings",
    "load_openings",
    "parse_opening",
    "random_openings",
    "select_openings",
]

CONNECT4_FILTER_MIN_PLIES = 16
"""The fewest plies a Connect Four opening needs before the solver filters it.

Measured on 40 random positions each (one weak solve per position, table kept): 16 plies took
at most 0.13 s (0.7 s in all); 14 and 15 plies up to 0.8 s; 12 plies about 3 s; earlier
positions longer still. Shorter Connect Four openings are not filtered.
"""

CONNECT4_START_VALUE = 1
"""The empty Connect Four board is a first-player win (Allis and Allen, 1988); too slow to
solve here, so it is stated."""

SOLVED_GAMES = frozenset({"tictactoe", "nim", "connect4"})
"""Games whose positions Arena's solver values exactly (checkers proofs cannot show draws)."""

_FEN_PREFIX = "fen:"
_CHECKERS_FEN = re.compile(r"^[BW]:", re.IGNORECASE)
_MOVE_SEPARATORS = re.compile(r"[,\s]+")


class OpeningError(ValueError):
    """An opening that cannot be read or played: a bad line, an illegal move, a finished game."""


@dataclass(frozen=True, slots=True)
class Opening:
    """A named start for a game: `moves` (move texts) played from `position`, or from the start.

    `game` is the game's name and `options` its options as sorted (key, text) pairs, as
    `Game.option_texts` gives them; `position` is a position text in the game's notation, or
    None for the game's standard start.
    """

    name: str
    game: str
    moves: tuple[str, ...] = ()
    position: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    def build_game(self) -> Game:
        """Return the game (with its options) this opening is played in."""
        return get_game(self.game, dict(self.options))

    def start_state(self, game: Game | None = None) -> State[Any]:
        """Return the state after the moves, each parsed and checked with `parse_move`.

        `game` saves rebuilding the game from its name. Raises OpeningError naming the opening,
        the move and why it is rejected.
        """
        game = game or self.build_game()
        try:
            state = game.position_or_initial(self.position)
        except GameError as exc:
            raise OpeningError(f"opening {self.name!r}: bad position: {exc}") from exc
        for number, text in enumerate(self.moves, start=1):
            try:
                state = state.apply_unchecked(state.parse_move(text))
            except GameError as exc:
                raise OpeningError(
                    f"opening {self.name!r}: move {number} {text!r} is rejected: {exc}"
                ) from exc
        return state

    def position_text(self, game: Game | None = None) -> str:
        """Return the start position as the game's position text (a PDN FEN for checkers)."""
        game = game or self.build_game()
        return game.format_position(self.start_state(game))


def _opening_for(game: Game, moves: Sequence[str] = (), position: str | None = None) -> Opening:
    """Return an opening in `game` named by its moves, or by its position when it has none."""
    name = " ".join(moves) if moves else f"{_FEN_PREFIX}{position or ''}"
    if moves and position is not None:
        name = f"{_FEN_PREFIX}{position} {name}"
    return Opening(
        name=name,
        game=game.name,
        moves=tuple(moves),
        position=position,
        options=tuple(sorted(game.option_texts.items())),
    )


def _as_game(game: Game | str) -> Game:
    return get_game(game) if isinstance(game, str) else game


# ---------------------------------------------------------------------------------------------
# Named decks
# ---------------------------------------------------------------------------------------------


def deck(name: str, game: Game | str | None = None) -> list[Opening]:
    """Return the openings of the named deck, in the order of its file.

    `game` (default: the deck's game without options) is the game they are played in; its name
    must be the deck's game. Raises OpeningError for an unknown name (listing the decks), a
    game the deck is not for, or a line of the deck that cannot be played.
    """
    chosen = DECKS.get(name)
    if chosen is None:
        raise OpeningError(f"no deck is named {name!r} (decks: {_deck_list()})")
    rules = _as_game(game if game is not None else chosen.game)
    if rules.name != chosen.game:
        raise OpeningError(f"deck {name!r} is for {chosen.game}, not {rules.name}")
    data = resources.files("competition.decks") / chosen.file
    with data.open(encoding="utf-8") as handle:
        return _read_openings(handle, rules, f"competition/decks/{chosen.file}")


def _deck_list() -> str:
    return ", ".join(f"{d.name} ({d.game})" for d in DECKS.values())


# ---------------------------------------------------------------------------------------------
# Random openings
# ---------------------------------------------------------------------------------------------


def random_openings(
    game: Game | str,
    count: int,
    plies: int,
    seed: int,
    solver_filter: bool = True,
) -> list[Opening]:
    """Return `count` openings of exactly `plies` random legal plies each, drawn from `seed`.

    Deterministic: the same game, arguments and seed give the same list (random.Random(seed)
    chooses each ply uniformly among the legal moves). The openings hold distinct positions
    (by `State.key()`), and none ends the game: a draw whose game is over within `plies` plies
    is thrown away and drawn again.

    The solver filter (`solver_filter=True`) keeps an opening only when its exact value, seen
    from the first player, equals the value of the game's start: tic-tac-toe starts drawn, so
    only drawn openings pass; misere Nim 1,3,5,7 starts lost for the first player, so only
    openings still lost for the first player pass (other Nim heaps: whatever their start is);
    Connect Four starts won for the first player, so only openings the first player still wins
    pass. In words: no opening hands either side a result that the start position did not
    already give it. The filter applies to tic-tac-toe and Nim (solved to the end by
    bots.solvers.solve.Solver) and to Connect Four openings of at least
    CONNECT4_FILTER_MIN_PLIES plies (the exact weak solver of bots.solvers.connect4, fast
    there); shorter Connect Four openings
    and other games (checkers, whose draws the solver cannot prove) are not filtered.

    Raises ValueError when `count` or `plies` is negative, or when `count` openings cannot be
    found within 100 * count + 1000 draws (too few distinct positions pass).
    """
    if count < 0 or plies < 0:
        raise ValueError(f"count and plies must be >= 0, not count={count} plies={plies}")
    game = _as_game(game)
    judge = _ValueFilter(game, plies) if solver_filter else None
    rng = random.Random(seed)
    openings: list[Opening] = []
    seen: set[Hashable] = set()
    attempts = 100 * count + 1000
    for _ in range(attempts):
        if len(openings) == count:
            break
        drawn = _random_line(game, plies, rng)
        if drawn is None:
            continue
        state, moves = drawn
        key = state.key()
        if key in seen:
            continue
        seen.add(key)
        if judge is not None and not judge.accepts(state):
            continue
        openings.append(_opening_for(game, moves))
    if len(openings) < count:
        raise ValueError(
            f"found only {len(openings)} of {count} distinct {game.name} openings of {plies} "
            f"plies in {attempts} random draws (seed {seed}, solver filter "
            f"{'on' if solver_filter else 'off'}); ask for fewer or longer openings"
        )
    return openings


def _random_line(game: Game, plies: int, rng: random.Random) -> tuple[State[Any], list[str]] | None:
    """Return the state and move texts after `plies` random plies, or None if the game ends."""
    state = game.initial_state()
    moves = []
    for _ in range(plies):
        legal = state.legal_moves()
        if not legal:
            return None
        move = legal[rng.randrange(len(legal))]
        moves.append(state.format_move(move))
        state = state.apply_unchecked(move)
    if state.is_terminal():
        return None
    return state, moves


class _ValueFilter:
    """Accepts positions whose exact value for the first player equals the start's."""

    def __init__(self, game: Game, plies: int) -> None:
        self.active = game.name in SOLVED_GAMES and (
            game.name != "connect4" or plies >= CONNECT4_FILTER_MIN_PLIES
        )
        self._solver = Solver()
        self._connect4 = ConnectFourSolver()
        self._start = 0
        if self.active:
            self._start = (
                CONNECT4_START_VALUE
                if game.name == "connect4"
                else self.first_player_value(game.initial_state())
            )

    def accepts(self, state: State[Any]) -> bool:
        return not self.active or self.first_player_value(state) == self._start

    def first_player_value(self, state: State[Any]) -> int:
        """Return +1 if the first player (player 0) wins with best play, 0 draw, -1 loss."""
        if isinstance(state, ConnectFourState):
            mover_value = self._connect4.score(state, weak=True)
        else:
            value = self._solver.solve(state).value
            mover_value = {"win": 1, "draw": 0, "loss": -1}[value]
        return mover_value if state.to_move == 0 else -mover_value


# ---------------------------------------------------------------------------------------------
# User files
# ---------------------------------------------------------------------------------------------


def load_openings(path: Path | str, game: Game | str) -> list[Opening]:
    """Return the openings of a text file, one per line, for `game`.

    A line is what `parse_opening` reads. Blank lines and `#` comments (whole lines or line
    ends) are skipped. Every opening is played; a position that cannot be read, a move that is
    rejected or a game already over raises OpeningError with the file and line number.
    """
    source = Path(path)
    with source.open(encoding="utf-8") as handle:
        return _read_openings(handle, _as_game(game), str(source))


def parse_opening(text: str, game: Game | str) -> Opening:
    """Return the opening one line of an openings file states, played to check it.

    The line is either move texts from the start separated by spaces or commas (`4 3 4` or
    `9-13, 22-18`), or `fen:` and a position text (`fen:1,3,5,7/2`); for checkers a bare PDN
    FEN (`B:W18,22:B9,13`) is a position too. `#` is not a comment here (files strip their
    comments first). Raises OpeningError for a blank line, a position that cannot be read, a
    move that is rejected, or an opening that ends the game.
    """
    rules = _as_game(game)
    line = text.strip()
    if line[: len(_FEN_PREFIX)].lower() == _FEN_PREFIX:
        position = line[len(_FEN_PREFIX) :].strip()
        if not position:
            raise OpeningError("'fen:' is followed by no position")
        opening = _opening_for(rules, position=position)
    elif rules.name == "checkers" and _CHECKERS_FEN.match(line):
        opening = _opening_for(rules, position=line)
    else:
        moves = [m for m in _MOVE_SEPARATORS.split(line) if m]
        if not moves:
            raise OpeningError("an opening needs moves or a position, and this one is blank")
        opening = _opening_for(rules, moves)
    if opening.start_state(rules).is_terminal():
        raise OpeningError(f"opening {opening.name!r} ends the game")
    return opening


def format_openings(openings: Iterable[Opening]) -> str:
    """Return the text of an openings file that `load_openings` reads back.

    An opening with moves and no position is written as its moves; any other as `fen:` and its
    resulting position text.
    """
    lines = []
    for opening in openings:
        if opening.moves and opening.position is None:
            lines.append(" ".join(opening.moves))
        else:
            lines.append(f"{_FEN_PREFIX}{opening.position_text()}")
    return "".join(f"{line}\n" for line in lines)


def _read_openings(lines: Iterable[str], game: Game, where: str) -> list[Opening]:
    """Return the opening of each line with content; errors start with `where` and the line.

    `#` starts a comment that runs to the end of its line.
    """
    openings = []
    for number, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            openings.append(parse_opening(line, game))
        except OpeningError as exc:
            raise OpeningError(f"{where}:{number}: {exc}") from exc
    return openings


# ---------------------------------------------------------------------------------------------
# Dealing openings to games
# ---------------------------------------------------------------------------------------------


def select_openings(openings: Sequence[Opening], n: int, seed: int) -> list[Opening]:
    """Return `n` openings: the list in one order shuffled by `seed`, repeated as needed.

    Deterministic (random.Random(seed)); each opening is used once before any is used twice,
    and entry i + len(openings) equals entry i. Raises ValueError when `n` is negative or
    openings are needed from an empty list.
    """
    if n < 0:
        raise ValueError(f"cannot select a negative number of openings ({n})")
    if n and not openings:
        raise ValueError(f"cannot select {n} openings from an empty list")
    order = list(range(len(openings)))
    random.Random(seed).shuffle(order)
    return [openings[order[i % len(order)]] for i in range(n)]


def default_openings(game: Game | str, needed: int, seed: int) -> list[Opening]:
    """Return the openings a tournament uses unless given its own: the one rule for every front.

    A game with a deck in DEFAULT_DECKS plays it (checkers: the ACF 3-move deck, 156
    openings). Otherwise tic-tac-toe gets `needed` seeded 2-ply openings and any other game
    `needed` seeded 4-ply openings, filtered by the solver where it is fast (see
    `random_openings`).
    """
    rules = _as_game(game)
    name = DEFAULT_DECKS.get(rules.name)
    if name is not None:
        return deck(name, rules)
    plies = 2 if rules.name == "tictactoe" else 4
    return random_openings(rules, max(needed, 1), plies, seed)
