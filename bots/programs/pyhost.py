"""Host a Python plug-in (bots.plugin) in a child process, speaking Arena's engine protocol.

bots.programs.external runs `python -m bots.programs.pyhost TARGET` for a `py:TARGET` bot, and then
plays it as it plays any engine (docs/ENGINES.md). TARGET is `path/to/file.py:Class`,
`package.module:Class` or the NAME of an entry point in the group `arena.bots`. The object found may
be:

- a plug-in class: a class with a `choose(state, limits)` method (bots.plugin); a file that
  defines exactly one such class (and no `select_move`) needs no `:CLASS`;
- the course's agent function, `select_move(board, player, depth_limit, time_limit)`
  returning `(move, value)` or `move` (autograder/agent.py has the contract; checkers only):
  `py:./agent.py` finds it by its name, `py:./agent.py:my_function` by another.

A target that cannot be loaded is refused with one `error` line before `arenaok`, and the
host exits. The plug-in's own printing goes to stderr, so that it cannot garble the protocol.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import IO, Any

from bots.plugin import Limits, Option, Reply
from bots.programs.external import PROTOCOL_VERSION
from bots.result import SearchResult
from games import Game, GameError, State, get_game
from games.checkers import WHITE, CheckersState, format_board, square_at

ENTRY_POINTS = "arena.bots"
"""The entry-point group where installed packages register plug-ins by name."""
COURSE_FUNCTION = "select_move"


class LoadError(Exception):
    """A target that names no plug-in: its one line is the protocol's `error`."""


def load_target(target: str) -> Any:
    """Return the object `target` names (a class or a function); LoadError if none."""
    source, colon, attribute = target.rpartition(":")
    if not colon:
        source, attribute = target, ""
    if source.endswith(".py") or "/" in source or os.sep in source:
        module = _load_file(Path(source))
        where = repr(source)
    elif colon:
        try:
            module = importlib.import_module(source)
        except ImportError as exc:
            raise LoadError(f"cannot import module {source!r}: {exc}") from None
        where = f"module {source!r}"
    else:
        return _entry_point(target)
    if not attribute:
        if hasattr(module, COURSE_FUNCTION):
            return getattr(module, COURSE_FUNCTION)
        own = _own_plugin_classes(module)
        if len(own) == 1:
            return own[0]
        listed = f" (it defines {', '.join(c.__name__ for c in own)})" if own else ""
        raise LoadError(
            f"{where} has no {COURSE_FUNCTION} function and not one plug-in class{listed}: "
            f"name the class, py:{source}:CLASS"
        )
    found = getattr(module, attribute, None)
    if found is None:
        raise LoadError(f"{where} has no {attribute!r}")
    return found


def _own_plugin_classes(module: Any) -> list[type]:
    """The classes `module` itself defines that have a `choose` method: its plug-ins."""
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and value.__module__ == module.__name__
        and callable(getattr(value, "choose", None))
    ]


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise LoadError(f"no file {str(path)!r}")
    sys.path.insert(0, str(path.resolve().parent))
    # A file named like a module already loaded (games.py, random.py) must not replace it.
    name = path.stem if path.stem not in sys.modules else f"arena_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - whatever the user's module raises, said in one line
        raise LoadError(f"cannot load {str(path)!r}: {type(exc).__name__}: {exc}") from None
    return module


def _entry_point(name: str) -> Any:
    found = importlib.metadata.entry_points(group=ENTRY_POINTS, name=name)
    if not found:
        installed = sorted(ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINTS))
        raise LoadError(
            f"no plug-in named {name!r} in the entry-point group {ENTRY_POINTS} "
            f"(installed: {', '.join(installed) or 'none'}); a file is named py:FILE.py:CLASS"
        )
    entry = next(iter(found))
    try:
        return entry.load()
    except Exception as exc:  # noqa: BLE001 - whatever the package raises, said in one line
        raise LoadError(f"cannot load plug-in {name!r} ({entry.value}): {exc}") from None


