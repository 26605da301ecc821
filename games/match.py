"""The words of a match: its set-up, status and result, the events it stores, the effects it sends.

These are the values `games.referee.Referee` takes and returns, and what the server, the
tournament runner and the record formats read; they hold no rules. Times are integer
milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from games.base import Ending, Game, State

__all__ = [
    "MAX_ADJUDICATION_REASON",
    "DrawDeclined",
    "DrawOffered",
    "Effect",
    "ErrorCode",
    "Event",
    "EventKind",
    "MatchConfig",
    "MatchEnded",
    "MatchStarted",
    "MatchView",
    "MoveAccepted",
    "Rejected",
    "Result",
    "ResultCode",
    "Status",
    "TimeControl",
]


class Status(StrEnum):
    """Where a match stands: waiting -> active -> finished, or aborted."""

    WAITING = "waiting"
    ACTIVE = "active"
    FINISHED = "finished"
    ABORTED = "aborted"


class ErrorCode(StrEnum):
    """Why a call was rejected; the values are the protocol's error codes."""

    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    INVALID_MOVE = "INVALID_MOVE"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    MATCH_OVER = "MATCH_OVER"
    NOT_STARTED = "NOT_STARTED"
    NO_DRAW_OFFER = "NO_DRAW_OFFER"
    CANNOT_ABORT = "CANNOT_ABORT"


class ResultCode(StrEnum):
    """How a match ended, as a stable code; `Result.reason` says it in words.

    The first six are the game's rules (`games.base.Ending`, the same values); the others are
    the match's: its ply cap, the clock, the players and the host.
    """

    NO_MOVES = Ending.NO_MOVES.value
    """The side to move had no legal move (or no pieces left) and lost."""
    REPETITION = Ending.REPETITION.value
    """Drawn by repetition of a position."""
    MOVE_RULE = Ending.MOVE_RULE.value
    """Drawn by a rule on moves without progress (checkers: 80 plies without a capture or a
    man move)."""
    LINE = Ending.LINE.value
    """A line was completed (three or four in a row): its player won."""
    BOARD_FULL = Ending.BOARD_FULL.value
    """Drawn: the board is full."""
    LAST_OBJECT = Ending.LAST_OBJECT.value
    """The last object was taken (Nim; under misère rules its taker lost)."""
    PLY_CAP = "ply_cap"
    """Drawn on reaching the match's `MatchConfig.max_plies`."""
    RESIGN = "resign"
    TIMEOUT = "timeout"
    """A flag fell: the clock ran out, or a move took longer than the cap per move."""
    FORFEIT = "forfeit"
    """Too many rejected (illegal or unreadable) moves."""
    BOT_FAILURE = "bot_failure"
    """The host reported that a player's program failed to move (it crashed, returned no
    move, or was stopped): that player lost."""
    AGREEMENT = "agreement"
    ABORTED = "aborted"
    ADJUDICATION = "adjudication"
    """An arbiter ended it (a tournament stopped, say); the reason is the arbiter's."""

    @classmethod
    def of_ending(cls, ending: Ending) -> ResultCode:
        """Return the code of a game's ending by its rules."""
        return cls(ending.value)

    @property
    def is_rules(self) -> bool:
        """True for an ending decided by the game's rules (a `games.base.Ending`)."""
        return self.value in _ENDINGS


_ENDINGS: Final = frozenset(ending.value for ending in Ending)


class EventKind(StrEnum):
    """The kinds of accepted events, as stored and replayed."""

    START = "start"
    MOVE = "move"
    RESIGN = "resign"
    OFFER_DRAW = "offer_draw"
    ACCEPT_DRAW = "accept_draw"
    DECLINE_DRAW = "decline_draw"
    ABORT = "abort"
    TIMEOUT = "timeout"
    FORFEIT = "forfeit"
    ADJUDICATE = "adjudicate"
    DECLINE = "decline"
    FAIL = "fail"


MAX_ADJUDICATION_REASON = 200
"""The longest reason an adjudication or a bot failure may give (it is stored with the event,
like a move)."""

