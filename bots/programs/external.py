"""Play an engine that speaks Arena's engine protocol (docs/ENGINES.md) as an Arena bot.

The engine is any program, in any language, that reads commands on its stdin and answers on
its stdout, one line each, as UCI does for chess: a handshake (`arena 1` -> `id ...`,
`option ...`, `games ...`, `arenaok 1`), then per game `newgame GAME [OPTIONS]` and
`isready` -> `readyok`, and per move `position ...` and `go ...` -> `info ...` lines and
`bestmove MOVE`. It runs in a child process of its own (bots.programs.child, the channel every bot
run as a child process shares): a fresh one per bot, so per game in a tournament.

A Python plug-in (bots.plugin) is played the same way: bots/programs/pyhost.py speaks the protocol
for it. Every failure is an EngineError quoting the engine: its `error` line, the line it should
not have written, its exit status or signal with its last words on stderr, or the move it
played that is not legal here.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bots.programs.child import ChildProcess, EngineError, Starter
from bots.result import Clock, SearchResult, SearchStats, Stop
from games import Game, GameError, State

PROTOCOL_VERSION: Final = 1
"""The version of the protocol Arena speaks: its first line to an engine is `arena 1`."""

OPTION_KINDS: Final = ("int", "float", "bool", "string")
_TRUE: Final = ("on", "true", "yes", "1")
_FALSE: Final = ("off", "false", "no", "0")


@dataclass(frozen=True, slots=True)
class EngineOption:
    """One option an engine declared: its name, type, default and bounds."""

    name: str
    kind: str
    default: str
    minimum: float | None = None
    maximum: float | None = None

    def describe(self) -> str:
        """The option as a message lists it: `depth (int, default 3)`."""
        return f"{self.name} ({self.kind}, default {self.default})"

    def convert(self, text: str) -> str:
        """Return `text` as the protocol sends this option's value; EngineError if invalid."""
        raw = text.strip()
        if self.kind == "bool":
            if raw.lower() in _TRUE:
                return "true"
            if raw.lower() in _FALSE:
                return "false"
            raise EngineError(f"option {self.name} must be on or off, not {text!r}")
        if self.kind in ("int", "float"):
            try:
                value = int(raw) if self.kind == "int" else float(raw)
            except ValueError:
                kind = "a whole number" if self.kind == "int" else "a number"
                raise EngineError(f"option {self.name} must be {kind}, not {text!r}") from None
            if self.minimum is not None and value < self.minimum:
                raise EngineError(f"option {self.name} must be at least {self.minimum:g}")
            if self.maximum is not None and value > self.maximum:
                raise EngineError(f"option {self.name} must be at most {self.maximum:g}")
            return str(value)
        return raw


@dataclass(slots=True)
class Identity:
    """What an engine says of itself in the handshake."""

    name: str = ""
    author: str = ""
    version: str = ""
    options: dict[str, EngineOption] = field(default_factory=dict)
    games: tuple[str, ...] | None = None


def parse_option(line: str) -> EngineOption:
    """Read `option name N type T [default D] [min M] [max M]`; EngineError if malformed."""
    tokens = line.split()
    fields: dict[str, str] = {}
    index = 1
    while index < len(tokens):
        key = tokens[index]
        if key not in ("name", "type", "default", "min", "max") or index + 1 >= len(tokens):
            raise EngineError(f"the engine declared an option Arena cannot read: {line!r}")
        if key == "default":
            # A string's default runs to the next keyword (it may hold spaces); "" if none.
            end = index + 1
            while end < len(tokens) and tokens[end] not in ("min", "max", "name", "type"):
                end += 1
            fields[key] = " ".join(tokens[index + 1 : end])
            index = end
            continue
        fields[key] = tokens[index + 1]
        index += 2
    if "name" not in fields or fields.get("type") not in OPTION_KINDS:
        raise EngineError(
            f"the engine declared an option without a name or a type of "
            f"{', '.join(OPTION_KINDS)}: {line!r}"
        )
    try:
        minimum = float(fields["min"]) if "min" in fields else None
        maximum = float(fields["max"]) if "max" in fields else None
    except ValueError:
        raise EngineError(f"the engine declared bounds that are no numbers: {line!r}") from None
    return EngineOption(fields["name"], fields["type"], fields.get("default", ""), minimum, maximum)