class Hosted:
    """A loaded target: builds a player for each game and answers its `go`."""

    def __init__(self, found: Any, target: str) -> None:
        self.course = inspect.isfunction(found)
        if not self.course and not (
            inspect.isclass(found) and callable(getattr(found, "choose", None))
        ):
            raise LoadError(
                f"{target} is not an Arena bot: a plug-in is a class with a choose(state, "
                f"limits) method (bots.plugin), or the course's {COURSE_FUNCTION}(board, player, "
                "depth_limit, time_limit) function"
            )
        self.found = found
        self.name = str(getattr(found, "name", None) or found.__name__)
        self.author = str(getattr(found, "author", "") or "")
        self.version = str(getattr(found, "version", "") or "")
        games = ("checkers",) if self.course else getattr(found, "games", None)
        self.games = None if games is None else tuple(games)
        options = {} if self.course else getattr(found, "options", {}) or {}
        if not isinstance(options, Mapping) or not all(
            isinstance(o, Option) for o in options.values()
        ):
            raise LoadError(f"{target}: options must map names to bots.plugin.Option")
        self.options: Mapping[str, Option] = options
        self.values: dict[str, Any] = {key: o.default for key, o in options.items()}

    def handshake(self) -> list[str]:
        """The lines that answer `arena 1`."""
        lines = [f"id name {self.name}"]
        if self.author:
            lines.append(f"id author {self.author}")
        if self.version:
            lines.append(f"id version {self.version}")
        for key, option in self.options.items():
            default = option.default
            if isinstance(default, bool):
                default = "true" if default else "false"
            line = f"option name {key} type {option.kind} default {default}"
            if option.minimum is not None:
                line += f" min {option.minimum}"
            if option.maximum is not None:
                line += f" max {option.maximum}"
            lines.append(line)
        if self.games is not None:
            lines.append("games " + " ".join(self.games))
        return [*lines, f"arenaok {PROTOCOL_VERSION}"]

    def set_option(self, key: str, text: str) -> None:
        """Take `setoption`'s value, converted to the option's type."""
        option = self.options[key]
        kind = option.kind
        if kind == "bool":
            self.values[key] = text == "true"
        elif kind == "int":
            self.values[key] = int(text)
        elif kind == "float":
            self.values[key] = float(text)
        else:
            self.values[key] = text

    def player(self) -> Callable[[State[Any], Limits], Any]:
        """A fresh player for a new game: the class built with the options, or the function."""
        if self.course:
            function = self.found
            return lambda state, limits: _course_move(function, state, limits)
        return self.found(**self.values).choose  # type: ignore[no-any-return]


def _course_move(function: Callable[..., Any], state: State[Any], limits: Limits) -> Reply:
    """Call the course's select_move on the course board and read its answer as a move."""
    assert isinstance(state, CheckersState)
    board = format_board(state).splitlines()
    player = "red" if state.to_move == WHITE else "black"
    answer = function(board, player, limits.depth, limits.movetime or 1.0)
    value: float | None = None
    if isinstance(answer, tuple | list) and len(answer) == 2 and not _is_square(answer[0]):
        answer, raw = answer
        value = float(raw) if isinstance(raw, int | float) else None
    try:
        path = tuple(square_at(int(r), int(c)) for r, c in answer)
    except (TypeError, ValueError):
        raise ValueError(
            f"{COURSE_FUNCTION} returned {answer!r}, not a list of (row, column)"
        ) from None
    for move in state.legal_moves():
        if tuple(move.path) == path:
            return Reply(move, score=value, depth=limits.depth or 0)
    raise ValueError(f"{COURSE_FUNCTION} returned {answer!r}, which is no legal move here")


def _is_square(item: Any) -> bool:
    return (
        isinstance(item, tuple | list) and len(item) == 2 and all(isinstance(x, int) for x in item)
    )


def _format(state: State[Any], move: Hashable) -> str:
    return move if isinstance(move, str) else state.format_move(move)


