"""A two-bot match played pair by pair until a sequential probability ratio test decides.

The bots play colour-swapped pairs: pair k starts both its games from the same opening (the
openings dealt in the seeded order of `select_openings`, again and again), game 2k with the
first bot moving first and game 2k + 1 with the second. A pair counts once both its games
have finished; after each, the pentanomial counts (the first bot's view) give the LLR of the
test (competition.stats.sprt), and the match stops when the LLR crosses a bound, or
inconclusive after `max_games` games.

With a journal (competition.journal) every finished game is written as it ends; a rerun reads
them back and plays on. The journal records the bots, settings, test and openings, not the
cap, so a match stopped at its cap can be continued with a larger one. Games that finish
after the test has decided are neither counted nor journaled, so a rerun of a decided match
reports the same counts.

A server plays the same pairs (`pair_tasks`) as matches and counts them with `OrderedTally`:
in schedule order, so that the count is a function of the stored games alone (recomputed the
same after a restart) and the order in which games happen to finish (short games first) never
weighs on the test.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from competition.game import BotFactory, GameRecord, make_bot, play_game
from competition.journal import Journal
from competition.openings import Opening, select_openings
from competition.schedule import GameTask, TournamentError, TournamentSpec
from competition.stats.sprt import EloEstimate, SprtError, SprtTest, Verdict, elo_estimate

__all__ = [
    "SPRT_OPENINGS",
    "OrderedTally",
    "SprtError",
    "SprtProgress",
    "SprtStatus",
    "SprtTest",
    "Verdict",
    "match_identity",
    "ordered_status",
    "pair_tasks",
    "run_sprt",
]

SPRT_OPENINGS = 16
"""Seeded random openings an SPRT match deals in turn when the game has no deck (a fixed
number, so that a match continued with a larger cap plays the same openings)."""


@dataclass(frozen=True, slots=True)
class SprtStatus:
    """Where a match stands: its completed pairs, seen from the first bot.

    `pentanomial` counts pairs scoring 0, 0.5, 1, 1.5, 2; `wins`, `draws`, `losses` count the
    games of those pairs. `verdict` is None while the test runs, INCONCLUSIVE at the cap.
    """

    test: SprtTest
    bots: tuple[str, str]
    pentanomial: tuple[int, int, int, int, int]
    wins: int
    draws: int
    losses: int
    llr: float
    max_games: int
    verdict: Verdict | None

    @property
    def pairs(self) -> int:
        """Completed pairs."""
        return sum(self.pentanomial)

    @property
    def games(self) -> int:
        """Games of completed pairs."""
        return 2 * self.pairs

    def elo(self) -> EloEstimate | None:
        """Return the Elo estimate of the completed pairs (None before the first)."""
        return elo_estimate(self.pentanomial) if self.pairs else None

    def to_dict(self) -> dict[str, Any]:
        """Return the status as plain JSON values (infinite Elo ends as None)."""
        estimate = self.elo()

        def finite(value: float) -> float | None:
            return value if abs(value) != float("inf") else None

        return {
            "test": self.test.to_dict(),
            "bots": list(self.bots),
            "lower_bound": self.test.lower_bound,
            "upper_bound": self.test.upper_bound,
            "llr": self.llr,
            "pentanomial": list(self.pentanomial),
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "games": self.games,
            "max_games": self.max_games,
            "verdict": None if self.verdict is None else self.verdict.value,
            "elo": None
            if estimate is None
            else {
                "elo": finite(estimate.elo),
                "lower": finite(estimate.lower),
                "upper": finite(estimate.upper),
                "nelo": finite(estimate.nelo),
            },
        }


SprtProgress = Callable[[SprtStatus, int], None]
"""Called with the status and the number of finished games (half pairs too), at the start
and after each newly finished game."""


def _check(spec: TournamentSpec, max_games: int) -> None:
    if len(spec.bots) != 2:
        raise TournamentError(f"an SPRT match is between 2 bots, got {len(spec.bots)}")
    if max_games < 2 or max_games % 2:
        raise TournamentError(
            f"the game cap must be even and at least 2 (colour-swapped pairs), not {max_games}"
        )


def _deck(spec: TournamentSpec, openings: Sequence[Opening]) -> list[Opening]:
    if not openings:
        raise TournamentError("an SPRT match needs at least one opening")
    return select_openings(openings, len(openings), spec.seed)


def pair_tasks(spec: TournamentSpec, openings: Sequence[Opening], pairs: int) -> Iterator[GameTask]:
    """Yield the games of the first `pairs` pairs in order (see the module's docstring)."""
    deck = _deck(spec, openings)
    first, second = spec.bots[0], spec.bots[1]
    for pair in range(pairs):
        opening = deck[pair % len(deck)]
        yield GameTask(2 * pair, pair, first, second, opening)
        yield GameTask(2 * pair + 1, pair, second, first, opening)


def match_identity(
    spec: TournamentSpec, test: SprtTest, openings: Sequence[Opening]
) -> dict[str, Any]:
    """Return what a journal must match to be resumed: spec, test and the dealt openings."""
    deck = _deck(spec, openings)
    text = json.dumps([[o.name, o.position, list(o.moves)] for o in deck])
    data = spec.to_dict()
    data.pop("games_per_pairing")
    return {
        "kind": "sprt",
        "spec": data,
        "sprt": test.to_dict(),
        "openings": hashlib.sha256(text.encode()).hexdigest(),
    }


class _Tally:
    """The games finished so far and the test's state on the completed pairs."""

    def __init__(self, spec: TournamentSpec, test: SprtTest, max_games: int) -> None:
        self.spec = spec
        self.test = test
        self.max_games = max_games
        self.games: dict[int, GameRecord] = {}
        self.penta = [0] * 5
        self.wdl = [0, 0, 0]
        self.llr = 0.0
        self.verdict: Verdict | None = None

    def add(self, record: GameRecord) -> None:
        self.games[record.index] = record
        partner = self.games.get(record.index ^ 1)
        if partner is None:
            return
        first = self.spec.bots[0]
        self.add_pair(record.score_of(first), partner.score_of(first))

    def add_pair(self, *scores: float) -> None:
        """Count a completed pair by the first bot's scores in its two games."""
        self.penta[round(2 * sum(scores))] += 1
        for score in scores:
            self.wdl[round(2 * score)] += 1
        self.llr = self.test.llr(self.penta)
        self.verdict = self.test.decide(self.llr)

    @property
    def pairs(self) -> int:
        return sum(self.penta)

    def status(self) -> SprtStatus:
        p = self.penta
        verdict = self.verdict
        if verdict is None and 2 * self.pairs >= self.max_games:
            verdict = Verdict.INCONCLUSIVE
        return SprtStatus(
            test=self.test,
            bots=(self.spec.bots[0], self.spec.bots[1]),
            pentanomial=(p[0], p[1], p[2], p[3], p[4]),
            wins=self.wdl[2],
            draws=self.wdl[1],
            losses=self.wdl[0],
            llr=self.llr,
            max_games=self.max_games,
            verdict=verdict,
        )

    def completed(self) -> list[GameRecord]:
        return [record for index, record in sorted(self.games.items()) if index ^ 1 in self.games]


class OrderedTally:
    """The test on pairs counted in schedule order, for games played elsewhere (a server).

    Pair k counts once both its games (2k, 2k + 1) and every earlier pair have a result; the
    count stops at the decision (later pairs are never counted, whenever they finish) and at
    `max_games`. `advance` takes the results known so far and counts what it can, so a tally
    fed the same results in any order and in any number of steps ends the same.
    """

    def __init__(self, spec: TournamentSpec, test: SprtTest, max_games: int) -> None:
        _check(spec, max_games)
        self._tally = _Tally(spec, test, max_games)

    @property
    def decided(self) -> bool:
        """Return True once the test has reached a verdict (H0 or H1)."""
        return self._tally.verdict is not None

    @property
    def pairs(self) -> int:
        """Return the pairs counted."""
        return self._tally.pairs

    def advance(self, scores: Mapping[int, float]) -> bool:
        """Count the pairs now complete after those counted; return whether any was.

        `scores` maps a game's index to the first bot's score in it (a game without a result
        is absent).
        """
        counted = False
        tally = self._tally
        while tally.verdict is None and 2 * (tally.pairs + 1) <= tally.max_games:
            pair = tally.pairs
            first, second = scores.get(2 * pair), scores.get(2 * pair + 1)
            if first is None or second is None:
                break
            tally.add_pair(first, second)
            counted = True
        return counted

    def status(self) -> SprtStatus:
        """Return the status of the pairs counted (INCONCLUSIVE once the cap is counted)."""
        return self._tally.status()


def ordered_status(
    spec: TournamentSpec, test: SprtTest, max_games: int, scores: Mapping[int, float]
) -> SprtStatus:
    """Return the status `OrderedTally` reaches on `scores` (first bot's score by game index)."""
    tally = OrderedTally(spec, test, max_games)
    tally.advance(scores)
    return tally.status()


def run_sprt(
    spec: TournamentSpec,
    test: SprtTest,
    openings: Sequence[Opening],
    max_games: int,
    concurrency: int = 1,
    journal_path: Path | str | None = None,
    progress: SprtProgress | None = None,
    bot_factory: BotFactory = make_bot,
) -> tuple[SprtStatus, list[GameRecord]]:
    """Play the match until the test decides or `max_games` are played; return the final
    status and the games of the completed pairs in schedule order.

    `spec` names the two bots (spec.bots[0] is the one the test is about: H1 says it is
    stronger by test.elo1), the game, seed, ply cap and move time. At most `concurrency`
    games are in flight (in worker processes; 1: in this process). A journal of another
    match raises JournalError. If `progress` raises, the run stops and the exception
    propagates; finished games stay in the journal.
    """
    _check(spec, max_games)
    if concurrency < 1:
        raise TournamentError(f"concurrency must be at least 1, not {concurrency}")
    spec.validate()
    identity = match_identity(spec, test, openings)
    journal = None if journal_path is None else Journal(journal_path, identity)
    tally = _Tally(spec, test, max_games)
    try:
        if journal is not None:
            for data in journal.finished:
                tally.add(GameRecord.from_dict(data))
        if progress is not None:
            progress(tally.status(), len(tally.games))
        pending = (
            task
            for task in pair_tasks(spec, openings, max_games // 2)
            if task.index not in tally.games
        )

        def finish(record: GameRecord) -> None:
            if journal is not None:
                journal.append(record.to_dict())
            tally.add(record)
            if progress is not None:
                progress(tally.status(), len(tally.games))

        if tally.verdict is None:
            if concurrency == 1:
                for task in pending:
                    finish(play_game(task, spec.ply_cap, spec.move_time, bot_factory))
                    if tally.verdict is not None:
                        break
            else:
                _run_in_pool(spec, pending, concurrency, bot_factory, finish, tally)
    finally:
        if journal is not None:
            journal.close()
    return tally.status(), tally.completed()


def _run_in_pool(
    spec: TournamentSpec,
    pending: Iterator[GameTask],
    concurrency: int,
    bot_factory: BotFactory,
    finish: Callable[[GameRecord], None],
    tally: _Tally,
) -> None:
    """Keep `concurrency` games in flight, in schedule order, until the test decides."""
    with ProcessPoolExecutor(max_workers=concurrency) as pool:
        running: set[Future[GameRecord]] = set()
        try:
            while tally.verdict is None:
                while len(running) < concurrency:
                    task = next(pending, None)
                    if task is None:
                        break
                    running.add(
                        pool.submit(play_game, task, spec.ply_cap, spec.move_time, bot_factory)
                    )
                if not running:
                    break
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: f.result().index):
                    finish(future.result())
                    if tally.verdict is not None:
                        break
        finally:
            # Games still running when the test decides are not counted: let them end, unseen.
            pool.shutdown(wait=True, cancel_futures=True)