@dataclass(slots=True)
class Info:
    """What an engine's `info` lines of one search said, the later overriding the earlier."""

    depth: int = 0
    nodes: int = 0
    score: float = math.nan
    pv: list[str] = field(default_factory=list)
    last: str = ""

    def read(self, line: str) -> None:
        """Take in one `info` line (unknown keys and malformed numbers are skipped)."""
        self.last = line
        tokens = line.split()[1:]
        index = 0
        while index < len(tokens):
            key = tokens[index]
            if key in ("pv", "string"):
                if key == "pv":
                    self.pv = tokens[index + 1 :]
                break
            value = tokens[index + 1] if index + 1 < len(tokens) else ""
            try:
                if key == "depth":
                    self.depth = int(value)
                elif key == "nodes":
                    self.nodes = int(value)
                elif key == "score":
                    self.score = float(value)
            except ValueError:
                pass
            index += 2


class ProtocolEngine:
    """One engine process after its handshake: its identity and declared options.

    `command` is the engine's arguments, or a Starter (bots.programs.child) that starts it: a
    program in a sandbox, say. `verbatim` (a host of Arena's own, bots/programs/pyhost.py): an
    `error` line before `arenaok` is the whole message. Raises EngineError when the engine
    cannot be started or its handshake fails. The process ends with `close()` (`quit`), or
    when this object is collected.
    """

    def __init__(
        self,
        command: Sequence[str] | Starter,
        clock: Clock,
        *,
        what: str,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        verbatim: bool = False,
    ) -> None:
        self.what = what
        self.clock = clock
        self._child = ChildProcess(
            command, clock, what=what, cwd=cwd, env=env, keep_stderr=True, farewell="quit"
        )
        self.identity = Identity()
        self._child.send(f"arena {PROTOCOL_VERSION}")
        while True:
            line = self._next(starting=True)
            word = line.split(maxsplit=1)[0]
            if word == "error":
                self.close()
                text = line[len("error") :].strip()
                raise EngineError(text if verbatim else f"{what} refused to start: {text!r}")
            if word == "arenaok":
                self._check_version(line)
                break
            self._read_handshake(line, word)

    def _check_version(self, line: str) -> None:
        version = line.split()[1:2]
        if version != [str(PROTOCOL_VERSION)]:
            self.close()
            raise EngineError(
                f"{self.what} speaks protocol version {' '.join(version) or '(none)'}, "
                f"Arena speaks {PROTOCOL_VERSION}: it answered {line!r}"
            )

    def _read_handshake(self, line: str, word: str) -> None:
        identity = self.identity
        if word == "id":
            parts = line.split(maxsplit=2)
            if len(parts) == 3 and parts[1] in ("name", "author", "version"):
                setattr(identity, parts[1], parts[2].strip())
                return
        elif word == "option":
            option = parse_option(line)
            identity.options[option.name.lower()] = option
            return
        elif word == "games":
            identity.games = tuple(line.split()[1:])
            return
        self.close()
        raise EngineError(f"{self.what} answered {line!r} to `arena {PROTOCOL_VERSION}`")

    def _next(self, **wait: Any) -> str:
        """The next line that is not empty (an `info string` only of the handshake)."""
        while True:
            line = self._child.read_line(**wait).strip()
            if line:
                return line

    def close(self) -> None:
        """Say `quit` and end the process."""
        self._child.close()

    def configure(self, options: Mapping[str, str]) -> None:
        """Send `setoption` for each of the spec's engine options; EngineError naming any
        option the engine did not declare or a value it cannot take."""
        declared = self.identity.options
        for key, text in options.items():
            option = declared.get(key.lower())
            if option is None:
                known = ", ".join(o.describe() for o in declared.values()) or "none"
                raise EngineError(f"{self.what} has no option {key!r} (its options: {known})")
            self._child.send(f"setoption name {option.name} value {option.convert(text)}")

    def new_game(self, game: Game) -> None:
        """Say `newgame` and wait for `readyok`; EngineError if the engine does not play `game`."""
        games = self.identity.games
        if games is not None and game.name not in games:
            raise EngineError(f"{self.what} plays {', '.join(games) or 'no game'}, not {game.name}")
        options = " ".join(f"{key}={value}" for key, value in game.option_texts.items())
        self._child.send(f"newgame {game.name}" + (f" {options}" if options else ""))
        self._child.send("isready")
        line = self._next(starting=True)
        if line != "readyok":
            raise EngineError(self._unexpected(line, "readyok"))

    def go(
        self,
        position: str,
        *,
        movetime: float | None,
        depth: int,
        nodes: int,
        stop: Stop | None,
    ) -> tuple[str, Info]:
        """Search `position` (a `position ...` command): return the bestmove text and info.

        The engine is told to `stop` at `movetime` (seconds) or once `stop` returns True, and
        killed GRACE_SECONDS (bots.programs.child) later.
        """
        child = self._child
        started = self.clock()
        limits = []
        if movetime is not None:
            limits.append(f"movetime {max(1, round(movetime * 1000))}")
        if depth:
            limits.append(f"depth {depth}")
        if nodes:
            limits.append(f"nodes {nodes}")
        child.send(position)
        child.send(" ".join(["go", *limits]))
        info = Info()
        answer_at = None if movetime is None else started + movetime
        while True:
            line = self._next(answer_at=answer_at, stop=stop, tell=lambda: child.send("stop"))
            word = line.split(maxsplit=1)[0]
            if word == "info":
                info.read(line)
            elif word == "bestmove" and len(line.split()) >= 2:
                return line.split()[1], info
            else:
                raise EngineError(self._unexpected(line, "info or bestmove"))

    def _unexpected(self, line: str, expected: str) -> str:
        if line.startswith("error"):
            return f"{self.what} said {line!r}"
        return f"{self.what} answered {line!r} where the protocol has {expected}"