_TIME_CONTROL_RE: Final = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*\+\s*(\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Each side's clock: `base_ms` at the start, `increment_ms` added after each of its moves,
    and optionally at most `move_cap_ms` for any one move. All times in milliseconds."""

    base_ms: int
    increment_ms: int = 0
    move_cap_ms: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.base_ms, bool) or not isinstance(self.base_ms, int):
            raise ValueError(f"base_ms must be an integer number of ms, not {self.base_ms!r}")
        if self.base_ms <= 0:
            raise ValueError(f"base_ms must be positive, not {self.base_ms}")
        if isinstance(self.increment_ms, bool) or not isinstance(self.increment_ms, int):
            raise ValueError(
                f"increment_ms must be an integer number of ms, not {self.increment_ms!r}"
            )
        if self.increment_ms < 0:
            raise ValueError(f"increment_ms must be 0 or more, not {self.increment_ms}")
        cap = self.move_cap_ms
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap <= 0):
            raise ValueError(f"move_cap_ms must be a positive integer or None, not {cap!r}")

    @classmethod
    def parse(cls, text: str, move_cap_ms: int | None = None) -> TimeControl:
        """Return the time control written as "minutes+seconds", e.g. "5+2" or "0.5+0.1"."""
        match = _TIME_CONTROL_RE.match(text)
        if match is None:
            raise ValueError(
                f"cannot read time control {text!r}: expected minutes+increment seconds, "
                "e.g. 5+2 (5 minutes each, 2 seconds added per move)"
            )
        base = round(float(match.group(1)) * 60_000)
        increment = round(float(match.group(2)) * 1000)
        return cls(base, increment, move_cap_ms)

    def __str__(self) -> str:
        text = f"{self.base_ms / 60_000:g}+{self.increment_ms / 1000:g}"
        return text if self.move_cap_ms is None else f"{text} (cap {self.move_cap_ms} ms/move)"


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """What a match is played with: the game, the start position (a state, its text, or None
    for the standard start), the time control (None: untimed), the number of rejected moves
    after which a player forfeits, and the ply cap.

    `max_plies` (None: no cap) counts the moves played in the match, from its start position:
    the move that reaches it ends the match drawn, with code `ply_cap`, unless that move ended
    it by the rules (0: the match is drawn as it starts).
    """

    game: Game
    start: State[Any] | str | None = None
    time_control: TimeControl | None = None
    max_illegal_moves: int = 3
    max_plies: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.max_illegal_moves, bool) or not isinstance(self.max_illegal_moves, int):
            raise ValueError(
                f"max_illegal_moves must be an integer, not {self.max_illegal_moves!r}"
            )
        if self.max_illegal_moves < 1:
            raise ValueError(f"max_illegal_moves must be at least 1, not {self.max_illegal_moves}")
        cap = self.max_plies
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
            raise ValueError(f"max_plies must be an integer of 0 or more, or None, not {cap!r}")
        if isinstance(self.start, State) and self.start.game.rules_key() != self.game.rules_key():
            raise ValueError(
                f"the start state follows {self.start.game!r}, not the match's {self.game!r}"
            )

    def start_state(self) -> State[Any]:
        """Return the start state (parsing its text; raises InvalidPositionError if malformed)."""
        if isinstance(self.start, State):
            return self.start
        return self.game.position_or_initial(self.start)


@dataclass(frozen=True, slots=True)
class Result:
    """How a match ended: the winner (0, 1, or None for a draw or an abort), a code, and words."""

    winner: int | None
    code: ResultCode
    reason: str


# -- effects -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    """An accepted event, to be stored in order; `Referee.restore` replays a list of them.

    `elapsed_ms` is the time from the start of the current turn to the event (for a move, the
    time charged to the mover; 0 for events before the start). `move` is the move's standard
    text for a move, the rejected text for a forfeit, and the reason for an adjudication, whose
    `player` is the winner (None: a draw), and for a bot failure, whose `player` is the loser.
    """

    seq: int
    kind: EventKind
    player: int | None = None
    move: str | None = None
    elapsed_ms: int = 0


@dataclass(frozen=True, slots=True)
class MatchStarted:
    """The match started; `to_move` moves first, with the clocks given (None: untimed)."""

    seq: int
    to_move: int
    clocks_ms: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class MoveAccepted:
    """A move was played: everything a move record needs.

    `ply` counts from 1; `move` is the standard text (a short form sent by the player is
    expanded); `elapsed_ms` was charged to `player`; `clocks_ms` are both clocks after the move
    and its increment; `position` is the new position's text.
    """

    seq: int
    ply: int
    player: int
    move: str
    elapsed_ms: int
    clocks_ms: tuple[int, int] | None
    position: str


@dataclass(frozen=True, slots=True)
class DrawOffered:
    """`player` offers a draw; the offer stands until answered or until the opponent moves."""

    seq: int
    player: int


@dataclass(frozen=True, slots=True)
class DrawDeclined:
    """`player` declined the opponent's draw offer."""

    seq: int
    player: int


@dataclass(frozen=True, slots=True)
class MatchEnded:
    """The match is over (finished or aborted), with its result and the final clocks."""

    seq: int
    status: Status
    result: Result
    clocks_ms: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class Rejected:
    """A call by `player` was refused and the match is unchanged; send this to `player` only.

    `action` names the call ("move", "resign", ...); `text` is the move text sent, if any;
    `legal_moves` are the legal moves of the current position (empty when none can be played);
    `rejections` is the player's count of rejected moves after this one (illegal and unreadable
    moves and moves out of turn count; the limit is `MatchConfig.max_illegal_moves`).
    """

    player: int
    action: str
    code: ErrorCode
    reason: str
    legal_moves: tuple[str, ...] = ()
    text: str | None = None
    rejections: int = 0


Effect = Event | MatchStarted | MoveAccepted | DrawOffered | DrawDeclined | MatchEnded | Rejected


@dataclass(frozen=True, slots=True)
class MatchView:
    """The full state of a match as of one moment, as a server sends it to players and watchers.

    Clocks are in ms as of that moment (the side to move's clock running down; never below 0);
    `to_move` is None once the match is over; `draw_offer` is the player whose offer stands.
    """

    game: str
    start_position: str
    position: str
    moves: tuple[str, ...]
    to_move: int | None
    clocks_ms: tuple[int, int] | None
    legal_moves: tuple[str, ...]
    status: Status
    result: Result | None
    seq: int
    illegal_counts: tuple[int, int]
    draw_offer: int | None
    time_control: TimeControl | None
