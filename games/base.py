"""The games interface: a `Game` names the rules, a `State` is one immutable position.

Every game in Arena implements these two classes. Players are numbered 0 (the side that moves
first from the standard start) and 1; each game names them in `Game.player_names`. A move is a
hashable value private to its game; it travels as text through `State.parse_move` and
`State.format_move`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar

M = TypeVar("M", bound=Hashable)


class GameError(Exception):
    """Base of every error raised by the games package."""


class InvalidMoveError(GameError, ValueError):
    """Move text that cannot be parsed at all (wrong syntax, squares off the board)."""


class IllegalMoveError(GameError, ValueError):
    """A well-formed move that is not legal in the given position.

    `reason` says why in words; `legal_moves` lists the legal moves as text.
    """

    def __init__(self, move: str, reason: str, legal_moves: Sequence[str] = ()) -> None:
        self.move = move
        self.reason = reason
        self.legal_moves = tuple(legal_moves)
        listed = ", ".join(self.legal_moves) if self.legal_moves else "none"
        super().__init__(f"illegal move {move!r}: {reason} (legal moves: {listed})")


class InvalidPositionError(GameError, ValueError):
    """Position text that cannot be parsed, or that describes an impossible position."""


class UnknownGameError(GameError, ValueError):
    """A game name that is not registered."""


class InvalidOptionError(GameError, ValueError):
    """A game option that the game does not have, or a value it cannot take."""


class Ending(StrEnum):
    """How the rules ended a game, as a stable code; `Outcome.reason` says it in words."""

    NO_MOVES = "no_moves"
    """The side to move has no legal move (in checkers also: no pieces left) and loses."""
    REPETITION = "repetition"
    """The same position with the same side to move occurred often enough: a draw."""
    MOVE_RULE = "move_rule"
    """Too many plies without progress (checkers: 80 plies, i.e. 40 moves each, without a
    capture or a man move): a draw."""
    LINE = "line"
    """A player completed a line (three in a row, four in a row) and wins."""
    BOARD_FULL = "board_full"
    """The board filled up without a line: a draw."""
    LAST_OBJECT = "last_object"
    """The last object was taken (Nim): its taker wins, or loses under misère rules."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended: the winner (None for a draw), the reason in words and the
    `ending`, the same as a code."""

    winner: int | None
    reason: str
    ending: Ending

    def score_for(self, player: int) -> int:
        """Return +1 if `player` won, -1 if they lost, 0 for a draw."""
        if self.winner is None:
            return 0
        return 1 if self.winner == player else -1


class State(ABC, Generic[M]):
    """One position of a game, with the side to move; an immutable value.

    Two states are equal, and have equal `key()`s, when they hold the same position with the
    same side to move. History that some rules consult (repetition counts, move counters) is
    carried along but is not part of a state's identity, just as it is not part of a FEN.
    """

    __slots__ = ()

    @property
    @abstractmethod
    def game(self) -> Game:
        """The game (with its options) whose rules this state follows."""

    @property
    @abstractmethod
    def to_move(self) -> int:
        """The player to move: 0 or 1 (see `Game.player_names`)."""

    @abstractmethod
    def legal_moves(self) -> Sequence[M]:
        """Return every legal move; empty exactly when the state is terminal."""

    @abstractmethod
    def apply_unchecked(self, move: M) -> State[M]:
        """Return the state after `move`, which the caller guarantees is legal here."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """Return how the game ended, or None while it goes on."""

    @abstractmethod
    def key(self) -> Hashable:
        """Return a hashable key of the position and side to move, for transposition tables."""

    @abstractmethod
    def parse_move(self, text: str) -> M:
        """Return the legal move that `text` names in this position.

        Raises InvalidMoveError when the text cannot be parsed and IllegalMoveError (with the
        reason and the legal moves) when it parses but is not legal here.
        """

    @abstractmethod
    def format_move(self, move: M) -> str:
        """Return the standard notation of `move`."""

    @abstractmethod
    def render(self) -> str:
        """Return a human-readable multi-line picture of the position."""

    def is_terminal(self) -> bool:
        """Return True when the game is over (no legal moves)."""
        return self.outcome() is not None

    def apply(self, move: M) -> State[M]:
        """Return the state after `move`, raising IllegalMoveError if it is not legal here."""
        legal = self.legal_moves()
        if move not in legal:
            raise IllegalMoveError(
                self._describe(move),
                "the game is over" if not legal else "not a legal move in this position",
                [self.format_move(m) for m in legal],
            )
        return self.apply_unchecked(move)

    def play(self, *moves: str) -> State[M]:
        """Return the state after the moves given as text, each parsed and checked in turn."""
        state: State[M] = self
        for text in moves:
            state = state.apply_unchecked(state.parse_move(text))
        return state

    def perft(self, depth: int) -> int:
        """Return the number of move paths of exactly `depth` plies from this state.

        A terminal state before `depth` contributes nothing; perft(0) is 1. A game may
        override this with a faster path, which must agree with `perft_generic`.
        """
        return perft_generic(self, depth)

    def _describe(self, move: M) -> str:
        try:
            return self.format_move(move)
        except Exception:  # noqa: BLE001 - a foreign object may not format; show its repr
            return repr(move)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State) or other.game.name != self.game.name:
            return NotImplemented
        return bool(self.key() == other.key())

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game.format_position(self)!r}>"


def perft_generic(state: State[Any], depth: int) -> int:
    """Return perft through the public interface only (legal_moves and apply_unchecked).

    The reference every game's fast path is tested against.
    """
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, not {depth}")
    if depth == 0:
        return 1
    moves = state.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(perft_generic(state.apply_unchecked(move), depth - 1) for move in moves)


def perft_by_position(state: State[Any], depth: int) -> int:
    """Return perft counting the lines below each (position, plies left) once.

    For games whose moves depend on the position alone, as `State.key` identifies it (no
    history rule): lines that transpose into one position share its count, so the work grows
    with the positions, not with the lines (tic-tac-toe and Nim count to any depth at once).
    Agrees with `perft_generic`.
    """
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, not {depth}")
    counted: dict[tuple[Hashable, int], int] = {}

    def count(node: State[Any], left: int) -> int:
        moves = node.legal_moves()
        if left == 1:
            return len(moves)
        key = (node.key(), left)
        found = counted.get(key)
        if found is None:
            found = sum(count(node.apply_unchecked(move), left - 1) for move in moves)
            counted[key] = found
        return found

    return 1 if depth == 0 else count(state, depth)


class Game(ABC):
    """The rules of one game, with its options fixed; builds and reads states."""

    name: str = ""
    player_names: tuple[str, str] = ("first", "second")
    description: str = ""
    setup_options: frozenset[str] = frozenset()
    """Options that only choose the start position; the others change the rules."""

    __slots__ = ("option_texts", "options")

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        raw = dict(options or {})
        self.options: Mapping[str, Any] = self.parse_options(raw)
        self.option_texts: Mapping[str, str] = {
            key: str(raw.get(key, default)).strip()
            for key, default in self.option_defaults().items()
        }
        """Every option as text (defaults filled in): what get_game() takes to rebuild it."""

    @classmethod
    def option_defaults(cls) -> Mapping[str, str]:
        """Return each option the game takes with its default value as text."""
        return {}

    @classmethod
    def parse_options(cls, raw: Mapping[str, str]) -> Mapping[str, Any]:
        """Return the typed options, raising InvalidOptionError on an unknown key or bad value."""
        defaults = cls.option_defaults()
        unknown = sorted(set(raw) - set(defaults))
        if unknown:
            known = ", ".join(sorted(defaults)) or "none"
            raise InvalidOptionError(
                f"{cls.name} has no option {', '.join(unknown)} (options: {known})"
            )
        return {
            key: cls.convert_option(key, raw.get(key, value)) for key, value in defaults.items()
        }

    @classmethod
    def convert_option(cls, key: str, value: str) -> Any:
        """Return the typed value of one option given as text."""
        return value

    @abstractmethod
    def initial_state(self) -> State[Any]:
        """Return the standard start position."""

    @abstractmethod
    def parse_position(self, text: str) -> State[Any]:
        """Return the state written as `text`, raising InvalidPositionError if it is malformed."""

    @abstractmethod
    def format_position(self, state: State[Any]) -> str:
        """Return the standard text of `state`'s position; parse_position reads it back."""

    def rules_key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """Return a key equal for games with the same rules (setup options aside)."""
        return (
            self.name,
            tuple(
                sorted((k, repr(v)) for k, v in self.options.items() if k not in self.setup_options)
            ),
        )

    def position_or_initial(self, text: str | None) -> State[Any]:
        """Return the parsed position, or the start position when `text` is None."""
        return self.initial_state() if text is None else self.parse_position(text)

    def __repr__(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in self.options.items())
        return f"<Game {self.name}{' ' + opts if opts else ''}>"


def parse_bool_option(game: str, key: str, value: str) -> bool:
    """Return the boolean an option's text means (true/false, yes/no, on/off, 1/0)."""
    lowered = value.strip().lower()
    if lowered in {"true", "yes", "on", "1"}:
        return True
    if lowered in {"false", "no", "off", "0"}:
        return False
    raise InvalidOptionError(f"{game} option {key} must be true or false, not {value!r}")