def split_command(text: str) -> list[str]:
    """Return a `cmd:` spec's command as its arguments (shell quoting); EngineError if empty
    or unbalanced."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise EngineError(f"cannot read the command {text!r}: {exc}") from None
    if not argv:
        raise EngineError("the command is empty")
    return argv


class ExternalBot:
    """A search that asks a protocol engine for each move of one game.

    `seconds` per move (0: none), capped by the caller's budget, is sent as `go movetime`;
    `depth` and `nodes` (0: none) go with it. Positions are sent as the game's position text
    and, while the game runs in sequence, the moves since the first position the bot saw.
    """

    def __init__(
        self, engine: ProtocolEngine, game: Game, seconds: float, depth: int, nodes: int
    ) -> None:
        self.engine = engine
        self.game = game
        self.seconds = seconds
        self.depth = depth
        self.nodes = nodes
        self._start = ""
        self._moves: list[str] = []
        self._after: State[Any] | None = None
        engine.new_game(game)

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        """Return the engine's move for `state` with the statistics it reported."""
        clock = self.engine.clock
        started = clock()
        self._follow(state)
        position = f"position {self._start}"
        if self._moves:
            position += " moves " + " ".join(self._moves)
        limits = [t for t in (self.seconds or None, budget) if t is not None]
        text, info = self.engine.go(
            position,
            movetime=min(limits) if limits else None,
            depth=self.depth,
            nodes=self.nodes,
            stop=stop,
        )
        try:
            move = state.parse_move(text)
            state.apply(move)
        except GameError as exc:
            said = f" (its last info: {info.last!r})" if info.last else ""
            raise EngineError(
                f"{self.engine.what} played {text!r}{said}, which is no legal move here: {exc}"
            ) from None
        self._moves.append(state.format_move(move))
        self._after = state.apply_unchecked(move)
        stats = SearchStats(nodes=info.nodes, depth=info.depth, pv=list(info.pv))
        stats.seconds = clock() - started
        return SearchResult(move, info.score, _pv(state, info.pv) or [move], stats)

    def _follow(self, state: State[Any]) -> None:
        """Set the position to send: the moves so far when `state` follows the engine's last
        move by one move of the opponent, else `state` itself as the game writes it."""
        after = self._after
        if after is not None and not after.is_terminal() and after.to_move != state.to_move:
            key = state.key()
            for move in after.legal_moves():
                if after.apply_unchecked(move).key() == key:
                    self._moves.append(after.format_move(move))
                    return
        self._moves = []
        if state == self.game.initial_state():
            self._start = "startpos"
        else:
            self._start = "fen " + self.game.format_position(state)


def _pv(state: State[Any], texts: Sequence[str]) -> list[Any]:
    """The principal variation as moves, as far as its texts are legal moves in sequence."""
    moves = []
    for text in texts:
        if state.is_terminal():
            break
        try:
            move = state.parse_move(text)
            state = state.apply(move)
        except GameError:
            break
        moves.append(move)
    return moves
