"""Bot specs: one string names a bot and its options, e.g. `alphabeta:depth=6,eval=material`.

Every tool (CLI, server, tournaments, autograder) names bots this way. A spec is the bot's
name, then optionally `:` and comma-separated `key=value` options; options have defaults, and
an unknown bot, option or value is a `BotSpecError` that lists what exists.

A bot that runs a program of this machine names it first, without a key: `cb:/path/engine.so`
or `cb:/path/engine.so:time=0.1` (the path runs to the last `:` that is followed by options;
bots.programs.cbapi), `cmd:./mybot --fast:time=0.1` (an engine speaking docs/ENGINES.md's protocol;
a command holding `:` and `=` is put in double quotes, `cmd:"./mybot --x=a:b":time=0.1`),
`py:./mybot.py:MyBot:depth=3` (a Python plug-in, bots.plugin) or `engine:NAME` (an engine of a
JSON file). Engines and plug-ins declare options of their own: keys beyond Arena's limits
are passed to them as text. Such bots are local: `check_limits` refuses them, so a host never
runs them.

Which bots exist, their options and how each searches is declared once, in `bots.registry`;
this module reads specs against it, checks a host's limits from its option metadata, and builds
bots: it hands them the clock and random generator (it is the one place in bots/ that names
`time.perf_counter`, as the default clock).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bots.egdb import DatabaseError
from bots.evaluation import Knowledge
from bots.evaluation.knowledge import knowledge_for
from bots.player import Option, Player, Setup
from bots.programs.child import EngineError
from bots.registry import LOCAL_PLAYERS, PLAYERS
from bots.result import Clock, SearchResult, Stop
from games import Game, State


class BotSpecError(ValueError):
    """A bot spec that names no bot, an unknown option, or a bad option value."""


MAX_NUMBER_LENGTH = 32
"""Most characters of a number in a spec: anything longer is refused before it is converted."""


Chooser = Callable[[State[Any], float | None, Stop | None], SearchResult]
"""A bot's search: (state, time budget in seconds or None, stop or None) -> its result."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A parsed bot spec: the bot's name and every option's value (defaults filled in)."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        """The canonical spec text, naming only the options that differ from the defaults."""
        player = _player(self.name)
        schema = player.options
        changed = [
            f"{key}={spec_value(value)}"
            for key, value in self.options.items()
            if key not in schema or (value != schema[key].default and key != player.positional)
        ]
        text = self.name
        if player.positional is not None:
            first = str(self.options[player.positional])
            if '"' not in first and ((":" in first and "=" in first) or first != first.strip()):
                first = f'"{first}"'
            text += ":" + first
        return text + (":" + ",".join(changed) if changed else "")


def _player(name: str) -> type[Player]:
    return PLAYERS[name] if name in PLAYERS else LOCAL_PLAYERS[name]


def _bot_names() -> str:
    """The bots an unknown name's error lists: a host's (a local bot is named in the docs)."""
    return ", ".join(PLAYERS)


def format_number(value: float) -> str:
    """Return a bound as people write it: digits grouped (1,000,000,000, never 1e+09), and a
    fraction only when there is one (0.5)."""
    # round(), not int(): a whole number of any size, and no call of the int converter.
    if math.isfinite(value) and value == round(value):
        return f"{round(value):,}"
    return f"{value:,.10g}"


