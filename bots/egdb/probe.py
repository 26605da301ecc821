"""Reading the endgame database: the value, distance and best moves of a checkers position."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from bots.egdb import DatabaseError
from bots.egdb.index import Signature, flip_one, rank_one
from bots.egdb.store import load_table, read_manifest
from bots.result import Clock, no_clock
from bots.scoring import WIN
from bots.solvers.solution import Progress, Solution
from bots.solvers.solve import DEFAULT_CHECKERS_PLIES, Solver
from games import State
from games.checkers import BLACK, DRAW_PLIES, CheckersMove, CheckersState

ENV_DIRECTORY: Final = "ARENA_EGDB_DIR"
"""The environment setting naming the database directory."""


def default_directory(environ: dict[str, str] | None = None) -> Path:
    """Return the database directory: $ARENA_EGDB_DIR, else the user's data directory
    ($XDG_DATA_HOME or ~/.local/share) / arena / egdb."""
    env = dict(os.environ) if environ is None else environ
    if env.get(ENV_DIRECTORY):
        return Path(env[ENV_DIRECTORY]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path("~/.local/share").expanduser())
    return Path(base) / "arena" / "egdb"


@dataclass(frozen=True, slots=True)
class Entry:
    """A position's value for its side to move: "win", "loss" or "draw", and for a win or a
    loss the number of plies to the end under best play (the winner hurrying, the loser
    resisting; the 80-ply rule and repetitions ignored)."""

    value: str
    plies: int | None

    @classmethod
    def of(cls, v: int) -> Entry:
        """Decode a stored value (bots.egdb.solve)."""
        if v == 0:
            return cls("draw", None)
        return cls("loss" if v % 2 == 1 else "win", v - 1)

    def score(self, win: float = WIN) -> float:
        """The engine score: win - plies for a win, plies - win for a loss, 0 for a draw."""
        if self.plies is None:
            return 0.0
        return win - self.plies if self.value == "win" else self.plies - win


def oriented(state: CheckersState) -> tuple[Signature, int, int, int, int]:
    """Return the signature and mover-oriented bitboards (men, kings, men, kings) of `state`."""
    kings = state.kings
    if state.turn == BLACK:
        mover, other = state.black, state.white
        mm, mk, om, ok = mover & ~kings, mover & kings, other & ~kings, other & kings
    else:
        mover, other = state.white, state.black
        mm, mk = flip_one(mover & ~kings), flip_one(mover & kings)
        om, ok = flip_one(other & ~kings), flip_one(other & kings)
    sig = Signature(mm.bit_count(), mk.bit_count(), om.bit_count(), ok.bit_count())
    return sig, mm, mk, om, ok


class Database:
    """A built database directory, opened for probing (tables memory-mapped on first use)."""

    def __init__(self, directory: Path) -> None:
        if not (directory / "manifest.json").exists():
            raise DatabaseError(
                f"no endgame database in {directory}: build one with `arena egdb build`"
            )
        self.directory = directory
        self.manifest = read_manifest(directory)
        self.pieces = self.manifest.pieces
        # A build in progress already answers for the signatures it finished.
        self.max_pieces = max((sig.pieces for sig in self.manifest.signatures), default=0)
        self._tables: dict[Signature, npt.NDArray[np.uint8]] = {}

    def covers(self, state: CheckersState) -> bool:
        """True when the database holds `state`'s material."""
        return self.raw(state) is not None

    def raw(self, state: CheckersState) -> int | None:
        """Return the stored value of `state` (bots.egdb.solve), or None if not covered."""
        sig, mm, mk, om, ok = oriented(state)
        if sig.mover_men + sig.mover_kings == 0:
            return 1
        table = self._tables.get(sig)
        if table is None:
            info = self.manifest.signatures.get(sig)
            if info is None:
                return None
            table = self._tables[sig] = load_table(self.directory, sig, info)
        return int(table[rank_one(sig, mm, mk, om, ok)])

    def probe(self, state: CheckersState) -> Entry | None:
        """Return the value and distance of `state` for its side to move, or None."""
        v = self.raw(state)
        return None if v is None else Entry.of(v)

    def best_moves(self, state: CheckersState) -> list[CheckersMove]:
        """Return every move that keeps the best value at the best distance (none if the
        game is over or the position is not covered)."""
        if self.raw(state) is None:
            return []
        scored: list[tuple[float, CheckersMove]] = []
        for move in state.legal_moves():
            child = self.probe(state.apply_unchecked(move))
            if child is None:
                return []
            scored.append((-child.score(), move))
        if not scored:
            return []
        best = max(score for score, _ in scored)
        return [move for score, move in scored if score == best]

    def engine_score(self, state: State[Any]) -> float | None:
        """The exact score of `state` on the engine's scale (as at ply 0), or None.

        The tables ignore the 80-ply rule, which can only turn a result into a draw. A draw is
        therefore exact whatever the counter says; a win or a loss is exact only when it ends
        before the rule could apply even if no capture or man move came first (`quiet` plus
        its distance at most DRAW_PLIES). A longer one is left to the search (None): late in a
        capture-free run the database's win may be a draw under the rules.
        """
        if not isinstance(state, CheckersState):
            return None
        if (state.black | state.white).bit_count() > self.max_pieces:
            return None
        entry = self.probe(state)
        if entry is None:
            return None
        if entry.plies is not None and state.quiet + entry.plies > DRAW_PLIES:
            return None
        return entry.score()


class DatabaseSolver(Solver):
    """A `Solver` that answers checkers positions the database holds from the database.

    Same answers as the proof search, found at once: a win or loss within `max_plies` (default
    30) with every optimal move, else "unknown" with the limit "plies" (a draw, or a longer
    result). Used only where the rules cannot differ from the database: the position starts a
    fresh run of capture-free plies (no repetition history) and the result comes within the
    80-ply rule. Anything else goes to the proof search.
    """

    def __init__(self, database: Database, *, clock: Clock = no_clock) -> None:
        super().__init__(clock=clock)
        self.database = database

    def solve(
        self,
        state: State[Any],
        *,
        max_plies: int | None = None,
        deadline: float | None = None,
        max_nodes: int | None = None,
        progress: Progress | None = None,
    ) -> Solution:
        """Return the value of `state` (see `Solver.solve`), from the database when it can."""
        limit = max_plies or DEFAULT_CHECKERS_PLIES
        entry = None
        if isinstance(state, CheckersState) and state.quiet == 0 and not state.is_terminal():
            entry = self.database.probe(state)
        if entry is None or (entry.plies is not None and entry.plies > DRAW_PLIES):
            return super().solve(
                state,
                max_plies=max_plies,
                deadline=deadline,
                max_nodes=max_nodes,
                progress=progress,
            )
        assert isinstance(state, CheckersState)
        if entry.plies is None or entry.plies > limit:
            return Solution(
                "unknown", 0, None, lower=-1, upper=1, method="egdb", limit="plies", depth=limit
            )
        score = 1 if entry.value == "win" else -1
        moves: list[Any] = list(self.database.best_moves(state))
        return Solution(
            entry.value, score, entry.plies, moves, lower=score, upper=score, method="egdb"
        )