def answer_go(
    choose: Callable[[State[Any], Limits], Any], state: State[Any], limits: Limits
) -> list[str]:
    """Run one search and return its `info` and `bestmove` lines."""
    started = time.monotonic()
    found = choose(state, limits)
    elapsed = round((time.monotonic() - started) * 1000)
    if isinstance(found, SearchResult):
        found = Reply(
            found.move,
            None if found.score != found.score else found.score,
            found.stats.depth,
            found.stats.nodes,
            found.pv,
        )
    if not isinstance(found, Reply):
        found = Reply(found)
    if found.move is None:
        raise ValueError("choose returned no move")
    info = [f"depth {found.depth}", f"nodes {found.nodes}", f"time {elapsed}"]
    if found.score is not None:
        info.append(f"score {found.score:g}")
    pv = []
    line = state
    for move in found.pv:
        try:
            pv.append(_format(line, move))
            line = line.apply(line.parse_move(pv[-1]))
        except (GameError, ValueError, TypeError):
            break
    if pv:
        info.append("pv " + " ".join(pv))
    return ["info " + " ".join(info), f"bestmove {_format(state, found.move)}"]


def read_go(line: str, stop: Callable[[], bool]) -> Limits:
    """Read `go [movetime MS] [depth N] [nodes N]` into Limits."""
    tokens = line.split()[1:]
    values = dict(zip(tokens[::2], tokens[1::2], strict=False))
    movetime = int(values["movetime"]) / 1000 if "movetime" in values else None
    depth = int(values["depth"]) if "depth" in values else None
    nodes = int(values["nodes"]) if "nodes" in values else None
    return Limits(movetime, depth, nodes, stop)


def read_position(game: Game, line: str) -> State[Any]:
    """Read `position startpos|fen TEXT [moves ...]` into a state of `game`."""
    tokens = line.split()[1:]
    moves: list[str] = []
    if "moves" in tokens:
        at = tokens.index("moves")
        tokens, moves = tokens[:at], tokens[at + 1 :]
    if tokens[:1] == ["startpos"]:
        state = game.initial_state()
    else:
        state = game.parse_position(" ".join(tokens[1:]))
    return state.play(*moves)


def serve(target: str, replies: IO[str]) -> int:
    """Speak the protocol for `target` on stdin and `replies` until `quit` or the end of input."""
    stopped = threading.Event()
    requests: queue.Queue[str] = queue.Queue()

    def write(*lines: str) -> None:
        replies.write("".join(line + "\n" for line in lines))
        replies.flush()

    def read() -> None:
        for raw in sys.stdin:
            line = raw.strip()
            if line == "stop":
                stopped.set()
            elif line == "quit":
                break
            elif line:
                requests.put(line)
        # The parent is gone or done: end now, even in the middle of a search.
        replies.flush()
        os._exit(0)

    threading.Thread(target=read, daemon=True).start()
    first = requests.get()
    if first.split()[:1] != ["arena"]:
        write(f"error the protocol begins with `arena {PROTOCOL_VERSION}`, not {first!r}")
        return 1
    try:
        hosted = Hosted(load_target(target), target)
    except LoadError as exc:
        write(f"error {exc}")
        return 1
    write(*hosted.handshake())
    game: Game | None = None
    choose: Callable[[State[Any], Limits], Any] | None = None
    state: State[Any] | None = None
    while True:
        line = requests.get()
        word = line.split()[0]
        try:
            if word == "setoption":
                tokens = line.split(maxsplit=4)
                hosted.set_option(tokens[2], tokens[4] if len(tokens) > 4 else "")
            elif word == "newgame":
                tokens = line.split()
                options = dict(token.partition("=")[::2] for token in tokens[2:])
                game = get_game(tokens[1], options)
                choose = hosted.player()
            elif word == "isready":
                write("readyok")
            elif word == "position" and game is not None:
                state = read_position(game, line)
            elif word == "go" and choose is not None and state is not None:
                stopped.clear()
                write(*answer_go(choose, state, read_go(line, stopped.is_set)))
            else:
                write(f"error the plug-in host cannot take {line!r} here")
        except Exception as exc:  # noqa: BLE001 - the plug-in's failure, told in one line
            message = " ".join(f"{type(exc).__name__}: {exc}".split())
            write(f"error {message}")


def main(argv: list[str]) -> int:
    """Serve the target named by argv[0]: the protocol on stdout, any printing on stderr."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    if len(argv) != 1:
        replies.write("error usage: python -m bots.programs.pyhost TARGET\n")
        return 2
    return serve(argv[0], replies)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