def spec_value(value: Any) -> str:
    """Return an option's value as a spec writes it (`on`/`off` for a bool)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _convert(bot: str, key: str, option: Option, text: str) -> Any:
    raw = text.strip()
    if option.kind in ("int", "float") and len(raw) > MAX_NUMBER_LENGTH:
        raise BotSpecError(
            f"{bot} option {key} is a number of {len(raw)} characters; "
            f"at most {format_number(option.maximum)} is allowed"
            if option.maximum is not None
            else f"{bot} option {key} is a number of {len(raw)} characters, too long"
        )
    try:
        if option.kind == "int":
            value: Any = int(raw)
        elif option.kind == "float":
            value = float(raw)
            if not math.isfinite(value):
                raise ValueError(raw)
        elif option.kind == "bool":
            lowered = raw.lower()
            if lowered in ("on", "true", "yes", "1"):
                return True
            if lowered in ("off", "false", "no", "0"):
                return False
            raise ValueError(raw)
        else:
            if not raw:
                raise ValueError(raw)
            return raw
    except ValueError:
        expected = {"int": "a whole number", "float": "a number", "bool": "on or off"}
        raise BotSpecError(
            f"{bot} option {key} must be {expected.get(option.kind, 'a name')}, not {text!r}"
        ) from None
    if option.minimum is not None and value < option.minimum:
        raise BotSpecError(
            f"{bot} option {key} must be at least {format_number(option.minimum)}, not {value}"
        )
    if option.maximum is not None and value > option.maximum:
        raise BotSpecError(
            f"{bot} option {key} must be at most {format_number(option.maximum)}, not {value}"
        )
    return value


def parse_bot_spec(text: str) -> BotSpec:
    """Return the BotSpec written as `text`, raising BotSpecError naming what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise BotSpecError(f"empty bot spec (bots: {_bot_names()})")
    name, colon, rest = text.strip().partition(":")
    name = name.strip().lower()
    if name not in PLAYERS and name not in LOCAL_PLAYERS:
        raise BotSpecError(f"unknown bot {name!r} (bots: {_bot_names()})")
    player = _player(name)
    schema = player.options
    options = {key: option.default for key, option in schema.items()}
    seen: set[str] = set()
    if player.positional is not None:
        key = player.positional
        value, colon, rest = _split_positional(rest)
        if not value.strip():
            raise BotSpecError(
                f"{name} needs its {key} first: write {name}:{key.upper()} or "
                f"{name}:{key.upper()}:KEY=VALUE,KEY=VALUE"
            )
        options[key] = _convert(name, key, schema[key], value)
        seen.add(key)
    items = [part.strip() for part in rest.split(",")] if colon else []
    if "" in items:
        raise BotSpecError(
            f"bot spec {text.strip()!r} has an empty option: write {name} or "
            f"{name}:KEY=VALUE,KEY=VALUE with nothing empty between the commas"
        )
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep:
            raise BotSpecError(f"{name} option {item!r} needs a value: write {key}=VALUE")
        if key not in schema and player.open_options:
            if key in seen:
                raise BotSpecError(f"{name} option {key} is given twice")
            seen.add(key)
            options[key] = value.strip()
            continue
        if key not in schema:
            known = ", ".join(f"{k} (default {spec_value(o.default)})" for k, o in schema.items())
            raise BotSpecError(f"{name} has no option {key!r} (options: {known})")
        if key in seen:
            raise BotSpecError(f"{name} option {key} is given twice")
        seen.add(key)
        options[key] = _convert(name, key, schema[key], value)
    return BotSpec(name, options)


def _split_positional(rest: str) -> tuple[str, str, str]:
    """Split `PATH[:OPTIONS]` at the last `:` whose tail holds an `=` (PATH may hold `:`).

    A PATH in double quotes runs to the closing quote: `"./bot --x=a:b":time=1`.
    """
    stripped = rest.strip()
    if stripped.startswith('"'):
        end = stripped.find('"', 1)
        if end < 0:
            raise BotSpecError(f'the quote in {rest!r} is not closed: write "..."')
        after = stripped[end + 1 :]
        if after and not after.startswith(":"):
            raise BotSpecError(f"{rest!r}: after the closing quote comes : and the options")
        return stripped[1:end], ":" if after else "", after[1:]
    head, colon, tail = rest.rpartition(":")
    if colon and "=" in tail:
        return head, colon, tail
    return rest, "", ""


@dataclass(frozen=True, slots=True)
class SearchLimits:
    """A host's maxima for the searches of the bots it runs (the server's house bots).

    Each bot option names the field that bounds it (`bots.registry.Option.limit`): `depth`
    bounds the fixed-depth searches, and id when neither its time nor its nodes do;
    `simulations` bounds mcts by count; `seconds` every time option; `nodes` id's node count.
    """

    depth: int
    simulations: int
    seconds: float
    nodes: int


def refuse_local(spec: BotSpec) -> None:
    """Raise BotSpecError when `spec` runs a program from this machine's disk.

    `cb:`, `cmd:`, `py:` and `engine:` are for local runs: whatever a host reads from others
    (a client's spec, a suite file) must not name a program for it to run.
    """
    if spec.name in LOCAL_PLAYERS:
        raise BotSpecError(
            f"{spec.name} runs a program from this machine's disk: a host runs only its own "
            f"bots ({', '.join(PLAYERS)})"
        )


