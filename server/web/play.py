"""Playing in the browser: the lobby's "play a house bot" form, and where a browser's guest sits.

The form's choices (house bots with a strength hint, time controls, colours) and reading it
into the same `MatchCreate` as `POST /matches` live here, apart from the routes
(server.routes.web_play) that call the match service with it, so the pages' templates and
the tests read one list.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pydantic import ValidationError

from bots.spec import BotSpecError, check_limits, parse_bot_spec
from games import game_names
from protocol.messages import HouseBot, MatchCreate, MatchState, TimeControl
from server.limits.compute import search_limits
from server.settings import Settings

HOUSE_BOTS: tuple[tuple[str, str], ...] = (
    ("random", "weakest: a random legal move"),
    ("greedy", "weak: the best-looking move one ply ahead"),
    ("alphabeta:depth=2", "easy: looks two plies ahead"),
    ("alphabeta:depth=4", "medium: four plies ahead"),
    ("mcts:simulations=500", "medium: Monte Carlo tree search, 500 playouts a move"),
    ("alphabeta:depth=6", "strong: six plies ahead"),
)
"""The house bots the form offers, weakest first, each with its strength in words."""

TIME_CONTROLS: Mapping[str, tuple[str, TimeControl | None]] = MappingProxyType(
    {
        "untimed": ("untimed", None),
        "1+1": ("1 min + 1 s a move", TimeControl(base_ms=60_000, increment_ms=1_000)),
        "5+3": ("5 min + 3 s a move", TimeControl(base_ms=300_000, increment_ms=3_000)),
        "15+10": ("15 min + 10 s a move", TimeControl(base_ms=900_000, increment_ms=10_000)),
    }
)
"""The form's time controls by their value in the form: a label and the clocks (None: none)."""

COLOURS: Mapping[str, str] = MappingProxyType(
    {"first": "first to move", "second": "second", "random": "random"}
)
"""Which seat the browser's guest takes: the first to move (seat 0), the second, or either."""

PLAY_DEFAULTS: Mapping[str, str] = MappingProxyType(
    {"game": "checkers", "bot": "alphabeta:depth=2", "time_control": "untimed", "colour": "first"}
)
"""What the form holds before anyone chooses."""


@dataclass(frozen=True)
class PlayRequest:
    """What the play form asks for: a game against a house bot, the guest in `seat`."""

    game: str
    bot: str
    time_control: TimeControl | None
    seat: int

    def match_create(self, guest_name: str) -> MatchCreate:
        """Return the `POST /matches` body of this request, `guest_name` seated."""
        seats: list[str | HouseBot] = [HouseBot(bot=self.bot), HouseBot(bot=self.bot)]
        seats[self.seat] = guest_name
        return MatchCreate(
            game=self.game, time_control=self.time_control, seats=(seats[0], seats[1])
        )


def house_bot_choices(settings: Settings) -> tuple[tuple[str, str], ...]:
    """Return the house bots the form offers on this server: `HOUSE_BOTS` and the server's
    own (`settings.house_bots`), less any beyond its search maxima."""
    listed = dict(HOUSE_BOTS)
    for spec in settings.house_bots:
        listed.setdefault(spec, "offered by this server")
    limits = search_limits(settings)
    choices = []
    for spec, hint in listed.items():
        try:
            check_limits(parse_bot_spec(spec), limits)
        except BotSpecError:
            continue
        choices.append((spec, hint))
    return tuple(choices)


def read_play_form(form: Mapping[str, str], choose: int | None = None) -> PlayRequest:
    """Return the request the play form makes; ValueError saying what is wrong.

    `choose` is the guest's seat when the colour is random (None: drawn here).
    """
    game = form.get("game", "")
    if game not in game_names():
        raise ValueError(f"game: choose one of {', '.join(game_names())}")
    bot = form.get("bot", "").strip()
    try:
        HouseBot(bot=bot)
    except ValidationError:
        raise ValueError("bot: choose a house bot from the list") from None
    picked = TIME_CONTROLS.get(form.get("time_control", ""))
    if picked is None:
        raise ValueError(f"time control: choose one of {', '.join(TIME_CONTROLS)}")
    colour = form.get("colour", "")
    if colour not in COLOURS:
        raise ValueError("colour: choose first, second or random")
    if colour == "random":
        seat = secrets.randbelow(2) if choose is None else choose
    else:
        seat = 0 if colour == "first" else 1
    return PlayRequest(game=game, bot=bot, time_control=picked[1], seat=seat)


@dataclass(frozen=True)
class Viewer:
    """Where a browser's guest stands in a match: its seat, or the seat a challenge offers."""

    name: str | None = None
    seat: int | None = None
    challenged: int | None = None

    @property
    def may_join(self) -> bool:
        """True when the guest holds no seat and is not challenged (an open seat is theirs to
        take, if the match has one)."""
        return self.seat is None and self.challenged is None


def viewer_of(state: MatchState, guest_name: str | None) -> Viewer:
    """Return where the guest named `guest_name` (None: none) stands in the match `state`."""
    if guest_name is None:
        return Viewer()
    seat = next((s.seat for s in state.seats if s.player == guest_name), None)
    challenged = next((s.seat for s in state.seats if s.challenged == guest_name), None)
    return Viewer(guest_name, seat, challenged)