def check_limits(spec: BotSpec, limits: SearchLimits) -> None:
    """Raise BotSpecError naming the option and the maximum unless `spec` is within `limits`.

    Every search must end within a bound the host allows: a depth, a count or a time. Options
    that bound nothing (an id's depth under a time limit: `Option.unless`) are not checked.
    """
    refuse_local(spec)
    for key, option in PLAYERS[spec.name].options.items():
        if option.limit is None or any(spec.options[other] for other in option.unless):
            continue
        maximum = getattr(limits, option.limit)
        if spec.options[key] > maximum:
            raise BotSpecError(
                f"{spec.name} option {key} is {spec_value(spec.options[key])}, more than "
                f"this host's maximum of {format_number(maximum)}"
            )


class Bot:
    """A bot made from a spec for one game: `choose(state)` returns its move and statistics.

    `time_budget` (seconds) caps the time of time-limited bots (`id`, `mcts:time=...`), for
    example from the clock of a match; depth- and count-limited bots ignore it. `stop` is asked
    every so often during the search (every 64 nodes, or every simulation): once it returns
    True the search ends within milliseconds, returning its best move so far or, when it has
    none (the fixed-depth searches: minimax, alphabeta), raising SearchStopped.
    `engine_name` is what a program behind the bot (an engine, a plug-in) said it is, name and
    version, for game records; None for Arena's own bots.
    """

    def __init__(
        self,
        spec: BotSpec,
        game: Game,
        chooser: Chooser,
        *,
        judges: bool = True,
        engine_name: str | None = None,
    ) -> None:
        self.spec = spec
        self.game = game
        self._chooser = chooser
        self._judges = judges
        self.engine_name = engine_name

    @property
    def name(self) -> str:
        """The canonical spec text."""
        return str(self.spec)

    def choose(
        self, state: State[Any], *, time_budget: float | None = None, stop: Stop | None = None
    ) -> SearchResult:
        """Return the bot's move for `state` (which must not be terminal) with its statistics."""
        if state.is_terminal():
            raise ValueError("the game is over: there is no move to choose")
        return self._chooser(state, time_budget, stop)

    def accepts_draw(self, result: SearchResult, *, to_move: bool) -> bool:
        """Return True when the bot accepts a draw offered in the position `result` searched.

        Arena's bots accept when their search scores the position a draw or worse for them (a
        score of 0 or less from their side; a proven loss or draw included), and decline
        otherwise: a bot that sees itself ahead plays on. `to_move` says whether the bot was
        the side to move at the root (the score is the mover's). A bot whose score says
        nothing of the position (random) declines every offer.
        """
        if not self._judges:
            return False
        score = result.score if to_move else -result.score
        return score <= 0  # False for a NaN score, which says nothing either

    def __repr__(self) -> str:
        return f"<Bot {self.name} for {self.game.name}>"


def create_bot(
    spec: str | BotSpec,
    game: Game,
    *,
    clock: Clock = time.perf_counter,
    rng: random.Random | None = None,
    knowledge: Knowledge | None = None,
) -> Bot:
    """Return the bot `spec` names, for `game`, on `clock`.

    `rng` overrides the generator built from the spec's `seed`; `knowledge` the game's
    knowledge (e.g. with more evaluations to name in `eval`). Raises BotSpecError for a bad
    spec or an evaluation the game does not have.
    """
    parsed = parse_bot_spec(spec) if isinstance(spec, str) else spec
    options = parsed.options
    if knowledge is None:
        knowledge = knowledge_for(game)
    setup = Setup(
        game=game,
        knowledge=knowledge,
        evaluate=_evaluation(knowledge, options.get("eval"), parsed.name),
        clock=clock,
        rng=rng if rng is not None else random.Random(options.get("seed", 0)),
    )
    try:
        player = _player(parsed.name)(options, setup)
    except (DatabaseError, EngineError) as exc:
        raise BotSpecError(f"{parsed.name}: {exc}") from None
    return Bot(parsed, game, player.choose, judges=player.judges, engine_name=player.engine_name)


def _evaluation(knowledge: Knowledge, name: str | None, bot: str) -> Callable[[State[Any]], float]:
    try:
        return knowledge.evaluation(name).function
    except ValueError as exc:
        raise BotSpecError(f"{bot}: {exc}") from None


def describe_bots() -> list[tuple[str, str, list[tuple[str, str, str]]]]:
    """Return (bot, description, [(option, default, help)]) for every bot, for help screens.

    An option without a default value (None: the help says what is used) has "" as default.
    """
    return [
        (
            name,
            player.description,
            [
                (key, "" if o.default is None else spec_value(o.default), o.help)
                for key, o in player.options.items()
            ],
        )
        for name, player in PLAYERS.items()
    ]
